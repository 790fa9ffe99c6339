/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/views/select.c: the filters every view shares (--trace, --service,
 * --operation, --since, --until, --min-duration, --error) and the parsers of
 * their values and of `tracewire diff`'s sides (views.h; docs/views.md,
 * "Selecting traces").
 *
 * Matching follows Jaeger's trace search: the span criteria (service,
 * operation, minimum duration, error) must all hold for one span of the
 * trace; --since/--until bound the trace's start; --trace is a prefix of the
 * trace id in any of its textual forms. The parsers read text a person typed
 * on the command line: every byte is checked, numbers are bounded before
 * they are multiplied, and a rejection says what was expected. They have a
 * libFuzzer target (tests/fuzz/fuzz_view_args.c). Locking: none; no state.
 */
#include "views/views.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static bool fail(char *why, size_t why_size, const char *fmt, ...) TW_PRINTF(3, 4);
static bool fail(char *why, size_t why_size, const char *fmt, ...)
{
    if (why && why_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, why_size, fmt, ap);
        va_end(ap);
    }
    return false;
}

static bool is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* ---- trace ids ----------------------------------------------------------------------------- */

bool twv_parse_trace_prefix(const char *text, char out[33], char *why, size_t why_size)
{
    size_t len = strlen(text);
    if (len == 0 || len > 32)
        return fail(why, why_size, "a trace id prefix is 1 to 32 hex digits, not %zu characters",
                    len);
    for (size_t i = 0; i < len; i++) {
        if (!is_hex(text[i]))
            return fail(why, why_size, "a trace id prefix is hex digits; character %zu is not one",
                        i + 1);
        out[i] = (char)tolower((unsigned char)text[i]);
    }
    out[len] = '\0';
    return true;
}

/* True when @prefix starts one of the textual forms of the id. */
static bool id_matches(const char *prefix, uint64_t high, uint64_t low)
{
    size_t len = strlen(prefix);
    char full[33], low_text[17];
    twv_trace_id_text(high, low, full);
    if (strncmp(full, prefix, len) == 0)
        return true;
    snprintf(low_text, sizeof low_text, "%016" PRIx64, low);
    if (high && strncmp(low_text, prefix, len) == 0)
        return true;
    const char *stripped = full;
    while (stripped[0] == '0' && stripped[1])
        stripped++;
    return stripped != full && strncmp(stripped, prefix, len) == 0;
}

bool twv_filter_match_id(const twv_filter *f, uint64_t high, uint64_t low)
{
    return f->trace_prefix[0] == '\0' || id_matches(f->trace_prefix, high, low);
}

bool twv_filter_is_trace_only(const twv_filter *f)
{
    return !f->service && !f->operation && !f->has_min_duration && !f->error_only &&
           !f->has_since && !f->has_until;
}

static bool span_matches(const twv_filter *f, const twv_span *s)
{
    if (f->service && strcasecmp(s->service, f->service) != 0)
        return false;
    if (f->operation && strcmp(s->d->operation ? s->d->operation : "", f->operation) != 0)
        return false;
    if (f->has_min_duration && (!s->has_duration || s->d->duration_us < f->min_duration_us))
        return false;
    if (f->error_only && !s->is_error)
        return false;
    return true;
}

bool twv_filter_match(const twv_filter *f, const twv_trace *t)
{
    if (t->n_spans == 0)
        return false;
    if (!twv_filter_match_id(f, t->trace_id_high, t->trace_id_low))
        return false;
    bool has_start = t->start_us != 0 || t->end_us != 0;
    if (f->has_since && (!has_start || t->start_us < f->since_us))
        return false;
    if (f->has_until && (!has_start || t->start_us >= f->until_us))
        return false;
    if (!f->service && !f->operation && !f->has_min_duration && !f->error_only)
        return true;
    for (size_t i = 0; i < t->n_spans; i++) {
        if (span_matches(f, &t->spans[i]))
            return true;
    }
    return false;
}

