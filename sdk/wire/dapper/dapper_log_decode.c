/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/dapper/dapper_log_decode.c: decodes Dapper-style span log lines
 * (docs/dapper-log-format.md, version 1; the layout is tabled in
 * wire/dapper/dapper_log.h) back into the span model and its process, and
 * reads them from a stream line by line. `tracewire convert --from dapper`
 * and the tests read with it; the encoder is dapper_log.c.
 *
 * The decoder is the strict side of "tolerant reader, canonical writer": it
 * accepts what other writers plausibly produce (upper-case or short hex ids,
 * int64 as string or number, records without "kind" whose annotations say
 * it, a process "host"/"ip" without the matching tags) and rejects anything
 * that would be misread, with "line N: <json path> <reason>". A line is
 * first offered to the direct decoder (dapper_log_direct.c: the encoder's
 * own line shape, read in place), then to the fast one (dapper_log_fast.c:
 * no Jansson tree), each of which decodes exactly as decode_record() below
 * or declines; everything both decline, every error included, is decoded
 * here, so the messages are this file's. The reader's shared form
 * (tw__dapper_log_reader_next_shared) gives the direct decoder a memo of
 * recent process objects (dapper_log_direct.c), so that a log's repeated
 * process is decoded once; its fallbacks are the same.
 *
 * Locking: none.
 */
#include "wire/dapper/dapper_log.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/core/error.h"
#include "wire/core/line_reader.h"
#include "wire/dapper/dapper_log_int.h"
#include "wire/core/json_common.h"

#define DEFAULT_MAX_LINE ((size_t)16 << 20)

/* ---- ids ---------------------------------------------------------------------------------- */

/* 1..max_digits hex digits of either case, left-padded: the last 16 digits
 * are the low word (the one hex parser, wire/core/hex.h). */
bool tw__dapper_parse_hex_id(const char *s, size_t len, size_t max_digits, uint64_t *high,
                             uint64_t *low)
{
    return tw__parse_hex(s, len, max_digits, false, high, low, NULL) == TW__HEX_OK;
}

/* ---- kinds and RPC annotations (the tables are dapper_log.c's) --------------------------- */

#define KIND_NAMES tw__dapper_kind_names
#define KIND_BEGIN tw__dapper_kind_begin
#define KIND_END tw__dapper_kind_end

/* The kind member's value: exactly one of the four lower-case names. */
tw__span_kind tw__dapper_kind_from_name(const char *s)
{
    for (int k = TW__KIND_CLIENT; k <= TW__KIND_CONSUMER; k++) {
        if (strcmp(KIND_NAMES[k], s) == 0)
            return (tw__span_kind)k;
    }
    return TW__KIND_NONE;
}

tw__span_kind tw__dapper_kind_of_annotation(const char *s)
{
    for (int k = TW__KIND_CLIENT; k <= TW__KIND_CONSUMER; k++) {
        if (strcmp(KIND_BEGIN[k], s) == 0 || strcmp(KIND_END[k], s) == 0)
            return (tw__span_kind)k;
    }
    return TW__KIND_NONE;
}

/* ---- decoder ------------------------------------------------------------------------------ */

typedef struct decoder {
    size_t line_no;
    tw_error **err;
    tw_status status; /* of the first failure */
    tw__span_data *span;
    tw__process *process;
} decoder;

static bool fail(decoder *d, const char *fmt, ...) TW_PRINTF(2, 3);

