/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/jaeger/jaeger_thrift.c: encodes finished spans (wire/model/
 * span_data.h) as jaeger.thrift structs and assembles Agent.emitBatch
 * messages and bare Batch structs, for the UDP and HTTP senders (report/)
 * on the reporter thread and for `tracewire convert`. The field tables are
 * in wire/jaeger/jaeger_thrift.h.
 *
 * Spans, the hot path (one call per reported span), are written with the
 * direct Thrift writer (wire/core/thrift.h): c_glib's protocol objects cost
 * about 17,400 instructions per standard span (GObject casts, vtable calls,
 * a GQueue link per struct), the direct writer a small fraction of that.
 * The tag and reference type values come from the code c_glib generates
 * from thrift/jaeger.thrift (the IDL stays the source of truth), and the
 * differential test and fuzz target (tests/unit/wire/test_thrift_write.c,
 * tests/fuzz/fuzz_thrift_write.c) hold the bytes to those c_glib's
 * generated structs and protocols write for the same span.
 *
 * The compact protocol's spans (the UDP agent's, the hot path of the
 * reporter thread) have a faster writer still (fast_compact_span). The
 * emitBatch envelope and the Batch framing, written twice per datagram,
 * use the direct writer too. What is written once per process (the
 * process struct) still goes through c_glib's protocol layer, as it costs
 * nothing that matters there: fields through the protocol API
 * (ThriftCompactProtocol or ThriftBinaryProtocol) into a ThriftMemoryBuffer.
 *
 * An encoder owns one protocol, one memory buffer and its GByteArray, reused
 * for every call. No locking: one thread at a time per encoder.
 */
#include "wire/jaeger/jaeger_thrift.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <glib-object.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/protocol/thrift_compact_protocol.h>
#include <thrift/c_glib/transport/thrift_memory_buffer.h>

#include "twire_jaeger_jaeger_types.h"
#include "wire/core/utf8.h"

/* ---- the scratch transport ------------------------------------------------------------ */

/* ThriftMemoryBuffer's finalize (Thrift 0.13 to 0.24) does not chain up to
 * its parent's, so the qdata block that g_object_unref allocates for the
 * notify queue leaks at every destruction: once per encoder, but a leak that
 * ASan reports in every tracer test. This subclass chains up on its behalf,
 * and only when the parent's finalize did not: GObject's finalize clears
 * qdata, so qdata still set afterwards means the chain stopped early. A
 * Thrift that fixes the bug is thus still finalized exactly once. */
typedef struct TwireScratchBuffer {
    ThriftMemoryBuffer parent;
    tw__buf *out;    /* where write() appends; the parent's GByteArray stays unused */
    bool has_failed; /* an append ran out of memory since the last reset */
} TwireScratchBuffer;

typedef struct TwireScratchBufferClass {
    ThriftMemoryBufferClass parent;
} TwireScratchBufferClass;

/* G_DEFINE_TYPE names the functions: tw__ for the global (hidden) get_type
 * and for the two static initialisers it declares. */
GType tw__scratch_buffer_get_type(void);
G_DEFINE_TYPE(TwireScratchBuffer, tw__scratch_buffer, THRIFT_TYPE_MEMORY_BUFFER)

static void scratch_buffer_finalize(GObject *obj)
{
    GObjectClass *memory_buffer_class = G_OBJECT_CLASS(tw__scratch_buffer_parent_class);
    memory_buffer_class->finalize(obj);
    if (obj->qdata) {
        GObjectClass *transport_class = g_type_class_peek_parent(memory_buffer_class);
        transport_class->finalize(obj);
    }
}

/* The protocols write a field header, a varint or a string at a time;
 * ThriftMemoryBuffer's write pays a GObject cast check, a size check and
 * GArray's growth logic on each of those small writes. Appending straight to
 * a tw__buf (an inline memcpy when there is room) cut the reporter thread's
 * instructions per span by about a fifth (callgrind, bench_tracer ir). */
static gboolean scratch_write(ThriftTransport *transport, const gpointer buf, const guint32 len,
                              GError **error)
{
    TwireScratchBuffer *self = (TwireScratchBuffer *)transport; /* our own class: no check */
    tw__buf *out = self->out;
    if (len == 0) /* nothing to add (and an empty buffer may have no storage) */
        return TRUE;
    if (len == 1 && out->len < out->cap) { /* field headers, small varints: most writes */
        out->data[out->len++] = *(const uint8_t *)buf;
        return TRUE;
    }
    if (out->cap - out->len >= len) {
        memcpy(out->data + out->len, buf, len);
        out->len += len;
        return TRUE;
    }
    if (tw__buf_append(out, buf, len))
        return TRUE;
    self->has_failed = true;
    g_set_error(error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SEND,
                "tracewire: out of memory growing the encode buffer to %zu bytes",
                out->len + (size_t)len);
    return FALSE;
}

static void tw__scratch_buffer_class_init(TwireScratchBufferClass *cls)
{
    G_OBJECT_CLASS(cls)->finalize = scratch_buffer_finalize;
    THRIFT_TRANSPORT_CLASS(cls)->write = scratch_write;
}

static void tw__scratch_buffer_init(TwireScratchBuffer *self)
{
    (void)self;
}

/* ---- the encoder ---------------------------------------------------------------------- */

struct tw__jaeger_encoder {
    tw__thrift_protocol protocol_id;
    tw__buf text;               /* span text repaired to valid UTF-8 (rare) */
    ThriftProtocol *protocol;   /* compact or binary, writing into transport */
    ThriftTransport *transport; /* TwireScratchBuffer appending to scratch */
    GByteArray *unused;         /* the memory buffer's own array (never written) */
    tw__buf scratch;            /* emptied at the start of every call */
    /* Structs begun and not yet ended by the call in progress. After a
     * failure they are ended, so that the compact protocol's stack of last
     * field ids is back at the bottom for the next call; left behind, its
     * links would pile up and leak (the protocol never frees them). */
    unsigned int open_structs;
    GError *error; /* set by a failing Thrift call, cleared before returning */
    /* emitBatch envelope bytes, less the spans' list header, for the last
     * seqNo and stats sized. The UDP sender sizes the batch once per span
     * with the same seqNo and stats; re-encoding the whole envelope cost
     * ~0.7 us a call (Thrift's GObject checks), a third of encoding a span. */
    struct {
        bool is_valid;
        int64_t seq_no;
        bool has_stats;
        tw__client_stats stats;
        size_t len;
    } envelope;
};

/* The parts of a Batch. In measure mode the pre-encoded process and spans
 * are counted, not copied, so sizing runs the very code that writes. */
typedef struct batch_parts {
    const uint8_t *process;
    size_t process_len;
    const uint8_t *spans;
    size_t spans_len;
    size_t n_spans;
    int64_t seq_no;
    const tw__client_stats *stats;
    bool is_measure;
    /* Where the process and the spans go in scratch (set by write_batch,
     * for the gathering send of tw__jaeger_emit_batch_frame). */
    size_t process_at, spans_at;
} batch_parts;

/* Same bits as the unsigned id, without the implementation-defined
 * conversion of an out-of-range value (compiles to a plain move). */
static int64_t u64_bits(uint64_t u)
{
    return u <= INT64_MAX ? (int64_t)u : -(int64_t)(UINT64_MAX - u) - 1;
}

static int32_t u32_bits(uint32_t u)
{
    return u <= INT32_MAX ? (int32_t)u : -(int32_t)(UINT32_MAX - u) - 1;
}

