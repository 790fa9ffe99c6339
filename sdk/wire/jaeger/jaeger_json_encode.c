/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/jaeger/jaeger_json_encode.c: the Jaeger query-API JSON encoder and
 * its document (wire/jaeger/jaeger_json.h has the rules): trace objects
 * written straight into a byte buffer, and the document encoder that groups
 * each batch of spans by trace and frames them ({"data":[...],...}).
 *
 * Why no Jansson tree: `tracewire convert zipkin-v2-json -> jaeger-json`
 * spent about 437,000 instructions per span (callgrind), half of it in
 * Jansson and malloc. The guard is the differential suite
 * tests/unit/wire/test_jaeger_json_encode.c (against the reference Jansson
 * encoder, tests/unit/wire/oracle_jaeger_json.c) and the interop test that
 * loads the output with jaeger-ui's rules.
 *
 * Why reserved stores: the encoder then still cost about 4,750 instructions
 * per span, most of it in a call per field, each checking for room. A span
 * is now written in a few parts, each reserving its worst case once and
 * then storing: the constant text as literals, ids and the trace id's text
 * (made once per trace) as hex 16 digits at a time, keys and values
 * checked for bytes to escape 16 at a time where there is SSE2 (the
 * general writer takes over when one has any). About 2,100 per span. The
 * tag list writer is held to the shared tw__json_put_typed_tag byte for
 * byte by the same suite and by tests/fuzz/fuzz_jaeger_json.c.
 *
 * Memory: one group's index arrays; the view's tag array. Single-threaded.
 */
#include "wire/jaeger/jaeger_json.h"

#include <stdlib.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "wire/core/hex.h"
#include "wire/core/json_write.h"
#include "wire/formats.h"

#define PUT_LIT(out, lit) tw__buf_put((out), (lit), sizeof(lit) - 1)
/* Stores a string literal at @o (room known) and moves @o past it: the
 * constant parts of the objects, a few word stores each. */
#define STORE_LIT(o, lit) (memcpy((o), (lit), sizeof(lit) - 1), (o) += sizeof(lit) - 1)

#ifdef __SSE2__
/* The bytes of @v that a JSON string cannot hold as they are (as
 * tw__json_is_special: '"', '\\', below 0x20, and 0x80 and above, which
 * the general writer checks as UTF-8): a signed compare takes both ends. */
static inline __m128i special_bytes(__m128i v)
{
    __m128i low = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
    __m128i quote = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
    __m128i backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
    return _mm_or_si128(low, _mm_or_si128(quote, backslash));
}
#endif

/* Copies the @len bytes of @text to @dst; whether none needs an escape.
 * Sixteen bytes at a time where SSE2 is (every x86-64): a key or a value
 * of 8 to 16 bytes, most of them, is two 8-byte loads checked as one
 * vector; loads that may overlap never pass the text's end. */
static inline __attribute__((always_inline)) bool copy_plain(uint8_t *dst, const char *text,
                                                             size_t len)
{
    const unsigned char *p = (const unsigned char *)text;
#ifdef __SSE2__
    if (len >= 8) {
        if (len <= 16) {
            __m128i a = _mm_loadl_epi64((const __m128i *)p);
            __m128i b = _mm_loadl_epi64((const __m128i *)(p + len - 8));
            _mm_storel_epi64((__m128i *)dst, a);
            _mm_storel_epi64((__m128i *)(dst + len - 8), b);
            return !_mm_movemask_epi8(special_bytes(_mm_unpacklo_epi64(a, b)));
        }
        /* Longer: the marks of every block gathered, one test at the end
         * (a text that needs an escape is rare, and is then written again). */
        __m128i marks = _mm_setzero_si128();
        for (size_t i = 0; len - i > 16; i += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
            _mm_storeu_si128((__m128i *)(dst + i), v);
            marks = _mm_or_si128(marks, special_bytes(v));
        }
        __m128i v = _mm_loadu_si128((const __m128i *)(p + len - 16));
        _mm_storeu_si128((__m128i *)(dst + len - 16), v);
        return !_mm_movemask_epi8(_mm_or_si128(marks, special_bytes(v)));
    }
#endif
    return tw__json_run_copy(p, len, dst) == len;
}

