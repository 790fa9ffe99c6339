/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/dapper/dapper_log_fast.c: the fast decoder of Dapper log lines (the bridge's
 * `--from dapper` hot path). It scans a line with wire/core/json_scan.h and
 * builds the span and its process straight from the tokens, with no Jansson
 * tree: about 70 MB/s of Jansson parsing and its per-line hashtables were
 * most of the cost of reading a line.
 *
 * Equality with the general decoder (dapper_log.c, decode_record) is the
 * whole contract: this file repeats its steps in the same order (the same
 * model builders called with the same values, so the records are equal
 * field by field) and returns "decline" wherever the general decoder would
 * fail or where the scanner is unsure; the general decoder then reads the
 * line and gives its error message. Shared rules (ids, base64, kinds, int64
 * and float64 texts) are the same functions (dapper_log_int.h). The
 * differential suite tests/unit/wire/test_dapper_fast.c and the fuzz target
 * tests/fuzz/fuzz_dapper_fast.c check that both decoders agree.
 *
 * Memory: a scanner on the stack (inline storage for a typical line). On a
 * decline everything built is released. Locking: none.
 */
#include <stdlib.h>
#include <string.h>

#include "wire/dapper/dapper_log.h"
#include "wire/dapper/dapper_log_int.h"
#include "wire/core/base64.h"
#include "wire/core/json_scan.h"

typedef struct {
    const tw__jtok *tok;
    const tw__json_scan *js;
    tw__span_data *span;
    tw__process *process;
} fast;

/* A present string without NUL bytes (get_cstr). */
static bool cstr(const fast *f, size_t v, const char **out)
{
    if (!v || f->tok[v].type != TW__J_STRING || f->tok[v].has_nul)
        return false;
    *out = f->tok[v].v.str;
    return true;
}

static bool integer(const fast *f, size_t v, int64_t *out)
{
    if (!v || f->tok[v].type != TW__J_INTEGER)
        return false;
    *out = f->tok[v].v.i;
    return true;
}

/* An optional array member (its token, 0 when absent): false when present
 * and not an array. */
static bool array(const fast *f, size_t v)
{
    return !v || f->tok[v].type == TW__J_ARRAY;
}

static bool pick(const fast *f, size_t obj, const tw__json_key *keys, size_t n, size_t *out)
{
    return tw__json_scan_pick(f->js, obj, keys, n, out);
}

/* The elements of the array at @a: first at a + 1, next at tok[i].end. */
#define FOR_ELEMENTS(f, a, i)                                                                      \
    for (size_t i = (a) ? (a) + 1 : 0, end_##i = (a) ? (f)->tok[a].end : 0; i < end_##i;           \
         i = (f)->tok[i].end)

typedef struct {
    const char *key;
    tw_value value;
    uint8_t *bin;
} decoded_tag;

/* dapper_log.c decode_tag(). */
static bool decode_tag(const fast *f, size_t o, decoded_tag *out)
{
    static const tw__json_key keys[] = {TW__JKEY("key"), TW__JKEY("type"), TW__JKEY("value")};
    size_t m[3];
    out->bin = NULL;
    /* An empty key is rare: the Jansson path reads it (this one declines). */
    if (!pick(f, o, keys, 3, m) || !cstr(f, m[0], &out->key) || !*out->key)
        return false;
    size_t type_at = m[1];
    size_t v = m[2];
    if (!type_at || f->tok[type_at].type != TW__J_STRING || !v)
        return false;
    const char *type = f->tok[type_at].v.str; /* a C string, as json_string_value gives it */
    const tw__jtok *value = &f->tok[v];
    tw_value *tv = &out->value;
    memset(tv, 0, sizeof(*tv));
    if (strcmp(type, "string") == 0) {
        if (value->type != TW__J_STRING)
            return false;
        tv->type = TW_VALUE_STRING;
        tv->as.str = value->v.str;
        tv->len = value->len;
    } else if (strcmp(type, "bool") == 0) {
        if (value->type != TW__J_TRUE && value->type != TW__J_FALSE)
            return false;
        tv->type = TW_VALUE_BOOL;
        tv->as.boolean = value->type == TW__J_TRUE;
    } else if (strcmp(type, "int64") == 0) {
        tv->type = TW_VALUE_INT64;
        if (value->type == TW__J_INTEGER)
            tv->as.i64 = value->v.i;
        else if (value->type != TW__J_STRING ||
                 !tw__dapper_int64_text(value->v.str, value->len, &tv->as.i64))
            return false;
    } else if (strcmp(type, "float64") == 0) {
        tv->type = TW_VALUE_DOUBLE;
        if (value->type == TW__J_INTEGER)
            tv->as.dbl = (double)value->v.i; /* json_number_value of an integer */
        else if (value->type == TW__J_REAL)
            tv->as.dbl = value->v.d;
        else if (value->type != TW__J_STRING || !tw__dapper_float64_text(value->v.str, &tv->as.dbl))
            return false;
    } else if (strcmp(type, "binary") == 0) {
        bool is_nomem = false;
        if (value->type != TW__J_STRING ||
            !tw__base64_decode(value->v.str, value->len, true, &out->bin, &tv->len, &is_nomem))
            return false;
        tv->type = TW_VALUE_BINARY;
        tv->as.bin = out->bin;
    } else {
        return false;
    }
    return true;
}

