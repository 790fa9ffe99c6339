/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/interop/reporter_capture.c: the reporter mode of jaeger_udp_driver
 * (run_jaeger_udp.sh): what the real Jaeger agent UDP reporter puts on the
 * wire, for jaeger_thrift_decode.py to decode with Jaeger's own IDL.
 *
 * Public API only (tracewire/tracewire.h; nothing from sdk/src). Two tracers,
 * so two services, each with its own Batch.process: "a" with 128-bit trace
 * ids and the const sampler on, "b" with 64-bit ids and the const sampler
 * off. Each reports to a composite of the UDP reporter, aimed at a
 * socket bound here on 127.0.0.1 (udp_sink.c), and a memory reporter. The
 * spans cover every tag type (UTF-8 and escapes, int64 beyond 2^53 and
 * negative, NaN/-0.0/denormal doubles, binary with NUL bytes), start-option
 * tags, logs with typed fields, an explicit timestamp and none, baggage
 * (carried to children and recorded there as tags, since Jaeger's Span has
 * no baggage field), ChildOf, FollowsFrom and both at once, a child in the
 * other service, the error helper, sampling.priority forcing the debug flag
 * on an unsampled tracer, and enough spans for a 2,000-byte max packet size
 * to split each service's spans over several datagrams. One span is larger
 * than any packet: the reporter drops it, and the later datagrams' ClientStats
 * must say so.
 *
 * expected.json is written from what the library recorded, not from the
 * bytes: the memory reporter's spans (tw_finished_span_*) in finish order,
 * which is the UDP reporter's queue order, the process tags through
 * tw_tracer_process_tag(), and the UDP reporter's counters for the number of
 * datagrams and bytes. It is in the form of jaeger_thrift_decode.py
 * --by-process, which joins each process's datagrams in seqNo order.
 */
#include "reporter_capture.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop_json.h"
#include "tracewire/tracewire.h"
#include "udp_sink.h"

#define MAX_PACKET_BYTES 2000
/* Short, so that timed flushes cut batches too: the decoded result must not
 * depend on where batches end. */
#define FLUSH_INTERVAL_MS 10
#define N_BUSY_SPANS_A 60
#define N_BUSY_SPANS_B 30
/* A tag value that no 2,000-byte datagram can hold, yet below the default
 * 4,096-byte value limit, so the span is recorded whole and then dropped by
 * the UDP reporter alone. */
#define TOO_LARGE_VALUE_BYTES 3000
#define COLLECT_TIMEOUT_MS 2000
/* After the last expected datagram: how long a stray extra one is waited for. */
#define EXTRA_TIMEOUT_MS 200

static const char TOO_LARGE_OPERATION[] = "too large for one datagram";
static const uint8_t blob_with_nul[] = {0x00, 0xff, 0x10, 0x00, 0x7f};

/* ---- services ----------------------------------------------------------------------------- */

/* A process tag for tw_tracer_options_add_tag_* (strings by their NUL, so
 * value.len is unused). */
typedef struct user_tag {
    const char *key;
    tw_value value;
} user_tag;

typedef struct service {
    const char *name;
    bool is_128bit;
    bool samples_all; /* the const sampler's decision */
    const user_tag *tags;
    size_t n_tags;
    tw_tracer *tracer;
    tw_reporter *udp;    /* borrowed from the tracer's composite reporter */
    tw_reporter *memory; /* borrowed from the tracer's composite reporter */
} service;

static bool failed(const char *what)
{
    fprintf(stderr, "jaeger_udp_driver --reporter: %s\n", what);
    return false;
}