/* What tw__json_write_text writes, with the plain case (no byte to escape,
 * nearly every key and value) inline: the check copies as it goes, and
 * only a text that needs an escape is written again by the general
 * writer. @o has room for the worst case (tw__json_room). */
static inline __attribute__((always_inline)) uint8_t *write_text(uint8_t *o, const char *text,
                                                                 size_t len)
{
    *o = '"';
    if (!copy_plain(o + 1, text, len)) /* 0 bytes: plain, @text not read */
        return tw__json_write_text(o, text, len);
    o[1 + len] = '"';
    return o + len + 2;
}

/* Writes @v as the 16 lower-case hex digits of tw__hex_u64 at @o. With
 * SSE2, all at once: the bytes most significant first, each split into its
 * two nibbles (high nibble first), and each nibble n made '0' + n, plus
 * 'a' - '0' - 10 when n > 9; every span writes two or three ids. */
static inline void store_hex16(uint8_t *o, uint64_t v)
{
#ifdef __SSE2__
    uint64_t be = __builtin_bswap64(v);
    __m128i x = _mm_loadl_epi64((const __m128i *)(const void *)&be);
    const __m128i low_nibbles = _mm_set1_epi8(0x0f);
    __m128i nibbles = _mm_unpacklo_epi8(_mm_and_si128(_mm_srli_epi16(x, 4), low_nibbles),
                                        _mm_and_si128(x, low_nibbles));
    __m128i letters =
        _mm_and_si128(_mm_cmpgt_epi8(nibbles, _mm_set1_epi8(9)), _mm_set1_epi8('a' - '0' - 10));
    __m128i digits = _mm_add_epi8(_mm_add_epi8(nibbles, _mm_set1_epi8('0')), letters);
    _mm_storeu_si128((__m128i *)(void *)o, digits);
#else
    tw__hex_u64((char *)o, v);
#endif
}

/* A trace id as tw__json_put_trace_id writes it, quotes included, into
 * @text; returns its length (18 or 34). */
static size_t trace_id_text(char text[34], uint64_t high, uint64_t low)
{
    uint8_t *o = (uint8_t *)text;
    o[0] = '"';
    if (!high) {
        store_hex16(o + 1, low);
        o[17] = '"';
        return 18;
    }
    store_hex16(o + 1, high);
    store_hex16(o + 17, low);
    o[33] = '"';
    return 34;
}

/* The trace id text of a trace's spans, made once per trace: each span
 * writes it twice (its own and its parent reference's). */
typedef struct {
    uint64_t high, low;
    size_t len;
    char text[34];
} trace_id_cache;

static uint8_t *store_trace_id(uint8_t *o, const trace_id_cache *c, uint64_t high, uint64_t low)
{
    if (high == c->high && low == c->low) {
        memcpy(o, c->text, 34); /* room for 34 either way: one fixed-size copy */
        return o + c->len;
    }
    char text[34];
    size_t len = trace_id_text(text, high, low);
    memcpy(o, text, len);
    return o + len;
}

static uint8_t *store_hex64(uint8_t *o, uint64_t id)
{
    o[0] = '"';
    store_hex16(o + 1, id);
    o[17] = '"';
    return o + 18;
}

/* ---- spans --------------------------------------------------------------------------------- */

/* The most a reference object takes ("," and FOLLOWS_FROM, 32-digit ids). */
#define REF_ROOM 128

static uint8_t *store_ref(uint8_t *o, bool first, const trace_id_cache *tid, tw__ref_type type,
                          uint64_t hi, uint64_t lo, uint64_t span_id)
{
    if (!first)
        *o++ = ',';
    if (type == TW__REF_FOLLOWS_FROM)
        STORE_LIT(o, "{\"refType\":\"FOLLOWS_FROM\",\"traceID\":");
    else
        STORE_LIT(o, "{\"refType\":\"CHILD_OF\",\"traceID\":");
    o = store_trace_id(o, tid, hi, lo);
    STORE_LIT(o, ",\"spanID\":");
    o = store_hex64(o, span_id);
    *o++ = '}';
    return o;
}

