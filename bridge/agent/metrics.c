/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/metrics.c: the agent's counters as Prometheus text (served on
 * /metrics, docs/agent.md "Metrics") and as the summary logged at shutdown.
 *
 * Accounting (what the tests check): for every receiver, received = the
 * spans it decoded plus those it rejected (invalid), in requests not refused
 * whole (a request refused whole is a bad request, no span); for every destination,
 * enqueued = forwarded + dropped{destination} + in flight, where in flight is
 * queued + being batched or sent + in the spool. Spans a receiver could not
 * queue for a destination are that destination's queue_full drops.
 * Receiver counters are registered once at start (twa_stats_receiver) and
 * never freed; all counters are relaxed atomics (statistics only).
 */
#include "agent/agent.h"
#include "agent/tail.h"

#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

atomic_bool twa_stopping;
struct twa_tail_stats *twa_metrics_tail;

static twa_recv_stats receivers[TWA_MAX_RECEIVERS];
static atomic_size_t n_receivers;
static pthread_mutex_t register_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const reason_names[TWA_N_DROP] = {
    "invalid",    "filtered",    "queue_full", "too_large", "refused",       "send_failed",
    "spool_full", "spool_error", "shutdown",   "encode",    "over_capacity",
};

const char *twa_drop_reason_name(twa_drop_reason r)
{
    return r < TWA_N_DROP ? reason_names[r] : "unknown";
}

twa_recv_stats *twa_stats_receiver(const char *name)
{
    pthread_mutex_lock(&register_lock);
    size_t n = atomic_load(&n_receivers);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(receivers[i].name, name) == 0) {
            pthread_mutex_unlock(&register_lock);
            return &receivers[i];
        }
    }
    twa_recv_stats *r = NULL;
    if (n < TWA_MAX_RECEIVERS) {
        r = &receivers[n];
        r->name = strdup(name); /* registered for the life of the process */
        if (!r->name)
            r->name = "unknown";
        atomic_store(&n_receivers, n + 1);
    }
    pthread_mutex_unlock(&register_lock);
    return r ? r : &receivers[TWA_MAX_RECEIVERS - 1];
}

static int64_t gauge(const atomic_int_fast64_t *g)
{
    int64_t v = atomic_load_explicit(g, memory_order_relaxed);
    return v < 0 ? 0 : v;
}

static uint64_t in_flight(twa_dest_stats *s)
{
    return (uint64_t)(gauge(&s->queue_spans) + gauge(&s->batching_spans) + gauge(&s->spool_spans));
}

/* A label value: \, " and newlines escaped (Prometheus text format). */
static void label(GString *out, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\' || *v == '"')
            g_string_append_c(out, '\\');
        if (*v == '\n')
            g_string_append(out, "\\n");
        else
            g_string_append_c(out, *v);
    }
}

#define HEADER(name, type, help)                                                                   \
    g_string_append(out, "# HELP tracewire_agent_" name " " help "\n# TYPE tracewire_agent_" name  \
                         " " type "\n")