/* ---- field writers: each returns false on the first failed Thrift call ---------------- */

static bool struct_begin(tw__jaeger_encoder *enc, const char *name)
{
    if (thrift_protocol_write_struct_begin(enc->protocol, name, &enc->error) < 0)
        return false;
    enc->open_structs++;
    return true;
}

/* Writes the stop field and ends the struct. */
static bool struct_end(tw__jaeger_encoder *enc)
{
    if (thrift_protocol_write_field_stop(enc->protocol, &enc->error) < 0 ||
        thrift_protocol_write_struct_end(enc->protocol, &enc->error) < 0)
        return false;
    enc->open_structs--;
    return true;
}

static bool field_begin(tw__jaeger_encoder *enc, const char *name, ThriftType type, int16_t id)
{
    return thrift_protocol_write_field_begin(enc->protocol, name, type, id, &enc->error) >= 0;
}

static bool field_end(tw__jaeger_encoder *enc)
{
    return thrift_protocol_write_field_end(enc->protocol, &enc->error) >= 0;
}

static bool field_i64(tw__jaeger_encoder *enc, const char *name, int16_t id, int64_t value)
{
    return field_begin(enc, name, T_I64, id) &&
           thrift_protocol_write_i64(enc->protocol, value, &enc->error) >= 0 && field_end(enc);
}

static bool field_i32(tw__jaeger_encoder *enc, const char *name, int16_t id, int32_t value)
{
    return field_begin(enc, name, T_I32, id) &&
           thrift_protocol_write_i32(enc->protocol, value, &enc->error) >= 0 && field_end(enc);
}

static bool field_double(tw__jaeger_encoder *enc, const char *name, int16_t id, double value)
{
    return field_begin(enc, name, T_DOUBLE, id) &&
           thrift_protocol_write_double(enc->protocol, value, &enc->error) >= 0 && field_end(enc);
}

/* The compact protocol folds a bool into its field header: it keeps the
 * header pending from field_begin until write_bool, and needs @name to be
 * non-NULL to know one is pending. */
static bool field_bool(tw__jaeger_encoder *enc, const char *name, int16_t id, bool value)
{
    return field_begin(enc, name, T_BOOL, id) &&
           thrift_protocol_write_bool(enc->protocol, value, &enc->error) >= 0 && field_end(enc);
}

/* Strings and binaries are the same on the wire in both protocols (length,
 * then bytes), so both go through write_binary with the length we already
 * know: write_string would strlen() every value again. Thrift's API takes a
 * non-const pointer but only reads it. */
static bool field_bytes(tw__jaeger_encoder *enc, const char *name, int16_t id, const void *data,
                        size_t len)
{
    if (len > TW__THRIFT_MAX_LEN)
        return false;
    return field_begin(enc, name, T_STRING, id) &&
           thrift_protocol_write_binary(enc->protocol, (gpointer)data, (guint32)len, &enc->error) >=
               0 &&
           field_end(enc);
}

/* Text is written repaired to valid UTF-8, as the direct writer does
 * (direct_text below). */
static bool field_text(tw__jaeger_encoder *enc, const char *name, int16_t id, const char *text,
                       size_t len)
{
    if (len > TW__THRIFT_MAX_LEN)
        return false; /* refused before the bytes are read */
    if (tw__utf8_is_valid(text, len))
        return field_bytes(enc, name, id, text, len);
    tw__buf_reset(&enc->text);
    return tw__utf8_repair_append(&enc->text, text, len, NULL) &&
           field_bytes(enc, name, id, enc->text.data, enc->text.len);
}

static bool field_cstr(tw__jaeger_encoder *enc, const char *name, int16_t id, const char *str)
{
    return field_text(enc, name, id, str ? str : "", str ? strlen(str) : 0);
}

/* Field header and list header of a list<struct> field. */
static bool field_list_begin(tw__jaeger_encoder *enc, const char *name, int16_t id, size_t n)
{
    if (n > TW__THRIFT_MAX_LEN)
        return false;
    return field_begin(enc, name, T_LIST, id) &&
           thrift_protocol_write_list_begin(enc->protocol, T_STRUCT, (guint32)n, &enc->error) >= 0;
}

static bool field_list_end(tw__jaeger_encoder *enc)
{
    return thrift_protocol_write_list_end(enc->protocol, &enc->error) >= 0 && field_end(enc);
}

/* ---- jaeger.thrift structs ------------------------------------------------------------- */

static bool write_tag(tw__jaeger_encoder *enc, const tw__tag *tag)
{
    if (!struct_begin(enc, "Tag") || !field_text(enc, "key", 1, tag->key, tag->key_len))
        return false;
    bool ok;
    switch (tag->type) {
    case TW_VALUE_STRING:
        ok = field_i32(enc, "vType", 2, TWIRE_JAEGER_TAG_TYPE_STRING) &&
             field_text(enc, "vStr", 3, tag->v.str, tag->len);
        break;
    case TW_VALUE_DOUBLE:
        ok = field_i32(enc, "vType", 2, TWIRE_JAEGER_TAG_TYPE_DOUBLE) &&
             field_double(enc, "vDouble", 4, tag->v.dbl);
        break;
    case TW_VALUE_BOOL:
        ok = field_i32(enc, "vType", 2, TWIRE_JAEGER_TAG_TYPE_BOOL) &&
             field_bool(enc, "vBool", 5, tag->v.boolean);
        break;
    case TW_VALUE_INT64:
        ok = field_i32(enc, "vType", 2, TWIRE_JAEGER_TAG_TYPE_LONG) &&
             field_i64(enc, "vLong", 6, tag->v.i64);
        break;
    case TW_VALUE_BINARY:
        ok = field_i32(enc, "vType", 2, TWIRE_JAEGER_TAG_TYPE_BINARY) &&
             field_bytes(enc, "vBinary", 7, tag->v.bin, tag->len);
        break;
    default:
        /* Records built by span_data.c never hold another type; refusing
         * beats writing a Tag with no value that the agent would reject. */
        ok = false;
        break;
    }
    return ok && struct_end(enc);
}

static bool write_tag_list(tw__jaeger_encoder *enc, const char *name, int16_t id,
                           const tw__tag *tags, size_t n)
{
    if (!field_list_begin(enc, name, id, n))
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!write_tag(enc, &tags[i]))
            return false;
    }
    return field_list_end(enc);
}

static bool write_process(tw__jaeger_encoder *enc, const tw__process *p)
{
    if (!struct_begin(enc, "Process") || !field_cstr(enc, "serviceName", 1, p->service_name))
        return false;
    if (p->n_tags > 0 && !write_tag_list(enc, "tags", 2, p->tags, p->n_tags))
        return false;
    return struct_end(enc);
}

/* The Batch struct, on the direct writer (wire/core/thrift.h) like the
 * spans: it is written twice per datagram (sized, then sent), and c_glib's
 * protocol objects cost ~5,000 instructions for it, the direct writer a
 * few hundred. Its bytes are c_glib's (the writer's differential test
 * covers every construct used here: message headers, nested structs,
 * lists, i64 fields). */