/* The references array, "[" to "]". */
static bool put_references(tw__buf *out, const tw__span_data *s, const trace_id_cache *tid)
{
    /* The reference that names the parent: a CHILD_OF one first, else any. */
    size_t parent_ref = SIZE_MAX;
    for (int pass = 0; pass < 2 && s->parent_id && parent_ref == SIZE_MAX; pass++) {
        for (size_t i = 0; i < s->n_refs && parent_ref == SIZE_MAX; i++) {
            const tw__ref *r = &s->refs[i];
            if ((pass == 1 || r->type == TW__REF_CHILD_OF) && r->span_id == s->parent_id &&
                r->trace_id_high == s->trace_id_high && r->trace_id_low == s->trace_id_low)
                parent_ref = i;
        }
    }
    /* Every reference, and one made for the parent: n_refs + 1 at most. */
    size_t n = s->n_refs + 1;
    if (n > SIZE_MAX / REF_ROOM - 1)
        return false;
    size_t need = (n + 1) * REF_ROOM; /* and the brackets */
    if (out->cap - out->len < need && !tw__buf_grow(out, need))
        return false;
    uint8_t *o = out->data + out->len;
    bool first = true;
    *o++ = '[';
    if (parent_ref != SIZE_MAX) {
        const tw__ref *r = &s->refs[parent_ref];
        o = store_ref(o, first, tid, r->type, r->trace_id_high, r->trace_id_low, r->span_id);
        first = false;
    } else if (s->parent_id) {
        o = store_ref(o, first, tid, TW__REF_CHILD_OF, s->trace_id_high, s->trace_id_low,
                      s->parent_id);
        first = false;
    }
    for (size_t i = 0; i < s->n_refs; i++) {
        const tw__ref *r = &s->refs[i];
        if (i != parent_ref) {
            o = store_ref(o, first, tid, r->type, r->trace_id_high, r->trace_id_low, r->span_id);
            first = false;
        }
    }
    *o++ = ']';
    out->len = (size_t)(o - out->data);
    return true;
}

/* The bytes tw__json_put_typed_tag writes for each tag, joined by ","
 * inside "[" and "]" (tests/unit/wire/test_jaeger_json_encode.c compares
 * the two byte for byte). Most tags are strings, bools and small integers:
 * those are written here in one reserved write each, their constant parts
 * as literals; the others by the shared writer. Every tag starts with ","
 * and the list's "[" then takes the first one's place. */
bool tw__jaeger_json_put_tags(tw__buf *out, const tw__tag *tags, size_t n)
{
    if (n == 0)
        return PUT_LIT(out, "[]");
    size_t start = out->len;
    for (size_t i = 0; i < n; i++) {
        const tw__tag *t = &tags[i];
        uint8_t *o;
        if (t->type == TW_VALUE_STRING) {
            if (t->len > SIZE_MAX / 8 || !tw__json_room(out, t->key_len + t->len, 64))
                return false;
            o = out->data + out->len;
            STORE_LIT(o, ",{\"key\":");
            o = write_text(o, t->key, t->key_len);
            STORE_LIT(o, ",\"type\":\"string\",\"value\":");
            o = write_text(o, t->v.str, t->len);
        } else if (t->type == TW_VALUE_BOOL ||
                   (t->type == TW_VALUE_INT64 && t->v.i64 >= -TW__JSON_MAX_SAFE_INTEGER &&
                    t->v.i64 <= TW__JSON_MAX_SAFE_INTEGER)) {
            if (!tw__json_room(out, t->key_len, 64))
                return false;
            o = out->data + out->len;
            STORE_LIT(o, ",{\"key\":");
            o = write_text(o, t->key, t->key_len);
            if (t->type == TW_VALUE_INT64) {
                STORE_LIT(o, ",\"type\":\"int64\",\"value\":");
                o = tw__json_write_int(o, t->v.i64);
            } else if (t->v.boolean) {
                STORE_LIT(o, ",\"type\":\"bool\",\"value\":true");
            } else {
                STORE_LIT(o, ",\"type\":\"bool\",\"value\":false");
            }
        } else { /* doubles, binary, integers beyond 2^53: the shared writer */
            if (!tw__buf_put_byte(out, ',') || !tw__json_put_typed_tag(out, t))
                return false;
            continue;
        }
        *o++ = '}';
        out->len = (size_t)(o - out->data);
    }
    out->data[start] = '[';
    return tw__buf_put_byte(out, ']');
}