char *twa_metrics_text(twa_dest *const *dests, size_t n_dests, size_t *len)
{
    GString *out = g_string_sized_new(4096);
    size_t nr = atomic_load(&n_receivers);

    HEADER("spans_received_total", "counter", "Spans received (decoded or rejected), by receiver.");
    for (size_t i = 0; i < nr; i++) {
        g_string_append(out, "tracewire_agent_spans_received_total{receiver=\"");
        label(out, receivers[i].name);
        g_string_append_printf(out, "\"} %" PRIu64 "\n", twa_get(&receivers[i].received));
    }
    HEADER("requests_total", "counter", "Datagrams, HTTP requests or log chunks, by receiver.");
    for (size_t i = 0; i < nr; i++) {
        g_string_append(out, "tracewire_agent_requests_total{receiver=\"");
        label(out, receivers[i].name);
        g_string_append_printf(out, "\"} %" PRIu64 "\n", twa_get(&receivers[i].requests));
    }
    HEADER("requests_rejected_total", "counter",
           "Requests refused whole (malformed, too large, unsupported), by receiver.");
    for (size_t i = 0; i < nr; i++) {
        g_string_append(out, "tracewire_agent_requests_rejected_total{receiver=\"");
        label(out, receivers[i].name);
        g_string_append_printf(out, "\"} %" PRIu64 "\n", twa_get(&receivers[i].bad_requests));
    }
    HEADER("received_bytes_total", "counter", "Bytes received, by receiver.");
    for (size_t i = 0; i < nr; i++) {
        g_string_append(out, "tracewire_agent_received_bytes_total{receiver=\"");
        label(out, receivers[i].name);
        g_string_append_printf(out, "\"} %" PRIu64 "\n", twa_get(&receivers[i].bytes));
    }
    HEADER("http_connections", "gauge", "Connections open now, by HTTP receiver.");
    for (size_t i = 0; i < nr; i++) {
        if (!atomic_load(&receivers[i].is_http))
            continue;
        g_string_append(out, "tracewire_agent_http_connections{receiver=\"");
        label(out, receivers[i].name);
        g_string_append_printf(out, "\"} %" PRId64 "\n", gauge(&receivers[i].connections));
    }
    HEADER("http_connection_limit_reached_total", "counter",
           "Times an HTTP receiver's connections reached its limit (new connections then wait "
           "until one closes), by receiver.");
    for (size_t i = 0; i < nr; i++) {
        if (!atomic_load(&receivers[i].is_http))
            continue;
        g_string_append(out, "tracewire_agent_http_connection_limit_reached_total{receiver=\"");
        label(out, receivers[i].name);
        g_string_append_printf(out, "\"} %" PRIu64 "\n",
                               twa_get(&receivers[i].connection_limit_hits));
    }
    HEADER("http_request_timeouts_total", "counter",
           "HTTP connections closed because their request (headers and body) was not received "
           "whole within --request-timeout-ms, by receiver.");
    for (size_t i = 0; i < nr; i++) {
        if (!atomic_load(&receivers[i].is_http))
            continue;
        g_string_append(out, "tracewire_agent_http_request_timeouts_total{receiver=\"");
        label(out, receivers[i].name);
        g_string_append_printf(out, "\"} %" PRIu64 "\n", twa_get(&receivers[i].request_timeouts));
    }
    HEADER("udp_datagrams_dropped_total", "counter",
           "Datagrams the kernel dropped because the receiver's socket buffer was full, by UDP "
           "receiver (known when the next datagram is read).");
    for (size_t i = 0; i < nr; i++) {
        if (!atomic_load(&receivers[i].is_udp))
            continue;
        g_string_append(out, "tracewire_agent_udp_datagrams_dropped_total{receiver=\"");
        label(out, receivers[i].name);
        g_string_append_printf(out, "\"} %" PRIu64 "\n", twa_get(&receivers[i].kernel_drops));
    }
    HEADER("spans_forwarded_total", "counter",
           "Spans the destination acknowledged (2xx, datagram sent, file written), by "
           "destination.");
    for (size_t i = 0; i < n_dests; i++) {
        g_string_append(out, "tracewire_agent_spans_forwarded_total{destination=\"");
        label(out, twa_dest_label(dests[i]));
        g_string_append_printf(out, "\"} %" PRIu64 "\n",
                               twa_get(&twa_dest_get_stats(dests[i])->forwarded));
    }
    HEADER("spans_dropped_total", "counter",
           "Spans lost for good, by reason (and receiver or destination).");
    for (size_t i = 0; i < nr; i++) {
        g_string_append(out, "tracewire_agent_spans_dropped_total{reason=\"invalid\",receiver=\"");
        label(out, receivers[i].name);
        g_string_append_printf(out, "\"} %" PRIu64 "\n", twa_get(&receivers[i].invalid));
        g_string_append(out, "tracewire_agent_spans_dropped_total{reason=\"filtered\",receiver=\"");
        label(out, receivers[i].name);
        g_string_append_printf(out, "\"} %" PRIu64 "\n", twa_get(&receivers[i].filtered));
    }
    for (size_t i = 0; i < n_dests; i++) {
        twa_dest_stats *s = twa_dest_get_stats(dests[i]);
        for (int r = TWA_DROP_QUEUE_FULL; r < TWA_N_DROP; r++) {
            g_string_append_printf(out, "tracewire_agent_spans_dropped_total{reason=\"%s\",",
                                   reason_names[r]);
            g_string_append(out, "destination=\"");
            label(out, twa_dest_label(dests[i]));
            g_string_append_printf(out, "\"} %" PRIu64 "\n", twa_get(&s->dropped[r]));
        }
    }
    if (twa_metrics_tail) {
        twa_tail_stats *t = twa_metrics_tail;
        g_string_append_printf(
            out, "tracewire_agent_spans_dropped_total{reason=\"sampled_out\"} %" PRIu64 "\n",
            twa_get(&t->sampled_out));
        HEADER("tail_spans_kept_total", "counter", "Spans of traces the tail sampler kept.");
        HEADER("tail_early_decisions_total", "counter",
               "Traces decided before they were quiet (the caps were reached).");
        HEADER("tail_traces_held", "gauge", "Traces the tail sampler holds.");
        HEADER("tail_spans_held", "gauge", "Spans the tail sampler holds.");
        g_string_append_printf(out,
                               "tracewire_agent_tail_spans_kept_total %" PRIu64 "\n"
                               "tracewire_agent_tail_early_decisions_total %" PRIu64 "\n"
                               "tracewire_agent_tail_traces_held %" PRId64 "\n"
                               "tracewire_agent_tail_spans_held %" PRId64 "\n",
                               twa_get(&t->kept), twa_get(&t->early_decisions),
                               gauge(&t->traces_held), gauge(&t->spans_held));
    }
    HEADER("spans_enqueued_total", "counter", "Spans accepted into a destination's queue.");
    HEADER("spans_spooled_total", "counter", "Spans written to the spool.");
    HEADER("spans_replayed_total", "counter", "Spans sent from the spool.");
    HEADER("spans_encoded_early_total", "counter",
           "Spans encoded by the receiving thread because the destination thread was behind.");
    HEADER("spans_in_flight", "gauge", "Spans queued, being batched or sent, or in the spool.");
    HEADER("queue_spans", "gauge", "Spans in the destination's queue.");
    HEADER("queue_bytes", "gauge", "Estimated bytes of the spans in the destination's queue.");
    HEADER("spooled_bytes", "gauge", "Bytes in the destination's spool.");
    HEADER("spooled_batches", "gauge", "Batches in the destination's spool.");
    HEADER("destination_up", "gauge",
           "1 when the last attempt succeeded, 0 when it failed; no sample before an attempt "
           "has ended.");
    HEADER("spool_unreadable_files_total", "counter",
           "Spool files found at start without a readable header (their spans are unknown), "
           "deleted.");
    HEADER("http_requests_total", "counter", "Requests (datagrams, writes) made.");
    HEADER("retries_total", "counter", "Attempts after a failure.");
    HEADER("split_requests_total", "counter", "Requests sent to isolate refused spans.");
    HEADER("sent_bytes_total", "counter", "Bytes acknowledged (compressed when gzip).");
    for (size_t i = 0; i < n_dests; i++) {
        twa_dest_stats *s = twa_dest_get_stats(dests[i]);
        GString *l = g_string_new("{destination=\"");
        label(l, twa_dest_label(dests[i]));
        g_string_append(l, "\"}");
        g_string_append_printf(
            out,
            "tracewire_agent_spans_enqueued_total%s %" PRIu64 "\n"
            "tracewire_agent_spans_spooled_total%s %" PRIu64 "\n"
            "tracewire_agent_spans_replayed_total%s %" PRIu64 "\n"
            "tracewire_agent_spans_encoded_early_total%s %" PRIu64 "\n"
            "tracewire_agent_spans_in_flight%s %" PRIu64 "\n"
            "tracewire_agent_queue_spans%s %" PRId64 "\n"
            "tracewire_agent_queue_bytes%s %" PRId64 "\n"
            "tracewire_agent_spooled_bytes%s %" PRId64 "\n"
            "tracewire_agent_spooled_batches%s %" PRId64 "\n"
            "tracewire_agent_spool_unreadable_files_total%s %" PRIu64 "\n"
            "tracewire_agent_http_requests_total%s %" PRIu64 "\n"
            "tracewire_agent_retries_total%s %" PRIu64 "\n"
            "tracewire_agent_split_requests_total%s %" PRIu64 "\n"
            "tracewire_agent_sent_bytes_total%s %" PRIu64 "\n",
            l->str, twa_get(&s->enqueued), l->str, twa_get(&s->spooled_spans), l->str,
            twa_get(&s->replayed_spans), l->str, twa_get(&s->encoded_early), l->str, in_flight(s),
            l->str, gauge(&s->queue_spans), l->str, gauge(&s->queue_bytes), l->str,
            gauge(&s->spool_bytes), l->str, gauge(&s->spool_files), l->str,
            twa_get(&s->spool_unreadable_files), l->str, twa_get(&s->requests), l->str,
            twa_get(&s->retries), l->str, twa_get(&s->split_requests), l->str, twa_get(&s->bytes));
        int up = atomic_load(&s->up);
        if (up >= 0) /* unknown (no sample) until an attempt has ended */
            g_string_append_printf(out, "tracewire_agent_destination_up%s %d\n", l->str, up);
        g_string_free(l, TRUE);
    }
    *len = out->len;
    return g_string_free(out, FALSE);
}

