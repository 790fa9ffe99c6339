/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/jaeger/jaeger_json_encode.c: the Jaeger query-API JSON encoder and
 * its document (wire/jaeger/jaeger_json.h has the rules): trace objects
 * written straight into a byte buffer, and the document encoder that groups
 * each batch of spans by trace and frames them ({"data":[...],...}).
 *
 * Why no Jansson tree: `tracewire convert zipkin-v2-json -> jaeger-json`
 * spent about 437,000 instructions per span (callgrind), half of it in
 * Jansson and malloc. The guard is the differential suite
 * tests/unit/wire/test_jaeger_json_encode.c (against the reference Jansson
 * encoder, tests/unit/wire/oracle_jaeger_json.c) and the interop test that
 * loads the output with jaeger-ui's rules.
 *
 * Memory: one group's index arrays; the view's tag array. Single-threaded.
 */
#include "wire/jaeger/jaeger_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/core/json_write.h"
#include "wire/formats.h"

#define PUT_LIT(out, lit) tw__buf_put((out), (lit), sizeof(lit) - 1)

/* ---- spans --------------------------------------------------------------------------------- */

static bool put_ref(tw__buf *out, bool *first, tw__ref_type type, uint64_t hi, uint64_t lo,
                    uint64_t span_id)
{
    bool ok = (*first ? true : tw__buf_put_byte(out, ',')) &&
              (type == TW__REF_FOLLOWS_FROM ? PUT_LIT(out, "{\"refType\":\"FOLLOWS_FROM\"")
                                            : PUT_LIT(out, "{\"refType\":\"CHILD_OF\"")) &&
              PUT_LIT(out, ",\"traceID\":") && tw__json_put_trace_id(out, hi, lo) &&
              PUT_LIT(out, ",\"spanID\":") && tw__json_put_hex64(out, span_id) &&
              tw__buf_put_byte(out, '}');
    *first = false;
    return ok;
}

static bool put_references(tw__buf *out, const tw__span_data *s)
{
    /* The reference that names the parent: a CHILD_OF one first, else any. */
    size_t parent_ref = SIZE_MAX;
    for (int pass = 0; pass < 2 && s->parent_id && parent_ref == SIZE_MAX; pass++) {
        for (size_t i = 0; i < s->n_refs && parent_ref == SIZE_MAX; i++) {
            const tw__ref *r = &s->refs[i];
            if ((pass == 1 || r->type == TW__REF_CHILD_OF) && r->span_id == s->parent_id &&
                r->trace_id_high == s->trace_id_high && r->trace_id_low == s->trace_id_low)
                parent_ref = i;
        }
    }
    bool first = true;
    bool ok = PUT_LIT(out, "[");
    if (ok && parent_ref != SIZE_MAX) {
        const tw__ref *r = &s->refs[parent_ref];
        ok = put_ref(out, &first, r->type, r->trace_id_high, r->trace_id_low, r->span_id);
    } else if (ok && s->parent_id) {
        ok =
            put_ref(out, &first, TW__REF_CHILD_OF, s->trace_id_high, s->trace_id_low, s->parent_id);
    }
    for (size_t i = 0; ok && i < s->n_refs; i++) {
        const tw__ref *r = &s->refs[i];
        if (i != parent_ref)
            ok = put_ref(out, &first, r->type, r->trace_id_high, r->trace_id_low, r->span_id);
    }
    return ok && tw__buf_put_byte(out, ']');
}

static bool put_typed_list(tw__buf *out, const tw__tag *tags, size_t n)
{
    bool ok = PUT_LIT(out, "[");
    for (size_t i = 0; ok && i < n; i++)
        ok = (i == 0 || tw__buf_put_byte(out, ',')) && tw__json_put_typed_tag(out, &tags[i]);
    return ok && tw__buf_put_byte(out, ']');
}

static bool put_logs(tw__buf *out, const tw__span_data *s)
{
    bool ok = PUT_LIT(out, "[");
    for (size_t i = 0; ok && i < s->n_logs; i++) {
        ok = (i == 0 || tw__buf_put_byte(out, ',')) && PUT_LIT(out, "{\"timestamp\":") &&
             tw__json_put_int(out, s->logs[i].timestamp_us) && PUT_LIT(out, ",\"fields\":") &&
             put_typed_list(out, s->logs[i].fields, s->logs[i].n_fields) &&
             tw__buf_put_byte(out, '}');
    }
    return ok && tw__buf_put_byte(out, ']');
}