static bool put_logs(tw__buf *out, const tw__span_data *s)
{
    bool ok = PUT_LIT(out, "[");
    for (size_t i = 0; ok && i < s->n_logs; i++) {
        ok = (i == 0 || tw__buf_put_byte(out, ',')) && PUT_LIT(out, "{\"timestamp\":") &&
             tw__json_put_int(out, s->logs[i].timestamp_us) && PUT_LIT(out, ",\"fields\":") &&
             tw__jaeger_json_put_tags(out, s->logs[i].fields, s->logs[i].n_fields) &&
             tw__buf_put_byte(out, '}');
    }
    return ok && tw__buf_put_byte(out, ']');
}

/* The most put_span writes around its texts, references, tags and logs
 * (ids, numbers whose digits are stored eight at a time, the literals and
 * the longest warning): reserved once per part. */
#define SPAN_HEAD_ROOM 192
#define SPAN_MID_ROOM 128
#define SPAN_TAIL_ROOM 192

/* The span object. @fallback_start: the trace's earliest start (0: none).
 * @process_number: n of its process's key "pn". */
static bool put_span(tw__buf *out, tw__jaeger_view *view, const tw__span_data *record,
                     size_t process_number, int64_t fallback_start, const trace_id_cache *tid)
{
    const tw__span_data *s = tw__jaeger_view_of(view, record);
    if (!s)
        return false;
    int64_t start = s->start_us;
    int warning = 0; /* none; else which of the warnings below */
    if (start <= 0) {
        start = 0;
        for (size_t i = 0; i < s->n_logs; i++) {
            if (s->logs[i].timestamp_us > 0 && (!start || s->logs[i].timestamp_us < start))
                start = s->logs[i].timestamp_us;
        }
        warning = 1;
        if (!start) {
            start = fallback_start > 0 ? fallback_start : 1;
            warning = fallback_start > 0 ? 2 : 3;
        }
    }
    const char *op = s->operation ? s->operation : "";
    size_t op_len = s->operation && s->operation_len != UINT32_MAX ? s->operation_len : strlen(op);
    if (!tw__json_room(out, op_len, SPAN_HEAD_ROOM))
        return false;
    uint8_t *o = out->data + out->len;
    STORE_LIT(o, "{\"traceID\":");
    o = store_trace_id(o, tid, s->trace_id_high, s->trace_id_low);
    STORE_LIT(o, ",\"spanID\":");
    o = store_hex64(o, s->span_id);
    STORE_LIT(o, ",\"flags\":");
    o = tw__json_write_int(o, (int64_t)s->flags);
    STORE_LIT(o, ",\"operationName\":");
    o = write_text(o, op, op_len);
    STORE_LIT(o, ",\"references\":");
    out->len = (size_t)(o - out->data);
    if (!put_references(out, s, tid))
        return false;
    if (out->cap - out->len < SPAN_MID_ROOM && !tw__buf_grow(out, SPAN_MID_ROOM))
        return false;
    o = out->data + out->len;
    STORE_LIT(o, ",\"startTime\":");
    o = tw__json_write_int(o, start);
    STORE_LIT(o, ",\"duration\":");
    o = tw__json_write_int(o, s->duration_us > 0 ? s->duration_us : 0);
    STORE_LIT(o, ",\"tags\":");
    out->len = (size_t)(o - out->data);
    if (!tw__jaeger_json_put_tags(out, s->tags, s->n_tags) || !PUT_LIT(out, ",\"logs\":") ||
        !put_logs(out, s))
        return false;
    if (out->cap - out->len < SPAN_TAIL_ROOM && !tw__buf_grow(out, SPAN_TAIL_ROOM))
        return false;
    o = out->data + out->len;
    /* The process key "pN": no byte of it needs an escape. */
    STORE_LIT(o, ",\"processID\":\"p");
    o = tw__json_write_int(o, (int64_t)process_number);
    STORE_LIT(o, "\",\"warnings\":");
    switch (warning) {
    case 0:
        STORE_LIT(o, "null}");
        break;
    case 1:
        STORE_LIT(o, "[\"tracewire: the span had no start time; its earliest log time is used\"]}");
        break;
    case 2:
        STORE_LIT(o, "[\"tracewire: the span had no start time; its trace's start is used\"]}");
        break;
    default:
        STORE_LIT(o, "[\"tracewire: the span had no start time; 1 microsecond is used\"]}");
        break;
    }
    out->len = (size_t)(o - out->data);
    return true;
}

