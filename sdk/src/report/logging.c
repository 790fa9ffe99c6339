/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report/logging.c: the logging reporter: one line per finished span to a
 * tw_log_fn, on the finishing thread (as Jaeger's LoggingReporter). Meant
 * for demos and debugging; combine it with a network reporter through the
 * composite. Lines look like:
 *   span 4bf92f3577b34da6a3ce929d0e0e4736:00f067aa0ba902b7 parent=0 op="GET /"
 *   start=1700000000000000 duration_us=1234 flags=0x1 tags={http.status_code=200}
 *   logs=[{event=cache miss}]
 * No shared state beyond relaxed counters.
 */
#include "report/report.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    tw_reporter base;
    tw_log_fn fn;
    void *user_data;
    tw__report_counters counters;
} logging_reporter;

typedef struct {
    char *buf;
    size_t size, len;
} line;

static void put(line *l, const char *fmt, ...) TW_PRINTF(2, 3);
static void put(line *l, const char *fmt, ...)
{
    if (l->len >= l->size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(l->buf + l->len, l->size - l->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        l->len = l->len + (size_t)n < l->size ? l->len + (size_t)n : l->size - 1;
}

static void put_value(line *l, const tw__tag *t)
{
    switch (t->type) {
    case TW_VALUE_STRING:
        put(l, "%s=%.*s", t->key, (int)(t->len > 256 ? 256 : t->len), t->v.str);
        break;
    case TW_VALUE_BOOL:
        put(l, "%s=%s", t->key, t->v.boolean ? "true" : "false");
        break;
    case TW_VALUE_INT64:
        put(l, "%s=%" PRId64, t->key, t->v.i64);
        break;
    case TW_VALUE_DOUBLE:
        put(l, "%s=%g", t->key, t->v.dbl);
        break;
    case TW_VALUE_BINARY:
        put(l, "%s=<%zu bytes>", t->key, t->len);
        break;
    }
}

size_t tw__format_span_line(const tw__span_data *s, char *buf, size_t size)
{
    line l = {buf, size, 0};
    if (size == 0)
        return 0;
    buf[0] = '\0';
    if (s->trace_id_high)
        put(&l, "span %016" PRIx64 "%016" PRIx64, s->trace_id_high, s->trace_id_low);
    else
        put(&l, "span %016" PRIx64, s->trace_id_low);
    put(&l,
        ":%016" PRIx64 " parent=%016" PRIx64 " op=\"%s\" start=%" PRId64 " duration_us=%" PRId64
        " flags=0x%x",
        s->span_id, s->parent_id, s->operation, s->start_us, s->duration_us, s->flags);
    for (size_t i = 0; i < s->n_refs; i++)
        put(&l, " %s=%016" PRIx64,
            s->refs[i].type == TW__REF_FOLLOWS_FROM ? "follows_from" : "child_of",
            s->refs[i].span_id);
    put(&l, " tags={");
    for (size_t i = 0; i < s->n_tags; i++) {
        if (i)
            put(&l, ", ");
        put_value(&l, &s->tags[i]);
    }
    put(&l, "} logs=[");
    for (size_t i = 0; i < s->n_logs; i++) {
        put(&l, "%s{", i ? ", " : "");
        for (size_t f = 0; f < s->logs[i].n_fields; f++) {
            if (f)
                put(&l, ", ");
            put_value(&l, &s->logs[i].fields[f]);
        }
        put(&l, "}");
    }
    put(&l, "]");
    return l.len;
}

static void logging_report(tw_reporter *r, tw__span_data *span)
{
    logging_reporter *lr = (logging_reporter *)r;
    tw__count(&lr->counters.reported, 1);
    char buf[4096], clean[4096];
    tw__format_span_line(span, buf, sizeof buf);
    /* Names, tags and logs are the application's input: one span, one line. */
    tw__redact_text(buf, clean, sizeof clean);
    lr->fn(TW_LOG_INFO, clean, lr->user_data);
    tw__count(&lr->counters.sent, 1);
}

static uint64_t logging_counter(const tw_reporter *r, tw_counter c)
{
    return tw__report_counters_get(&((const logging_reporter *)r)->counters, c);
}

static void logging_destroy(tw_reporter *r)
{
    free(r);
}

static const tw__reporter_vtable logging_vtable = {
    .size = sizeof(tw__reporter_vtable),
    .name = "logging",
    .report = logging_report,
    .counter = logging_counter,
    .destroy = logging_destroy,
};

tw_reporter *tw_reporter_logging_new(tw_log_fn fn, void *user_data)
{
    logging_reporter *lr = calloc(1, sizeof(*lr));
    if (!lr)
        return NULL;
    lr->base.vtable = &logging_vtable;
    lr->fn = fn ? fn : tw_log_to_stderr;
    lr->user_data = user_data;
    return &lr->base;
}