static tw_status add_user_tag(tw_tracer_options *opts, const user_tag *t)
{
    switch (t->value.type) {
    case TW_VALUE_STRING:
        return tw_tracer_options_add_tag_str(opts, t->key, t->value.as.str);
    case TW_VALUE_BOOL:
        return tw_tracer_options_add_tag_bool(opts, t->key, t->value.as.boolean);
    case TW_VALUE_INT64:
        return tw_tracer_options_add_tag_int64(opts, t->key, t->value.as.i64);
    case TW_VALUE_DOUBLE:
        return tw_tracer_options_add_tag_double(opts, t->key, t->value.as.dbl);
    case TW_VALUE_BINARY:
        break; /* process tags have no binary setter */
    }
    return TW_E_INVALID_ARG;
}

/* The reporter: composite(jaeger-udp -> 127.0.0.1:@port, memory). */
static tw_reporter *new_reporter(unsigned int port)
{
    tw_error *err = NULL;
    tw_reporter *udp = NULL;
    tw_reporter_options *ro = tw_reporter_options_new();
    if (ro && tw_reporter_options_set_agent(ro, "127.0.0.1", port) == TW_OK &&
        tw_reporter_options_set_max_packet_size(ro, MAX_PACKET_BYTES) == TW_OK &&
        tw_reporter_options_set_flush_interval_ms(ro, FLUSH_INTERVAL_MS) == TW_OK)
        udp = tw_reporter_jaeger_udp_new(ro, &err);
    tw_reporter_options_free(ro);
    if (!udp) {
        fprintf(stderr, "jaeger_udp_driver --reporter: no UDP reporter: %s\n",
                tw_error_message(err));
        tw_error_free(err);
        return NULL;
    }
    tw_reporter *memory = tw_reporter_memory_new(0);
    if (!memory) {
        tw_reporter_free(udp);
        return NULL;
    }
    tw_reporter *children[2] = {udp, memory};
    return tw_reporter_composite_new(children, 2); /* owns both, also on failure */
}

static bool service_start(service *svc, unsigned int port)
{
    tw_reporter *reporter = new_reporter(port);
    if (!reporter)
        return failed("cannot create the composite reporter");
    tw_tracer_options *opts = tw_tracer_options_new();
    if (!opts) {
        tw_reporter_free(reporter);
        return failed("out of memory for tracer options");
    }
    /* From here the options own the reporter (and the sampler). */
    bool ok = tw_tracer_options_set_reporter(opts, reporter) == TW_OK &&
              tw_tracer_options_set_service(opts, svc->name) == TW_OK &&
              tw_tracer_options_set_trace_id_128bit(opts, svc->is_128bit) == TW_OK;
    tw_sampler *sampler = ok ? tw_sampler_const_new(svc->samples_all) : NULL;
    ok = sampler && tw_tracer_options_set_sampler(opts, sampler) == TW_OK;
    for (size_t i = 0; ok && i < svc->n_tags; i++)
        ok = add_user_tag(opts, &svc->tags[i]) == TW_OK;
    tw_error *err = NULL;
    svc->tracer = ok ? tw_tracer_new(opts, &err) : NULL;
    tw_tracer_options_free(opts);
    if (!svc->tracer) {
        fprintf(stderr, "jaeger_udp_driver --reporter: tracer \"%s\": %s\n", svc->name,
                ok ? tw_error_message(err) : "cannot set its options");
        tw_error_free(err);
        return false;
    }
    svc->udp = tw_reporter_composite_get(tw_tracer_reporter(svc->tracer), 0);
    svc->memory = tw_reporter_composite_get(tw_tracer_reporter(svc->tracer), 1);
    if (!svc->udp || strcmp(tw_reporter_name(svc->udp), "jaeger-udp") != 0 || !svc->memory ||
        strcmp(tw_reporter_name(svc->memory), "memory") != 0)
        return failed("the composite does not hold the jaeger-udp and memory reporters");
    return true;
}

/* ---- spans -------------------------------------------------------------------------------- */

static tw_value str_value(const char *s)
{
    return (tw_value){.type = TW_VALUE_STRING, .len = strlen(s), .as.str = s};
}

static tw_value i64_value(int64_t i)
{
    return (tw_value){.type = TW_VALUE_INT64, .as.i64 = i};
}

