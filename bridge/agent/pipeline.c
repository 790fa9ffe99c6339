/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/pipeline.c: between the receivers and the destinations
 * (agent.h). A receiver decodes one datagram, request or chunk into a
 * twa_spanbuf (the convert readers' twb_input feeds it); flushing the buffer
 * applies the processing and hands every span to every destination's queue:
 *
 *   --drop-name NAME   spans whose operation is NAME are dropped (counted
 *                      `filtered`): the SDK's tw_handler_drop_names_new
 *   --redact REGEX     every match in a string tag value or string log field
 *                      is replaced by --redact-with ("***"): the SDK's
 *                      tw_handler_redact_new (PCRE syntax, fails closed)
 *   --tag KEY=VALUE    set on the process (procs.c, when it is interned)
 *
 * The handlers run through the SDK's narrow entry point offline/handler_apply.h.
 * The settings can change on SIGHUP: they sit behind a read-write lock that
 * each flush takes for reading. A record is still private to the receiver
 * thread when it is processed (one reference), so it is changed in place.
 */
#include "agent/agent.h"

#include <stdlib.h>
#include <string.h>

#include "agent/tail.h"
#include "offline/handler_apply.h"

/* Limits for what a handler adds (the redaction's replacement values). */
#define HANDLER_MAX_TAGS 1024
#define HANDLER_MAX_VALUE_BYTES 65536

#define MAX_DESTS TWA_MAX_DESTS

struct twa_pipeline {
    twa_procs *procs;
    twa_dest *dests[MAX_DESTS];
    size_t n_dests;
    pthread_rwlock_t lock;   /* guards the settings below */
    tw_span_handler *drop;   /* NULL: none */
    tw_span_handler *redact; /* NULL: none */
    twa_tail *tail;          /* NULL: no tail sampling */
};

static bool build_settings(const twa_pipeline_options *o, tw_span_handler **drop,
                           tw_span_handler **redact, char *why, size_t why_size)
{
    *drop = *redact = NULL;
    if (o->n_drop_names) {
        *drop = tw_handler_drop_names_new(o->drop_names, o->n_drop_names);
        if (!*drop) {
            snprintf(why, why_size, "--drop-name: out of memory");
            return false;
        }
    }
    if (o->redact_regex && *o->redact_regex) {
        tw_error *e = NULL;
        *redact =
            tw_handler_redact_new(o->redact_regex, o->redact_with ? o->redact_with : "***", &e);
        if (!*redact) {
            snprintf(why, why_size, "--redact: %s", e ? tw_error_message(e) : "out of memory");
            tw_error_free(e);
            tw_span_handler_free(*drop);
            *drop = NULL;
            return false;
        }
    }
    return true;
}

twa_pipeline *twa_pipeline_new(const twa_pipeline_options *o, twa_dest *const *dests,
                               size_t n_dests, char *why, size_t why_size)
{
    if (n_dests > MAX_DESTS) {
        snprintf(why, why_size, "at most %d --send destinations", MAX_DESTS);
        return NULL;
    }
    twa_pipeline *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    pthread_rwlock_init(&p->lock, NULL);
    p->procs = twa_procs_new(o->tags, o->n_tags);
    if (!p->procs) {
        snprintf(why, why_size, "--tag: expected KEY=VALUE");
        twa_pipeline_free(p);
        return NULL;
    }
    if (!build_settings(o, &p->drop, &p->redact, why, why_size)) {
        twa_pipeline_free(p);
        return NULL;
    }
    if (n_dests)
        memcpy(p->dests, dests, n_dests * sizeof *dests);
    p->n_dests = n_dests;
    if (o->tail_sample) {
        twa_tail_options to = {o->tail_keep_share, o->tail_slow_us, o->tail_quiet_ms,
                               o->tail_max_traces};
        p->tail = twa_tail_new(&to, p->dests, p->n_dests);
        if (!p->tail) {
            snprintf(why, why_size, "out of memory");
            twa_pipeline_free(p);
            return NULL;
        }
        twa_metrics_tail = twa_tail_get_stats(p->tail);
    }
    return p;
}

bool twa_pipeline_reconfigure(twa_pipeline *p, const twa_pipeline_options *o, char *why,
                              size_t why_size)
{
    tw_span_handler *drop, *redact;
    if (!build_settings(o, &drop, &redact, why, why_size))
        return false;
    if (!twa_procs_set_tags(p->procs, o->tags, o->n_tags)) {
        snprintf(why, why_size, "--tag: expected KEY=VALUE");
        tw_span_handler_free(drop);
        tw_span_handler_free(redact);
        return false;
    }
    pthread_rwlock_wrlock(&p->lock);
    tw_span_handler *old_drop = p->drop, *old_redact = p->redact;
    p->drop = drop;
    p->redact = redact;
    pthread_rwlock_unlock(&p->lock);
    tw_span_handler_free(old_drop);
    tw_span_handler_free(old_redact);
    return true;
}

bool twa_pipeline_start(twa_pipeline *p)
{
    return !p->tail || twa_tail_start(p->tail);
}

void twa_pipeline_stop(twa_pipeline *p)
{
    if (p && p->tail)
        twa_tail_stop(p->tail);
}

void twa_pipeline_free(twa_pipeline *p)
{
    if (!p)
        return;
    if (p->tail) {
        twa_metrics_tail = NULL;
        twa_tail_free(p->tail);
    }
    tw_span_handler_free(p->drop);
    tw_span_handler_free(p->redact);
    twa_procs_free(p->procs);
    pthread_rwlock_destroy(&p->lock);
    free(p);
}

twa_procs *twa_pipeline_procs(twa_pipeline *p)
{
    return p->procs;
}

double twa_pipeline_fill(twa_pipeline *p)
{
    double max = 0;
    for (size_t i = 0; i < p->n_dests; i++) {
        double f = twa_dest_fill(p->dests[i]);
        if (f > max)
            max = f;
    }
    return max;
}

/* ---- the span buffer --------------------------------------------------------------------------
 */

static bool on_emit(twb_input *in, tw__span_data *span, const tw__process *process)
{
    twa_spanbuf *b = in->user_data;
    twa_spanbuf_add(b, span, process);
    return true;
}

static bool on_reject(twb_input *in, size_t line_no, const void *raw, size_t raw_len,
                      const char *reason)
{
    (void)raw;
    (void)raw_len;
    twa_spanbuf *b = in->user_data;
    char why[256];
    if (line_no)
        snprintf(why, sizeof why, "line %zu: %s", line_no, reason);
    else
        snprintf(why, sizeof why, "%s", reason);
    twa_spanbuf_reject(b, why);
    return true;
}

static void on_warn(twb_input *in, size_t line_no, const char *reason)
{
    (void)line_no;
    twa_log(TWA_DEBUG, "%s: %s", in->name, reason);
}

void twa_spanbuf_init(twa_spanbuf *b, twa_pipeline *p, twa_recv_stats *stats)
{
    memset(b, 0, sizeof *b);
    b->pipeline = p;
    b->stats = stats;
    b->opts.max_value_bytes = 65536;
    b->opts.max_annotations = 1000;
    b->in.opts = &b->opts;
    b->in.emit = on_emit;
    b->in.reject = on_reject;
    b->in.warn = on_warn;
    b->in.user_data = b;
}

twb_input *twa_spanbuf_input(twa_spanbuf *b, const char *name)
{
    b->in.name = name;
    return &b->in;
}

static twa_proc *intern(twa_spanbuf *b, const tw__process *process)
{
    return twa_procs_intern(b->pipeline->procs, process);
}

static bool add_item(twa_spanbuf *b, tw__span_data *span, twa_proc *p)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        twa_item *grown = realloc(b->items, cap * sizeof *grown);
        if (!grown) {
            b->is_nomem = true;
            tw__span_data_unref(span);
            twa_proc_unref(p);
            twa_spanbuf_reject(b, "out of memory");
            return false;
        }
        b->items = grown;
        b->cap = cap;
    }
    b->items[b->n++] = (twa_item){.data = span, .proc = p, .chunk = b->chunk};
    return true;
}