static bool decode_tag_into(const fast *f, tw__arena *arena, size_t o, tw__tag *slot)
{
    decoded_tag t;
    bool ok = decode_tag(f, o, &t);
    bool was_truncated = false;
    ok = ok && tw__tag_set(arena, slot, t.key, &t.value, SIZE_MAX, &was_truncated);
    free(t.bin);
    return ok;
}

static bool decode_span_tags(fast *f, size_t tags)
{
    FOR_ELEMENTS(f, tags, i)
    {
        tw__tag *slot = tw__span_data_push_tag(f->span);
        if (!slot || !decode_tag_into(f, &f->span->arena, i, slot))
            return false;
        f->span->n_tags++;
    }
    return true;
}

static bool decode_logs(fast *f, size_t logs)
{
    FOR_ELEMENTS(f, logs, i)
    {
        static const tw__json_key keys[] = {TW__JKEY("ts_us"), TW__JKEY("fields")};
        size_t m[2];
        int64_t ts;
        if (!pick(f, i, keys, 2, m) || !integer(f, m[0], &ts) || !array(f, m[1]))
            return false;
        size_t fields = m[1];
        size_t n = fields ? f->tok[fields].n : 0;
        tw__log *log = tw__span_data_push_log(f->span, n);
        if (!log)
            return false;
        log->timestamp_us = ts;
        FOR_ELEMENTS(f, fields, k)
        {
            if (!decode_tag_into(f, &f->span->arena, k, &log->fields[log->n_fields]))
                return false;
            log->n_fields++;
        }
        f->span->n_logs++;
    }
    return true;
}

static bool decode_annotations(fast *f, size_t annotations, tw__span_kind *kind)
{
    *kind = TW__KIND_NONE;
    FOR_ELEMENTS(f, annotations, i)
    {
        static const tw__json_key keys[] = {TW__JKEY("ts_us"), TW__JKEY("value")};
        size_t m[2];
        int64_t ts;
        const char *value;
        if (!pick(f, i, keys, 2, m) || !integer(f, m[0], &ts) || !cstr(f, m[1], &value))
            return false;
        tw__span_kind k = tw__dapper_kind_of_annotation(value);
        if (k != TW__KIND_NONE) {
            if (*kind != TW__KIND_NONE && *kind != k)
                return false;
            *kind = k;
            continue;
        }
        tw__log *log = tw__span_data_push_log(f->span, 1);
        if (!log)
            return false;
        log->timestamp_us = ts;
        tw_value v = {.type = TW_VALUE_STRING, .as.str = value, .len = strlen(value)};
        bool was_truncated = false;
        if (!tw__tag_set(&f->span->arena, &log->fields[0], "event", &v, SIZE_MAX, &was_truncated))
            return false;
        log->n_fields = 1;
        f->span->n_logs++;
    }
    return true;
}

bool tw__dapper_settle_kind(tw__span_data *span, tw__span_kind member,
                            tw__span_kind from_annotations)
{
    tw__span_kind kind;
    if (!tw__dapper_merge_kind(member, from_annotations, &kind))
        return false;
    if (kind == TW__KIND_NONE)
        return true;
    size_t index;
    tw__span_kind tagged = tw__span_kind_of(span, &index);
    if (index != SIZE_MAX)
        return tagged == kind;
    return tw__dapper_add_kind_tag(span, kind);
}