static tw_value dbl_value(double d)
{
    return (tw_value){.type = TW_VALUE_DOUBLE, .as.dbl = d};
}

static tw_value bool_value(bool b)
{
    return (tw_value){.type = TW_VALUE_BOOL, .as.boolean = b};
}

static tw_value bin_value(const uint8_t *b, size_t len)
{
    return (tw_value){.type = TW_VALUE_BINARY, .len = len, .as.bin = b};
}

static void set_every_tag_type(tw_span *s)
{
    tw_span_set_tag_str(s, "http.url", "https://example.com/orders/42?q=a&b=c");
    tw_span_set_tag_str(s, "utf8",
                        "gr\xc3\xbc\xc3\x9f"
                        "e, \xe4\xb8\x96\xe7\x95\x8c \xf0\x9f\x8e\x89");
    tw_span_set_tag_str(s, "escapes", "quote \" backslash \\ tab \t newline \n bell \x07 end");
    tw_span_set_tag_str(s, "empty", "");
    tw_span_set_tag_bool(s, "cache.hit", false);
    tw_span_set_tag_bool(s, "is_retry", true);
    tw_span_set_tag_int64(s, "min", INT64_MIN);
    tw_span_set_tag_int64(s, "negative", -42);
    tw_span_set_tag_int64(s, "above_2^53", 9007199254740993); /* 2^53 + 1: no double holds it */
    tw_span_set_tag_int64(s, "max", INT64_MAX);
    tw_span_set_tag_double(s, "pi", 3.141592653589793);
    tw_span_set_tag_double(s, "negative_zero", -0.0);
    tw_span_set_tag_double(s, "denormal", 5e-324);
    tw_span_set_tag_double(s, "infinity", INFINITY);
    tw_span_set_tag_double(s, "nan", NAN);
    tw_span_set_tag_binary(s, "blob", blob_with_nul, sizeof(blob_with_nul));
    tw_span_set_tag_binary(s, "empty_blob", NULL, 0);
}

static void log_typed_fields(tw_span *s)
{
    const tw_log_field retry[] = {
        {"event", str_value("retry \xe2\x86\xbb")},
        {"attempt", i64_value(3)},
        {"delay_s", dbl_value(0.25)},
        {"is_final", bool_value(false)},
        {"payload", bin_value(blob_with_nul, sizeof(blob_with_nul))},
    };
    tw_span_log_fields(s, 1700000000200000, retry, sizeof(retry) / sizeof(retry[0]));
    tw_span_log_fields(s, 1700000000300000, NULL, 0);                  /* a log with no fields */
    tw_span_log_kv(s, "event", "cache miss", "key", "order:42", NULL); /* timestamp: now */
    tw_span_log_event(s, "response sent");
}

/* Records, on @s, the baggage item @key it inherited, as the tag "baggage.<key>". */
static bool tag_inherited_baggage(tw_span *s, const char *key, const char *want)
{
    const char *got = tw_span_get_baggage(s, key);
    if (!got || strcmp(got, want) != 0)
        return failed("a child did not inherit its parent's baggage");
    char tag_key[64];
    snprintf(tag_key, sizeof tag_key, "baggage.%s", key);
    tw_span_set_tag_str(s, tag_key, got);
    return true;
}

static bool busy_spans(tw_tracer *t, const char *prefix, size_t n, const tw_span_options *opts)
{
    for (size_t i = 0; i < n; i++) {
        char op[64], item[32];
        snprintf(op, sizeof op, "%s %03zu", prefix, i);
        snprintf(item, sizeof item, "item-%03zu", i);
        tw_span *s = tw_span_start(t, op, opts);
        if (!s || !tw_span_is_sampled(s))
            return failed("a busy span did not start sampled");
        tw_span_set_tag_int64(s, "index", (int64_t)i);
        tw_span_set_tag_str(s, "item", item);
        tw_span_finish(s);
    }
    return true;
}