/* Records the first failure ("line N: ..."); always returns false. */
static bool fail(decoder *d, const char *fmt, ...)
{
    if (d->status != TW_OK)
        return false;
    char reason[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    d->status = TW_E_MALFORMED;
    tw__set_error(d->err, TW_E_MALFORMED, "line %zu: %s", d->line_no, reason);
    return false;
}

static bool fail_nomem(decoder *d)
{
    if (d->status == TW_OK) {
        d->status = TW_E_NOMEM;
        tw__set_error(d->err, TW_E_NOMEM, "line %zu: out of memory", d->line_no);
    }
    return false;
}

/* A string member without NUL bytes (names and keys are C strings in the model). */
static bool get_cstr(decoder *d, const json_t *v, const char *path, const char **out)
{
    if (!v)
        return fail(d, "%s is missing", path);
    if (!json_is_string(v))
        return fail(d, "%s is not a string", path);
    const char *s = json_string_value(v);
    if (strlen(s) != json_string_length(v))
        return fail(d, "%s contains a NUL character", path);
    *out = s;
    return true;
}

static bool get_int(decoder *d, const json_t *v, const char *path, int64_t *out)
{
    if (!v)
        return fail(d, "%s is missing", path);
    if (!json_is_integer(v))
        return fail(d, "%s is not an integer", path);
    *out = (int64_t)json_integer_value(v);
    return true;
}

/* The int64 of a tag: a JSON integer, or a decimal string (how the encoder
 * writes values beyond 2^53). */
static bool get_int64_value(decoder *d, const json_t *v, const char *path, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return true;
    }
    if (json_is_string(v) &&
        tw__dapper_int64_text(json_string_value(v), json_string_length(v), out))
        return true;
    return fail(d, "%s is not an int64 (an integer or a decimal string)", path);
}

bool tw__dapper_int64_text(const char *s, size_t len, int64_t *out)
{
    size_t digits = s[0] == '-' ? 1 : 0;
    bool is_decimal = len > digits && len < 22 && strspn(s + digits, "0123456789") == len - digits;
    if (is_decimal) {
        errno = 0;
        long long x = strtoll(s, NULL, 10);
        if (errno == 0) {
            *out = (int64_t)x;
            return true;
        }
    }
    return false;
}

static bool get_float64_value(decoder *d, const json_t *v, const char *path, double *out)
{
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return true;
    }
    if (json_is_string(v) && tw__dapper_float64_text(json_string_value(v), out))
        return true;
    return fail(d, "%s is not a float64 (a number, \"NaN\", \"Infinity\" or \"-Infinity\")", path);
}

bool tw__dapper_float64_text(const char *s, double *out)
{
    if (strcmp(s, "NaN") == 0) {
        *out = NAN;
        return true;
    }
    if (strcmp(s, "Infinity") == 0) {
        *out = INFINITY;
        return true;
    }
    if (strcmp(s, "-Infinity") == 0) {
        *out = -INFINITY;
        return true;
    }
    return false;
}

/* A decoded tag or field: the key and value point into the JSON tree (and
 * into @bin for binary values, which the caller frees after storing). */
typedef struct decoded_tag {
    const char *key;
    tw_value value;
    uint8_t *bin;
} decoded_tag;

/* Reads {"key", "type", "value"} at @path. Unknown members are ignored here
 * as everywhere, so that version 1 can grow optional members. */
