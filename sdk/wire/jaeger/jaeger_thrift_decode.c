/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/jaeger/jaeger_thrift_decode.c: decodes jaeger.thrift Batch structs and
 * Agent.emitBatch messages (binary and compact protocols) into the span
 * model; see wire/jaeger/jaeger_thrift_decode.h for the rules and
 * wire/jaeger/jaeger_thrift.h for the field tables.
 *
 * The protocols are read with the one Thrift reader (wire/core/thrift.h,
 * which states the protocol facts); types are its binary-protocol ids.
 * No state, no locks.
 */
#include "wire/jaeger/jaeger_thrift_decode.h"

#include "wire/core/input.h" /* tw__wire_admit_span */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- pass 1: the record's layout ------------------------------------------------------ */

typedef struct layout {
    size_t process_at; /* the Process struct (after its field header); 0: none */
    size_t spans_at;   /* the spans list header; 0: none */
    size_t n_spans;
} layout;

#define bad_at(c, at, ...) tw__thrift_fail((c), TW__THRIFT_MALFORMED, (at), __VA_ARGS__)

static bool scan_batch(tw__thrift_reader *c, layout *lay)
{
    size_t batch_start = c->pos;
    int16_t last = 0;
    for (;;) {
        int t;
        int16_t id;
        if (!tw__thrift_read_field(c, &t, &id, &last))
            return false;
        if (t == TW__T_STOP)
            break;
        if (id == 1 && t == TW__T_STRUCT) {
            lay->process_at = c->pos;
        } else if (id == 2 && t == TW__T_LIST) {
            size_t at = c->pos;
            int et;
            size_t n;
            if (!tw__thrift_read_list(c, &et, &n))
                return false;
            if (n > 0 && et != TW__T_STRUCT)
                return bad_at(c, at, "Batch.spans is not a list of structs");
            lay->spans_at = at;
            lay->n_spans = n;
            c->pos = at;
        }
        if (!tw__thrift_skip(c, t, 1))
            return false;
    }
    if (!lay->process_at)
        return bad_at(c, batch_start, "Batch has no process (field 1)");
    if (!lay->spans_at)
        return bad_at(c, batch_start, "Batch has no spans (field 2)");
    return true;
}

/* A message header; true when it is emitBatch (CALL or ONEWAY). */
static bool scan_message_header(tw__thrift_reader *c)
{
    size_t start = c->pos;
    const uint8_t *name;
    size_t name_len;
    int type;
    int32_t seq;
    if (!tw__thrift_read_message_begin(c, &name, &name_len, &type, &seq))
        return false;
    if (name_len != 9 || memcmp(name, "emitBatch", 9) != 0)
        return bad_at(c, start, "message is not emitBatch");
    if (type != TW__THRIFT_CALL && type != TW__THRIFT_ONEWAY)
        return bad_at(c, start, "emitBatch message of type %d (not CALL or ONEWAY)", type);
    return true;
}

/* The args struct: returns the Batch's offset in *batch_at. */
static bool scan_args(tw__thrift_reader *c, size_t *batch_at, layout *lay)
{
    size_t start = c->pos;
    int16_t last = 0;
    *batch_at = 0;
    for (;;) {
        int t;
        int16_t id;
        if (!tw__thrift_read_field(c, &t, &id, &last))
            return false;
        if (t == TW__T_STOP)
            break;
        if (id == 1 && t == TW__T_STRUCT) {
            *batch_at = c->pos;
            *lay = (layout){0, 0, 0};
            if (!scan_batch(c, lay))
                return false;
        } else if (!tw__thrift_skip(c, t, 1)) {
            return false;
        }
    }
    if (!*batch_at)
        return bad_at(c, start, "emitBatch without a batch (field 1)");
    return true;
}

/* ---- pass 2: building the model ------------------------------------------------------- */

typedef struct decoder {
    tw__thrift_reader c;
    tw__buf scratch; /* NUL-terminated copies of keys and names */
    tw__thrift_result result;
    const tw__jaeger_sink *sink; /* nullable */
    char why[320];
} decoder;