static void direct_batch(tw__thrift_writer *w, batch_parts *b)
{
    tw__thrift_struct_begin(w);
    tw__thrift_field_begin(w, TW__T_STRUCT, 1);
    b->process_at = w->out->len;
    if (!b->is_measure)
        tw__thrift_write_raw(w, b->process, b->process_len);
    tw__thrift_field_list(w, 2, TW__T_STRUCT, b->n_spans);
    b->spans_at = w->out->len;
    if (!b->is_measure)
        tw__thrift_write_raw(w, b->spans, b->spans_len);
    if (b->seq_no >= 0)
        tw__thrift_field_i64(w, 3, b->seq_no);
    if (b->stats) {
        tw__thrift_field_begin(w, TW__T_STRUCT, 4);
        tw__thrift_struct_begin(w);
        tw__thrift_field_i64(w, 1, b->stats->full_queue_dropped_spans);
        tw__thrift_field_i64(w, 2, b->stats->too_large_dropped_spans);
        tw__thrift_field_i64(w, 3, b->stats->failed_to_emit_spans);
        tw__thrift_struct_end(w);
    }
    tw__thrift_struct_end(w);
}

static bool write_batch(tw__jaeger_encoder *enc, batch_parts *b)
{
    tw__thrift_writer w;
    tw__thrift_writer_init(&w, enc->protocol_id, &enc->scratch);
    direct_batch(&w, b);
    return !w.failed;
}

static bool write_emit_batch(tw__jaeger_encoder *enc, batch_parts *b, int32_t msg_seq_id)
{
    tw__thrift_writer w;
    tw__thrift_writer_init(&w, enc->protocol_id, &enc->scratch);
    tw__thrift_message_begin(&w, "emitBatch", TW__THRIFT_ONEWAY, msg_seq_id);
    tw__thrift_struct_begin(&w); /* Agent_emitBatch_args */
    tw__thrift_field_begin(&w, TW__T_STRUCT, 1);
    direct_batch(&w, b);
    tw__thrift_struct_end(&w);
    return !w.failed;
}

/* ---- spans: the direct writer ------------------------------------------------------------- */

/* A text field: the bytes as they are when valid UTF-8 (Thrift strings are
 * UTF-8, and strict decoders refuse anything else, which would cost the
 * whole batch), else repaired, each invalid byte as U+FFFD, in @scratch. */
static void direct_text(tw__thrift_writer *w, int16_t id, const char *text, size_t len,
                        tw__buf *scratch)
{
    if (len > TW__THRIFT_MAX_LEN) {
        w->failed = true; /* refused before the bytes are read */
        return;
    }
    if (tw__utf8_is_valid(text, len)) {
        tw__thrift_field_bytes(w, id, text, len);
        return;
    }
    tw__buf_reset(scratch);
    if (!tw__utf8_repair_append(scratch, text, len, NULL)) {
        w->failed = true;
        return;
    }
    tw__thrift_field_bytes(w, id, scratch->data, scratch->len);
}

static void direct_tag(tw__thrift_writer *w, const tw__tag *t, tw__buf *scratch)
{
    tw__thrift_struct_begin(w);
    direct_text(w, 1, t->key, t->key_len, scratch);
    switch (t->type) {
    case TW_VALUE_STRING:
        tw__thrift_field_i32(w, 2, TWIRE_JAEGER_TAG_TYPE_STRING);
        direct_text(w, 3, t->v.str, t->len, scratch);
        break;
    case TW_VALUE_DOUBLE:
        tw__thrift_field_i32(w, 2, TWIRE_JAEGER_TAG_TYPE_DOUBLE);
        tw__thrift_field_double(w, 4, t->v.dbl);
        break;
    case TW_VALUE_BOOL:
        tw__thrift_field_i32(w, 2, TWIRE_JAEGER_TAG_TYPE_BOOL);
        tw__thrift_field_bool(w, 5, t->v.boolean);
        break;
    case TW_VALUE_INT64:
        tw__thrift_field_i32(w, 2, TWIRE_JAEGER_TAG_TYPE_LONG);
        tw__thrift_field_i64(w, 6, t->v.i64);
        break;
    case TW_VALUE_BINARY:
        tw__thrift_field_i32(w, 2, TWIRE_JAEGER_TAG_TYPE_BINARY);
        tw__thrift_field_bytes(w, 7, t->v.bin, t->len);
        break;
    default:
        /* Records built by span_data.c never hold another type; refusing
         * beats writing a Tag with no value that the agent would reject. */
        w->failed = true;
        break;
    }
    tw__thrift_struct_end(w);
}

static void direct_tag_list(tw__thrift_writer *w, int16_t id, const tw__tag *tags, size_t n,
                            tw__buf *scratch)
{
    tw__thrift_field_list(w, id, TW__T_STRUCT, n);
    for (size_t i = 0; i < n && !w->failed; i++)
        direct_tag(w, &tags[i], scratch);
}

/* ---- spans in the binary protocol: the direct writer's fast path --------------------------
 *
 * In the binary protocol every part of a Span has a size known before it
 * is written (a field header is 3 bytes, an integer 4 or 8, a string 4 and
 * its bytes), so direct_bin_span bounds the sizes from the lengths, makes
 * room for the fixed fields once and for each tag as it comes, and writes
 * through a cursor, where the generic writer checks for room at every
 * field. It takes a span only when every text is valid UTF-8 and
 * every length fits Thrift's i32; anything else (text to repair, a huge
 * value, an unknown tag type, allocation failure) goes to the generic
 * writer, whose bytes it reproduces (tests/unit/wire/test_jaeger_thrift.c
 * compares both on spans of every shape). */

/* Big-endian stores through the cursor: inline, with a constant width, each
 * compiles to a byte swap and one store. */
TW__THRIFT_WRITE_INLINE uint8_t *direct_bin_be16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
    return p + 2;
}

TW__THRIFT_WRITE_INLINE uint8_t *direct_bin_be32(uint8_t *p, uint32_t v)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap32(v);
    memcpy(p, &v, 4);
#else
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (24 - 8 * i));
#endif
    return p + 4;
}

TW__THRIFT_WRITE_INLINE uint8_t *direct_bin_be64(uint8_t *p, uint64_t v)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
    memcpy(p, &v, 8);
#else
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (56 - 8 * i));
#endif
    return p + 8;
}

TW__THRIFT_WRITE_INLINE uint8_t *direct_bin_header(uint8_t *p, tw__thrift_type type, int16_t id)
{
    *p = (uint8_t)type;
    return direct_bin_be16(p + 1, (uint16_t)id);
}

TW__THRIFT_WRITE_INLINE uint8_t *direct_bin_i64(uint8_t *p, int16_t id, int64_t v)
{
    return direct_bin_be64(direct_bin_header(p, TW__T_I64, id), (uint64_t)v);
}

TW__THRIFT_WRITE_INLINE uint8_t *direct_bin_i32(uint8_t *p, int16_t id, int32_t v)
{
    return direct_bin_be32(direct_bin_header(p, TW__T_I32, id), (uint32_t)v);
}

TW__THRIFT_WRITE_INLINE uint8_t *direct_bin_bytes(uint8_t *p, int16_t id, const void *data,
                                                  size_t len)
{
    p = direct_bin_be32(direct_bin_header(p, TW__T_STRING, id), (uint32_t)len);
    if (len)
        memcpy(p, data, len);
    return p + len;
}

TW__THRIFT_WRITE_INLINE uint8_t *direct_bin_list(uint8_t *p, int16_t id, size_t n)
{
    p = direct_bin_header(p, TW__T_LIST, id);
    *p = TW__T_STRUCT;
    return direct_bin_be32(p + 1, (uint32_t)n);
}

/* Texts up to this length are copied and checked in one pass. */
#define FUSED_TEXT_MAX 64

