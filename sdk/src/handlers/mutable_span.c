/* SPDX-License-Identifier: Apache-2.0 */
/*
 * handlers/mutable_span.c: tw_mutable_span, the editable view a finished-span
 * handler gets of the record (tracewire/handler.h).
 *
 * Where it sits: between finish's limit marks and the reporter (see
 * handlers.h). The record is private to the finishing thread while the chain
 * runs, so reads and writes take no lock. Writes go into the record's arena
 * (wire/model/span_data.h): a replaced string stays in the arena until the record
 * dies (bounded by what handlers write), which keeps every pointer a handler
 * read valid for the rest of the chain. Removing tags compacts the array in
 * place, keeping their order.
 *
 * Limits: a new tag counts against max_tags like a tag set while the span
 * was open, with the structural tags (exempt_tags: sampler.*, tracewire.*,
 * jaeger-debug-id) not counted. If a handler removes structural tags the
 * record's exempt count is not lowered (the tags cannot be told from user
 * tags of the same name), so such a span may end with up to that many extra
 * user tags: at most 6, and only after a handler chose to remove them.
 */
#include "handlers/handlers.h"

#include <string.h>

/* ---- readers ------------------------------------------------------------------------------ */

uint64_t tw_mutable_span_trace_id_high(const tw_mutable_span *span)
{
    return span ? span->data->trace_id_high : 0;
}

uint64_t tw_mutable_span_trace_id_low(const tw_mutable_span *span)
{
    return span ? span->data->trace_id_low : 0;
}

uint64_t tw_mutable_span_span_id(const tw_mutable_span *span)
{
    return span ? span->data->span_id : 0;
}

uint64_t tw_mutable_span_parent_id(const tw_mutable_span *span)
{
    return span ? span->data->parent_id : 0;
}

unsigned int tw_mutable_span_flags(const tw_mutable_span *span)
{
    return span ? (span->data->flags & TW__FLAGS_WIRE) : 0;
}

bool tw_mutable_span_is_sampled(const tw_mutable_span *span)
{
    return span && (span->data->flags & TW_FLAG_SAMPLED);
}

const char *tw_mutable_span_operation(const tw_mutable_span *span)
{
    return span ? span->data->operation : "";
}

int64_t tw_mutable_span_start_us(const tw_mutable_span *span)
{
    return span ? span->data->start_us : 0;
}

int64_t tw_mutable_span_duration_us(const tw_mutable_span *span)
{
    return span ? span->data->duration_us : 0;
}

size_t tw_mutable_span_tag_count(const tw_mutable_span *span)
{
    return span ? span->data->n_tags : 0;
}

bool tw_mutable_span_tag(const tw_mutable_span *span, size_t index, const char **key,
                         tw_value *value)
{
    if (!span || index >= span->data->n_tags)
        return false;
    const tw__tag *t = &span->data->tags[index];
    if (key)
        *key = t->key;
    if (value)
        tw__tag_to_value(t, value);
    return true;
}

bool tw_mutable_span_find_tag(const tw_mutable_span *span, const char *key, tw_value *value)
{
    if (!span || !key)
        return false;
    const tw__tag *t = tw__span_data_find_tag(span->data, key);
    if (!t)
        return false;
    if (value)
        tw__tag_to_value(t, value);
    return true;
}

size_t tw_mutable_span_log_count(const tw_mutable_span *span)
{
    return span ? span->data->n_logs : 0;
}

int64_t tw_mutable_span_log_timestamp_us(const tw_mutable_span *span, size_t log)
{
    return span && log < span->data->n_logs ? span->data->logs[log].timestamp_us : 0;
}

size_t tw_mutable_span_log_field_count(const tw_mutable_span *span, size_t log)
{
    return span && log < span->data->n_logs ? span->data->logs[log].n_fields : 0;
}

bool tw_mutable_span_log_field(const tw_mutable_span *span, size_t log, size_t field,
                               const char **key, tw_value *value)
{
    if (!span || log >= span->data->n_logs || field >= span->data->logs[log].n_fields)
        return false;
    const tw__tag *t = &span->data->logs[log].fields[field];
    if (key)
        *key = t->key;
    if (value)
        tw__tag_to_value(t, value);
    return true;
}

/* ---- writers ------------------------------------------------------------------------------ */

tw_status tw_mutable_span_set_operation(tw_mutable_span *span, const char *operation)
{
    TW_CHECK_ARG(span && operation, TW_E_INVALID_ARG);
    /* The bound of the span's own names (not counted, as build_tag). */
    size_t len = strlen(operation);
    if (len > TW__MAX_NAME_BYTES)
        len = tw__utf8_cut(operation, TW__MAX_NAME_BYTES);
    return tw__span_data_set_operation(span->data, operation, len) ? TW_OK : TW_E_NOMEM;
}