bool twa_spanbuf_add(twa_spanbuf *b, tw__span_data *span, const tw__process *process)
{
    twa_proc *p = intern(b, process);
    if (!p) {
        b->is_nomem = true;
        tw__span_data_unref(span);
        twa_spanbuf_reject(b, "out of memory");
        return false;
    }
    return add_item(b, span, p);
}

bool twa_spanbuf_add_interned(twa_spanbuf *b, tw__span_data *span, twa_proc *proc)
{
    return add_item(b, span, twa_proc_ref(proc));
}

void twa_spanbuf_reject(twa_spanbuf *b, const char *reason)
{
    if (b->n_rejected++ == 0)
        snprintf(b->first_reject, sizeof b->first_reject, "%s", reason);
}

/* Reserves room for the first @n spans (@bytes) on every destination, or
 * none: the request is refused whole (413 when a queue could never hold it,
 * else 503), its spans dropped and counted on every destination, as each of
 * them lost them. A request over a queue's capacity is refused as such even
 * when another queue is only full now: retrying it cannot help. Only the
 * span count makes a request too large: one whose records are more than
 * --queue-bytes goes into an empty queue, as a single large span does
 * (twa_dest_reserve), so a batch within --max-request-bytes is never
 * refused for good (an OpenTelemetry Collector drops a batch answered 413;
 * it retries a 503). */