/* Copies @len bytes of @text to @p and returns p + len, or NULL when the
 * text is not valid UTF-8 (the bytes at @p are then garbage; the caller
 * drops the span's bytes). Most texts (keys, names, values) are short
 * ASCII: copied a word at a time while the words are OR-ed for the
 * ASCII test, one pass instead of tw__utf8_is_valid's and memcpy's (a libc
 * call, which costs more than a short copy). The words stay inside
 * [text, text + len) and [p, p + len), the last one overlapping. Longer
 * texts, and any with a byte >= 0x80, take the full check. */
TW__THRIFT_WRITE_INLINE uint8_t *direct_bin_copy_text(uint8_t *p, const char *text, size_t len)
{
    uint64_t any;
    if (len > FUSED_TEXT_MAX) {
        if (!tw__utf8_is_valid(text, len))
            return NULL;
        memcpy(p, text, len);
        return p + len;
    }
    if (len >= 8) {
        uint64_t x;
        any = 0;
        for (size_t i = 0; i + 8 < len; i += 8) {
            memcpy(&x, text + i, 8);
            memcpy(p + i, &x, 8);
            any |= x;
        }
        memcpy(&x, text + len - 8, 8);
        memcpy(p + len - 8, &x, 8);
        any |= x;
    } else if (len >= 4) {
        uint32_t x, y;
        memcpy(&x, text, 4);
        memcpy(&y, text + len - 4, 4);
        memcpy(p, &x, 4);
        memcpy(p + len - 4, &y, 4);
        any = x | y;
    } else if (len > 0) {
        unsigned a = (unsigned char)text[0], b = (unsigned char)text[len >> 1],
                 c = (unsigned char)text[len - 1];
        p[0] = (uint8_t)a;
        p[len >> 1] = (uint8_t)b;
        p[len - 1] = (uint8_t)c;
        any = a | b | c;
    } else {
        return p;
    }
    if ((any & UINT64_C(0x8080808080808080)) && tw__utf8_valid_prefix(text, len) != len)
        return NULL;
    return p + len;
}

/* A text field when @text is valid UTF-8; NULL (for the generic writer,
 * which repairs it) when not. */
TW__THRIFT_WRITE_INLINE uint8_t *direct_bin_text(uint8_t *p, int16_t id, const char *text,
                                                 size_t len)
{
    p = direct_bin_be32(direct_bin_header(p, TW__T_STRING, id), (uint32_t)len);
    return direct_bin_copy_text(p, text, len);
}

/* A Tag struct; NULL when a text is not valid UTF-8 or the type unknown. */
TW__THRIFT_WRITE_INLINE uint8_t *direct_bin_tag(uint8_t *p, const tw__tag *t)
{
    static const uint8_t bin_types[] = {
        [TW_VALUE_STRING] = TWIRE_JAEGER_TAG_TYPE_STRING,
        [TW_VALUE_DOUBLE] = TWIRE_JAEGER_TAG_TYPE_DOUBLE,
        [TW_VALUE_BOOL] = TWIRE_JAEGER_TAG_TYPE_BOOL,
        [TW_VALUE_INT64] = TWIRE_JAEGER_TAG_TYPE_LONG,
        [TW_VALUE_BINARY] = TWIRE_JAEGER_TAG_TYPE_BINARY,
    };
    uint64_t bits;
    switch (t->type) {
    case TW_VALUE_STRING:
    case TW_VALUE_DOUBLE:
    case TW_VALUE_BOOL:
    case TW_VALUE_INT64:
    case TW_VALUE_BINARY:
        break;
    default:
        return NULL;
    }
    p = direct_bin_text(p, 1, t->key, t->key_len);
    if (!p)
        return NULL;
    p = direct_bin_i32(p, 2, bin_types[t->type]);
    switch (t->type) {
    case TW_VALUE_STRING:
        p = direct_bin_text(p, 3, t->v.str, t->len);
        if (!p)
            return NULL;
        break;
    case TW_VALUE_DOUBLE:
        memcpy(&bits, &t->v.dbl, sizeof bits);
        p = direct_bin_be64(direct_bin_header(p, TW__T_DOUBLE, 4), bits);
        break;
    case TW_VALUE_BOOL:
        p = direct_bin_header(p, TW__T_BOOL, 5);
        *p++ = t->v.boolean ? 1 : 0;
        break;
    case TW_VALUE_INT64:
        p = direct_bin_i64(p, 6, t->v.i64);
        break;
    default: /* TW_VALUE_BINARY: the first switch let no other type through */
        p = direct_bin_bytes(p, 7, t->v.bin, t->len);
        break;
    }
    *p++ = 0;
    return p;
}

/* Where direct_bin_span writes: room is made as it goes, a tag at a time,
 * for an upper bound of what comes next. A separate pass over the tags to
 * bound the whole span first cost as much as a fifth of writing them. */
typedef struct bin_cursor {
    tw__buf *out;
    uint8_t *p, *end; /* the write position and the end of out's capacity */
} bin_cursor;

static bool bin_room_grow(bin_cursor *c, size_t n)
{
    c->out->len = (size_t)(c->p - c->out->data);
    if (!tw__buf_grow(c->out, n))
        return false;
    c->p = c->out->data + c->out->len;
    c->end = c->out->data + c->out->cap;
    return true;
}

/* At least @n bytes of room at c->p. */
TW__THRIFT_WRITE_INLINE bool bin_room(bin_cursor *c, size_t n)
{
    return (size_t)(c->end - c->p) >= n || bin_room_grow(c, n);
}

/* A list<Tag> field; false when a length is beyond Thrift's i32, a text is
 * not valid UTF-8, a type unknown, or on allocation failure. Room for a tag:
 * its key and value bytes and 26 more (three field headers, two string
 * lengths, the vType i32, a stop byte; an 8-byte value is no larger than a
 * string's 4-byte length and its header). */
static bool direct_bin_tags(bin_cursor *c, int16_t id, const tw__tag *tags, size_t n)
{
    if (n > TW__THRIFT_MAX_LEN || !bin_room(c, 8))
        return false;
    uint8_t *p = direct_bin_list(c->p, id, n);
    for (size_t i = 0; i < n; i++) {
        const tw__tag *t = &tags[i];
        size_t len = t->type == TW_VALUE_STRING || t->type == TW_VALUE_BINARY ? t->len : 0;
        if (t->key_len > TW__THRIFT_MAX_LEN || len > TW__THRIFT_MAX_LEN)
            return false;
        size_t need = (size_t)t->key_len + len + 26; /* each length < 2^31: no overflow */
        if ((size_t)(c->end - p) < need) {
            c->p = p;
            if (!bin_room_grow(c, need))
                return false;
            p = c->p;
        }
        p = direct_bin_tag(p, t);
        if (!p)
            return false;
    }
    c->p = p;
    return true;
}

/* Writes the Span's fields as direct_span does; false (@out's length
 * unchanged) when the span needs the generic writer. Room is made for an
 * upper bound of the fixed fields, then of each tag as it comes, and the
 * texts are checked as they are written: one pass over the tags. */