/* The span object. @fallback_start: the trace's earliest start (0: none). */
static bool put_span(tw__buf *out, tw__jaeger_view *view, const tw__span_data *record,
                     const char *process_id, int64_t fallback_start)
{
    const tw__span_data *s = tw__jaeger_view_of(view, record);
    if (!s)
        return false;
    int64_t start = s->start_us;
    const char *warning = NULL;
    if (start <= 0) {
        start = 0;
        for (size_t i = 0; i < s->n_logs; i++) {
            if (s->logs[i].timestamp_us > 0 && (!start || s->logs[i].timestamp_us < start))
                start = s->logs[i].timestamp_us;
        }
        warning = "tracewire: the span had no start time; its earliest log time is used";
        if (!start) {
            start = fallback_start > 0 ? fallback_start : 1;
            warning = fallback_start > 0
                          ? "tracewire: the span had no start time; its trace's start is used"
                          : "tracewire: the span had no start time; 1 microsecond is used";
        }
    }
    const char *op = s->operation ? s->operation : "";
    bool ok = PUT_LIT(out, "{\"traceID\":") &&
              tw__json_put_trace_id(out, s->trace_id_high, s->trace_id_low) &&
              PUT_LIT(out, ",\"spanID\":") && tw__json_put_hex64(out, s->span_id) &&
              PUT_LIT(out, ",\"flags\":") && tw__json_put_uint(out, s->flags) &&
              PUT_LIT(out, ",\"operationName\":") && tw__json_append_text(out, op, strlen(op)) &&
              PUT_LIT(out, ",\"references\":") && put_references(out, s) &&
              PUT_LIT(out, ",\"startTime\":") && tw__json_put_int(out, start) &&
              PUT_LIT(out, ",\"duration\":") &&
              tw__json_put_int(out, s->duration_us > 0 ? s->duration_us : 0) &&
              PUT_LIT(out, ",\"tags\":") && put_typed_list(out, s->tags, s->n_tags) &&
              PUT_LIT(out, ",\"logs\":") && put_logs(out, s) && PUT_LIT(out, ",\"processID\":") &&
              tw__json_append_text(out, process_id, strlen(process_id)) &&
              PUT_LIT(out, ",\"warnings\":");
    if (ok && warning)
        ok = tw__buf_put_byte(out, '[') && tw__json_append_text(out, warning, strlen(warning)) &&
             PUT_LIT(out, "]}");
    else if (ok)
        ok = PUT_LIT(out, "null}");
    return ok;
}

static bool put_process(tw__buf *out, const tw__process *p)
{
    tw__process scratch;
    const tw__process *shown = tw__jaeger_process(p, &scratch);
    return PUT_LIT(out, "{\"serviceName\":") &&
           tw__json_append_text(out, shown->service_name, strlen(shown->service_name)) &&
           PUT_LIT(out, ",\"tags\":") && put_typed_list(out, shown->tags, shown->n_tags) &&
           tw__buf_put_byte(out, '}');
}

/* ---- traces -------------------------------------------------------------------------------- */

/* "p" and the decimal @n (a process's id in the trace), as snprintf "p%zu"
 * writes it, without printf: it runs once per span. */
static void format_process_id(char out[32], size_t n)
{
    char digits[24];
    size_t k = 0;
    do {
        digits[k++] = (char)('0' + n % 10);
        n /= 10;
    } while (n);
    out[0] = 'p';
    for (size_t i = 0; i < k; i++)
        out[1 + i] = digits[k - 1 - i];
    out[1 + k] = '\0';
}

/* The index of @p among the first @n distinct processes of @procs, or @n. */
static size_t process_index(const tw__process *const *procs, size_t n, const tw__process *p)
{
    size_t k = 0;
    while (k < n && procs[k] != p)
        k++;
    return k;
}

bool tw__jaeger_json_encode_trace(tw__jaeger_view *view, const tw__wire_span *spans,
                                  const size_t *idx, size_t n, tw__buf *out)
{
    if (n == 0)
        return false;
    size_t before = out->len;
    /* The distinct processes of the trace in order of first appearance:
     * their keys are p1..pN. A trace rarely has many: a linear search. */
    const tw__process *small[16];
    const tw__process **procs = n <= 16 ? small : malloc(n * sizeof *procs);
    if (!procs)
        return false;
    size_t n_procs = 0;
    int64_t earliest = 0;
    for (size_t i = 0; i < n; i++) {
        const tw__wire_span *sp = &spans[idx[i]];
        if (process_index(procs, n_procs, sp->process) == n_procs)
            procs[n_procs++] = sp->process;
        int64_t t = sp->data->start_us;
        if (t > 0 && (!earliest || t < earliest))
            earliest = t;
    }
    const tw__span_data *first = spans[idx[0]].data;
    bool ok = PUT_LIT(out, "{\"traceID\":") &&
              tw__json_put_trace_id(out, first->trace_id_high, first->trace_id_low) &&
              PUT_LIT(out, ",\"spans\":[");
    for (size_t i = 0; ok && i < n; i++) {
        const tw__wire_span *sp = &spans[idx[i]];
        char pid[32];
        format_process_id(pid, process_index(procs, n_procs, sp->process) + 1);
        ok = (i == 0 || tw__buf_put_byte(out, ',')) && put_span(out, view, sp->data, pid, earliest);
    }
    ok = ok && PUT_LIT(out, "],\"processes\":{");
    for (size_t k = 0; ok && k < n_procs; k++) {
        char pid[40];
        int len = snprintf(pid, sizeof pid, "%s\"p%zu\":", k ? "," : "", k + 1);
        ok = tw__buf_put(out, pid, (size_t)len) && put_process(out, procs[k]);
    }
    ok = ok && PUT_LIT(out, "},\"warnings\":null}");
    if (procs != small)
        free(procs);
    if (!ok)
        out->len = before;
    return ok;
}

