/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/fixtures.h: shared fixtures for the core suites: a tracer that
 * samples everything into a memory reporter, and small helpers to read what
 * it recorded. Header-only so each suite stays one file.
 */
#ifndef TW_TESTS_FIXTURES_H
#define TW_TESTS_FIXTURES_H

#include <CUnit/CUnit.h>
#include <string.h>

#include "tracewire/tracewire.h"

/* A tracer with the const(true) sampler, a memory reporter and 128-bit ids.
 * *reporter_out receives the borrowed memory reporter. */
static inline tw_tracer *tracer_always_sampled(tw_reporter **reporter_out, tw_tracer_options *extra)
{
    tw_tracer_options *opts = extra ? extra : tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "unit-test");
    tw_tracer_options_set_sampler(opts, tw_sampler_const_new(true));
    tw_reporter *memory = tw_reporter_memory_new(0);
    tw_tracer_options_set_reporter(opts, memory);
    tw_tracer *tracer = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    if (reporter_out)
        *reporter_out = memory;
    return tracer;
}

/* The last finished span with this operation name, or NULL. */
static inline const tw_finished_span *finished_named(const tw_reporter *memory, const char *op)
{
    for (size_t i = tw_memory_reporter_count(memory); i > 0; i--) {
        const tw_finished_span *s = tw_memory_reporter_span(memory, i - 1);
        if (strcmp(tw_finished_span_operation(s), op) == 0)
            return s;
    }
    return NULL;
}

static inline bool tag_equals_str(const tw_finished_span *s, const char *key, const char *want)
{
    tw_value v;
    return tw_finished_span_find_tag(s, key, &v) && v.type == TW_VALUE_STRING &&
           strcmp(v.as.str, want) == 0;
}

#endif /* TW_TESTS_FIXTURES_H */