void twa_metrics_log_summary(twa_dest *const *dests, size_t n_dests)
{
    size_t nr = atomic_load(&n_receivers);
    for (size_t i = 0; i < nr; i++) {
        twa_recv_stats *r = &receivers[i];
        char kernel[96] = "";
        if (atomic_load(&r->is_udp))
            snprintf(kernel, sizeof kernel, "; the kernel dropped %" PRIu64 " datagrams",
                     twa_get(&r->kernel_drops));
        else if (atomic_load(&r->is_http) && twa_get(&r->request_timeouts))
            snprintf(kernel, sizeof kernel,
                     "; %" PRIu64 " connections closed at --request-timeout-ms",
                     twa_get(&r->request_timeouts));
        twa_log(TWA_INFO,
                "summary: receiver %s: received %" PRIu64 " spans (invalid %" PRIu64
                ", filtered %" PRIu64 ") in %" PRIu64 " requests (%" PRIu64 " refused whole)%s",
                r->name, twa_get(&r->received), twa_get(&r->invalid), twa_get(&r->filtered),
                twa_get(&r->requests), twa_get(&r->bad_requests), kernel);
    }
    if (twa_metrics_tail) {
        /* What the receivers passed on = kept + sampled out + held. */
        twa_tail_stats *t = twa_metrics_tail;
        twa_log(TWA_INFO,
                "summary: tail sampler: kept %" PRIu64 " spans, sampled out %" PRIu64
                ", held %" PRId64 " (%" PRId64 " traces; %" PRIu64 " decided early)",
                twa_get(&t->kept), twa_get(&t->sampled_out), gauge(&t->spans_held),
                gauge(&t->traces_held), twa_get(&t->early_decisions));
    }
    for (size_t i = 0; i < n_dests; i++) {
        twa_dest_stats *s = twa_dest_get_stats(dests[i]);
        GString *drops = g_string_new(NULL);
        uint64_t total = 0;
        for (int r = TWA_DROP_QUEUE_FULL; r < TWA_N_DROP; r++) {
            uint64_t v = twa_get(&s->dropped[r]);
            total += v;
            if (v)
                g_string_append_printf(drops, " %s=%" PRIu64, reason_names[r], v);
        }
        char unreadable[96] = "";
        if (twa_get(&s->spool_unreadable_files))
            snprintf(unreadable, sizeof unreadable,
                     "; %" PRIu64 " unreadable spool files (spans unknown)",
                     twa_get(&s->spool_unreadable_files));
        twa_log(TWA_INFO,
                "summary: destination %s: enqueued %" PRIu64 ", forwarded %" PRIu64
                ", dropped %" PRIu64 "%s%s, in flight %" PRIu64 " (spool: %" PRId64
                " spans, %" PRId64 " bytes)%s",
                twa_dest_label(dests[i]), twa_get(&s->enqueued), twa_get(&s->forwarded), total,
                drops->len ? ":" : "", drops->str, in_flight(s), gauge(&s->spool_spans),
                gauge(&s->spool_bytes), unreadable);
        g_string_free(drops, TRUE);
    }
}
