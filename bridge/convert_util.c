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

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static void why_set(char *why, size_t why_size, const char *fmt, ...) TW_PRINTF(3, 4);
static void why_set(char *why, size_t why_size, const char *fmt, ...)
{
    if (!why || why_size == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
}

/* A short, printable excerpt of bad input for messages. */
static void quote(const char *text, size_t len, char *out, size_t size)
{
    size_t n = 0;
    for (size_t i = 0; i < len && n + 5 < size; i++) {
        unsigned char c = (unsigned char)text[i];
        out[n++] = (c >= 0x20 && c < 0x7f && c != '"') ? (char)c : '?';
        if (i == 40 && len > 44) {
            memcpy(out + n, "...", 3);
            n += 3;
            break;
        }
    }
    out[n] = '\0';
}

/* Decimal text (an optional '-') to the 64 bits it names: negative values
 * by two's complement, as old Zipkin logs wrote signed i64 ids. */
static bool parse_decimal(const char *text, size_t len, uint64_t *out, char *why, size_t why_size)
{
    char shown[64];
    quote(text, len, shown, sizeof shown);
    bool is_negative = len > 0 && text[0] == '-';
    size_t i = is_negative ? 1 : 0;
    if (i == len) {
        why_set(why, why_size, "\"%s\" is not a decimal number", shown);
        return false;
    }
    uint64_t v = 0;
    for (; i < len; i++) {
        if (text[i] < '0' || text[i] > '9') {
            why_set(why, why_size, "\"%s\" is not a decimal number", shown);
            return false;
        }
        unsigned d = (unsigned)(text[i] - '0');
        if (v > (UINT64_MAX - d) / 10) {
            why_set(why, why_size, "\"%s\" does not fit in 64 bits", shown);
            return false;
        }
        v = v * 10 + d;
    }
    if (is_negative) {
        if (v > (uint64_t)INT64_MAX + 1) {
            why_set(why, why_size, "\"%s\" is below the signed 64-bit range", shown);
            return false;
        }
        v = (uint64_t)0 - v;
    }
    *out = v;
    return true;
}

static bool parse_hex(const char *text, size_t len, size_t max_digits, uint64_t *high,
                      uint64_t *low, char *why, size_t why_size)
{
    char shown[64];
    quote(text, len, shown, sizeof shown);
    if (len == 0) {
        why_set(why, why_size, "empty id");
        return false;
    }
    if (len > max_digits) {
        why_set(why, why_size, "\"%s\" has %zu hex digits (at most %zu)", shown, len, max_digits);
        return false;
    }
    uint64_t hi = 0, lo = 0;
    for (size_t i = 0; i < len; i++) {
        int d = hex_digit(text[i]);
        if (d < 0) {
            why_set(why, why_size, "\"%s\" is not hexadecimal", shown);
            return false;
        }
        hi = (hi << 4) | (lo >> 60);
        lo = (lo << 4) | (uint64_t)d;
    }
    *high = hi;
    *low = lo;
    return true;
}

static bool use_decimal(const char *text, size_t len, twb_id_base base)
{
    if (base == TWB_ID_DEC)
        return true;
    if (base == TWB_ID_HEX)
        return false;
    return len > 0 && text[0] == '-';
}

bool twb_parse_trace_id(const char *text, size_t len, twb_id_base base, uint64_t *high,
                        uint64_t *low, char *why, size_t why_size)
{
    if (!text) {
        why_set(why, why_size, "missing id");
        return false;
    }
    uint64_t hi = 0, lo = 0;
    if (use_decimal(text, len, base)) {
        if (!parse_decimal(text, len, &lo, why, why_size))
            return false;
    } else if (!parse_hex(text, len, 32, &hi, &lo, why, why_size)) {
        return false;
    }
    if (hi == 0 && lo == 0) {
        why_set(why, why_size, "the trace id is all zeros");
        return false;
    }
    *high = hi;
    *low = lo;
    return true;
}

bool twb_parse_span_id(const char *text, size_t len, twb_id_base base, bool allow_zero,
                       uint64_t *id, char *why, size_t why_size)
{
    if (!text) {
        why_set(why, why_size, "missing id");
        return false;
    }
    uint64_t hi = 0, lo = 0;
    if (use_decimal(text, len, base)) {
        if (!parse_decimal(text, len, &lo, why, why_size))
            return false;
    } else if (!parse_hex(text, len, 16, &hi, &lo, why, why_size)) {
        return false;
    }
    if (lo == 0 && !allow_zero) {
        why_set(why, why_size, "the span id is all zeros");
        return false;
    }
    *id = lo;
    return true;
}

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