static bool put_process(tw__buf *out, const tw__process *p)
{
    tw__process scratch;
    const tw__process *shown = tw__jaeger_process(p, &scratch);
    return PUT_LIT(out, "{\"serviceName\":") &&
           tw__json_append_text(out, shown->service_name, strlen(shown->service_name)) &&
           PUT_LIT(out, ",\"tags\":") &&
           tw__jaeger_json_put_tags(out, shown->tags, shown->n_tags) && tw__buf_put_byte(out, '}');
}

/* ---- traces -------------------------------------------------------------------------------- */

/* The index of @p among the first @n distinct processes of @procs, or @n. */
static size_t process_index(const tw__process *const *procs, size_t n, const tw__process *p)
{
    size_t k = 0;
    while (k < n && procs[k] != p)
        k++;
    return k;
}

bool tw__jaeger_json_encode_trace(tw__jaeger_view *view, const tw__wire_span *spans,
                                  const size_t *idx, size_t n, tw__buf *out)
{
    if (n == 0)
        return false;
    size_t before = out->len;
    /* The distinct processes of the trace in order of first appearance:
     * their keys are p1..pN. A trace rarely has many: a linear search. */
    const tw__process *small[16];
    const tw__process **procs = n <= 16 ? small : malloc(n * sizeof *procs);
    if (!procs)
        return false;
    size_t n_procs = 0;
    int64_t earliest = 0;
    for (size_t i = 0; i < n; i++) {
        const tw__wire_span *sp = &spans[idx[i]];
        if (process_index(procs, n_procs, sp->process) == n_procs)
            procs[n_procs++] = sp->process;
        int64_t t = sp->data->start_us;
        if (t > 0 && (!earliest || t < earliest))
            earliest = t;
    }
    const tw__span_data *first = spans[idx[0]].data;
    trace_id_cache tid = {first->trace_id_high, first->trace_id_low, 0, {0}};
    tid.len = trace_id_text(tid.text, tid.high, tid.low);
    bool ok = PUT_LIT(out, "{\"traceID\":") && tw__buf_put(out, tid.text, tid.len) &&
              PUT_LIT(out, ",\"spans\":[");
    for (size_t i = 0; ok && i < n; i++) {
        const tw__wire_span *sp = &spans[idx[i]];
        ok = (i == 0 || tw__buf_put_byte(out, ',')) &&
             put_span(out, view, sp->data, process_index(procs, n_procs, sp->process) + 1, earliest,
                      &tid);
    }
    ok = ok && PUT_LIT(out, "],\"processes\":{");
    for (size_t k = 0; ok && k < n_procs; k++) {
        if (out->cap - out->len < 40 && !tw__buf_grow(out, 40)) {
            ok = false;
            break;
        }
        uint8_t *o = out->data + out->len;
        if (k)
            *o++ = ',';
        STORE_LIT(o, "\"p");
        o = tw__json_write_int(o, (int64_t)(k + 1));
        STORE_LIT(o, "\":");
        out->len = (size_t)(o - out->data);
        ok = put_process(out, procs[k]);
    }
    ok = ok && PUT_LIT(out, "},\"warnings\":null}");
    if (procs != small)
        free(procs);
    if (!ok)
        out->len = before;
    return ok;
}

/* ---- the document -------------------------------------------------------------------------- */