/* Service a: a root with everything, its children (one in service b), then
 * enough new traces to fill several datagrams. */
static bool record_service_a(tw_tracer *a, tw_tracer *b, tw_span_options *opts)
{
    const int64_t root_start_us = 1700000000123456;
    tw_span_options_reset(opts);
    bool ok = tw_span_options_set_start_time_us(opts, root_start_us) == TW_OK &&
              tw_span_options_add_tag_str(opts, "span.kind", "server") == TW_OK &&
              tw_span_options_add_tag_int64(opts, "http.status_code", 200) == TW_OK &&
              tw_span_options_add_tag_double(opts, "retry.budget", 0.75) == TW_OK &&
              tw_span_options_add_tag_bool(opts, "is_internal", false) == TW_OK;
    tw_span *root =
        ok ? tw_span_start(a, "GET /orders/{id} \xc3\xbc \xe6\xb3\xa8\xe6\x96\x87", opts) : NULL;
    if (!root || !tw_span_is_sampled(root))
        return failed("the root span did not start sampled");
    set_every_tag_type(root);
    log_typed_fields(root);
    ok = tw_span_set_baggage(root, "user.id", "42 \xc3\xbc") == TW_OK &&
         tw_span_set_baggage(root, "tenant", "acme") == TW_OK;
    tw_span_context *root_ctx = tw_span_context_ref(tw_span_get_context(root));
    tw_span_context *child_ctx = NULL;
    ok = ok && root_ctx;

    /* ChildOf (the shorthand), FollowsFrom, and both at once: the parent is
     * the first ChildOf, and every reference is recorded in order. */
    tw_span *child = ok ? tw_span_start_child(a, "SELECT orders", root_ctx) : NULL;
    ok = child && tag_inherited_baggage(child, "user.id", "42 \xc3\xbc");
    if (ok) {
        tw_span_set_tag_str(child, "db.statement", "SELECT * FROM orders WHERE id = $1");
        child_ctx = tw_span_context_ref(tw_span_get_context(child));
        tw_span_finish(child);
        ok = child_ctx != NULL;
    }
    tw_span_options_reset(opts);
    ok = ok && tw_span_options_add_reference(opts, TW_REF_FOLLOWS_FROM, root_ctx) == TW_OK;
    tw_span *follows = ok ? tw_span_start(a, "publish order.created", opts) : NULL;
    ok = follows != NULL;
    if (ok) {
        tw_span_set_tag_str(follows, "messaging.system", "kafka");
        tw_span_finish(follows);
    }
    tw_span_options_reset(opts);
    ok = ok && tw_span_options_add_reference(opts, TW_REF_FOLLOWS_FROM, child_ctx) == TW_OK &&
         tw_span_options_add_reference(opts, TW_REF_CHILD_OF, root_ctx) == TW_OK;
    tw_span *both = ok ? tw_span_start(a, "audit", opts) : NULL;
    ok = both != NULL;
    tw_span_finish(both);

    tw_span *error = ok ? tw_span_start_child(a, "charge card", root_ctx) : NULL;
    ok = error != NULL;
    if (ok) {
        tw_span_set_error(error, "PaymentDeclined", "card declined: \"insufficient funds\"");
        tw_span_finish(error);
    }

    /* Service b continues the trace (an RPC would carry the context): b's
     * sampler says no, the parent's sampled flag wins. */
    tw_span *remote = ok ? tw_span_start_child(b, "reserve stock (b)", root_ctx) : NULL;
    ok = remote && tw_span_is_sampled(remote) && tag_inherited_baggage(remote, "tenant", "acme");
    tw_span_finish(remote);

    tw_span_finish_at(root, root_start_us + 987654);
    tw_span_context_unref(child_ctx);
    tw_span_context_unref(root_ctx);
    if (!ok)
        return failed("a child span of service a could not be recorded");
    return busy_spans(a, "busy a", N_BUSY_SPANS_A, NULL);
}