/* Builds @out (key @key, value @value cut to the value limit) in the arena;
 * the record itself is not touched. */
static bool build_tag(tw_mutable_span *span, tw__tag *out, const char *key, const tw_value *value)
{
    bool truncated = false; /* not counted: the limit marks are already set */
    size_t key_len = strlen(key);
    if (key_len > TW__MAX_NAME_BYTES)
        key_len = tw__utf8_cut(key, TW__MAX_NAME_BYTES);
    return tw__tag_set_n(&span->data->arena, out, key, key_len, value,
                         span->limits->max_value_bytes, &truncated);
}

/* Removes the tags named @key at positions >= @from, keeping the order of
 * the others. Returns how many it removed. */
static size_t remove_from(tw__span_data *d, size_t from, const char *key)
{
    size_t kept = from;
    for (size_t i = from; i < d->n_tags; i++) {
        if (strcmp(d->tags[i].key, key) == 0)
            continue;
        if (kept != i)
            d->tags[kept] = d->tags[i];
        kept++;
    }
    size_t removed = d->n_tags - kept;
    d->n_tags = kept;
    return removed;
}

static tw_status set_tag(tw_mutable_span *span, const char *key, const tw_value *value)
{
    TW_CHECK_ARG(span && key, TW_E_INVALID_ARG);
    tw__span_data *d = span->data;
    size_t first = d->n_tags;
    for (size_t i = 0; i < d->n_tags; i++) {
        if (strcmp(d->tags[i].key, key) == 0) {
            first = i;
            break;
        }
    }
    tw__tag fresh;
    if (first < d->n_tags) {
        if (!build_tag(span, &fresh, key, value))
            return TW_E_NOMEM;
        d->tags[first] = fresh;
        remove_from(d, first + 1, key);
        return TW_OK;
    }
    size_t user_tags = d->n_tags > d->exempt_tags ? d->n_tags - d->exempt_tags : 0;
    if (user_tags >= span->limits->max_tags)
        return TW_E_LIMIT;
    if (!build_tag(span, &fresh, key, value))
        return TW_E_NOMEM;
    tw__tag *slot = tw__span_data_push_tag(d); /* may move the array; n_tags unchanged */
    if (!slot)
        return TW_E_NOMEM;
    *slot = fresh;
    d->n_tags++;
    return TW_OK;
}

tw_status tw_mutable_span_set_tag_str(tw_mutable_span *span, const char *key, const char *value)
{
    TW_CHECK_ARG(value, TW_E_INVALID_ARG);
    tw_value v = {.type = TW_VALUE_STRING, .as.str = value, .len = strlen(value)};
    return set_tag(span, key, &v);
}

tw_status tw_mutable_span_set_tag_bool(tw_mutable_span *span, const char *key, bool value)
{
    tw_value v = {.type = TW_VALUE_BOOL, .as.boolean = value};
    return set_tag(span, key, &v);
}

tw_status tw_mutable_span_set_tag_int64(tw_mutable_span *span, const char *key, int64_t value)
{
    tw_value v = {.type = TW_VALUE_INT64, .as.i64 = value};
    return set_tag(span, key, &v);
}

tw_status tw_mutable_span_set_tag_double(tw_mutable_span *span, const char *key, double value)
{
    tw_value v = {.type = TW_VALUE_DOUBLE, .as.dbl = value};
    return set_tag(span, key, &v);
}

/* Replaces *@slot's value with the string @value, keeping its key. */
static tw_status replace_with_str(tw_mutable_span *span, tw__tag *slot, const char *value)
{
    tw_value v = {.type = TW_VALUE_STRING, .as.str = value, .len = strlen(value)};
    tw__tag fresh;
    if (!build_tag(span, &fresh, slot->key, &v))
        return TW_E_NOMEM;
    *slot = fresh;
    return TW_OK;
}

tw_status tw_mutable_span_set_tag_str_at(tw_mutable_span *span, size_t index, const char *value)
{
    TW_CHECK_ARG(span && value && index < span->data->n_tags, TW_E_INVALID_ARG);
    return replace_with_str(span, &span->data->tags[index], value);
}

size_t tw_mutable_span_remove_tag(tw_mutable_span *span, const char *key)
{
    if (!span || !key)
        return 0;
    return remove_from(span->data, 0, key);
}

tw_status tw_mutable_span_set_log_field_str(tw_mutable_span *span, size_t log, size_t field,
                                            const char *value)
{
    TW_CHECK_ARG(span && value && log < span->data->n_logs &&
                     field < span->data->logs[log].n_fields,
                 TW_E_INVALID_ARG);
    return replace_with_str(span, &span->data->logs[log].fields[field], value);
}