static bool direct_bin_span(const tw__span_data *s, tw__buf *out)
{
    size_t before = out->len;
    size_t op_len = s->operation ? strlen(s->operation) : 0;
    if (op_len > TW__THRIFT_MAX_LEN || s->n_refs > TW__THRIFT_MAX_LEN ||
        s->n_logs > TW__THRIFT_MAX_LEN)
        return false;
    /* ids, flags, start, duration; the operation; the references */
    size_t fixed = 4 * 11 + 7 + 2 * 11 + 3 + 4 + op_len;
    if (s->n_refs > 0)
        fixed += 3 + 5 + s->n_refs * (7 + 3 * 11 + 1);
    if (!tw__buf_grow(out, fixed))
        return false;
    bin_cursor c = {out, out->data + out->len, out->data + out->cap};
    uint8_t *p = c.p;
    p = direct_bin_i64(p, 1, u64_bits(s->trace_id_low));
    p = direct_bin_i64(p, 2, u64_bits(s->trace_id_high));
    p = direct_bin_i64(p, 3, u64_bits(s->span_id));
    p = direct_bin_i64(p, 4, u64_bits(s->parent_id));
    p = direct_bin_text(p, 5, s->operation ? s->operation : "", op_len);
    if (!p)
        goto fail;
    if (s->n_refs > 0) {
        p = direct_bin_list(p, 6, s->n_refs);
        for (size_t i = 0; i < s->n_refs; i++) {
            const tw__ref *r = &s->refs[i];
            p = direct_bin_i32(p, 1,
                               r->type == TW__REF_FOLLOWS_FROM
                                   ? TWIRE_JAEGER_SPAN_REF_TYPE_FOLLOWS_FROM
                                   : TWIRE_JAEGER_SPAN_REF_TYPE_CHILD_OF);
            p = direct_bin_i64(p, 2, u64_bits(r->trace_id_low));
            p = direct_bin_i64(p, 3, u64_bits(r->trace_id_high));
            p = direct_bin_i64(p, 4, u64_bits(r->span_id));
            *p++ = 0;
        }
    }
    p = direct_bin_i32(p, 7, u32_bits(s->flags));
    p = direct_bin_i64(p, 8, s->start_us);
    p = direct_bin_i64(p, 9, s->duration_us);
    c.p = p;
    if (s->n_tags > 0 && !direct_bin_tags(&c, 10, s->tags, s->n_tags))
        goto fail;
    if (s->n_logs > 0) {
        if (!bin_room(&c, 8))
            goto fail;
        c.p = direct_bin_list(c.p, 11, s->n_logs);
        for (size_t i = 0; i < s->n_logs; i++) {
            if (!bin_room(&c, 11))
                goto fail;
            c.p = direct_bin_i64(c.p, 1, s->logs[i].timestamp_us);
            if (!direct_bin_tags(&c, 2, s->logs[i].fields, s->logs[i].n_fields) || !bin_room(&c, 1))
                goto fail;
            *c.p++ = 0;
        }
    }
    out->len = (size_t)(c.p - out->data);
    return true;
fail:
    out->len = before;
    return false;
}

static void direct_span(tw__thrift_writer *w, const tw__span_data *s, tw__buf *scratch)
{
    if (w->proto == TW__THRIFT_BINARY && !w->failed && direct_bin_span(s, w->out))
        return;
    tw__thrift_field_i64(w, 1, u64_bits(s->trace_id_low));
    tw__thrift_field_i64(w, 2, u64_bits(s->trace_id_high));
    tw__thrift_field_i64(w, 3, u64_bits(s->span_id));
    tw__thrift_field_i64(w, 4, u64_bits(s->parent_id));
    direct_text(w, 5, s->operation ? s->operation : "", s->operation ? strlen(s->operation) : 0,
                scratch);
    if (s->n_refs > 0) {
        tw__thrift_field_list(w, 6, TW__T_STRUCT, s->n_refs);
        for (size_t i = 0; i < s->n_refs && !w->failed; i++) {
            const tw__ref *r = &s->refs[i];
            tw__thrift_struct_begin(w);
            tw__thrift_field_i32(w, 1,
                                 r->type == TW__REF_FOLLOWS_FROM
                                     ? TWIRE_JAEGER_SPAN_REF_TYPE_FOLLOWS_FROM
                                     : TWIRE_JAEGER_SPAN_REF_TYPE_CHILD_OF);
            tw__thrift_field_i64(w, 2, u64_bits(r->trace_id_low));
            tw__thrift_field_i64(w, 3, u64_bits(r->trace_id_high));
            tw__thrift_field_i64(w, 4, u64_bits(r->span_id));
            tw__thrift_struct_end(w);
        }
    }
    tw__thrift_field_i32(w, 7, u32_bits(s->flags));
    tw__thrift_field_i64(w, 8, s->start_us);
    tw__thrift_field_i64(w, 9, s->duration_us);
    if (s->n_tags > 0)
        direct_tag_list(w, 10, s->tags, s->n_tags, scratch);
    if (s->n_logs > 0) {
        tw__thrift_field_list(w, 11, TW__T_STRUCT, s->n_logs);
        for (size_t i = 0; i < s->n_logs && !w->failed; i++) {
            const tw__log *log = &s->logs[i];
            tw__thrift_struct_begin(w);
            tw__thrift_field_i64(w, 1, log->timestamp_us);
            /* fields is required: an empty list is still written. */
            direct_tag_list(w, 2, log->fields, log->n_fields, scratch);
            tw__thrift_struct_end(w);
        }
    }
}

/* ---- spans in the compact protocol: the fast path -----------------------------------------
 *
 * The UDP reporter's whole per-span work is this encoding, so the compact
 * protocol (agent port 6831) has a writer of its own for spans: the Span
 * struct's field ids are fixed, so every field header is a constant byte
 * (id delta << 4 | compact type; the deltas follow from which optional
 * lists are present), and it writes through a local cursor, making room
 * once per part (not per byte, where the generic writer reloads the
 * buffer's length after every store because a byte store may alias it).
 * Short strings (up to 16 bytes) are copied with two overlapping word
 * loads, which also tell whether they are ASCII. Anything it does not take
 * (text that is not valid UTF-8 and must be repaired, a length beyond
 * Thrift's i32, allocation failure) sends the whole span to the generic
 * writer above, which has the answer for each; its bytes are those of the
 * generic writer, which the differential test and the fuzz target
 * (tests/unit/wire/test_thrift_write.c, tests/fuzz/fuzz_thrift_write.c)
 * hold to c_glib's. */

/* Compact field headers of the fixed ids: delta << 4 | type (i32 5, i64 6,
 * double 7, binary 8, list 9; a bool's type is its value, 1 or 2). */
enum {
    CH_I32_1 = 0x15,
    CH_I32_2 = 0x25,
    CH_I64_1 = 0x16,
    CH_I64_4 = 0x46,
    CH_BIN_1 = 0x18,
    CH_BIN_5 = 0x58,
    CH_DOUBLE_2 = 0x27,
    CH_BOOL_3 = 0x30,
    CH_LIST_1 = 0x19,
    CH_LIST_2 = 0x29,
    C_STRUCT = 0x0c /* compact type of struct list elements */
};

typedef struct fast_out {
    uint8_t *p, *end;
    tw__buf *buf;
} fast_out;

static bool fast_grow(fast_out *o, size_t n)
{
    o->buf->len = (size_t)(o->p - o->buf->data);
    if (!tw__buf_grow(o->buf, n))
        return false;
    o->p = o->buf->data + o->buf->len;
    o->end = o->buf->data + o->buf->cap;
    return true;
}

/* The helpers below are called a dozen times per span: a call each cost
 * more than its bytes (register saves), so they are inlined. */
#if defined(__GNUC__)
#define FAST_INLINE static inline __attribute__((always_inline))
#else
#define FAST_INLINE static inline
#endif

/* Room for @n more bytes at o->p, and 8 more: a varint is stored as a
 * whole word, of which only its own bytes are kept. */
FAST_INLINE bool fast_room(fast_out *o, size_t n)
{
    return (size_t)(o->end - o->p) >= n + 8 || fast_grow(o, n + 8);
}

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define FAST_VARINT_WORDS 1
/* Bytes of a varint whose highest set bit is bit @b (0..63): (b + 7) / 7,
 * a load rather than the division's half-dozen instructions. */