static bool decode_tag(decoder *d, const json_t *o, const char *path, decoded_tag *out)
{
    char sub[96];
    out->bin = NULL;
    if (!json_is_object(o))
        return fail(d, "%s is not an object", path);
    snprintf(sub, sizeof sub, "%s.key", path);
    /* An empty key is kept: the SDK and Jaeger accept one, and a reader that
     * refused it would lose lines its own writer produced. */
    if (!get_cstr(d, json_object_get(o, "key"), sub, &out->key))
        return false;
    const char *type = json_string_value(json_object_get(o, "type"));
    if (!type) {
        snprintf(sub, sizeof sub, "%s.type", path);
        return fail(d, "%s is missing or not a string", sub);
    }
    const json_t *value = json_object_get(o, "value");
    snprintf(sub, sizeof sub, "%s.value", path);
    if (!value)
        return fail(d, "%s is missing", sub);
    tw_value *v = &out->value;
    memset(v, 0, sizeof(*v));
    if (strcmp(type, "string") == 0) {
        if (!json_is_string(value))
            return fail(d, "%s is not a string", sub);
        v->type = TW_VALUE_STRING;
        v->as.str = json_string_value(value);
        v->len = json_string_length(value);
    } else if (strcmp(type, "bool") == 0) {
        if (!json_is_boolean(value))
            return fail(d, "%s is not a bool", sub);
        v->type = TW_VALUE_BOOL;
        v->as.boolean = json_is_true(value);
    } else if (strcmp(type, "int64") == 0) {
        v->type = TW_VALUE_INT64;
        return get_int64_value(d, value, sub, &v->as.i64);
    } else if (strcmp(type, "float64") == 0) {
        v->type = TW_VALUE_DOUBLE;
        return get_float64_value(d, value, sub, &v->as.dbl);
    } else if (strcmp(type, "binary") == 0) {
        bool is_nomem = false;
        if (!json_is_string(value) ||
            !tw__base64_decode(json_string_value(value), json_string_length(value), true, &out->bin,
                               &v->len, &is_nomem))
            return is_nomem ? fail_nomem(d) : fail(d, "%s is not base64", sub);
        v->type = TW_VALUE_BINARY;
        v->as.bin = out->bin;
    } else {
        snprintf(sub, sizeof sub, "%s.type", path);
        return fail(d, "%s is not one of string, bool, int64, float64, binary", sub);
    }
    return true;
}

/* Decodes a tag at @path into @slot (in @arena); the caller commits it. */
static bool decode_tag_into(decoder *d, tw__arena *arena, const json_t *o, const char *path,
                            tw__tag *slot)
{
    decoded_tag t;
    if (!decode_tag(d, o, path, &t)) {
        free(t.bin);
        return false;
    }
    bool was_truncated = false;
    bool ok = tw__tag_set(arena, slot, t.key, &t.value, SIZE_MAX, &was_truncated);
    free(t.bin);
    return ok || fail_nomem(d);
}

/* An optional array member: NULL when absent, false (failed) when not an array. */
static bool get_array(decoder *d, const json_t *o, const char *key, const char *path,
                      const json_t **out)
{
    *out = json_object_get(o, key);
    if (*out && !json_is_array(*out))
        return fail(d, "%s is not an array", path);
    return true;
}

static bool decode_span_tags(decoder *d, const json_t *tags)
{
    for (size_t i = 0; tags && i < json_array_size(tags); i++) {
        char path[48];
        snprintf(path, sizeof path, "tags[%zu]", i);
        tw__tag *slot = tw__span_data_push_tag(d->span);
        if (!slot)
            return fail_nomem(d);
        if (!decode_tag_into(d, &d->span->arena, json_array_get(tags, i), path, slot))
            return false;
        d->span->n_tags++;
    }
    return true;
}

static bool decode_logs(decoder *d, const json_t *logs)
{
    for (size_t i = 0; logs && i < json_array_size(logs); i++) {
        char path[64];
        const json_t *o = json_array_get(logs, i);
        snprintf(path, sizeof path, "logs[%zu]", i);
        if (!json_is_object(o))
            return fail(d, "%s is not an object", path);
        int64_t ts = 0;
        snprintf(path, sizeof path, "logs[%zu].ts_us", i);
        if (!get_int(d, json_object_get(o, "ts_us"), path, &ts))
            return false;
        const json_t *fields;
        snprintf(path, sizeof path, "logs[%zu].fields", i);
        if (!get_array(d, o, "fields", path, &fields))
            return false;
        size_t n = json_array_size(fields);
        tw__log *log = tw__span_data_push_log(d->span, n);
        if (!log)
            return fail_nomem(d);
        log->timestamp_us = ts;
        for (size_t k = 0; k < n; k++) {
            snprintf(path, sizeof path, "logs[%zu].fields[%zu]", i, k);
            if (!decode_tag_into(d, &d->span->arena, json_array_get(fields, k), path,
                                 &log->fields[k]))
                return false;
            log->n_fields++;
        }
        d->span->n_logs++;
    }
    return true;
}

