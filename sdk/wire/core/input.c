/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/input.c: the helpers decoders use to report to their input
 * (wire/core/input.h): formatted rejects and warnings, and the one place
 * where a decoded span enters the model (the time range checked once).
 * No state, no locks.
 */
#include "wire/core/input.h"

#include <inttypes.h>
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

bool tw__wire_check_span(const tw__span_data *span, char *why, size_t why_size)
{
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
    if (tw__wire_check_span(span, why, sizeof why))
        return in->emit(in, span, process);
    tw__span_data_unref(span);
    return in->reject(in, line_no, raw, raw_len, why);
}
