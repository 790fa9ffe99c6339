/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/span_builder.c: see span_builder.h.
 */
#include "span_builder.h"

#include <math.h>
#include <string.h>

tw_value tw_test_str(const char *s)
{
    return (tw_value){.type = TW_VALUE_STRING, .len = strlen(s), .as.str = s};
}

tw_value tw_test_bin(const uint8_t *b, size_t len)
{
    return (tw_value){.type = TW_VALUE_BINARY, .len = len, .as.bin = b};
}

tw_value tw_test_dbl(double d)
{
    return (tw_value){.type = TW_VALUE_DOUBLE, .as.dbl = d};
}

tw_value tw_test_bool(bool b)
{
    return (tw_value){.type = TW_VALUE_BOOL, .as.boolean = b};
}

tw_value tw_test_i64(int64_t i)
{
    return (tw_value){.type = TW_VALUE_INT64, .as.i64 = i};
}

bool tw_test_add_tag(tw__span_data *s, const char *key, tw_value value)
{
    bool was_truncated = false;
    tw__tag *slot = tw__span_data_push_tag(s);
    if (!slot || !tw__tag_set(&s->arena, slot, key, &value, SIZE_MAX, &was_truncated))
        return false;
    s->n_tags++;
    return true;
}

bool tw_test_add_log(tw__span_data *s, int64_t timestamp_us, const tw_test_field *fields, size_t n)
{
    bool was_truncated = false;
    tw__log *log = tw__span_data_push_log(s, n);
    if (!log)
        return false;
    log->timestamp_us = timestamp_us;
    for (size_t i = 0; i < n; i++) {
        if (!tw__tag_set(&s->arena, &log->fields[i], fields[i].key, &fields[i].value, SIZE_MAX,
                         &was_truncated))
            return false;
    }
    log->n_fields = n;
    s->n_logs++;
    return true;
}

/* ---- fixtures --------------------------------------------------------------------------- */

const uint8_t tw_test_blob_with_nul[5] = {0x00, 0xff, 0x10, 0x00, 0x7f};

tw__span_data *tw_test_span_every_field(void)
{
    tw__span_data *s = tw__span_data_new();
    if (!s)
        return NULL;
    s->trace_id_high = 0x8000000000000001u;
    s->trace_id_low = 0xffffffffffffffffu;
    s->span_id = 0x8000000000000000u;
    s->parent_id = 0x7fffffffffffffffu;
    s->flags = TW__FLAG_SAMPLED | TW__FLAG_DEBUG | TW__FLAG_FIREHOSE;
    s->start_us = 1700000000123456;
    s->duration_us = 987654;
    const char *op = "GET /users/{id} \xc3\xbcnic\xc3\xb6"
                     "de \"quoted\"";
    const tw_test_field retry[] = {{"event", tw_test_str("retry")},
                                   {"attempt", tw_test_i64(3)},
                                   {"delay_s", tw_test_dbl(0.25)}};
    const tw_test_field odd[] = {
        {"is_final", tw_test_bool(false)},
        {"payload", tw_test_bin(tw_test_blob_with_nul, sizeof(tw_test_blob_with_nul))}};
    bool ok = tw__span_data_set_operation(s, op, strlen(op)) &&
              tw_test_add_tag(s, "http.url", tw_test_str("https://example.com/a?b=c")) &&
              tw_test_add_tag(s, "empty", tw_test_str("")) &&
              tw_test_add_tag(s, "pi", tw_test_dbl(3.141592653589793)) &&
              tw_test_add_tag(s, "negative_zero", tw_test_dbl(-0.0)) &&
              tw_test_add_tag(s, "infinity", tw_test_dbl(INFINITY)) &&
              tw_test_add_tag(s, "nan", tw_test_dbl(NAN)) &&
              tw_test_add_tag(s, "error", tw_test_bool(true)) &&
              tw_test_add_tag(s, "cache.hit", tw_test_bool(false)) &&
              tw_test_add_tag(s, "min", tw_test_i64(INT64_MIN)) &&
              tw_test_add_tag(s, "max", tw_test_i64(INT64_MAX)) &&
              tw_test_add_tag(s, "minus_one", tw_test_i64(-1)) &&
              tw_test_add_tag(s, "blob",
                              tw_test_bin(tw_test_blob_with_nul, sizeof(tw_test_blob_with_nul))) &&
              tw_test_add_tag(s, "empty_blob", tw_test_bin(NULL, 0)) &&
              tw_test_add_log(s, 1700000000200000, retry, 3) &&
              tw_test_add_log(s, 1700000000300000, NULL, 0) &&
              tw_test_add_log(s, 1700000000400000, odd, 2) &&
              tw__span_data_add_ref(s, TW__REF_CHILD_OF, s->trace_id_high, s->trace_id_low,
                                    s->parent_id) &&
              tw__span_data_add_ref(s, TW__REF_FOLLOWS_FROM, 0, 0x1234, 0xfedcba9876543210u);
    if (!ok) {
        tw__span_data_unref(s);
        return NULL;
    }
    return s;
}

tw__span_data *tw_test_span_root_64bit(void)
{
    tw__span_data *s = tw__span_data_new();
    if (!s)
        return NULL;
    s->trace_id_low = 0x00000000075bcd15u;
    s->span_id = 0x00000000075bcd15u;
    s->flags = TW__FLAG_SAMPLED;
    s->start_us = 1;
    s->duration_us = 0;
    return s;
}