/* ---- durations ----------------------------------------------------------------------------- */

/* One number: digits with an optional fraction. Sets *end. */
static bool parse_number(const char *p, const char **end, double *value)
{
    const char *q = p;
    double v = 0;
    int digits = 0;
    while (*q >= '0' && *q <= '9') {
        if (digits < 18)
            v = v * 10 + (*q - '0');
        else
            v *= 10; /* beyond double's precision; the bound check below refuses it */
        digits++;
        q++;
    }
    if (*q == '.') {
        q++;
        double scale = 0.1;
        int frac = 0;
        while (*q >= '0' && *q <= '9') {
            if (frac < 18)
                v += (*q - '0') * scale;
            scale /= 10;
            frac++;
            q++;
        }
        digits += frac;
    }
    if (digits == 0)
        return false;
    *end = q;
    *value = v;
    return true;
}

/* A duration unit at @p: its length in bytes and its size in µs, or 0. */
static size_t parse_unit(const char *p, double *us)
{
    static const struct {
        const char *name;
        double us;
    } units[] = {
        {"ns", 1e-3}, {"us", 1.0}, {"\xc2\xb5s", 1.0}, {"\xce\xbcs", 1.0}, /* µ and μ */
        {"ms", 1e3},  {"s", 1e6},  {"m", 60e6},        {"h", 3600e6},      {"d", 86400e6},
    };
    /* Longest match first: "ms" before "m", "ns" before... */
    size_t best = 0;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        size_t len = strlen(units[i].name);
        if (len > best && strncmp(p, units[i].name, len) == 0) {
            best = len;
            *us = units[i].us;
        }
    }
    return best;
}

#define MAX_DURATION_US 9.2e18 /* below INT64_MAX */

bool twv_parse_duration(const char *text, int64_t *us, char *why, size_t why_size)
{
    const char *p = text;
    double total = 0;
    if (*p == '\0')
        return fail(why, why_size, "an empty duration; write e.g. 250ms, 1.5s or 1m30s");
    while (*p) {
        double v, unit;
        const char *after;
        if (!parse_number(p, &after, &v))
            return fail(why, why_size,
                        "'%s' is not a duration: expected a number at '%.16s' (e.g. 250ms, "
                        "1.5s, 1m30s)",
                        text, p);
        size_t len = parse_unit(after, &unit);
        if (len == 0)
            return fail(why, why_size,
                        "'%s' is not a duration: a number needs a unit (ns, us, ms, s, m, h, d)",
                        text);
        total += v * unit;
        if (!(total < MAX_DURATION_US))
            return fail(why, why_size, "'%s' is too long a duration", text);
        p = after + len;
    }
    *us = (int64_t)(total + 0.5);
    return true;
}

/* ---- times ---------------------------------------------------------------------------------- */

/* Days from 1970-01-01 to a proleptic Gregorian date (the civil calendar
 * arithmetic: years counted from March so the leap day is last). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int days_in_month(int64_t y, int m)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : days[m - 1];
}

/* Exactly @n digits at *p; advances. */
static bool digits(const char **p, int n, int *value)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        char c = (*p)[i];
        if (c < '0' || c > '9')
            return false;
        v = v * 10 + (c - '0');
    }
    *p += n;
    *value = v;
    return true;
}