/* ---- the document -------------------------------------------------------------------------- */

struct tw__doc_encoder {
    size_t n_traces;
    tw__jaeger_view view;
};

static tw__doc_encoder *doc_create(const tw__wire_options *opts, tw__span_reject_fn reject,
                                   void *reject_data)
{
    (void)opts;
    (void)reject; /* every span the model holds has a Jaeger JSON form */
    (void)reject_data;
    tw__doc_encoder *e = calloc(1, sizeof *e);
    if (e)
        tw__jaeger_view_init(&e->view);
    return e;
}

static void doc_destroy(tw__doc_encoder *e)
{
    if (!e)
        return;
    tw__jaeger_view_clear(&e->view);
    free(e);
}

typedef struct {
    const tw__wire_span *spans;
} sort_ctx;

static int by_trace_then_position(const void *a, const void *b, void *user)
{
    const tw__wire_span *spans = ((const sort_ctx *)user)->spans;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const tw__span_data *x = spans[i].data, *y = spans[j].data;
    if (x->trace_id_high != y->trace_id_high)
        return x->trace_id_high < y->trace_id_high ? -1 : 1;
    if (x->trace_id_low != y->trace_id_low)
        return x->trace_id_low < y->trace_id_low ? -1 : 1;
    return i < j ? -1 : i > j;
}

typedef struct {
    size_t start, len; /* a run in the sorted index */
} group;

static int by_first_position(const void *a, const void *b, void *user)
{
    const size_t *idx = user;
    size_t x = idx[((const group *)a)->start], y = idx[((const group *)b)->start];
    return x < y ? -1 : x > y;
}

static bool doc_encode(tw__doc_encoder *e, const tw__wire_span *spans, size_t n, tw__buf *out)
{
    if (n == 0)
        return true;
    size_t *idx = malloc(n * sizeof *idx);
    group *groups = malloc(n * sizeof *groups);
    bool ok = idx && groups;
    if (ok) {
        for (size_t i = 0; i < n; i++)
            idx[i] = i;
        sort_ctx sc = {spans};
        qsort_r(idx, n, sizeof *idx, by_trace_then_position, &sc);
        size_t n_groups = 0;
        for (size_t i = 0; i < n; i++) {
            const tw__span_data *s = spans[idx[i]].data;
            const tw__span_data *prev = i ? spans[idx[i - 1]].data : NULL;
            if (!prev || prev->trace_id_high != s->trace_id_high ||
                prev->trace_id_low != s->trace_id_low)
                groups[n_groups++] = (group){i, 0};
            groups[n_groups - 1].len++;
        }
        qsort_r(groups, n_groups, sizeof *groups, by_first_position, idx);
        for (size_t g = 0; ok && g < n_groups; g++) {
            ok = (e->n_traces++ ? PUT_LIT(out, ",") : PUT_LIT(out, "{\"data\":[")) &&
                 tw__jaeger_json_encode_trace(&e->view, spans, idx + groups[g].start, groups[g].len,
                                              out);
        }
    }
    free(idx);
    free(groups);
    return ok;
}

static bool doc_finish(tw__doc_encoder *e, tw__buf *out)
{
    return (e->n_traces || PUT_LIT(out, "{\"data\":[")) &&
           PUT_LIT(out, "],\"total\":0,\"limit\":0,\"offset\":0,\"errors\":null}\n");
}

const tw__wire_encoder tw__jaeger_json_encoder = {
    .name = "jaeger-json",
    .summary = "Jaeger query-API JSON {\"data\":[trace...]} (loads in Jaeger UI's JSON upload)",
    .flags = TW__ENCODER_JAEGER_IDS,
    .create = doc_create,
    .encode = doc_encode,
    .finish = doc_finish,
    .destroy = doc_destroy,
};
