/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report/composite.c: fans every span out to several reporters (each takes
 * its own reference on the shared, immutable record). Counters are the sum
 * of the children's. No state of its own beyond the child array, which is
 * immutable after construction.
 *
 * Flush and close work on all children at once: every child is asked
 * first, then each is waited for, against one deadline. So a flush takes
 * at most the caller's timeout in all (not one timeout per child), and a
 * close takes the longest of the children's close deadlines, not their sum.
 */
#include "report/report.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    tw_reporter base;
    size_t n;
    tw_reporter *children[];
} composite_reporter;

/* One child's flush request. */
typedef struct {
    uint64_t ticket;
    tw_status status;
} child_flush;

static tw_status composite_start(tw_reporter *r, const tw__process *process, tw_error **err)
{
    composite_reporter *c = (composite_reporter *)r;
    for (size_t i = 0; i < c->n; i++) {
        tw_status st = tw__reporter_start(c->children[i], process, err);
        if (st != TW_OK) {
            for (size_t j = 0; j < i; j++)
                tw__reporter_close(c->children[j]);
            return st;
        }
    }
    return TW_OK;
}

static void composite_report(tw_reporter *r, tw__span_data *span)
{
    composite_reporter *c = (composite_reporter *)r;
    for (size_t i = 0; i < c->n; i++)
        tw__reporter_report(c->children[i], span);
}

/* Asks every child, then waits for each until the one deadline; the
 * first failure is the result (a child already closed says TW_E_CLOSED).
 * Without memory for the requests, each child is asked and waited for in
 * turn, still against the one deadline. */
static tw_status composite_flush_wait(tw_reporter *r, uint64_t ticket, int64_t deadline_ns)
{
    (void)ticket;
    composite_reporter *c = (composite_reporter *)r;
    child_flush *f = calloc(c->n, sizeof(*f));
    tw_status result = TW_OK;
    for (size_t i = 0; i < c->n; i++) {
        tw_reporter *child = c->children[i];
        if (!f) {
            tw_status st = tw__reporter_flush(child, deadline_ns);
            if (st != TW_OK && result == TW_OK)
                result = st;
            continue;
        }
        if (child->vtable->flush_start)
            f[i].status = child->vtable->flush_start(child, &f[i].ticket);
    }
    for (size_t i = 0; f && i < c->n; i++) {
        tw_reporter *child = c->children[i];
        tw_status st = f[i].status;
        if (st == TW_OK && child->vtable->flush_wait)
            st = child->vtable->flush_wait(child, f[i].ticket, deadline_ns);
        if (st != TW_OK && result == TW_OK)
            result = st;
    }
    free(f);
    return result;
}

static void composite_close_start(tw_reporter *r)
{
    composite_reporter *c = (composite_reporter *)r;
    for (size_t i = 0; i < c->n; i++)
        tw__reporter_close_start(c->children[i]);
}

static void composite_close(tw_reporter *r)
{
    composite_close_start(r);
    composite_reporter *c = (composite_reporter *)r;
    for (size_t i = 0; i < c->n; i++)
        tw__reporter_close(c->children[i]);
}

static uint64_t composite_counter(const tw_reporter *r, tw_counter which)
{
    const composite_reporter *c = (const composite_reporter *)r;
    uint64_t sum = 0;
    for (size_t i = 0; i < c->n; i++)
        sum += tw_reporter_counter(c->children[i], which);
    return sum;
}

static void composite_destroy(tw_reporter *r)
{
    composite_reporter *c = (composite_reporter *)r;
    for (size_t i = 0; i < c->n; i++)
        c->children[i]->vtable->destroy(c->children[i]);
    free(c);
}

static const tw__reporter_vtable composite_vtable = {
    .size = sizeof(tw__reporter_vtable),
    .name = "composite",
    .start = composite_start,
    .report = composite_report,
    .flush_wait = composite_flush_wait,
    .close_start = composite_close_start,
    .close = composite_close,
    .counter = composite_counter,
    .destroy = composite_destroy,
};

tw_reporter *tw_reporter_composite_new(tw_reporter *const *reporters, size_t n)
{
    bool ok = reporters != NULL && n > 0;
    for (size_t i = 0; ok && i < n; i++)
        ok = reporters[i] != NULL;
    composite_reporter *c = ok ? malloc(sizeof(*c) + n * sizeof(tw_reporter *)) : NULL;
    if (!c) {
        /* Ownership was transferred: free what we were given. */
        for (size_t i = 0; reporters && i < n; i++)
            tw_reporter_free(reporters[i]);
        tw__log_msg(TW_LOG_ERROR, "tw_reporter_composite_new: %s",
                    ok ? "out of memory" : "invalid argument: NULL reporter list or member");
        return NULL;
    }
    c->base.vtable = &composite_vtable;
    c->base.is_started = false;
    c->base.name = NULL;
    c->n = n;
    memcpy(c->children, reporters, n * sizeof(tw_reporter *));
    return &c->base;
}

size_t tw_reporter_composite_count(const tw_reporter *reporter)
{
    if (!reporter || reporter->vtable != &composite_vtable)
        return 0;
    return ((const composite_reporter *)reporter)->n;
}

tw_reporter *tw_reporter_composite_get(const tw_reporter *reporter, size_t index)
{
    if (index >= tw_reporter_composite_count(reporter))
        return NULL;
    return ((const composite_reporter *)reporter)->children[index];
}