/* @len bytes and a NUL in the scratch buffer; NULL on allocation failure. */
static const char *cstr(decoder *d, const uint8_t *p, size_t len)
{
    tw__buf_reset(&d->scratch);
    static const uint8_t nul = 0;
    if (!tw__buf_append(&d->scratch, p, len) || !tw__buf_append(&d->scratch, &nul, 1))
        return NULL;
    return (const char *)d->scratch.data;
}

typedef struct tag_in {
    const uint8_t *key;
    size_t key_len;
    int64_t vtype;
    bool has_vtype;
    tw_value value;
} tag_in;

static void why_set(decoder *d, const char *fmt, ...) TW_PRINTF(2, 3);
static void why_set(decoder *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->why, sizeof d->why, fmt, ap);
    va_end(ap);
}

/* A list header that must hold structs (or be empty): its size in *n.
 * False on a cursor error, or with d->why naming @what. */
static bool read_struct_list(decoder *d, const char *what, size_t *n)
{
    int et;
    if (!tw__thrift_read_list(&d->c, &et, n))
        return false;
    if (*n > 0 && et != TW__T_STRUCT) {
        why_set(d, "%s", what);
        return false;
    }
    return true;
}

/* Reads one Tag. False on a cursor error or a semantic error (d->why set,
 * d->c still OK). */
static bool read_tag(decoder *d, tag_in *tag)
{
    tw__thrift_reader *c = &d->c;
    const uint8_t *str = NULL, *bin = NULL;
    size_t str_len = 0, bin_len = 0;
    double dbl = 0;
    bool boolean = false;
    int64_t i64 = 0;
    *tag = (tag_in){.key = (const uint8_t *)"", .key_len = 0};
    int16_t last = 0;
    for (;;) {
        int t;
        int16_t id;
        if (!tw__thrift_read_field(c, &t, &id, &last))
            return false;
        if (t == TW__T_STOP)
            break;
        bool ok;
        if (id == 1 && t == TW__T_STRING) {
            ok = tw__thrift_read_bytes(c, &tag->key, &tag->key_len);
        } else if (id == 2 && t == TW__T_I32) {
            ok = tw__thrift_read_int(c, 32, &tag->vtype);
            tag->has_vtype = true;
        } else if (id == 3 && t == TW__T_STRING) {
            ok = tw__thrift_read_bytes(c, &str, &str_len);
        } else if (id == 4 && t == TW__T_DOUBLE) {
            ok = tw__thrift_read_double(c, &dbl);
        } else if (id == 5 && t == TW__T_BOOL) {
            ok = tw__thrift_read_bool(c, &boolean);
        } else if (id == 6 && t == TW__T_I64) {
            ok = tw__thrift_read_int(c, 64, &i64);
        } else if (id == 7 && t == TW__T_STRING) {
            ok = tw__thrift_read_bytes(c, &bin, &bin_len);
        } else {
            ok = tw__thrift_skip(c, t, 2);
        }
        if (!ok)
            return false;
    }
    if (!tag->has_vtype) {
        why_set(d, "tag \"%.*s\" has no vType", (int)(tag->key_len > 64 ? 64 : tag->key_len),
                (const char *)tag->key);
        return false;
    }
    switch (tag->vtype) {
    case 0:
        tag->value =
            (tw_value){.type = TW_VALUE_STRING, .len = str_len, .as.str = (const char *)str};
        break;
    case 1:
        tag->value = (tw_value){.type = TW_VALUE_DOUBLE, .as.dbl = dbl};
        break;
    case 2:
        tag->value = (tw_value){.type = TW_VALUE_BOOL, .as.boolean = boolean};
        break;
    case 3:
        tag->value = (tw_value){.type = TW_VALUE_INT64, .as.i64 = i64};
        break;
    case 4:
        tag->value = (tw_value){.type = TW_VALUE_BINARY, .len = bin_len, .as.bin = bin};
        break;
    default:
        why_set(d, "tag \"%.*s\" has unknown vType %lld",
                (int)(tag->key_len > 64 ? 64 : tag->key_len), (const char *)tag->key,
                (long long)tag->vtype);
        return false;
    }
    return true;
}

/* Decodes a list<Tag> into tw__tag slots given by @push (span tags, log
 * fields or process tags). Returns false on error (d->why or cursor). */