struct tw__doc_encoder {
    size_t n_traces;
    tw__jaeger_view view;
};

static tw__doc_encoder *doc_create(const tw__wire_options *opts, tw__span_reject_fn reject,
                                   void *reject_data)
{
    (void)opts;
    (void)reject; /* every span the model holds has a Jaeger JSON form */
    (void)reject_data;
    tw__doc_encoder *e = calloc(1, sizeof *e);
    if (e)
        tw__jaeger_view_init(&e->view);
    return e;
}

static void doc_destroy(tw__doc_encoder *e)
{
    if (!e)
        return;
    tw__jaeger_view_clear(&e->view);
    free(e);
}

typedef struct {
    const tw__wire_span *spans;
} sort_ctx;

static int by_trace_then_position(const void *a, const void *b, void *user)
{
    const tw__wire_span *spans = ((const sort_ctx *)user)->spans;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const tw__span_data *x = spans[i].data, *y = spans[j].data;
    if (x->trace_id_high != y->trace_id_high)
        return x->trace_id_high < y->trace_id_high ? -1 : 1;
    if (x->trace_id_low != y->trace_id_low)
        return x->trace_id_low < y->trace_id_low ? -1 : 1;
    return i < j ? -1 : i > j;
}

typedef struct {
    size_t start, len; /* a run in the sorted index */
} group;

static int by_first_position(const void *a, const void *b, void *user)
{
    const size_t *idx = user;
    size_t x = idx[((const group *)a)->start], y = idx[((const group *)b)->start];
    return x < y ? -1 : x > y;
}

static bool doc_encode(tw__doc_encoder *e, const tw__wire_span *spans, size_t n, tw__buf *out)
{
    if (n == 0)
        return true;
    size_t *idx = malloc(n * sizeof *idx);
    group *groups = malloc(n * sizeof *groups);
    bool ok = idx && groups;
    if (ok) {
        for (size_t i = 0; i < n; i++)
            idx[i] = i;
        /* The assembler hands over one trace at a time: then the sort,
         * stable by position, would leave the order as it is. */
        const tw__span_data *first = spans[0].data;
        size_t same = 1;
        while (same < n && spans[same].data->trace_id_high == first->trace_id_high &&
               spans[same].data->trace_id_low == first->trace_id_low)
            same++;
        if (same < n) {
            sort_ctx sc = {spans};
            qsort_r(idx, n, sizeof *idx, by_trace_then_position, &sc);
        }
        size_t n_groups = 0;
        for (size_t i = 0; i < n; i++) {
            const tw__span_data *s = spans[idx[i]].data;
            const tw__span_data *prev = i ? spans[idx[i - 1]].data : NULL;
            if (!prev || prev->trace_id_high != s->trace_id_high ||
                prev->trace_id_low != s->trace_id_low)
                groups[n_groups++] = (group){i, 0};
            groups[n_groups - 1].len++;
        }
        if (n_groups > 1)
            qsort_r(groups, n_groups, sizeof *groups, by_first_position, idx);
        for (size_t g = 0; ok && g < n_groups; g++) {
            ok = (e->n_traces++ ? PUT_LIT(out, ",") : PUT_LIT(out, "{\"data\":[")) &&
                 tw__jaeger_json_encode_trace(&e->view, spans, idx + groups[g].start, groups[g].len,
                                              out);
        }
    }
    free(idx);
    free(groups);
    return ok;
}

static bool doc_finish(tw__doc_encoder *e, tw__buf *out)
{
    return (e->n_traces || PUT_LIT(out, "{\"data\":[")) &&
           PUT_LIT(out, "],\"total\":0,\"limit\":0,\"offset\":0,\"errors\":null}\n");
}

const tw__wire_encoder tw__jaeger_json_encoder = {
    .name = "jaeger-json",
    .summary = "Jaeger query-API JSON {\"data\":[trace...]} (loads in Jaeger UI's JSON upload)",
    .flags = TW__ENCODER_JAEGER_IDS,
    .create = doc_create,
    .encode = doc_encode,
    .finish = doc_finish,
    .destroy = doc_destroy,
};