/* Service b (sampler off): an unsampled root, roots forced by
 * sampling.priority (set late, and as a start option), the span too large
 * for any datagram, then more forced spans, whose datagrams follow the drop. */
static bool record_service_b(tw_tracer *b, tw_span_options *opts)
{
    tw_span *quiet = tw_span_start(b, "not sampled", NULL);
    if (!quiet || tw_span_is_sampled(quiet))
        return failed("service b sampled a root its const sampler rejects");
    tw_span_set_tag_str(quiet, "lost", "never reported");
    tw_span_finish(quiet);

    tw_span *late = tw_span_start(b, "forced by a tag", NULL);
    if (!late)
        return failed("cannot start a span in service b");
    tw_span_set_tag_int64(late, "sampling.priority", 1);
    unsigned int flags = tw_span_context_flags(tw_span_get_context(late));
    bool ok = tw_span_is_sampled(late) && (flags & TW_FLAG_DEBUG);
    tw_span_set_tag_str(late, "reason", "sampling.priority after start");
    tw_span_finish(late);
    if (!ok)
        return failed("sampling.priority did not force sampling and the debug flag");

    tw_span_options_reset(opts);
    if (tw_span_options_add_tag_int64(opts, "sampling.priority", 1) != TW_OK)
        return failed("cannot add a start tag");
    tw_span *early = tw_span_start(b, "forced at start", opts);
    if (!early || !tw_span_is_sampled(early))
        return failed("sampling.priority as a start option did not force sampling");
    tw_span_finish(early);

    char *big = malloc(TOO_LARGE_VALUE_BYTES + 1);
    tw_span *huge = big ? tw_span_start(b, TOO_LARGE_OPERATION, opts) : NULL;
    if (!huge) {
        free(big);
        return failed("cannot start the too-large span");
    }
    memset(big, 'x', TOO_LARGE_VALUE_BYTES);
    big[TOO_LARGE_VALUE_BYTES] = '\0';
    tw_span_set_tag_str(huge, "payload", big);
    tw_span_finish(huge);
    free(big);

    return busy_spans(b, "busy b", N_BUSY_SPANS_B, opts);
}

/* ---- checks on the reporters ------------------------------------------------------------ */

/* Every span handed to @svc's UDP reporter was sent, except @too_large ones
 * (reporter.h: reported = sent + queue_full + too_large + failed). */
static bool check_counters(const service *svc, uint64_t too_large)
{
    uint64_t reported = tw_reporter_counter(svc->udp, TW_COUNTER_SPANS_REPORTED);
    uint64_t sent = tw_reporter_counter(svc->udp, TW_COUNTER_SPANS_SENT);
    uint64_t batches = tw_reporter_counter(svc->udp, TW_COUNTER_BATCHES_SENT);
    fprintf(stderr,
            "jaeger_udp_driver --reporter: %s: %" PRIu64 " spans reported, %" PRIu64
            " sent in %" PRIu64 " datagrams (%" PRIu64 " bytes), %" PRIu64 " too large\n",
            svc->name, reported, sent, batches,
            tw_reporter_counter(svc->udp, TW_COUNTER_BYTES_SENT),
            tw_reporter_counter(svc->udp, TW_COUNTER_DROPPED_TOO_LARGE));
    if (tw_reporter_counter(svc->udp, TW_COUNTER_DROPPED_QUEUE_FULL) != 0 ||
        tw_reporter_counter(svc->udp, TW_COUNTER_FAILED_TO_EMIT) != 0 ||
        tw_reporter_counter(svc->udp, TW_COUNTER_DROPPED_TOO_LARGE) != too_large)
        return failed("the UDP reporter dropped or failed spans it should have sent");
    if (reported != tw_memory_reporter_count(svc->memory) || sent + too_large != reported)
        return failed("the UDP and memory reporters disagree on the spans they were given");
    /* The point of the small packet size: one service's spans span datagrams. */
    if (batches < 2)
        return failed("the UDP reporter did not split the spans over several datagrams");
    return true;
}