typedef enum tag_dest { DEST_SPAN, DEST_LOG, DEST_PROCESS } tag_dest;

static bool read_tags(decoder *d, tag_dest dest, tw__span_data *span, tw__log *log,
                      tw__process *process)
{
    size_t n;
    if (!read_struct_list(d, "a tag list of non-structs", &n))
        return false;
    for (size_t i = 0; i < n; i++) {
        tag_in tag;
        if (!read_tag(d, &tag))
            return false;
        bool ok;
        bool cut = false;
        if (dest == DEST_PROCESS) {
            const char *key = cstr(d, tag.key, tag.key_len);
            ok = key && tw__process_add_tag(process, key, &tag.value);
        } else {
            /* The model's keys are C strings: a key ends at its first NUL. */
            const uint8_t *nul = tag.key_len ? memchr(tag.key, 0, tag.key_len) : NULL;
            size_t key_len = nul ? (size_t)(nul - tag.key) : tag.key_len;
            tw__tag *slot =
                dest == DEST_SPAN ? tw__span_data_push_tag(span) : &log->fields[log->n_fields];
            ok = slot && tw__tag_set_n(&span->arena, slot, (const char *)tag.key, key_len,
                                       &tag.value, SIZE_MAX, &cut);
            if (ok && dest == DEST_SPAN)
                span->n_tags++;
            else if (ok)
                log->n_fields++;
        }
        if (!ok) {
            d->result = TW__THRIFT_NOMEM;
            return false;
        }
    }
    return true;
}

static bool read_process(decoder *d, tw__process *p)
{
    tw__thrift_reader *c = &d->c;
    int16_t last = 0;
    const uint8_t *name = (const uint8_t *)"";
    size_t name_len = 0;
    for (;;) {
        int t;
        int16_t id;
        if (!tw__thrift_read_field(c, &t, &id, &last))
            return false;
        if (t == TW__T_STOP)
            break;
        bool ok;
        if (id == 1 && t == TW__T_STRING) {
            ok = tw__thrift_read_bytes(c, &name, &name_len);
        } else if (id == 2 && t == TW__T_LIST) {
            /* A repeated field: the last one wins, as in generated code. */
            p->n_tags = 0;
            ok = read_tags(d, DEST_PROCESS, NULL, NULL, p);
        } else {
            ok = tw__thrift_skip(c, t, 2);
        }
        if (!ok)
            return false;
    }
    const char *service = cstr(d, name, name_len);
    if (!service || !tw__process_set_service(p, service)) {
        d->result = TW__THRIFT_NOMEM;
        return false;
    }
    return true;
}

static bool read_logs(decoder *d, tw__span_data *span)
{
    tw__thrift_reader *c = &d->c;
    size_t n;
    if (!read_struct_list(d, "logs is not a list of structs", &n))
        return false;
    for (size_t i = 0; i < n; i++) {
        int64_t ts = 0;
        tw__log *log = NULL;
        int16_t last = 0;
        for (;;) {
            int t;
            int16_t id;
            if (!tw__thrift_read_field(c, &t, &id, &last))
                return false;
            if (t == TW__T_STOP)
                break;
            bool ok;
            if (id == 1 && t == TW__T_I64) {
                ok = tw__thrift_read_int(c, 64, &ts);
            } else if (id == 2 && t == TW__T_LIST) {
                /* The field count is known before the fields: one array. */
                size_t at = c->pos;
                int ft;
                size_t nf;
                if (!tw__thrift_read_list(c, &ft, &nf))
                    return false;
                c->pos = at;
                if (!log) {
                    log = tw__span_data_push_log(span, nf);
                    if (!log) {
                        d->result = TW__THRIFT_NOMEM;
                        return false;
                    }
                    span->n_logs++;
                } else if (nf > 0) {
                    log->fields = tw__arena_alloc(&span->arena, nf * sizeof(tw__tag));
                    if (!log->fields) {
                        d->result = TW__THRIFT_NOMEM;
                        return false;
                    }
                }
                log->n_fields = 0;
                ok = read_tags(d, DEST_LOG, span, log, NULL);
            } else {
                ok = tw__thrift_skip(c, t, 3);
            }
            if (!ok)
                return false;
        }
        if (!log) {
            log = tw__span_data_push_log(span, 0);
            if (!log) {
                d->result = TW__THRIFT_NOMEM;
                return false;
            }
            span->n_logs++;
        }
        log->timestamp_us = ts;
    }
    return true;
}