/* Annotations: core RPC ones (cs cr sr ss ms ws wr mr) give the kind;
 * any other value becomes a log {event: value} at its timestamp (as Jaeger's
 * Zipkin converter does), so records of other writers lose nothing. */
static bool decode_annotations(decoder *d, const json_t *annotations, tw__span_kind *kind)
{
    *kind = TW__KIND_NONE;
    for (size_t i = 0; annotations && i < json_array_size(annotations); i++) {
        char path[48];
        const json_t *o = json_array_get(annotations, i);
        snprintf(path, sizeof path, "annotations[%zu]", i);
        if (!json_is_object(o))
            return fail(d, "%s is not an object", path);
        int64_t ts = 0;
        snprintf(path, sizeof path, "annotations[%zu].ts_us", i);
        if (!get_int(d, json_object_get(o, "ts_us"), path, &ts))
            return false;
        const char *value;
        snprintf(path, sizeof path, "annotations[%zu].value", i);
        if (!get_cstr(d, json_object_get(o, "value"), path, &value))
            return false;
        tw__span_kind k = tw__dapper_kind_of_annotation(value);
        if (k != TW__KIND_NONE) {
            if (*kind != TW__KIND_NONE && *kind != k)
                return fail(d,
                            "%s \"%s\" belongs to a %s span but an earlier annotation to a %s "
                            "span: log each half of an RPC as its own record",
                            path, value, KIND_NAMES[k], KIND_NAMES[*kind]);
            *kind = k;
            continue;
        }
        tw__log *log = tw__span_data_push_log(d->span, 1);
        if (!log)
            return fail_nomem(d);
        log->timestamp_us = ts;
        tw_value v = {.type = TW_VALUE_STRING, .as.str = value, .len = strlen(value)};
        bool was_truncated = false;
        if (!tw__tag_set(&d->span->arena, &log->fields[0], "event", &v, SIZE_MAX, &was_truncated))
            return fail_nomem(d);
        log->n_fields = 1;
        d->span->n_logs++;
    }
    return true;
}

static bool add_span_str_tag(decoder *d, const char *key, const char *value)
{
    tw__tag *slot = tw__span_data_push_tag(d->span);
    tw_value v = {.type = TW_VALUE_STRING, .as.str = value, .len = strlen(value)};
    bool was_truncated = false;
    if (!slot || !tw__tag_set(&d->span->arena, slot, key, &v, SIZE_MAX, &was_truncated))
        return fail_nomem(d);
    d->span->n_tags++;
    return true;
}

/* The kind member, the span.kind tag and the annotations must agree; a
 * kind known only from the member or the annotations becomes a span.kind
 * tag, so the model carries it as the SDK's spans do. */
static bool reconcile_kind(decoder *d, const json_t *kind_member, tw__span_kind from_annotations)
{
    tw__span_kind kind = TW__KIND_NONE;
    if (kind_member) {
        const char *name;
        if (!get_cstr(d, kind_member, "kind", &name))
            return false;
        kind = tw__dapper_kind_from_name(name);
        if (kind == TW__KIND_NONE)
            return fail(d, "kind is not one of client, server, producer, consumer");
    }
    if (from_annotations != TW__KIND_NONE) {
        if (kind != TW__KIND_NONE && kind != from_annotations)
            return fail(d, "the annotations are those of a %s span but kind is %s",
                        KIND_NAMES[from_annotations], KIND_NAMES[kind]);
        kind = from_annotations;
    }
    if (kind == TW__KIND_NONE)
        return true;
    size_t index;
    tw__span_kind tagged = tw__span_kind_of(d->span, &index);
    if (index == SIZE_MAX)
        return add_span_str_tag(d, "span.kind", KIND_NAMES[kind]);
    if (tagged != kind)
        return fail(d, "kind %s contradicts the span.kind tag", KIND_NAMES[kind]);
    return true;
}