static const uint8_t varint_len_of_bit[64] = {1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 3, 3,
                                              3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5,
                                              5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7,
                                              7, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 10};
#endif

/* A varint (little-endian groups of 7 bits, the high bit set on all but
 * the last byte). Two and three bytes (numbers below 2^21: lengths,
 * counts, durations under a second) are written directly. Beyond, the first eight groups are spread
 * into the bytes of a word in three shift-and-mask steps and stored at once: a random 64-bit id (10
 * bytes) costs about 30 instructions, not 50. */
FAST_INLINE uint8_t *fast_varint(uint8_t *p, uint64_t v)
{
    if (v < 0x80) {
        *p = (uint8_t)v;
        return p + 1;
    }
    if (v < 0x4000) {
        p[0] = (uint8_t)(v | 0x80);
        p[1] = (uint8_t)(v >> 7);
        return p + 2;
    }
    if (v < 0x200000) {
        p[0] = (uint8_t)(v | 0x80);
        p[1] = (uint8_t)((v >> 7) | 0x80);
        p[2] = (uint8_t)(v >> 14);
        return p + 3;
    }
#ifdef FAST_VARINT_WORDS
    unsigned int n = varint_len_of_bit[63 - __builtin_clzll(v)]; /* 4..10 bytes */
    uint64_t x = v & UINT64_C(0x00FFFFFFFFFFFFFF);
    x = (x & UINT64_C(0x00FFFFFFF0000000)) << 4 | (x & UINT64_C(0x000000000FFFFFFF));
    x = (x & UINT64_C(0x0FFFC0000FFFC000)) << 2 | (x & UINT64_C(0x00003FFF00003FFF));
    x = (x & UINT64_C(0x3F803F803F803F80)) << 1 | (x & UINT64_C(0x007F007F007F007F));
    if (n <= 8) {
        x |= UINT64_C(0x8080808080808080) >> (8 * (9 - n));
        memcpy(p, &x, 8);
        return p + n;
    }
    x |= UINT64_C(0x8080808080808080);
    memcpy(p, &x, 8);
    p[8] = (uint8_t)((v >> 56) & 0x7f) | (n == 10 ? 0x80 : 0);
    if (n == 10)
        p[9] = (uint8_t)(v >> 63);
    return p + n;
#else
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
#endif
}

FAST_INLINE uint8_t *fast_i64(uint8_t *p, uint8_t header, int64_t v)
{
    *p++ = header;
    return fast_varint(p, tw__thrift__zigzag64(v));
}

/* A list header of @n structs (the caller made room for 6 bytes). */
FAST_INLINE uint8_t *fast_list(uint8_t *p, size_t n)
{
    if (n < 15) {
        *p++ = (uint8_t)(n << 4 | C_STRUCT);
        return p;
    }
    *p++ = 0xf0 | C_STRUCT;
    return fast_varint(p, n);
}

#define HIGH_BITS UINT64_C(0x8080808080808080)

/* A string or binary field at @p: header, length, bytes; the caller made
 * room for 1 + 5 + @len bytes (and fast_room's 8) and checked @len against
 * Thrift's i32. @is_text: the bytes must be valid UTF-8; NULL when they
 * are not (the generic writer repairs them). Returns the end. */
FAST_INLINE uint8_t *fast_put_bytes(uint8_t *p, uint8_t header, const void *data, size_t len,
                                    bool is_text)
{
    *p++ = header;
    p = fast_varint(p, len);
    const uint8_t *s = data;
    uint64_t any;
    if (len >= 8 && len <= 16) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + len - 8, 8);
        memcpy(p, &a, 8);
        memcpy(p + len - 8, &b, 8);
        any = a | b;
    } else if (len >= 4 && len < 8) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + len - 4, 4);
        memcpy(p, &a, 4);
        memcpy(p + len - 4, &b, 4);
        any = a | b;
    } else if (len < 4) {
        /* Bytes 0, len / 2 and len - 1 are every byte of 1 to 3: no loop. */
        any = 0;
        if (len > 0) {
            uint8_t a = s[0], b = s[len / 2], c = s[len - 1];
            p[0] = a;
            p[len / 2] = b;
            p[len - 1] = c;
            any = a | b | c;
        }
    } else {
        memcpy(p, s, len);
        any = HIGH_BITS; /* checked in full below */
    }
    if (is_text && (any & HIGH_BITS) && !tw__utf8_is_valid((const char *)s, len))
        return NULL;
    return p + len;
}

/* One Tag struct, with one room check: its key, vType, value (at most 10
 * bytes, or a string's length and bytes) and stop. */
FAST_INLINE bool fast_tag(fast_out *o, const tw__tag *t)
{
    bool has_bytes = t->type == TW_VALUE_STRING || t->type == TW_VALUE_BINARY;
    size_t value_len = has_bytes ? t->len : 0;
    if (t->key_len > TW__THRIFT_MAX_LEN || value_len > TW__THRIFT_MAX_LEN ||
        !fast_room(o, (1 + 5 + (size_t)t->key_len) + 2 + (1 + 10 + value_len) + 1))
        return false;
    uint8_t *p = fast_put_bytes(o->p, CH_BIN_1, t->key, t->key_len, true);
    if (!p)
        return false;
    *p++ = CH_I32_1; /* vType, then its value's field */
    switch (t->type) {
    case TW_VALUE_STRING:
        *p++ = (uint8_t)tw__thrift__zigzag32(TWIRE_JAEGER_TAG_TYPE_STRING);
        p = fast_put_bytes(p, CH_BIN_1, t->v.str, t->len, true);
        if (!p)
            return false;
        break;
    case TW_VALUE_DOUBLE: {
        *p++ = (uint8_t)tw__thrift__zigzag32(TWIRE_JAEGER_TAG_TYPE_DOUBLE);
        *p++ = CH_DOUBLE_2;
        uint64_t bits;
        memcpy(&bits, &t->v.dbl, sizeof bits);
        for (size_t i = 0; i < 8; i++) /* little-endian in the compact protocol */
            p[i] = (uint8_t)(bits >> (8 * i));
        p += 8;
        break;
    }
    case TW_VALUE_BOOL:
        *p++ = (uint8_t)tw__thrift__zigzag32(TWIRE_JAEGER_TAG_TYPE_BOOL);
        *p++ = CH_BOOL_3 | (t->v.boolean ? 1 : 2);
        break;
    case TW_VALUE_INT64:
        *p++ = (uint8_t)tw__thrift__zigzag32(TWIRE_JAEGER_TAG_TYPE_LONG);
        p = fast_i64(p, CH_I64_4, t->v.i64);
        break;
    case TW_VALUE_BINARY:
        *p++ = (uint8_t)tw__thrift__zigzag32(TWIRE_JAEGER_TAG_TYPE_BINARY);
        p = fast_put_bytes(p, CH_BIN_5, t->v.bin, t->len, false);
        break;
    default:
        return false; /* the generic writer refuses it */
    }
    *p++ = 0; /* stop */
    o->p = p;
    return true;
}

/* A list<Tag> field: @header, the list header, the tags. */
static inline bool fast_tags(fast_out *o, uint8_t header, const tw__tag *tags, size_t n)
{
    if (n > TW__THRIFT_MAX_LEN || !fast_room(o, 1 + 6))
        return false;
    *o->p++ = header;
    o->p = fast_list(o->p, n);
    for (size_t i = 0; i < n; i++) {
        if (!fast_tag(o, &tags[i]))
            return false;
    }
    return true;
}