static bool admit_whole(twa_spanbuf *b, size_t n, size_t bytes)
{
    twa_pipeline *p = b->pipeline;
    size_t d = 0;
    for (size_t i = 0; i < p->n_dests && b->admit == TWA_ADMIT_OK; i++) {
        size_t cap_spans = twa_dest_capacity_spans(p->dests[i]);
        if (n > cap_spans) {
            b->admit = TWA_ADMIT_TOO_LARGE;
            snprintf(b->refusal, sizeof b->refusal,
                     "the request holds %zu spans, more than a destination queue holds (%zu "
                     "spans: --queue-spans); send smaller batches",
                     n, cap_spans);
        }
    }
    for (; d < p->n_dests && b->admit == TWA_ADMIT_OK; d++)
        b->admit = twa_dest_reserve(p->dests[d], n, bytes);
    if (b->admit == TWA_ADMIT_OK)
        return true;
    for (size_t i = 0; i + 1 < d; i++) /* the one at d - 1 refused */
        twa_dest_unreserve(p->dests[i], n, bytes);
    if (b->admit == TWA_ADMIT_FULL)
        snprintf(b->refusal, sizeof b->refusal,
                 "the agent's queue has no room for the request's %zu spans now; retry later", n);
    twa_drop_reason why = b->admit == TWA_ADMIT_FULL ? TWA_DROP_QUEUE_FULL : TWA_DROP_OVER_CAPACITY;
    for (size_t i = 0; i < p->n_dests; i++)
        twa_add(&twa_dest_get_stats(p->dests[i])->dropped[why], n);
    for (size_t i = 0; i < n; i++) /* the filtered ones were released already */
        twa_item_release(&b->items[i]);
    b->n = 0;
    return false;
}

size_t twa_spanbuf_flush(twa_spanbuf *b)
{
    twa_pipeline *p = b->pipeline;
    twa_add(&b->stats->received, b->n + b->n_rejected);
    twa_add(&b->stats->invalid, b->n_rejected);
    b->n_rejected = 0;
    b->first_reject[0] = '\0';
    size_t kept = 0, filtered = 0;
    pthread_rwlock_rdlock(&p->lock);
    if (!p->drop && !p->redact) /* nothing to apply: every span is kept, in place */
        kept = b->n;
    for (size_t i = kept; i < b->n; i++) {
        tw__span_data *d = b->items[i].data; /* still private to this receiver */
        if (p->drop && tw__handler_apply(p->drop, d, HANDLER_MAX_TAGS, HANDLER_MAX_VALUE_BYTES) ==
                           TW_HANDLER_DROP) {
            twa_item_release(&b->items[i]);
            filtered++;
            continue;
        }
        if (p->redact)
            tw__handler_apply(p->redact, d, HANDLER_MAX_TAGS, HANDLER_MAX_VALUE_BYTES);
        b->items[kept++] = b->items[i];
    }
    pthread_rwlock_unlock(&p->lock);
    twa_add(&b->stats->filtered, filtered);
    b->admit = TWA_ADMIT_OK;
    b->refusal[0] = '\0';
    size_t reserved = 0;
    if (b->is_whole && !p->tail && kept) {
        reserved = twa_items_bytes(b->items, kept);
        if (!admit_whole(b, kept, reserved))
            return 0;
    }
    /* Follow mode: each span is one delivery per destination for its line. */
    for (size_t i = 0; i < kept; i++) {
        if (b->items[i].chunk)
            atomic_fetch_add_explicit(&b->items[i].chunk->pending, (long)p->n_dests,
                                      memory_order_acq_rel);
    }
    if (p->tail) { /* the references move to the sampler */
        twa_tail_add(p->tail, b->items, kept);
        b->n = 0;
        return kept;
    }
    size_t accepted = kept, moved = 0;
    for (size_t d = 0; d < p->n_dests; d++) {
        /* The last destination takes this buffer's references: the spans
         * it accepted, items[0..moved), are its own now. */
        bool is_last = d + 1 == p->n_dests;
        size_t took =
            twa_dest_push_early(p->dests[d], b->items, kept, b->can_wait,
                                b->is_backlogged ? NULL : &b->early[d], is_last, reserved);
        if (is_last)
            moved = took;
        if (took < accepted)
            accepted = took;
        /* Follow mode stopped while waiting: those lines stay not done (read
         * again at the next start). */
        for (size_t i = took; i < kept && !b->can_wait; i++)
            twa_chunk_done(b->items[i].chunk, 1);
    }
    for (size_t i = moved; i < kept; i++)
        twa_item_release(&b->items[i]);
    b->n = 0;
    return accepted;
}

void twa_spanbuf_discard(twa_spanbuf *b)
{
    for (size_t i = 0; i < b->n; i++)
        twa_item_release(&b->items[i]);
    b->n = 0;
    b->n_rejected = 0;
    b->first_reject[0] = '\0';
}

void twa_spanbuf_clear(twa_spanbuf *b)
{
    twa_spanbuf_discard(b);
    for (size_t d = 0; d < TWA_MAX_DESTS; d++) {
        twa_dest_early_free(b->early[d]);
        b->early[d] = NULL;
    }
    free(b->items);
    b->items = NULL;
    b->cap = 0;
}