static bool decode_id_member(decoder *d, const json_t *o, const char *key, const char *path,
                             size_t max_digits, bool is_required, uint64_t *high, uint64_t *low)
{
    const json_t *v = json_object_get(o, key);
    *high = 0;
    *low = 0;
    if (!v) {
        if (is_required)
            return fail(d, "%s is missing", path);
        return true;
    }
    if (!json_is_string(v) || !tw__dapper_parse_hex_id(json_string_value(v), json_string_length(v),
                                                       max_digits, high, low))
        return fail(d, "%s is not 1 to %zu hex digits", path, max_digits);
    return true;
}

static bool decode_refs(decoder *d, const json_t *refs)
{
    for (size_t i = 0; refs && i < json_array_size(refs); i++) {
        char path[48];
        const json_t *o = json_array_get(refs, i);
        snprintf(path, sizeof path, "refs[%zu]", i);
        if (!json_is_object(o))
            return fail(d, "%s is not an object", path);
        const char *type;
        snprintf(path, sizeof path, "refs[%zu].type", i);
        if (!get_cstr(d, json_object_get(o, "type"), path, &type))
            return false;
        tw__ref_type rt;
        if (strcmp(type, "child_of") == 0)
            rt = TW__REF_CHILD_OF;
        else if (strcmp(type, "follows_from") == 0)
            rt = TW__REF_FOLLOWS_FROM;
        else
            return fail(d, "%s is neither child_of nor follows_from", path);
        uint64_t th, tl, sh, sl;
        snprintf(path, sizeof path, "refs[%zu].trace_id", i);
        if (!decode_id_member(d, o, "trace_id", path, 32, true, &th, &tl))
            return false;
        snprintf(path, sizeof path, "refs[%zu].span_id", i);
        if (!decode_id_member(d, o, "span_id", path, 16, true, &sh, &sl))
            return false;
        if (!tw__span_data_add_ref(d->span, rt, th, tl, sl))
            return fail_nomem(d);
    }
    return true;
}

static bool add_process_str_tag(decoder *d, const char *key, const json_t *member, const char *path)
{
    if (!member || tw__process_find_tag(d->process, key))
        return true;
    if (!json_is_string(member))
        return fail(d, "%s is not a string", path);
    tw_value v = {.type = TW_VALUE_STRING,
                  .as.str = json_string_value(member),
                  .len = json_string_length(member)};
    return tw__process_add_tag(d->process, key, &v) || fail_nomem(d);
}

static bool decode_process(decoder *d, const json_t *o)
{
    if (!o)
        return fail(d, "process is missing");
    if (!json_is_object(o))
        return fail(d, "process is not an object");
    const char *service;
    if (!get_cstr(d, json_object_get(o, "service"), "process.service", &service))
        return false;
    if (!tw__process_set_service(d->process, service))
        return fail_nomem(d);
    const json_t *tags;
    if (!get_array(d, o, "tags", "process.tags", &tags))
        return false;
    for (size_t i = 0; tags && i < json_array_size(tags); i++) {
        char path[48];
        snprintf(path, sizeof path, "process.tags[%zu]", i);
        decoded_tag t;
        bool ok = decode_tag(d, json_array_get(tags, i), path, &t);
        if (ok && !tw__process_add_tag(d->process, t.key, &t.value))
            ok = fail_nomem(d);
        free(t.bin);
        if (!ok)
            return false;
    }
    /* "host" and "ip" repeat the hostname/ip tags for readers that want them
     * at a fixed place; a writer that sent only them still gets the tags. */
    return add_process_str_tag(d, "hostname", json_object_get(o, "host"), "process.host") &&
           add_process_str_tag(d, "ip", json_object_get(o, "ip"), "process.ip");
}