/* ---- expected JSON ------------------------------------------------------------------------ */

static void json_finished_span(FILE *f, const tw_finished_span *s)
{
    fputc('{', f);
    ij_id(f, "traceIdLow", tw_finished_span_trace_id_low(s));
    fputs(", ", f);
    ij_id(f, "traceIdHigh", tw_finished_span_trace_id_high(s));
    fputs(", ", f);
    ij_id(f, "spanId", tw_finished_span_span_id(s));
    fputs(", ", f);
    ij_id(f, "parentSpanId", tw_finished_span_parent_id(s));
    const char *op = tw_finished_span_operation(s);
    fputs(", \"operationName\": ", f);
    ij_string(f, op, strlen(op));
    fprintf(f, ", \"flags\": %u, \"startTime\": %" PRId64 ", \"duration\": %" PRId64,
            tw_finished_span_flags(s), tw_finished_span_start_us(s),
            tw_finished_span_duration_us(s));
    /* Empty lists are left off the wire (as Jaeger's clients do), so off here. */
    size_t n_refs = tw_finished_span_reference_count(s);
    if (n_refs) {
        fputs(", \"references\": [", f);
        for (size_t i = 0; i < n_refs; i++) {
            int type = 0;
            uint64_t hi = 0, lo = 0, id = 0;
            tw_finished_span_reference(s, i, &type, &hi, &lo, &id);
            fprintf(f, "%s{\"refType\": \"%s\", ", i ? ", " : "",
                    type == TW_REF_FOLLOWS_FROM ? "FOLLOWS_FROM" : "CHILD_OF");
            ij_id(f, "traceIdLow", lo);
            fputs(", ", f);
            ij_id(f, "traceIdHigh", hi);
            fputs(", ", f);
            ij_id(f, "spanId", id);
            fputc('}', f);
        }
        fputc(']', f);
    }
    size_t n_tags = tw_finished_span_tag_count(s);
    if (n_tags) {
        fputs(", \"tags\": [", f);
        for (size_t i = 0; i < n_tags; i++) {
            const char *key = "";
            tw_value v = {0};
            tw_finished_span_tag(s, i, &key, &v);
            fputs(i ? ", " : "", f);
            ij_tag(f, key, strlen(key), &v);
        }
        fputc(']', f);
    }
    size_t n_logs = tw_finished_span_log_count(s);
    if (n_logs) {
        fputs(", \"logs\": [", f);
        for (size_t i = 0; i < n_logs; i++) {
            fprintf(f, "%s{\"timestamp\": %" PRId64 ", \"fields\": [", i ? ", " : "",
                    tw_finished_span_log_timestamp_us(s, i));
            size_t n_fields = tw_finished_span_log_field_count(s, i);
            for (size_t j = 0; j < n_fields; j++) {
                const char *key = "";
                tw_value v = {0};
                tw_finished_span_log_field(s, i, j, &key, &v);
                fputs(j ? ", " : "", f);
                ij_tag(f, key, strlen(key), &v);
            }
            fputs("]}", f);
        }
        fputc(']', f);
    }
    fputc('}', f);
}

/* Batch.process: the service and every process tag the tracer reports, read
 * by key (the public API has no list). The decoder sorts process tags by key
 * on both sides, since their order carries no meaning in Jaeger's model. A
 * duplicated key, or a tag not asked for here, shows up in the diff. */
