/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/bridge/read_capture.h: a twb_input that keeps what a reader
 * reports (spans with their interned processes, rejects with their raw
 * bytes, warnings), for the reader suites of `tracewire convert`.
 * Header-only (static inline functions), so each suite stays one file and a fuzz
 * target can use it too.
 */
#ifndef TW_TESTS_READ_CAPTURE_H
#define TW_TESTS_READ_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "model_equal.h"

typedef struct read_reject {
    size_t line_no;
    char *reason;
    unsigned char *raw;
    size_t raw_len;
} read_reject;

typedef struct read_capture {
    twb_input in;
    twb_options opts;
    twb_procs *procs;
    twb_span *spans;
    size_t n_spans, cap_spans;
    read_reject *rejects;
    size_t n_rejects, cap_rejects;
    size_t n_warnings; /* all but the notes about implausible dates */
    char last_warning[512];
    /* Warnings that a start time is no date between 1980 and 2100 in any unit (the
     * small synthetic times of many tests give one per input). */
    size_t n_date_warnings;
    size_t stop_after; /* emit/reject return false after this many calls (0: never) */
    size_t n_calls;
} read_capture;

static inline bool capture_emit(twb_input *in, tw__span_data *span, const tw__process *process)
{
    read_capture *c = in->user_data;
    const tw__process *p = twb_procs_intern(c->procs, process);
    if (!p || (c->n_spans == c->cap_spans &&
               !(c->cap_spans = c->cap_spans ? 2 * c->cap_spans : 16,
                 c->spans = realloc(c->spans, c->cap_spans * sizeof *c->spans)))) {
        tw__span_data_unref(span);
        return false;
    }
    c->spans[c->n_spans++] = (twb_span){span, p};
    return !(c->stop_after && ++c->n_calls >= c->stop_after);
}

static inline bool capture_reject(twb_input *in, size_t line_no, const void *raw, size_t raw_len,
                                  const char *reason)
{
    read_capture *c = in->user_data;
    if (c->n_rejects == c->cap_rejects) {
        c->cap_rejects = c->cap_rejects ? 2 * c->cap_rejects : 8;
        c->rejects = realloc(c->rejects, c->cap_rejects * sizeof *c->rejects);
        if (!c->rejects)
            abort();
    }
    read_reject *r = &c->rejects[c->n_rejects++];
    r->line_no = line_no;
    r->reason = strdup(reason);
    r->raw = malloc(raw_len ? raw_len : 1);
    if (!r->reason || !r->raw)
        abort();
    if (raw_len)
        memcpy(r->raw, raw, raw_len);
    r->raw_len = raw_len;
    return !(c->stop_after && ++c->n_calls >= c->stop_after);
}

static inline void capture_warn(twb_input *in, size_t line_no, const char *reason)
{
    read_capture *c = in->user_data;
    (void)line_no;
    if (strstr(reason, "is no date between 1980 and 2100 in any unit")) {
        c->n_date_warnings++;
        return;
    }
    c->n_warnings++;
    snprintf(c->last_warning, sizeof c->last_warning, "%s", reason);
}

static inline void capture_init(read_capture *c)
{
    memset(c, 0, sizeof *c);
    c->procs = twb_procs_new();
    if (!c->procs)
        abort();
    c->in.name = "<test>";
    c->in.opts = &c->opts;
    c->in.emit = capture_emit;
    c->in.reject = capture_reject;
    c->in.warn = capture_warn;
    c->in.user_data = c;
}

static inline void capture_free(read_capture *c)
{
    for (size_t i = 0; i < c->n_spans; i++)
        tw__span_data_unref(c->spans[i].data);
    free(c->spans);
    for (size_t i = 0; i < c->n_rejects; i++) {
        free(c->rejects[i].reason);
        free(c->rejects[i].raw);
    }
    free(c->rejects);
    twb_procs_free(c->procs);
    memset(c, 0, sizeof *c);
}

/* Runs @reader over @len bytes of @data (may be 0). */
static inline tw_status capture_read_mem(read_capture *c, const twb_reader *reader,
                                         const void *data, size_t len)
{
    FILE *f = len ? fmemopen((void *)data, len, "r") : fopen("/dev/null", "r");
    if (!f)
        abort();
    tw_error *err = NULL;
    tw_status st = reader->read(f, &c->in, &err);
    tw_error_free(err);
    fclose(f);
    return st;
}

static inline tw_status capture_read_file(read_capture *c, const twb_reader *reader,
                                          const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return TW_E_IO;
    }
    tw_error *err = NULL;
    tw_status st = reader->read(f, &c->in, &err);
    tw_error_free(err);
    fclose(f);
    return st;
}

/* The last tag of @span with @key, or NULL. */
static inline const tw__tag *capture_tag(const tw__span_data *span, const char *key)
{
    return tw__span_data_find_tag(span, key);
}

static inline bool capture_processes_equal(const tw__process *a, const tw__process *b)
{
    if (strcmp(a->service_name ? a->service_name : "", b->service_name ? b->service_name : "") != 0)
        return false;
    if (a->n_tags != b->n_tags)
        return false;
    for (size_t i = 0; i < a->n_tags; i++) {
        if (!tw_test_values_equal(&a->tags[i], &b->tags[i]))
            return false;
    }
    return true;
}

#endif /* TW_TESTS_READ_CAPTURE_H */