static bool decode_record(decoder *d, const json_t *o)
{
    if (!json_is_object(o))
        return fail(d, "the record is not a JSON object");
    int64_t version = 0;
    const json_t *v = json_object_get(o, "v");
    if (!v)
        return fail(d, "v (the format version) is missing");
    if (!get_int(d, v, "v", &version))
        return false;
    if (version < 1 || version > TW__DAPPER_LOG_VERSION)
        return fail(d, "format version %" PRId64 " is not supported (this reader knows 1 to %d)",
                    version, TW__DAPPER_LOG_VERSION);
    tw__span_data *s = d->span;
    uint64_t unused_high;
    if (!decode_id_member(d, o, "trace_id", "trace_id", 32, true, &s->trace_id_high,
                          &s->trace_id_low) ||
        !decode_id_member(d, o, "span_id", "span_id", 16, true, &unused_high, &s->span_id) ||
        !decode_id_member(d, o, "parent_id", "parent_id", 16, false, &unused_high, &s->parent_id))
        return false;
    if (!s->trace_id_high && !s->trace_id_low)
        return fail(d, "trace_id is all zeros");
    if (!s->span_id)
        return fail(d, "span_id is all zeros");
    if (s->parent_id == s->span_id)
        return fail(d, "parent_id equals span_id");
    const char *name;
    if (!get_cstr(d, json_object_get(o, "name"), "name", &name))
        return false;
    if (!tw__span_data_set_operation(s, name, strlen(name)))
        return fail_nomem(d);
    int64_t start_us = 0, end_us = 0;
    if (!get_int(d, json_object_get(o, "start_us"), "start_us", &start_us) ||
        !get_int(d, json_object_get(o, "end_us"), "end_us", &end_us))
        return false;
    if (start_us < 0)
        return fail(d, "start_us is negative");
    if (end_us < start_us)
        return fail(d, "end_us is before start_us");
    s->start_us = start_us;
    s->duration_us = end_us - start_us;
    const json_t *flags = json_object_get(o, "flags");
    s->flags = TW__FLAG_SAMPLED; /* a logged span was sampled */
    if (flags) {
        int64_t f = 0;
        if (!get_int(d, flags, "flags", &f))
            return false;
        if (f < 0 || f > (int64_t)UINT32_MAX)
            return fail(d, "flags is not between 0 and 4294967295");
        s->flags = (uint32_t)f;
    }
    /* Optional flags of spans the bridge read from Zipkin (format 1 readers
     * that do not know them skip them). */
    const json_t *shared = json_object_get(o, "shared");
    const json_t *unknown = json_object_get(o, "duration_unknown");
    if ((shared && !json_is_boolean(shared)) || (unknown && !json_is_boolean(unknown)))
        return fail(d, "shared and duration_unknown must be true or false");
    s->shared = json_is_true(shared);
    s->is_duration_unknown = json_is_true(unknown);
    const json_t *tags, *logs, *annotations, *refs;
    tw__span_kind annotated = TW__KIND_NONE;
    return get_array(d, o, "tags", "tags", &tags) && decode_span_tags(d, tags) &&
           get_array(d, o, "logs", "logs", &logs) && decode_logs(d, logs) &&
           get_array(d, o, "annotations", "annotations", &annotations) &&
           decode_annotations(d, annotations, &annotated) &&
           reconcile_kind(d, json_object_get(o, "kind"), annotated) &&
           get_array(d, o, "refs", "refs", &refs) && decode_refs(d, refs) &&
           decode_process(d, json_object_get(o, "process"));
}

static tw_status decode_declined(const char *line, size_t len, size_t line_no,
                                 tw__span_data **span_out, tw__process *process_out,
                                 tw_error **err);