/* The whole Span struct (its stop byte included) at the end of @out;
 * false, with @out's length unchanged, when the generic writer must do it. */
static bool fast_compact_span(const tw__span_data *s, tw__buf *out)
{
    size_t before = out->len;
    /* An empty buffer has no storage yet: arithmetic on its NULL would be
     * undefined, so give it some first. */
    if (!out->data && !tw__buf_grow(out, 256))
        return false;
    fast_out o = {out->data + out->len, out->data + out->cap, out};
    const char *op = s->operation ? s->operation : "";
    size_t op_len = s->operation_len < UINT32_MAX ? s->operation_len : strlen(op);
    if (op_len > TW__THRIFT_MAX_LEN || !fast_room(&o, 4 * 11 + 1 + 5 + op_len))
        return false;
    uint8_t *p = o.p;
    const uint8_t *low_at = p;
    p = fast_i64(p, CH_I64_1, u64_bits(s->trace_id_low));
    size_t low_len = (size_t)(p - low_at);
    p = fast_i64(p, CH_I64_1, u64_bits(s->trace_id_high));
    if (s->span_id == s->trace_id_low) {
        /* A root's span id is its trace id's low half (the SDK's rule):
         * the same field header (each follows its field by one) and the
         * same varint, copied as two words read before either is stored
         * (the room check above covers the 16 bytes; those past the field
         * are written over by the next ones). */
        uint64_t w0, w1;
        memcpy(&w0, low_at, 8);
        memcpy(&w1, low_at + 8, 8);
        memcpy(p, &w0, 8);
        memcpy(p + 8, &w1, 8);
        p += low_len;
    } else {
        p = fast_i64(p, CH_I64_1, u64_bits(s->span_id));
    }
    p = fast_i64(p, CH_I64_1, u64_bits(s->parent_id));
    p = fast_put_bytes(p, CH_BIN_1, op, op_len, true);
    if (!p)
        goto fallback;
    o.p = p;
    if (s->n_refs > 0) {
        if (s->n_refs > TW__THRIFT_MAX_LEN || !fast_room(&o, 1 + 6))
            goto fallback;
        *o.p++ = CH_LIST_1;
        o.p = fast_list(o.p, s->n_refs);
        for (size_t i = 0; i < s->n_refs; i++) {
            const tw__ref *r = &s->refs[i];
            if (!fast_room(&o, 2 + 3 * 11 + 1))
                goto fallback;
            p = o.p;
            *p++ = CH_I32_1;
            *p++ = (uint8_t)tw__thrift__zigzag32(r->type == TW__REF_FOLLOWS_FROM
                                                     ? TWIRE_JAEGER_SPAN_REF_TYPE_FOLLOWS_FROM
                                                     : TWIRE_JAEGER_SPAN_REF_TYPE_CHILD_OF);
            p = fast_i64(p, CH_I64_1, u64_bits(r->trace_id_low));
            p = fast_i64(p, CH_I64_1, u64_bits(r->trace_id_high));
            p = fast_i64(p, CH_I64_1, u64_bits(r->span_id));
            *p++ = 0;
            o.p = p;
        }
    }
    /* flags, start, duration, then the tags' field and list headers (or
     * the stop byte). */
    if (!fast_room(&o, 6 + 2 * 11 + 1 + 6))
        goto fallback;
    p = o.p;
    /* flags is field 7: after the references (6) or the name (5). */
    *p++ = s->n_refs > 0 ? CH_I32_1 : CH_I32_2;
    p = fast_varint(p, tw__thrift__zigzag32(u32_bits(s->flags)));
    p = fast_i64(p, CH_I64_1, s->start_us);
    p = fast_i64(p, CH_I64_1, s->duration_us);
    o.p = p;
    if (s->n_tags > 0) {
        if (s->n_tags > TW__THRIFT_MAX_LEN)
            goto fallback;
        *o.p++ = CH_LIST_1;
        o.p = fast_list(o.p, s->n_tags);
        /* Bounds in locals: the byte stores may alias the record's fields,
         * which the loop would reload at every tag. */
        for (const tw__tag *t = s->tags, *end = t + s->n_tags; t < end; t++) {
            if (!fast_tag(&o, t))
                goto fallback;
        }
    }
    if (s->n_logs > 0) {
        if (s->n_logs > TW__THRIFT_MAX_LEN || !fast_room(&o, 1 + 6))
            goto fallback;
        /* logs is field 11: after the tags (10) or the duration (9). */
        *o.p++ = s->n_tags > 0 ? CH_LIST_1 : CH_LIST_2;
        o.p = fast_list(o.p, s->n_logs);
        for (size_t i = 0; i < s->n_logs; i++) {
            const tw__log *log = &s->logs[i];
            if (!fast_room(&o, 11))
                goto fallback;
            o.p = fast_i64(o.p, CH_I64_1, log->timestamp_us);
            /* fields is required: an empty list is still written. */
            if (!fast_tags(&o, CH_LIST_1, log->fields, log->n_fields) || !fast_room(&o, 1))
                goto fallback;
            *o.p++ = 0;
        }
    }
    /* No room check: every part made room for its bytes and 8 more. */
    *o.p++ = 0; /* the Span's stop */
    out->len = (size_t)(o.p - out->data);
    return true;

fallback:
    out->len = before;
    return false;
}

/* ---- calls: encode into scratch, then hand the bytes out --------------------------------- */

static void scratch_begin(tw__jaeger_encoder *enc)
{
    tw__buf_reset(&enc->scratch);
    enc->open_structs = 0;
}

/* Passes @ok through; after a failure, ends the structs left open and
 * drops the error so that the encoder is ready for the next call. */
static bool scratch_end(tw__jaeger_encoder *enc, bool ok)
{
    if (!ok) {
        for (; enc->open_structs > 0; enc->open_structs--)
            thrift_protocol_write_struct_end(enc->protocol, NULL);
        g_clear_error(&enc->error);
    }
    return ok;
}

/* Replaces @out's content with scratch; @out is unchanged on failure. */
static bool scratch_replace(tw__jaeger_encoder *enc, tw__buf *out)
{
    size_t old_len = out->len;
    out->len = 0;
    if (!tw__buf_append(out, enc->scratch.data, enc->scratch.len)) {
        out->len = old_len; /* a failed append leaves the old bytes in place */
        return false;
    }
    return true;
}

static bool parts_fit(const batch_parts *b)
{
    return b->n_spans <= TW__THRIFT_MAX_LEN && b->process_len <= TW__THRIFT_MAX_LEN &&
           b->spans_len <= TW__THRIFT_MAX_LEN - b->process_len;
}

tw__jaeger_encoder *tw__jaeger_encoder_new(tw__thrift_protocol protocol)
{
    GType type;
    switch (protocol) {
    case TW__THRIFT_COMPACT:
        type = THRIFT_TYPE_COMPACT_PROTOCOL;
        break;
    case TW__THRIFT_BINARY:
        type = THRIFT_TYPE_BINARY_PROTOCOL;
        break;
    default:
        return NULL;
    }
    tw__jaeger_encoder *enc = calloc(1, sizeof(*enc));
    if (!enc)
        return NULL;
    enc->protocol_id = protocol;
    tw__buf_init(&enc->text);
    /* One datagram's worth up front: the array then rarely grows. */
    tw__buf_init(&enc->scratch);
    if (!tw__buf_reserve(&enc->scratch, 65536)) { /* one datagram: rarely grows */
        tw__buf_free(&enc->scratch);
        free(enc);
        return NULL;
    }
    enc->unused = g_byte_array_new();
    enc->transport = g_object_new(tw__scratch_buffer_get_type(), "buf", enc->unused, "owner", FALSE,
                                  "buf_size", (guint)G_MAXUINT32, NULL);
    ((TwireScratchBuffer *)enc->transport)->out = &enc->scratch;
    enc->protocol = g_object_new(type, "transport", enc->transport, NULL);
    return enc;
}

