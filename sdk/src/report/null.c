/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report/null.c: the null reporter: accepts every span and keeps none (the
 * reporter of a disabled tracer, JAEGER_DISABLED=true). A span it receives
 * counts as reported and sent, so the accounting rule holds. No state
 * beyond relaxed counters.
 */
#include "report/report.h"

#include <stdlib.h>

typedef struct {
    tw_reporter base;
    tw__report_counters counters;
} null_reporter;

static void null_report(tw_reporter *r, tw__span_data *span)
{
    (void)span;
    null_reporter *n = (null_reporter *)r;
    tw__count(&n->counters.reported, 1);
    tw__count(&n->counters.sent, 1);
}

static uint64_t null_counter(const tw_reporter *r, tw_counter c)
{
    return tw__report_counters_get(&((const null_reporter *)r)->counters, c);
}

static void null_destroy(tw_reporter *r)
{
    free(r);
}

static const tw__reporter_vtable null_vtable = {
    .size = sizeof(tw__reporter_vtable),
    .name = "null",
    .report = null_report,
    .counter = null_counter,
    .destroy = null_destroy,
};

tw_reporter *tw_reporter_null_new(void)
{
    null_reporter *n = calloc(1, sizeof(*n));
    if (!n)
        return NULL;
    n->base.vtable = &null_vtable;
    return &n->base;
}
