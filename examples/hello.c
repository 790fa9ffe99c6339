/* SPDX-License-Identifier: Apache-2.0 */
/*
 * examples/hello.c: the smallest complete tracewire program.
 *
 * A parent span with two children (one ChildOf, one FollowsFrom), tags of
 * every type, logs, baggage, an error, and a tracer configured from the
 * Jaeger environment variables:
 *
 *   JAEGER_SERVICE_NAME=hello JAEGER_SAMPLER_TYPE=const JAEGER_SAMPLER_PARAM=1 \
 *   JAEGER_REPORTER_LOG_SPANS=true ./examples/hello
 *
 * sends the spans to a Jaeger agent on JAEGER_AGENT_HOST:JAEGER_AGENT_PORT
 * (default localhost:6831) and, with JAEGER_REPORTER_LOG_SPANS=true, also
 * prints each reported span. Closing the tracer flushes everything.
 *
 * Build against an installed tracewire:
 *   cc -std=c11 hello.c $(pkg-config --cflags --libs tracewire) -o hello
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <tracewire/tracewire.h>

static void handle_request(tw_tracer *tracer, const tw_span_context *parent)
{
    tw_span *db = tw_span_start_child(tracer, "db.query", parent);
    tw_span_set_tag_str(db, "span.kind", "client");
    tw_span_set_tag_str(db, "db.statement", "SELECT name FROM users WHERE id = ?");
    tw_span_set_tag_int64(db, "db.rows", 1);
    tw_span_log_kv(db, "event", "row fetched", "user", tw_span_get_baggage(db, "user"), NULL);
    struct timespec two_ms = {0, 2000000};
    nanosleep(&two_ms, NULL); /* the "query" */
    tw_span_finish(db);
}

int main(void)
{
    tw_set_logger(tw_log_to_stderr, NULL, TW_LOG_WARN);

    tw_error *err = NULL;
    tw_tracer *tracer = tw_tracer_new_from_env("hello", &err);
    if (!tracer) {
        fprintf(stderr, "hello: cannot create the tracer: %s\n", tw_error_message(err));
        tw_error_free(err);
        return 1;
    }

    tw_span *root = tw_span_start(tracer, "say-hello", NULL);
    tw_span_set_tag_str(root, "greeting", "hello, world");
    tw_span_set_tag_bool(root, "cached", false);
    tw_span_set_tag_int64(root, "attempt", 1);
    tw_span_set_tag_double(root, "load", 0.75);
    static const unsigned char token[4] = {0xde, 0xad, 0xbe, 0xef};
    tw_span_set_tag_binary(root, "token", token, sizeof token);
    tw_span_set_baggage(root, "user", "alice");
    tw_span_log_event(root, "request received");

    /* ChildOf: the parent waits for this work. */
    handle_request(tracer, tw_span_get_context(root));

    /* FollowsFrom: work the parent started but does not wait for. */
    tw_span_options *opts = tw_span_options_new();
    tw_span_options_add_reference(opts, TW_REF_FOLLOWS_FROM, tw_span_get_context(root));
    tw_span_options_add_tag_str(opts, "span.kind", "producer");
    tw_span *notify = tw_span_start(tracer, "notify", opts);
    tw_span_options_free(opts);
    tw_span_set_error(notify, "Timeout", "mail server did not answer in 5 s");
    tw_span_finish(notify);

    tw_span_finish(root);

    tw_reporter *reporter = tw_tracer_reporter(tracer);
    tw_tracer_close(tracer); /* drains the queue and sends the last batch */
    /* With JAEGER_REPORTER_LOG_SPANS the tracer's reporter is a composite of
     * the UDP and logging reporters: print each one's counters. */
    size_t n = tw_reporter_composite_count(reporter);
    for (size_t i = 0; i < (n ? n : 1); i++) {
        tw_reporter *r = n ? tw_reporter_composite_get(reporter, i) : reporter;
        fprintf(stderr,
                "hello: %s reporter: %llu spans reported, %llu sent, %llu failed to emit, "
                "%llu dropped\n",
                tw_reporter_name(r),
                (unsigned long long)tw_reporter_counter(r, TW_COUNTER_SPANS_REPORTED),
                (unsigned long long)tw_reporter_counter(r, TW_COUNTER_SPANS_SENT),
                (unsigned long long)tw_reporter_counter(r, TW_COUNTER_FAILED_TO_EMIT),
                (unsigned long long)(tw_reporter_counter(r, TW_COUNTER_DROPPED_QUEUE_FULL) +
                                     tw_reporter_counter(r, TW_COUNTER_DROPPED_TOO_LARGE)));
    }
    fprintf(stderr, "hello: (with no agent listening, the UDP reporter counts the spans as\n"
                    "hello: failed to emit: the port's refusal is seen from the first datagram)\n");
    tw_tracer_free(tracer);
    return 0;
}