static void json_process(FILE *f, const service *svc)
{
    static const char *const detected[] = {"hostname", "ip", "jaeger.version", "tracewire.version",
                                           "client-uuid"};
    const size_t n_detected = sizeof(detected) / sizeof(detected[0]);
    fputs("{\"serviceName\": ", f);
    ij_string(f, tw_tracer_service_name(svc->tracer), strlen(tw_tracer_service_name(svc->tracer)));
    fputs(", \"tags\": [", f);
    bool is_first = true;
    for (size_t i = 0; i < n_detected + svc->n_tags; i++) {
        const char *key = i < n_detected ? detected[i] : svc->tags[i - n_detected].key;
        bool is_repeat = false; /* a user tag that replaces a detected one */
        for (size_t j = 0; j < i && j < n_detected; j++)
            is_repeat = is_repeat || strcmp(detected[j], key) == 0;
        tw_value v;
        if (is_repeat || !tw_tracer_process_tag(svc->tracer, key, &v))
            continue; /* "ip" is absent on a host without a non-loopback IPv4 address */
        fputs(is_first ? "" : ", ", f);
        ij_tag(f, key, strlen(key), &v);
        is_first = false;
    }
    fputs("]}", f);
}

/* ClientStats are a snapshot of the drop counters taken when a batch starts,
 * and this run's only drop is the too-large span, which has spans before and
 * after it: batches start with all zeros, and after the drop carry
 * tooLargeDroppedSpans = @too_large. The decoder prints each run of equal
 * stats once, in seqNo order. */
static void json_stats_runs(FILE *f, uint64_t too_large)
{
    fputs("\"statsRuns\": [{\"fullQueueDroppedSpans\": 0, \"tooLargeDroppedSpans\": 0, "
          "\"failedToEmitSpans\": 0}",
          f);
    if (too_large)
        fprintf(f,
                ", {\"fullQueueDroppedSpans\": 0, \"tooLargeDroppedSpans\": %" PRIu64
                ", \"failedToEmitSpans\": 0}",
                too_large);
    fputc(']', f);
}

static void json_service(FILE *f, const service *svc)
{
    uint64_t n = tw_reporter_counter(svc->udp, TW_COUNTER_BATCHES_SENT);
    uint64_t too_large = tw_reporter_counter(svc->udp, TW_COUNTER_DROPPED_TOO_LARGE);
    fputs("{\"process\": ", f);
    json_process(f, svc);
    /* Every datagram is a compact emitBatch with seqNo and stats; seqNo grows
     * by one per datagram and the message seqid repeats it. */
    fprintf(f,
            ", \"datagrams\": %" PRIu64 ", \"bytes\": %" PRIu64
            ", \"formats\": [\"compact-message\"], \"datagramsWithSeqNo\": %" PRIu64
            ", \"datagramsWithStats\": %" PRIu64 ", \"seqNoSteps\": [1], \"seqidIsSeqNo\": true, ",
            n, tw_reporter_counter(svc->udp, TW_COUNTER_BYTES_SENT), n, n);
    json_stats_runs(f, too_large);
    fputs(", \"spans\": [", f);
    bool is_first = true;
    for (size_t i = 0; i < tw_memory_reporter_count(svc->memory); i++) {
        const tw_finished_span *s = tw_memory_reporter_span(svc->memory, i);
        if (strcmp(tw_finished_span_operation(s), TOO_LARGE_OPERATION) == 0)
            continue; /* recorded in memory, dropped by the UDP reporter */
        fputs(is_first ? "\n  " : ",\n  ", f);
        json_finished_span(f, s);
        is_first = false;
    }
    fputs("]}", f);
}

/* ---- datagrams ---------------------------------------------------------------------------- */

static bool write_datagrams(const char *dir, const udp_sink *sink)
{
    for (size_t i = 0; i < sink->n; i++) {
        if (sink->len[i] > MAX_PACKET_BYTES)
            return failed("a datagram is larger than the max packet size");
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%03zu.bin", dir, i) >= (int)sizeof path)
            return failed("output path too long");
        FILE *f = fopen(path, "wb");
        if (!f) {
            fprintf(stderr, "jaeger_udp_driver --reporter: %s: %s\n", path, strerror(errno));
            return false;
        }
        bool ok = fwrite(sink->data[i], 1, sink->len[i], f) == sink->len[i];
        if (fclose(f) != 0 || !ok)
            return failed("cannot write a datagram");
    }
    return true;
}