static bool read_refs(decoder *d, tw__span_data *span)
{
    tw__thrift_reader *c = &d->c;
    size_t n;
    if (!read_struct_list(d, "references is not a list of structs", &n))
        return false;
    for (size_t i = 0; i < n; i++) {
        int64_t type = 0, lo = 0, hi = 0, id64 = 0;
        bool has_type = false, has_lo = false, has_id = false;
        int16_t last = 0;
        for (;;) {
            int t;
            int16_t id;
            if (!tw__thrift_read_field(c, &t, &id, &last))
                return false;
            if (t == TW__T_STOP)
                break;
            bool ok;
            if (id == 1 && t == TW__T_I32) {
                ok = tw__thrift_read_int(c, 32, &type);
                has_type = true;
            } else if (id == 2 && t == TW__T_I64) {
                ok = tw__thrift_read_int(c, 64, &lo);
                has_lo = true;
            } else if (id == 3 && t == TW__T_I64) {
                ok = tw__thrift_read_int(c, 64, &hi);
            } else if (id == 4 && t == TW__T_I64) {
                ok = tw__thrift_read_int(c, 64, &id64);
                has_id = true;
            } else {
                ok = tw__thrift_skip(c, t, 3);
            }
            if (!ok)
                return false;
        }
        if (!has_type || !has_lo || !has_id) {
            why_set(d, "reference %zu lacks refType, traceIdLow or spanId", i);
            return false;
        }
        if (type != 0 && type != 1) {
            why_set(d, "reference %zu has unknown refType %lld", i, (long long)type);
            return false;
        }
        if (!tw__span_data_add_ref(span, type == 0 ? TW__REF_CHILD_OF : TW__REF_FOLLOWS_FROM,
                                   (uint64_t)hi, (uint64_t)lo, (uint64_t)id64)) {
            d->result = TW__THRIFT_NOMEM;
            return false;
        }
    }
    return true;
}

/* One Span struct. Returns the record, or NULL with d->why (a bad span),
 * d->result NOMEM, or a cursor error. *warned: the duration was negative. */