void tw__jaeger_encoder_free(tw__jaeger_encoder *enc)
{
    if (!enc)
        return;
    g_object_unref(enc->protocol);
    g_object_unref(enc->transport);
    g_byte_array_unref(enc->unused);
    tw__buf_free(&enc->scratch);
    tw__buf_free(&enc->text);
    free(enc);
}

bool tw__jaeger_encode_span(tw__jaeger_encoder *enc, const tw__span_data *span, tw__buf *out)
{
    if (!enc || !span || !out)
        return false;
    if (enc->protocol_id == TW__THRIFT_COMPACT && fast_compact_span(span, out))
        return true;
    size_t before = out->len;
    tw__thrift_writer w;
    tw__thrift_writer_init(&w, enc->protocol_id, out);
    tw__thrift_struct_begin(&w);
    direct_span(&w, span, &enc->text);
    tw__thrift_struct_end(&w);
    if (w.failed) {
        out->len = before;
        return false;
    }
    return true;
}

bool tw__jaeger_encode_process(tw__jaeger_encoder *enc, const tw__process *process, tw__buf *out)
{
    if (!enc || !process || !out)
        return false;
    scratch_begin(enc);
    return scratch_end(enc, write_process(enc, process)) &&
           tw__buf_append(out, enc->scratch.data, enc->scratch.len);
}

int32_t tw__jaeger_msg_seq_id(int64_t seq_no)
{
    return seq_no < 0 ? 0 : (int32_t)(seq_no & INT32_MAX);
}

static bool envelope_is_cached(const tw__jaeger_encoder *enc, int64_t seq_no,
                               const tw__client_stats *stats)
{
    if (!enc->envelope.is_valid || enc->envelope.seq_no != seq_no ||
        enc->envelope.has_stats != (stats != NULL))
        return false;
    return !stats ||
           (enc->envelope.stats.full_queue_dropped_spans == stats->full_queue_dropped_spans &&
            enc->envelope.stats.too_large_dropped_spans == stats->too_large_dropped_spans &&
            enc->envelope.stats.failed_to_emit_spans == stats->failed_to_emit_spans);
}

/* Bytes of the list header of @n structs: binary, the element type and an
 * i32 size; compact, one byte (size << 4 | type) below 15 elements, else
 * 0xf0 | type and a varint size. Computed rather than written: the UDP
 * sender sizes its batch once per span. */
static size_t list_header_len(tw__thrift_protocol protocol, size_t n)
{
    if (protocol == TW__THRIFT_BINARY)
        return 5;
    size_t len = 1;
    if (n >= 15)
        for (len = 2; n >= 0x80; n >>= 7)
            len++;
    return len;
}

/* The envelope is measured by the code that writes it (write_emit_batch in
 * measure mode), once with no spans; only the list header depends on the
 * span count, and it is measured on its own for each call. */
size_t tw__jaeger_emit_batch_size(tw__jaeger_encoder *enc, size_t process_len, size_t n_spans,
                                  size_t spans_len, int64_t seq_no, const tw__client_stats *stats)
{
    batch_parts b = {.process_len = process_len,
                     .spans_len = spans_len,
                     .n_spans = n_spans,
                     .seq_no = seq_no,
                     .stats = stats,
                     .is_measure = true};
    if (!enc || !parts_fit(&b))
        return 0;
    if (!envelope_is_cached(enc, seq_no, stats)) {
        batch_parts empty = b;
        empty.n_spans = 0;
        size_t empty_list_len;
        scratch_begin(enc);
        if (!scratch_end(enc, write_emit_batch(enc, &empty, tw__jaeger_msg_seq_id(seq_no))))
            return 0;
        size_t envelope_len = enc->scratch.len;
        empty_list_len = list_header_len(enc->protocol_id, 0);
        enc->envelope.is_valid = true;
        enc->envelope.seq_no = seq_no;
        enc->envelope.has_stats = stats != NULL;
        if (stats)
            enc->envelope.stats = *stats;
        enc->envelope.len = envelope_len - empty_list_len;
    }
    return enc->envelope.len + list_header_len(enc->protocol_id, n_spans) + process_len + spans_len;
}

bool tw__jaeger_emit_batch_message(tw__jaeger_encoder *enc, const uint8_t *process,
                                   size_t process_len, const uint8_t *spans, size_t spans_len,
                                   size_t n_spans, int64_t seq_no, const tw__client_stats *stats,
                                   int32_t msg_seq_id, tw__buf *out)
{
    batch_parts b = {process, process_len, spans, spans_len, n_spans, seq_no, stats, false, 0, 0};
    if (!enc || !out || !process || (!spans && spans_len > 0) || !parts_fit(&b))
        return false;
    scratch_begin(enc);
    return scratch_end(enc, write_emit_batch(enc, &b, msg_seq_id)) && scratch_replace(enc, out);
}

bool tw__jaeger_emit_batch_frame(tw__jaeger_encoder *enc, size_t process_len, size_t n_spans,
                                 size_t spans_len, int64_t seq_no, const tw__client_stats *stats,
                                 int32_t msg_seq_id, tw__jaeger_frame *out)
{
    batch_parts b = {.process_len = process_len,
                     .spans_len = spans_len,
                     .n_spans = n_spans,
                     .seq_no = seq_no,
                     .stats = stats,
                     .is_measure = true};
    if (!enc || !out || !parts_fit(&b))
        return false;
    scratch_begin(enc);
    if (!scratch_end(enc, write_emit_batch(enc, &b, msg_seq_id)))
        return false;
    out->data = enc->scratch.data;
    out->head_len = b.process_at;
    out->mid_len = b.spans_at - b.process_at;
    out->tail_len = enc->scratch.len - b.spans_at;
    return true;
}

bool tw__jaeger_batch_struct(tw__jaeger_encoder *enc, const uint8_t *process, size_t process_len,
                             const uint8_t *spans, size_t spans_len, size_t n_spans, int64_t seq_no,
                             const tw__client_stats *stats, tw__buf *out)
{
    batch_parts b = {process, process_len, spans, spans_len, n_spans, seq_no, stats, false, 0, 0};
    if (!enc || !out || !process || (!spans && spans_len > 0) || !parts_fit(&b))
        return false;
    scratch_begin(enc);
    return scratch_end(enc, write_batch(enc, &b)) && scratch_replace(enc, out);
}

bool tw__jaeger_batch_append(tw__jaeger_encoder *enc, const uint8_t *process, size_t process_len,
                             const uint8_t *spans, size_t spans_len, size_t n_spans, tw__buf *out)
{
    batch_parts b = {process, process_len, spans, spans_len, n_spans, -1, NULL, false, 0, 0};
    if (!enc || !out || !process || (!spans && spans_len > 0) || !parts_fit(&b))
        return false;
    size_t before = out->len;
    tw__thrift_writer w;
    tw__thrift_writer_init(&w, enc->protocol_id, out);
    direct_batch(&w, &b);
    if (w.failed)
        out->len = before;
    return !w.failed;
}
