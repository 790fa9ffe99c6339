/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/model/finished_span.c: read accessors of a finished span. The public
 * tw_finished_span is the model record itself (immutable once finished), so
 * reading costs nothing and nothing is copied.
 */
#include "tracewire/tracewire.h"
#include "wire/model/span_data.h"

#define REC(s) ((const tw__span_data *)(const void *)(s))

const char *tw_finished_span_operation(const tw_finished_span *span)
{
    return span ? REC(span)->operation : "";
}

uint64_t tw_finished_span_trace_id_high(const tw_finished_span *span)
{
    return span ? REC(span)->trace_id_high : 0;
}

uint64_t tw_finished_span_trace_id_low(const tw_finished_span *span)
{
    return span ? REC(span)->trace_id_low : 0;
}

uint64_t tw_finished_span_span_id(const tw_finished_span *span)
{
    return span ? REC(span)->span_id : 0;
}

uint64_t tw_finished_span_parent_id(const tw_finished_span *span)
{
    return span ? REC(span)->parent_id : 0;
}

unsigned int tw_finished_span_flags(const tw_finished_span *span)
{
    return span ? REC(span)->flags : 0;
}

int64_t tw_finished_span_start_us(const tw_finished_span *span)
{
    return span ? REC(span)->start_us : 0;
}

int64_t tw_finished_span_duration_us(const tw_finished_span *span)
{
    return span ? REC(span)->duration_us : 0;
}

size_t tw_finished_span_tag_count(const tw_finished_span *span)
{
    return span ? REC(span)->n_tags : 0;
}

bool tw_finished_span_tag(const tw_finished_span *span, size_t index, const char **key,
                          tw_value *value)
{
    if (!span || index >= REC(span)->n_tags)
        return false;
    const tw__tag *t = &REC(span)->tags[index];
    if (key)
        *key = t->key;
    if (value)
        tw__tag_to_value(t, value);
    return true;
}

bool tw_finished_span_find_tag(const tw_finished_span *span, const char *key, tw_value *value)
{
    if (!span || !key)
        return false;
    const tw__tag *t = tw__span_data_find_tag(REC(span), key);
    if (!t)
        return false;
    if (value)
        tw__tag_to_value(t, value);
    return true;
}

size_t tw_finished_span_log_count(const tw_finished_span *span)
{
    return span ? REC(span)->n_logs : 0;
}

int64_t tw_finished_span_log_timestamp_us(const tw_finished_span *span, size_t log)
{
    return span && log < REC(span)->n_logs ? REC(span)->logs[log].timestamp_us : 0;
}

size_t tw_finished_span_log_field_count(const tw_finished_span *span, size_t log)
{
    return span && log < REC(span)->n_logs ? REC(span)->logs[log].n_fields : 0;
}

bool tw_finished_span_log_field(const tw_finished_span *span, size_t log, size_t field,
                                const char **key, tw_value *value)
{
    if (!span || log >= REC(span)->n_logs || field >= REC(span)->logs[log].n_fields)
        return false;
    const tw__tag *t = &REC(span)->logs[log].fields[field];
    if (key)
        *key = t->key;
    if (value)
        tw__tag_to_value(t, value);
    return true;
}

size_t tw_finished_span_reference_count(const tw_finished_span *span)
{
    return span ? REC(span)->n_refs : 0;
}

bool tw_finished_span_reference(const tw_finished_span *span, size_t index, int *type,
                                uint64_t *trace_id_high, uint64_t *trace_id_low, uint64_t *span_id)
{
    if (!span || index >= REC(span)->n_refs)
        return false;
    const tw__ref *r = &REC(span)->refs[index];
    if (type)
        *type = r->type == TW__REF_FOLLOWS_FROM ? TW_REF_FOLLOWS_FROM : TW_REF_CHILD_OF;
    if (trace_id_high)
        *trace_id_high = r->trace_id_high;
    if (trace_id_low)
        *trace_id_low = r->trace_id_low;
    if (span_id)
        *span_id = r->span_id;
    return true;
}