bool tw__dapper_add_kind_tag(tw__span_data *span, tw__span_kind kind)
{
    const char *name = tw__dapper_kind_names[kind];
    tw__tag *slot = tw__span_data_push_tag(span);
    tw_value v = {.type = TW_VALUE_STRING, .as.str = name, .len = strlen(name)};
    bool was_truncated = false;
    if (!slot || !tw__tag_set_n(&span->arena, slot, "span.kind", 9, &v, SIZE_MAX, &was_truncated))
        return false;
    span->n_tags++;
    return true;
}

static bool reconcile_kind(fast *f, size_t kind_member, tw__span_kind from_annotations)
{
    tw__span_kind kind = TW__KIND_NONE;
    if (kind_member) {
        const char *name;
        if (!cstr(f, kind_member, &name))
            return false;
        kind = tw__dapper_kind_from_name(name);
        if (kind == TW__KIND_NONE)
            return false;
    }
    return tw__dapper_settle_kind(f->span, kind, from_annotations);
}

static bool id_member(const fast *f, size_t v, size_t max_digits, bool is_required, uint64_t *high,
                      uint64_t *low)
{
    *high = 0;
    *low = 0;
    if (!v)
        return !is_required;
    return f->tok[v].type == TW__J_STRING &&
           tw__dapper_parse_hex_id(f->tok[v].v.str, f->tok[v].len, max_digits, high, low);
}

static bool decode_refs(fast *f, size_t refs)
{
    FOR_ELEMENTS(f, refs, i)
    {
        static const tw__json_key keys[] = {TW__JKEY("type"), TW__JKEY("trace_id"),
                                            TW__JKEY("span_id")};
        size_t m[3];
        const char *type;
        if (!pick(f, i, keys, 3, m) || !cstr(f, m[0], &type))
            return false;
        tw__ref_type rt;
        if (strcmp(type, "child_of") == 0)
            rt = TW__REF_CHILD_OF;
        else if (strcmp(type, "follows_from") == 0)
            rt = TW__REF_FOLLOWS_FROM;
        else
            return false;
        uint64_t th, tl, sh, sl;
        if (!id_member(f, m[1], 32, true, &th, &tl) || !id_member(f, m[2], 16, true, &sh, &sl) ||
            !tw__span_data_add_ref(f->span, rt, th, tl, sl))
            return false;
    }
    return true;
}

static bool add_process_str_tag(fast *f, const char *key, size_t member)
{
    if (!member || tw__process_find_tag(f->process, key))
        return true;
    const tw__jtok *t = &f->tok[member];
    if (t->type != TW__J_STRING)
        return false;
    tw_value v = {.type = TW_VALUE_STRING, .as.str = t->v.str, .len = t->len};
    return tw__process_add_tag(f->process, key, &v);
}

static bool decode_process(fast *f, size_t o)
{
    static const tw__json_key keys[] = {TW__JKEY("service"), TW__JKEY("tags"), TW__JKEY("host"),
                                        TW__JKEY("ip")};
    size_t m[4];
    const char *service;
    if (!o || !pick(f, o, keys, 4, m) || !cstr(f, m[0], &service) ||
        !tw__process_set_service(f->process, service) || !array(f, m[1]))
        return false;
    size_t tags = m[1];
    FOR_ELEMENTS(f, tags, i)
    {
        decoded_tag t;
        bool ok = decode_tag(f, i, &t) && tw__process_add_tag(f->process, t.key, &t.value);
        free(t.bin);
        if (!ok)
            return false;
    }
    return add_process_str_tag(f, "hostname", m[2]) && add_process_str_tag(f, "ip", m[3]);
}

/* dapper_log.c decode_record(), step by step. */
/* In the order the encoder writes them (tw__json_scan_pick tries that first). */
enum {
    M_V,
    M_TRACE_ID,
    M_SPAN_ID,
    M_PARENT_ID,
    M_NAME,
    M_KIND,
    M_START,
    M_END,
    M_FLAGS,
    M_SHARED,
    M_UNKNOWN,
    M_ANNOTATIONS,
    M_TAGS,
    M_LOGS,
    M_REFS,
    M_PROCESS,
    N_MEMBERS
};