/* Waits for exactly the datagrams the reporters say they sent; one more
 * (a duplicate, or a stray sender) fails as surely as one fewer. */
static bool collect(udp_sink *sink, uint64_t want)
{
    size_t got = udp_sink_collect(sink, (size_t)want, COLLECT_TIMEOUT_MS);
    if (got == want)
        got = udp_sink_collect(sink, (size_t)want + 1, EXTRA_TIMEOUT_MS);
    if (got != want) {
        fprintf(stderr,
                "jaeger_udp_driver --reporter: received %zu datagrams, the reporters sent %" PRIu64
                "\n",
                got, want);
        return false;
    }
    return true;
}

/* ---- the run ------------------------------------------------------------------------------ */

int reporter_capture(const char *dir)
{
    static const user_tag a_tags[] = {
        {"region", {.type = TW_VALUE_STRING, .as.str = "eu-west-1 \xc3\xbc"}},
        {"canary", {.type = TW_VALUE_BOOL, .as.boolean = true}},
        {"shard", {.type = TW_VALUE_INT64, .as.i64 = -7}},
        {"build.number", {.type = TW_VALUE_INT64, .as.i64 = 9007199254740993}},
        {"weight", {.type = TW_VALUE_DOUBLE, .as.dbl = 0.5}},
    };
    /* A user "hostname" replaces the detected one (tracer.h). */
    static const user_tag b_tags[] = {
        {"hostname", {.type = TW_VALUE_STRING, .as.str = "interop-host-b"}},
        {"build", {.type = TW_VALUE_STRING, .as.str = "b-1"}},
    };
    service a = {.name = "tracewire-interop-a",
                 .is_128bit = true,
                 .samples_all = true,
                 .tags = a_tags,
                 .n_tags = sizeof(a_tags) / sizeof(a_tags[0])};
    service b = {.name = "tracewire-interop-b",
                 .is_128bit = false,
                 .samples_all = false,
                 .tags = b_tags,
                 .n_tags = sizeof(b_tags) / sizeof(b_tags[0])};
    int status = 1;
    FILE *json = NULL;
    tw_span_options *opts = tw_span_options_new();
    udp_sink sink;
    if (!udp_sink_open(&sink, "127.0.0.1")) {
        tw_span_options_free(opts);
        failed("cannot bind a UDP socket on 127.0.0.1");
        return 1;
    }
    bool ok = opts && service_start(&a, sink.port) && service_start(&b, sink.port) &&
              record_service_a(a.tracer, b.tracer, opts) && record_service_b(b.tracer, opts);
    /* Close drains each reporter's queue and joins its thread: every
     * datagram has been sent when it returns. */
    ok = ok && tw_tracer_close(a.tracer) == TW_OK && tw_tracer_close(b.tracer) == TW_OK;
    ok = ok && check_counters(&a, 0) && check_counters(&b, 1) &&
         collect(&sink, tw_reporter_counter(a.udp, TW_COUNTER_BATCHES_SENT) +
                            tw_reporter_counter(b.udp, TW_COUNTER_BATCHES_SENT)) &&
         write_datagrams(dir, &sink);
    char path[4096];
    if (ok && snprintf(path, sizeof path, "%s/expected.json", dir) < (int)sizeof path)
        json = fopen(path, "w");
    if (!json) {
        if (ok)
            failed("cannot create expected.json");
        goto done;
    }
    fputs("{\"processes\": [\n", json);
    json_service(json, &a);
    fputs(",\n", json);
    json_service(json, &b);
    fputs("\n]}\n", json);
    status = fclose(json) == 0 ? 0 : 1;
    fprintf(stderr, "jaeger_udp_driver --reporter: %zu datagrams captured in %s\n", sink.n, dir);
done:
    tw_tracer_free(a.tracer);
    tw_tracer_free(b.tracer);
    tw_span_options_free(opts);
    udp_sink_close(&sink);
    return status;
}