tw_status tw__dapper_log_decode(const char *line, size_t len, size_t line_no,
                                tw__span_data **span_out, tw__process *process_out, tw_error **err)
{
    decoder d = {.line_no = line_no, .err = err, .status = TW_OK};
    if (!line || !span_out || !process_out) {
        fail(&d, "no input");
        return d.status;
    }
    if (len && line[len - 1] == '\n')
        len--;
    if (len && line[len - 1] == '\r')
        len--;
    /* Most lines are the SDK's own: the direct decoder reads them in place
     * (dapper_log_direct.c), the scanner-based one any other valid shape
     * without a Jansson tree (dapper_log_fast.c); each declines every line
     * it cannot prove it reads as the code below does, errors included.
     * The direct one reads every byte of a line it accepts and none of its
     * rules takes a NUL byte, so it declines those lines itself and the
     * check below is paid only by the others. */
    if (tw__dapper_log_decode_direct(line, len, span_out, process_out))
        return TW_OK;
    return decode_declined(line, len, line_no, span_out, process_out, err);
}

/* tw__dapper_log_decode for a line the direct decoder declined (stripped
 * of its line end). */
static tw_status decode_declined(const char *line, size_t len, size_t line_no,
                                 tw__span_data **span_out, tw__process *process_out, tw_error **err)
{
    decoder d = {.line_no = line_no, .err = err, .status = TW_OK};
    /* Jansson skips a raw NUL byte between tokens; it is no JSON text. */
    if (memchr(line, '\0', len)) {
        fail(&d, "not a JSON object: a NUL byte at column %zu",
             (size_t)((const char *)memchr(line, '\0', len) - line) + 1);
        return d.status;
    }
    if (tw__dapper_log_decode_fast(line, len, span_out, process_out))
        return TW_OK;
    return tw__dapper_log_decode_jansson(line, len, line_no, span_out, process_out, err);
}

tw_status tw__dapper_log_decode_jansson(const char *line, size_t len, size_t line_no,
                                        tw__span_data **span_out, tw__process *process_out,
                                        tw_error **err)
{
    decoder d = {.line_no = line_no, .err = err, .status = TW_OK};
    json_error_t jerr;
    /* JSON_ALLOW_NUL: string values may hold U+0000 (the model keeps their
     * length). Duplicate members would make the record ambiguous. */
    json_t *root = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (!root) {
        fail(&d, "not a JSON object: %s (column %d)", jerr.text, jerr.column);
        return d.status;
    }
    d.span = tw__span_data_new();
    tw__process_init(process_out);
    d.process = process_out;
    if (!d.span)
        fail_nomem(&d);
    else
        decode_record(&d, root);
    json_decref(root);
    if (d.status != TW_OK) {
        tw__span_data_unref(d.span);
        tw__process_clear(process_out);
        return d.status;
    }
    *span_out = d.span;
    return TW_OK;
}

/* ---- reader ------------------------------------------------------------------------------- */

struct tw__dapper_log_reader {
    tw__line_reader lines; /* the one line reader (wire/core/line_reader.h) */
    /* tw__dapper_log_reader_next_shared's: made at its first call. */
    tw__dapper_memo *memo;
    tw__process declined; /* the process of a line the direct decoder declined */
};

tw__dapper_log_reader *tw__dapper_log_reader_new(FILE *stream, size_t max_line_bytes)
{
    if (!stream)
        return NULL;
    tw__dapper_log_reader *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    tw__line_reader_init(&r->lines, stream, max_line_bytes ? max_line_bytes : DEFAULT_MAX_LINE);
    tw__process_init(&r->declined);
    return r;
}

void tw__dapper_log_reader_free(tw__dapper_log_reader *r)
{
    if (!r)
        return;
    tw__line_reader_free(&r->lines);
    tw__dapper_memo_free(r->memo);
    tw__process_clear(&r->declined);
    free(r);
}

void tw__dapper_log_reader_set_spill(tw__dapper_log_reader *r,
                                     bool (*spill)(void *arg, const void *bytes, size_t len),
                                     void *arg)
{
    r->lines.spill = spill;
    r->lines.spill_arg = arg;
}

size_t tw__dapper_log_reader_line(const tw__dapper_log_reader *r)
{
    return r ? r->lines.line_no : 0;
}