static tw__span_data *read_span(decoder *d, bool *warned)
{
    tw__thrift_reader *c = &d->c;
    tw__span_data *s = tw__span_data_new();
    if (!s) {
        d->result = TW__THRIFT_NOMEM;
        return NULL;
    }
    int64_t lo = 0, hi = 0, sid = 0, pid = 0, flags = 0, start = 0, dur = 0;
    bool has_lo = false, has_hi = false, has_sid = false, has_start = false;
    const uint8_t *op = (const uint8_t *)"";
    size_t op_len = 0;
    int16_t last = 0;
    d->why[0] = '\0';
    for (;;) {
        int t;
        int16_t id;
        if (!tw__thrift_read_field(c, &t, &id, &last))
            goto fail;
        if (t == TW__T_STOP)
            break;
        bool ok;
        if (t == TW__T_I64 && (id == 1 || id == 2 || id == 3 || id == 4 || id == 8 || id == 9)) {
            int64_t v;
            ok = tw__thrift_read_int(c, 64, &v);
            switch (id) {
            case 1:
                lo = v, has_lo = true;
                break;
            case 2:
                hi = v, has_hi = true;
                break;
            case 3:
                sid = v, has_sid = true;
                break;
            case 4:
                pid = v;
                break;
            case 8:
                start = v, has_start = true;
                break;
            default:
                dur = v;
                break;
            }
        } else if (id == 5 && t == TW__T_STRING) {
            ok = tw__thrift_read_bytes(c, &op, &op_len);
        } else if (id == 6 && t == TW__T_LIST) {
            s->n_refs = 0; /* a repeated field: the last one wins */
            ok = read_refs(d, s);
        } else if (id == 7 && t == TW__T_I32) {
            ok = tw__thrift_read_int(c, 32, &flags);
        } else if (id == 10 && t == TW__T_LIST) {
            s->n_tags = 0;
            ok = read_tags(d, DEST_SPAN, s, NULL, NULL);
        } else if (id == 11 && t == TW__T_LIST) {
            s->n_logs = 0;
            ok = read_logs(d, s);
        } else {
            ok = tw__thrift_skip(c, t, 2);
        }
        if (!ok)
            goto fail;
    }
    if (!has_lo || !has_hi || !has_sid || !has_start) {
        why_set(d, "span lacks %s",
                !has_lo    ? "traceIdLow (field 1)"
                : !has_hi  ? "traceIdHigh (field 2)"
                : !has_sid ? "spanId (field 3)"
                           : "startTime (field 8)");
        goto fail;
    }
    if (lo == 0 && hi == 0) {
        why_set(d, "the trace id is zero");
        goto fail;
    }
    if (sid == 0) {
        why_set(d, "the span id is zero");
        goto fail;
    }
    if (!tw__span_data_set_operation(s, (const char *)op, op_len)) {
        d->result = TW__THRIFT_NOMEM;
        goto fail;
    }
    s->trace_id_low = (uint64_t)lo;
    s->trace_id_high = (uint64_t)hi;
    s->span_id = (uint64_t)sid;
    s->parent_id = pid == sid ? 0 : (uint64_t)pid;
    if (s->parent_id == 0) {
        for (size_t i = 0; i < s->n_refs; i++) {
            const tw__ref *r = &s->refs[i];
            if (r->type == TW__REF_CHILD_OF && r->trace_id_low == s->trace_id_low &&
                r->trace_id_high == s->trace_id_high && r->span_id != s->span_id) {
                s->parent_id = r->span_id;
                break;
            }
        }
    }
    s->flags = (uint32_t)flags;
    s->start_us = start;
    *warned = dur < 0;
    s->duration_us = dur < 0 ? 0 : dur;
    /* Where the span enters the model: its time unit and range (a bad
     * span is rejected alone, with its bytes). */
    bool is_admitted = d->sink && d->sink->input
                           ? tw__wire_admit_span(d->sink->input, 0, s, d->why, sizeof d->why)
                           : tw__span_data_check_times(s, d->why, sizeof d->why);
    if (!is_admitted)
        goto fail;
    return s;
fail:
    tw__span_data_unref(s);
    return NULL;
}

/* ---- the record ----------------------------------------------------------------------- */

int tw__jaeger_detect(const uint8_t *data, size_t len, tw__thrift_protocol *protocol,
                      bool *is_message)
{
    if (len < 1)
        return -1;
    switch (data[0]) {
    case 0x0C:
        if (len < 3)
            return -1;
        if (data[1] != 0 || data[2] != 1)
            return 0;
        *protocol = TW__THRIFT_BINARY;
        *is_message = false;
        return 1;
    case 0x1C:
        *protocol = TW__THRIFT_COMPACT;
        *is_message = false;
        return 1;
    case 0x80:
        if (len < 2)
            return -1;
        if (data[1] != 0x01)
            return 0;
        *protocol = TW__THRIFT_BINARY;
        *is_message = true;
        return 1;
    case 0x82:
        if (len < 2)
            return -1;
        if ((data[1] & 0x1f) != 1)
            return 0;
        *protocol = TW__THRIFT_COMPACT;
        *is_message = true;
        return 1;
    case 0x00: {
        static const uint8_t old[13] = {0, 0, 0, 9, 'e', 'm', 'i', 't', 'B', 'a', 't', 'c', 'h'};
        size_t n = len < sizeof old ? len : sizeof old;
        if (memcmp(data, old, n) != 0)
            return 0;
        if (len < sizeof old)
            return -1;
        *protocol = TW__THRIFT_BINARY;
        *is_message = true;
        return 1;
    }
    default:
        return 0;
    }
}

