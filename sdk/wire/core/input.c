/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/input.c: the helpers decoders use to report to their input
 * (wire/core/input.h): formatted rejects and warnings, and the one place
 * where a decoded span enters the model (the time range checked once).
 * No state, no locks.
 */
#include "wire/core/input.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>

bool tw__wire_reject(tw__wire_input *in, size_t line_no, const void *raw, size_t raw_len,
                     const char *fmt, ...)
{
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    return in->reject(in, line_no, raw, raw_len, reason);
}

bool tw__wire_reject_part(void *in, const void *bytes, size_t len)
{
    tw__wire_input *input = in;
    return input->reject_part(input, bytes, len);
}

void tw__wire_warn(tw__wire_input *in, size_t line_no, const char *fmt, ...)
{
    if (!in->warn)
        return;
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    in->warn(in, line_no, reason);
}

/* ---- time units by magnitude --------------------------------------------------------------- */

/* Plausible dates of a span log, in µs since the epoch: 1980-01-01 to 2100-01-01. */
#define PLAUSIBLE_MIN_US INT64_C(315532800000000)
#define PLAUSIBLE_MAX_US INT64_C(4102444800000000)

enum { SAID_UNIT = 1, SAID_IMPLAUSIBLE = 2 };

static bool is_plausible(int64_t raw, tw__time_unit unit)
{
    int64_t us;
    return tw__time_int_to_us(raw, unit, &us) && us >= PLAUSIBLE_MIN_US && us <= PLAUSIBLE_MAX_US;
}

static const char *unit_name(tw__time_unit unit)
{
    switch (unit) {
    case TW__TIME_S:
        return "seconds";
    case TW__TIME_MS:
        return "milliseconds";
    case TW__TIME_NS:
        return "nanoseconds";
    default:
        return "microseconds";
    }
}

tw__time_unit tw__wire_time_unit(tw__wire_input *in, size_t line_no, int64_t start,
                                 tw__time_unit unit)
{
    if ((in->opts && in->opts->time_unit != TW__TIME_AUTO) || start == 0 ||
        is_plausible(start, unit))
        return unit;
    /* The plausible range spans less than a factor of 1000: one unit at most fits. */
    static const tw__time_unit units[] = {TW__TIME_S, TW__TIME_MS, TW__TIME_US, TW__TIME_NS};
    for (size_t k = 0; k < sizeof units / sizeof units[0]; k++) {
        if (units[k] == unit || !is_plausible(start, units[k]))
            continue;
        if (!(in->said & SAID_UNIT)) {
            in->said |= SAID_UNIT;
            tw__wire_warn(in, line_no,
                          "times read as %s, by their magnitude (a start of %" PRId64
                          " %s is no date between 1980 and 2100); --time-unit forces a unit",
                          unit_name(units[k]), start, unit_name(unit));
        }
        return units[k];
    }
    if (!(in->said & SAID_IMPLAUSIBLE)) {
        in->said |= SAID_IMPLAUSIBLE;
        tw__wire_warn(in, line_no,
                      "a start time of %" PRId64 " is no date between 1980 and 2100 in any "
                      "unit: kept as it is (further such times are not reported)",
                      start);
    }
    return unit;
}

/* @v µs as read, rescaled as if it had been read in @unit; rounded, saturated. */
static int64_t rescaled(int64_t v, tw__time_unit unit)
{
    int64_t us;
    if (tw__time_int_to_us(v, unit, &us))
        return us;
    return v > 0 ? INT64_MAX : INT64_MIN;
}

bool tw__wire_admit_span(tw__wire_input *in, size_t line_no, tw__span_data *span, char *why,
                         size_t why_size)
{
    tw__time_unit unit = tw__wire_time_unit(in, line_no, span->start_us, TW__TIME_US);
    if (unit != TW__TIME_US) {
        span->start_us = rescaled(span->start_us, unit);
        span->duration_us = rescaled(span->duration_us, unit);
        for (size_t i = 0; i < span->n_logs; i++)
            span->logs[i].timestamp_us = rescaled(span->logs[i].timestamp_us, unit);
    }
    char reason[200];
    if (tw__span_data_check_times(span, reason, sizeof reason))
        return true;
    char trace[33], id[17];
    tw__trace_id_hex(span->trace_id_high, span->trace_id_low, trace);
    tw__hex64(span->span_id, id);
    snprintf(why, why_size, "span %s of trace %s: %s", id, trace, reason);
    return false;
}

bool tw__wire_emit(tw__wire_input *in, size_t line_no, tw__span_data *span,
                   const tw__process *process, const void *raw, size_t raw_len)
{
    char why[320];
    if (tw__wire_admit_span(in, line_no, span, why, sizeof why))
        return in->emit(in, span, process);
    tw__span_data_unref(span);
    return in->reject(in, line_no, raw, raw_len, why);
}

/* Stamps name one process's content for good: never 0, never reused. */
static atomic_uint_fast64_t last_stamp;

uint64_t tw__wire_new_stamp(void)
{
    return atomic_fetch_add_explicit(&last_stamp, 1, memory_order_relaxed) + 1;
}