static bool decode_record(fast *f)
{
    static const tw__json_key keys[N_MEMBERS] = {TW__JKEY("v"),
                                                 TW__JKEY("trace_id"),
                                                 TW__JKEY("span_id"),
                                                 TW__JKEY("parent_id"),
                                                 TW__JKEY("name"),
                                                 TW__JKEY("kind"),
                                                 TW__JKEY("start_us"),
                                                 TW__JKEY("end_us"),
                                                 TW__JKEY("flags"),
                                                 TW__JKEY("shared"),
                                                 TW__JKEY("duration_unknown"),
                                                 TW__JKEY("annotations"),
                                                 TW__JKEY("tags"),
                                                 TW__JKEY("logs"),
                                                 TW__JKEY("refs"),
                                                 TW__JKEY("process")};
    size_t m[N_MEMBERS];
    tw__span_data *s = f->span;
    int64_t version;
    if (!pick(f, 0, keys, N_MEMBERS, m) || !integer(f, m[M_V], &version) || version < 1 ||
        version > TW__DAPPER_LOG_VERSION)
        return false;
    uint64_t unused_high;
    if (!id_member(f, m[M_TRACE_ID], 32, true, &s->trace_id_high, &s->trace_id_low) ||
        !id_member(f, m[M_SPAN_ID], 16, true, &unused_high, &s->span_id) ||
        !id_member(f, m[M_PARENT_ID], 16, false, &unused_high, &s->parent_id))
        return false;
    if ((!s->trace_id_high && !s->trace_id_low) || !s->span_id || s->parent_id == s->span_id)
        return false;
    const char *name;
    if (!cstr(f, m[M_NAME], &name) || !tw__span_data_set_operation(s, name, f->tok[m[M_NAME]].len))
        return false;
    int64_t start_us, end_us;
    if (!integer(f, m[M_START], &start_us) || !integer(f, m[M_END], &end_us) || start_us < 0 ||
        end_us < start_us)
        return false;
    s->start_us = start_us;
    s->duration_us = end_us - start_us;
    s->flags = TW__FLAG_SAMPLED;
    if (m[M_FLAGS]) {
        int64_t v;
        if (!integer(f, m[M_FLAGS], &v) || v < 0 || v > (int64_t)UINT32_MAX)
            return false;
        s->flags = (uint32_t)v;
    }
    size_t shared = m[M_SHARED];
    size_t unknown = m[M_UNKNOWN];
    if ((shared && f->tok[shared].type != TW__J_TRUE && f->tok[shared].type != TW__J_FALSE) ||
        (unknown && f->tok[unknown].type != TW__J_TRUE && f->tok[unknown].type != TW__J_FALSE))
        return false;
    s->shared = shared && f->tok[shared].type == TW__J_TRUE;
    s->is_duration_unknown = unknown && f->tok[unknown].type == TW__J_TRUE;
    tw__span_kind annotated = TW__KIND_NONE;
    return array(f, m[M_TAGS]) && decode_span_tags(f, m[M_TAGS]) && array(f, m[M_LOGS]) &&
           decode_logs(f, m[M_LOGS]) && array(f, m[M_ANNOTATIONS]) &&
           decode_annotations(f, m[M_ANNOTATIONS], &annotated) &&
           reconcile_kind(f, m[M_KIND], annotated) && array(f, m[M_REFS]) &&
           decode_refs(f, m[M_REFS]) && decode_process(f, m[M_PROCESS]);
}

bool tw__dapper_log_decode_fast(const char *line, size_t len, tw__span_data **span_out,
                                tw__process *process_out)
{
    tw__json_scan js;
    tw__json_scan_init(&js);
    if (!tw__json_scan_parse(&js, line, len)) {
        tw__json_scan_free(&js);
        return false;
    }
    fast f = {.tok = js.tok, .js = &js, .span = tw__span_data_new(), .process = process_out};
    tw__process_init(process_out);
    bool ok = f.span && decode_record(&f);
    tw__json_scan_free(&js);
    if (!ok) {
        tw__span_data_unref(f.span);
        tw__process_clear(process_out);
        return false;
    }
    *span_out = f.span;
    return true;
}