tw__thrift_result tw__jaeger_decode(const uint8_t *data, size_t len, tw__thrift_protocol protocol,
                                    bool is_message, const tw__jaeger_sink *sink,
                                    tw__jaeger_record *info, size_t *need, size_t *err_offset,
                                    char *why, size_t why_size)
{
    if (protocol != TW__THRIFT_BINARY && protocol != TW__THRIFT_COMPACT) {
        if (why && why_size)
            snprintf(why, why_size, "unknown protocol");
        if (err_offset)
            *err_offset = 0;
        return TW__THRIFT_MALFORMED;
    }
    if (why && why_size)
        why[0] = '\0';
    decoder d;
    tw__thrift_reader_init(&d.c, data, len, protocol, TW__JAEGER_MAX_DEPTH);
    tw__buf_init(&d.scratch);
    d.result = TW__THRIFT_OK;
    d.sink = sink;
    d.why[0] = '\0';

    /* Pass 1. */
    layout lay = {0, 0, 0};
    size_t batch_at = 0;
    bool ok = is_message ? scan_message_header(&d.c) && scan_args(&d.c, &batch_at, &lay)
                         : scan_batch(&d.c, &lay);
    if (!ok) {
        if (d.c.state == TW__THRIFT_SHORT) {
            if (need)
                *need = d.c.need;
            return TW__THRIFT_SHORT;
        }
        if (err_offset)
            *err_offset = d.c.err_at;
        if (why && why_size)
            snprintf(why, why_size, "%s", d.c.why);
        return TW__THRIFT_MALFORMED;
    }
    size_t size = d.c.pos;
    if (info)
        *info = (tw__jaeger_record){size, lay.n_spans, is_message, protocol};

    /* Pass 2: the structure is known to be sound, so cursor errors cannot
     * happen here; they are still handled as MALFORMED. */
    tw__process process;
    tw__process_init(&process);
    tw__thrift_result result = TW__THRIFT_OK;
    d.c.pos = lay.process_at;
    if (!read_process(&d, &process)) {
        result = d.result == TW__THRIFT_NOMEM ? TW__THRIFT_NOMEM : TW__THRIFT_MALFORMED;
        if (result == TW__THRIFT_MALFORMED) {
            if (err_offset)
                *err_offset = lay.process_at;
            if (why && why_size)
                snprintf(why, why_size, "Batch.process: %s",
                         d.c.state != TW__THRIFT_OK ? d.c.why : d.why);
        }
        goto done;
    }
    d.c.pos = lay.spans_at;
    int et;
    size_t n;
    if (!tw__thrift_read_list(&d.c, &et, &n)) {
        result = TW__THRIFT_MALFORMED;
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        size_t at = d.c.pos;
        bool warned = false;
        tw__span_data *span = read_span(&d, &warned);
        if (d.result == TW__THRIFT_NOMEM) {
            result = TW__THRIFT_NOMEM;
            goto done;
        }
        if (d.c.state != TW__THRIFT_OK) {
            result = TW__THRIFT_MALFORMED;
            if (err_offset)
                *err_offset = d.c.err_at;
            if (why && why_size)
                snprintf(why, why_size, "%s", d.c.why);
            goto done;
        }
        if (!span) {
            /* A bad span: its extent, for the caller's reject. */
            d.c.state = TW__THRIFT_OK;
            d.c.pos = at;
            d.c.pending_bool = -1;
            char reason[sizeof d.why];
            memcpy(reason, d.why, sizeof reason);
            if (!tw__thrift_skip(&d.c, TW__T_STRUCT, 1)) {
                result = TW__THRIFT_MALFORMED;
                goto done;
            }
            if (sink && sink->bad_span &&
                !sink->bad_span(sink->user_data, i, at, d.c.pos - at, reason)) {
                result = TW__THRIFT_STOPPED;
                goto done;
            }
            continue;
        }
        if (warned && sink && sink->warn)
            sink->warn(sink->user_data, i, "negative duration: set to 0");
        if (sink && sink->span) {
            if (!sink->span(sink->user_data, span, &process)) {
                result = TW__THRIFT_STOPPED;
                goto done;
            }
        } else {
            tw__span_data_unref(span);
        }
    }
done:
    if (result == TW__THRIFT_MALFORMED && why && why_size && !why[0])
        snprintf(why, why_size, "inconsistent record");
    tw__process_clear(&process);
    tw__buf_free(&d.scratch);
    return result;
}