static bool parse_rfc3339(const char *text, int64_t *us)
{
    const char *p = text;
    int year, month, day, hour = 0, minute = 0, second = 0;
    if (!digits(&p, 4, &year) || *p++ != '-' || !digits(&p, 2, &month) || *p++ != '-' ||
        !digits(&p, 2, &day))
        return false;
    if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month))
        return false;
    int64_t frac_us = 0, offset_s = 0;
    if (*p == 'T' || *p == 't' || *p == ' ') {
        p++;
        if (!digits(&p, 2, &hour) || *p++ != ':' || !digits(&p, 2, &minute))
            return false;
        if (*p == ':') {
            p++;
            if (!digits(&p, 2, &second))
                return false;
            if (*p == '.' || *p == ',') {
                p++;
                int n = 0;
                int64_t scale = 100000;
                while (*p >= '0' && *p <= '9') {
                    frac_us += (*p - '0') * scale;
                    scale /= 10;
                    p++;
                    n++;
                }
                if (n == 0)
                    return false;
            }
        }
        if (hour > 23 || minute > 59 || second > 60)
            return false;
        if (*p == 'Z' || *p == 'z') {
            p++;
        } else if (*p == '+' || *p == '-') {
            int sign = *p++ == '-' ? -1 : 1, oh, om;
            if (!digits(&p, 2, &oh) || *p++ != ':' || !digits(&p, 2, &om) || oh > 23 || om > 59)
                return false;
            offset_s = sign * (oh * 3600 + om * 60);
        }
    }
    if (*p != '\0')
        return false;
    int64_t secs =
        days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset_s;
    *us = secs * 1000000 + frac_us;
    return true;
}

bool twv_parse_time(const char *text, int64_t now_us, int64_t *us, char *why, size_t why_size)
{
    if (strcmp(text, "now") == 0) {
        *us = now_us;
        return true;
    }
    if (text[0] == '@') {
        double v;
        const char *end;
        bool neg = text[1] == '-';
        if (!parse_number(text + 1 + neg, &end, &v) || *end != '\0' || v > 9.2e12)
            return fail(why, why_size, "'%s' is not a time: @ takes seconds since the epoch", text);
        *us = (int64_t)((neg ? -v : v) * 1e6 + (neg ? -0.5 : 0.5));
        return true;
    }
    if (strlen(text) >= 10 && text[4] == '-') {
        if (!parse_rfc3339(text, us))
            return fail(why, why_size,
                        "'%s' is not a valid time: write 2024-05-01, 2024-05-01T10:00:00Z, "
                        "2024-05-01T12:00:00+02:00 (no zone: UTC)",
                        text);
        return true;
    }
    int64_t ago;
    char inner[160];
    if (!twv_parse_duration(text, &ago, inner, sizeof inner))
        return fail(why, why_size,
                    "'%s' is not a time: write an RFC 3339 time (2024-05-01T10:00:00Z), a date, "
                    "@SECONDS, now, or a duration ago (15m, 2h)",
                    text);
    *us = now_us - ago;
    return true;
}

/* ---- diff sides ----------------------------------------------------------------------------- */

static bool all_hex(const char *s, size_t len)
{
    if (len == 0 || len > 32)
        return false;
    for (size_t i = 0; i < len; i++) {
        if (!is_hex(s[i]))
            return false;
    }
    return true;
}

bool twv_parse_side(const char *arg, bool (*file_exists)(const char *path), twv_side *side,
                    char *why, size_t why_size)
{
    memset(side, 0, sizeof *side);
    size_t len = strlen(arg);
    if (len == 0)
        return fail(why, why_size, "an empty argument: name a trace id prefix or a file");
    const char *at = strchr(arg, '@');
    if (at && all_hex(arg, (size_t)(at - arg))) {
        if (at[1] == '\0')
            return fail(why, why_size, "'%s': PREFIX@FILE needs a file after '@'", arg);
        size_t n = (size_t)(at - arg);
        for (size_t i = 0; i < n; i++)
            side->prefix[i] = (char)tolower((unsigned char)arg[i]);
        side->prefix[n] = '\0';
        side->path = at + 1;
        return true;
    }
    if (all_hex(arg, len)) {
        if (file_exists && file_exists(arg))
            return fail(why, why_size,
                        "'%s' is both a file and a trace id prefix: write ./%s for the file, or "
                        "%s@FILE for the trace",
                        arg, arg, arg);
        for (size_t i = 0; i < len; i++)
            side->prefix[i] = (char)tolower((unsigned char)arg[i]);
        side->prefix[len] = '\0';
        return true;
    }
    side->path = arg;
    return true;
}
