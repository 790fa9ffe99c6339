/* SPDX-License-Identifier: Apache-2.0 */
/*
 * examples/readme.c: the README's first snippet, as a program, so that the
 * snippet is compiled and run (tests/examples/test_first_run.sh checks that
 * the README shows exactly the lines between the markers below, and what
 * the program says and sends on its first run).
 *
 *   ./examples/readme                      # a warning: nothing is sampled yet
 *   JAEGER_SAMPLER_TYPE=const JAEGER_SAMPLER_PARAM=1 ./examples/readme
 *                                          # two spans to the agent on localhost:6831
 */
#include <stdio.h>

#include <tracewire/tracewire.h>

int main(void)
{
    /* clang-format off */
    /* README snippet begins */
tw_error *err = NULL;
tw_tracer *tracer = tw_tracer_new_from_env("checkout", &err);   /* JAEGER_* and OTEL_* variables */
if (!tracer) { fprintf(stderr, "%s\n", tw_error_message(err)); tw_error_free(err); return 1; }

tw_span *req = tw_span_start(tracer, "POST /orders", NULL);
tw_span_set_kind(req, TW_SPAN_KIND_SERVER);
tw_span_set_baggage(req, "tenant", "acme");                   /* travels to every child */

tw_span *db = tw_span_start_child(tracer, "insert order", tw_span_get_context(req));
tw_span_set_tag_int64(db, "db.rows", 1);
tw_span_log_kv(db, "event", "committed", NULL);
tw_span_finish(db);

tw_span_finish(req);
tw_tracer_free(tracer);                                        /* closes: drains and flushes */
    /* README snippet ends */
    /* clang-format on */
    return 0;
}