const char *tw__dapper_log_reader_raw(const tw__dapper_log_reader *r, size_t *len)
{
    const char *line = r->lines.line;
    size_t n = r->lines.line_len;
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        n--;
    *len = n;
    return n ? line : "";
}

/* The next line that is not blank: TW_OK with @line / @line_len (its line end
 * still there), or the status and error tw__dapper_log_reader_next gives. */
static tw_status next_line(tw__dapper_log_reader *r, const char **line, size_t *line_len,
                           tw_error **err)
{
    if (!r) {
        tw__set_error(err, TW_E_INVALID_ARG, "dapper log reader: NULL reader");
        return TW_E_INVALID_ARG;
    }
    tw__line_reader *lines = &r->lines;
    for (;;) {
        /* The one line reader keeps a NUL byte inside its line (where it
         * fails the decoding) instead of cutting the line there. */
        int rc = tw__line_reader_next(lines);
        if (rc == TW__LINE_END)
            return TW_E_NOT_FOUND;
        if (rc == TW__LINE_IO) {
            tw__set_error(err, TW_E_IO, "line %zu: read error: %s", lines->line_no + 1,
                          strerror(errno));
            return TW_E_IO;
        }
        if (rc == TW__LINE_NOMEM) {
            tw__set_error(err, TW_E_NOMEM, "line %zu: out of memory", lines->line_no + 1);
            return TW_E_NOMEM;
        }
        if (rc == TW__LINE_TOO_LONG) {
            tw__set_error(err, TW_E_MALFORMED, "line %zu: longer than %zu bytes: skipped",
                          lines->line_no, lines->max_line);
            return TW_E_MALFORMED;
        }
        const char *p = lines->line;
        size_t len = lines->line_len;
        size_t blank = 0;
        while (blank < len && (p[blank] == ' ' || p[blank] == '\t' || p[blank] == '\r'))
            blank++;
        if (blank == len)
            continue; /* blank lines separate nothing: skipped */
        *line = p;
        *line_len = len;
        return TW_OK;
    }
}

tw_status tw__dapper_log_reader_next(tw__dapper_log_reader *r, tw__span_data **span_out,
                                     tw__process *process_out, tw_error **err)
{
    const char *p;
    size_t len;
    tw_status st = next_line(r, &p, &len, err);
    if (st != TW_OK)
        return st;
    return tw__dapper_log_decode(p, len, r->lines.line_no, span_out, process_out, err);
}

tw_status tw__dapper_log_reader_next_shared(tw__dapper_log_reader *r, tw__span_data **span_out,
                                            const tw__process **process_out, uint64_t *stamp_out,
                                            tw_error **err)
{
    const char *p;
    size_t len;
    tw_status st = next_line(r, &p, &len, err);
    if (st != TW_OK)
        return st;
    /* The process handed out last is no longer in use. */
    tw__process_clear(&r->declined);
    if (!r->memo)
        r->memo = tw__dapper_memo_new(); /* NULL: lines are decoded without it */
    /* tw__dapper_log_decode with the memo: the direct decoder first, then
     * the same fallbacks, on the bytes tw__dapper_log_reader_raw gives (every
     * CR and LF at the end taken off), so that an error's column is the one
     * the line decoder names for the raw line the rejects file keeps. */
    while (len && (p[len - 1] == '\n' || p[len - 1] == '\r'))
        len--;
    if (r->memo &&
        tw__dapper_log_decode_direct_memo(p, len, r->memo, span_out, process_out, stamp_out))
        return TW_OK;
    st = r->memo ? decode_declined(p, len, r->lines.line_no, span_out, &r->declined, err)
                 : tw__dapper_log_decode(p, len, r->lines.line_no, span_out, &r->declined, err);
    if (st == TW_OK) {
        *process_out = &r->declined;
        *stamp_out = 0;
    }
    return st;
}
