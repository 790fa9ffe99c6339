/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/convert_util.c: the parsing rules every reader of `tracewire convert`
 * shares (bridge/convert.h): ids (64/128-bit, hex of any case and length,
 * decimal with two's complement for negative values), time units, and small
 * builders that add tags and Zipkin-style annotations to a span record.
 *
 * Where it sits: called by the readers (readers/ files) while they build records,
 * before twb_emit hands them to the pipeline. Pure functions, no state.
 * Rules: issue 5 "Ids" and "Time"; WIRE-NOTES Part B 2.1 and 2.8 [JI-IDS].
 */
#include "convert.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- time ------------------------------------------------------------------------------------ */

static twb_time_unit unit_by_magnitude(double v)
{
    double a = fabs(v);
    if (a < 1e11)
        return TWB_TIME_S; /* seconds until the year 5138 */
    if (a < 1e14)
        return TWB_TIME_MS; /* ms: 1973 .. 5138 */
    if (a < 1e17)
        return TWB_TIME_US; /* µs: 1973 .. 5138 */
    return TWB_TIME_NS;
}

bool twb_time_to_us(double value, twb_time_unit unit, int64_t *us)
{
    if (!isfinite(value))
        return false;
    if (unit == TWB_TIME_AUTO)
        unit = unit_by_magnitude(value);
    double scaled;
    switch (unit) {
    case TWB_TIME_S:
        scaled = value * 1e6;
        break;
    case TWB_TIME_MS:
        scaled = value * 1e3;
        break;
    case TWB_TIME_NS:
        scaled = value / 1e3;
        break;
    default:
        scaled = value;
        break;
    }
    scaled = nearbyint(scaled);
    /* 2^63 as a double: the first value that does not fit. */
    if (!(scaled > -9223372036854775808.0 && scaled < 9223372036854775808.0))
        return false;
    *us = (int64_t)scaled;
    return true;
}

bool twb_time_int_to_us(int64_t value, twb_time_unit unit, int64_t *us)
{
    if (unit == TWB_TIME_AUTO)
        unit = unit_by_magnitude((double)value);
    switch (unit) {
    case TWB_TIME_S:
        if (value > INT64_MAX / 1000000 || value < INT64_MIN / 1000000)
            return false;
        *us = value * 1000000;
        return true;
    case TWB_TIME_MS:
        if (value > INT64_MAX / 1000 || value < INT64_MIN / 1000)
            return false;
        *us = value * 1000;
        return true;
    case TWB_TIME_NS: {
        /* Round half away from zero to the nearest microsecond. */
        int64_t q = value / 1000, r = value % 1000;
        if (r >= 500)
            q++;
        else if (r <= -500)
            q--;
        *us = q;
        return true;
    }
    default:
        *us = value;
        return true;
    }
}

twb_time_unit twb_time_unit_parse(const char *text)
{
    static const struct {
        const char *name;
        twb_time_unit unit;
    } names[] = {{"auto", TWB_TIME_AUTO}, {"s", TWB_TIME_S},   {"ms", TWB_TIME_MS},
                 {"us", TWB_TIME_US},     {"ns", TWB_TIME_NS}, {"µs", TWB_TIME_US}};
    for (size_t i = 0; text && i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(text, names[i].name) == 0)
            return names[i].unit;
    }
    return (twb_time_unit)-1;
}

/* ---- record builders --------------------------------------------------------------------- */

bool twb_tag_value(tw__span_data *s, const char *key, const tw_value *value)
{
    tw__tag *t = tw__span_data_push_tag(s);
    if (!t)
        return false;
    bool was_truncated = false;
    if (!tw__tag_set(&s->arena, t, key, value, SIZE_MAX, &was_truncated))
        return false;
    s->n_tags++; /* commits the tag (model/span_data.h) */
    return true;
}

bool twb_tag_str(tw__span_data *s, const char *key, const char *value, size_t len)
{
    tw_value v = {.type = TW_VALUE_STRING, .len = len, .as.str = value};
    return twb_tag_value(s, key, &v);
}

bool twb_log_event(tw__span_data *s, int64_t ts_us, const char *value, size_t len)
{
    tw__log *log = tw__span_data_push_log(s, 1);
    if (!log)
        return false;
    log->timestamp_us = ts_us;
    tw_value v = {.type = TW_VALUE_STRING, .len = len, .as.str = value};
    bool was_truncated = false;
    if (!tw__tag_set(&s->arena, &log->fields[0], "event", &v, SIZE_MAX, &was_truncated))
        return false;
    log->n_fields = 1;
    s->n_logs++; /* commits the log */
    return true;
}

/* ---- reject / warn wrappers ---------------------------------------------------------------- */

bool twb_reject(twb_input *in, size_t line_no, const void *raw, size_t raw_len, const char *fmt,
                ...)
{
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    return in->reject(in, line_no, raw, raw_len, reason);
}

void twb_warn(twb_input *in, size_t line_no, const char *fmt, ...)
{
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    if (in->warn)
        in->warn(in, line_no, reason);
}

/* ---- output and JSON helpers ---------------------------------------------------------------- */

tw_status twb_write_out(FILE *out, const void *data, size_t len, tw_error **err)
{
    if (len && fwrite(data, 1, len, out) != len) {
        tw__set_error(err, TW_E_IO, "write error: %s", strerror(errno));
        return TW_E_IO;
    }
    return TW_OK;
}

tw_status twb_flush_out(FILE *out, tw_error **err)
{
    if (fflush(out) != 0 || ferror(out)) {
        tw__set_error(err, TW_E_IO, "write error: %s", strerror(errno));
        return TW_E_IO;
    }
    return TW_OK;
}

char *twb_json_value_text(const json_t *v, size_t *len)
{
    if (json_is_string(v)) {
        *len = json_string_length(v);
        char *copy = malloc(*len + 1);
        if (copy) {
            memcpy(copy, json_string_value(v), *len);
            copy[*len] = '\0';
        }
        return copy;
    }
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
    *len = text ? strlen(text) : 0;
    return text;
}
