/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/propagation/w3c_rules.h: the W3C Trace Context rules as a service
 * lives them (incoming headers -> extract -> a child span -> inject -> outgoing
 * headers), one table row per rule of the specification, run through any carrier:
 * test_w3c.c runs it over tw_headers (HTTP_HEADERS and TEXT_MAP), test_curl.c over
 * the curl_slist reader and writer. tests/bridge/test_context_cmd.sh checks the
 * same rules through `tracewire context`. Each row names the sentence of the
 * specification (W3C Trace Context Level 2) it checks; docs/PROPAGATION.md quotes
 * them. Header-only, public API only.
 */
#ifndef TW_TESTS_W3C_RULES_H
#define TW_TESTS_W3C_RULES_H

#include <CUnit/CUnit.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracewire/tracewire.h"

#define W3C_RULE_TRACE "0af7651916cd43dd8448eb211c80319c"
#define W3C_RULE_PARENT "b7ad6b7169203331"
#define W3C_RULE_TP(flags) "00-" W3C_RULE_TRACE "-" W3C_RULE_PARENT "-" flags

typedef struct w3c_rule {
    const char *rule;       /* what the specification says */
    const char *in[12];     /* incoming header name, value, ..., NULL */
    bool continues;         /* the outgoing traceparent keeps the incoming trace id */
    const char *flags;      /* the outgoing trace-flags */
    const char *tracestate; /* the outgoing tracestate; NULL: no tracestate header */
} w3c_rule;

#define W3C_32_MEMBERS                                                                             \
    "a01=1,a02=2,a03=3,a04=4,a05=5,a06=6,a07=7,a08=8,a09=9,a10=10,a11=11,a12=12,a13=13,"           \
    "a14=14,a15=15,a16=16,a17=17,a18=18,a19=19,a20=20,a21=21,a22=22,a23=23,a24=24,a25=25,"         \
    "a26=26,a27=27,a28=28,a29=29,a30=30,a31=31,a32=32"

/* The tracer samples every new trace, so a new trace leaves with flags 03 (sampled, and
 * random: tracewire's trace ids are random); a continued one keeps the caller's
 * decision. */
static const w3c_rule w3c_rules[] = {
    {"traceparent: the parent-id is updated, the trace-id kept",
     {"traceparent", W3C_RULE_TP("01"), NULL},
     true,
     "01",
     NULL},
    {"random flag set in the incoming traceparent: MUST be set in all outgoing ones",
     {"traceparent", W3C_RULE_TP("02"), NULL},
     true,
     "02",
     NULL},
    {"random flag set, sampled: both kept",
     {"traceparent", W3C_RULE_TP("03"), NULL},
     true,
     "03",
     NULL},
    {"random flag unset in the incoming traceparent: MUST be unset in outgoing ones",
     {"traceparent", W3C_RULE_TP("00"), NULL},
     true,
     "00",
     NULL},
    {"other flags: vendors MUST set those to zero",
     {"traceparent", W3C_RULE_TP("fd"), NULL},
     true,
     "01",
     NULL},
    {"other flags zeroed, random kept", {"traceparent", W3C_RULE_TP("fe"), NULL}, true, "02", NULL},
    {"no traceparent: a new trace (random trace id: flag set)", {NULL}, false, "03", NULL},
    {"a higher version is parsed and downgraded to 00",
     {"traceparent", "cc-" W3C_RULE_TRACE "-" W3C_RULE_PARENT "-01-what-comes-next", NULL},
     true,
     "01",
     NULL},
    {"an invalid traceparent restarts the trace and deletes tracestate",
     {"traceparent", "ff-" W3C_RULE_TRACE "-" W3C_RULE_PARENT "-01", "tracestate", "foo=1", NULL},
     false,
     "03",
     NULL},
    {"two traceparent headers: invalid, a new trace",
     {"traceparent", W3C_RULE_TP("01"), "traceparent", W3C_RULE_TP("01"), NULL},
     false,
     "03",
     NULL},
    {"tracestate without traceparent MUST be discarded",
     {"tracestate", "foo=1", NULL},
     false,
     "03",
     NULL},
    {"header names are ASCII case-insensitive",
     {"TraceParent", W3C_RULE_TP("01"), "TRACESTATE", "foo=1", NULL},
     true,
     "01",
     "foo=1"},
    {"multiple tracestate fields are combined in order",
     {"traceparent", W3C_RULE_TP("01"), "tracestate", "foo=1,bar=2", "tracestate", "rojo=1",
      "tracestate", "congo=2", NULL},
     true,
     "01",
     "foo=1,bar=2,rojo=1,congo=2"},
    {"empty and whitespace-only members are allowed; OWS around members ignored",
     {"traceparent", W3C_RULE_TP("01"), "tracestate", " , foo=1 \t,\t, bar=2 ", "tracestate", "",
      NULL},
     true,
     "01",
     "foo=1,bar=2"},
    {"a key starts with a lower-case letter or a digit and may contain @",
     {"traceparent", W3C_RULE_TP("01"), "tracestate",
      "1foo=1,foo@=2,foo@@bar=3,foo@bar@baz=4,t@vvvvvvvvvvvvvvv=5,a_-*/@z=6", NULL},
     true,
     "01",
     "1foo=1,foo@=2,foo@@bar=3,foo@bar@baz=4,t@vvvvvvvvvvvvvvv=5,a_-*/@z=6"},
    {"leading spaces of a value are kept, trailing ones are OWS",
     {"traceparent", W3C_RULE_TP("01"), "tracestate", "foo=  a b  ,bar=2", NULL},
     true,
     "01",
     "foo=  a b,bar=2"},
    {"a key starting with @: the header cannot be parsed, discarded whole",
     {"traceparent", W3C_RULE_TP("01"), "tracestate", "@foo=1,bar=2", NULL},
     true,
     "01",
     NULL},
    {"an upper-case key: discarded whole",
     {"traceparent", W3C_RULE_TP("01"), "tracestate", "foo=1,FOO=2", NULL},
     true,
     "01",
     NULL},
    {"an empty value: discarded whole",
     {"traceparent", W3C_RULE_TP("01"), "tracestate", "foo=,bar=3", NULL},
     true,
     "01",
     NULL},
    {"'=' in a value: discarded whole",
     {"traceparent", W3C_RULE_TP("01"), "tracestate", "foo=bar=baz", NULL},
     true,
     "01",
     NULL},
    {"32 list-members: kept",
     {"traceparent", W3C_RULE_TP("01"), "tracestate", W3C_32_MEMBERS, NULL},
     true,
     "01",
     W3C_32_MEMBERS},
    {"more than 32 list-members: discarded whole",
     {"traceparent", W3C_RULE_TP("01"), "tracestate", W3C_32_MEMBERS, "tracestate", "a33=33", NULL},
     true,
     "01",
     NULL},
    {"a repeated key: the first (left-most, most recent) member is kept",
     {"traceparent", W3C_RULE_TP("01"), "tracestate", "foo=1,bar=2,foo=3", NULL},
     true,
     "01",
     "foo=1,bar=2"},
    {"a repeated key across fields: the first is kept",
     {"traceparent", W3C_RULE_TP("00"), "tracestate", "foo=1", "tracestate", "foo=1", NULL},
     true,
     "00",
     "foo=1"},
};

/* A carrier under test: how to build the incoming one from pairs and read the outgoing
 * one back. */
typedef struct w3c_carrier_ops {
    const char *name;
    tw_format format;
    void *(*make_in)(const char *const *pairs);
    tw_carrier_reader (*reader)(void *in);
    void (*free_in)(void *in);
    void *(*make_out)(void);
    tw_carrier_writer (*writer)(void *out);
    /* The value of @name in the outgoing carrier (names compared ignoring case) and how
     * many times it occurs; the value is borrowed until free_out. */
    const char *(*get_out)(void *out, const char *name, size_t *count);
    void (*free_out)(void *out);
} w3c_carrier_ops;

static inline tw_tracer *w3c_rules_tracer(bool is_128bit)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_codec w3c = TW_CODEC_W3C;
    tw_tracer_options_set_service(opts, "w3c-rules");
    tw_tracer_options_set_sampler(opts, tw_sampler_const_new(true));
    tw_tracer_options_set_reporter(opts, tw_reporter_memory_new(0));
    tw_tracer_options_set_propagator(opts, tw_propagator_new(&w3c, 1, NULL));
    tw_tracer_options_set_trace_id_128bit(opts, is_128bit);
    tw_tracer *t = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    return t;
}

/* Runs one rule through @ops; returns false (after printing why) when it fails. */
static inline bool w3c_rule_check(const w3c_carrier_ops *ops, tw_tracer *tracer,
                                  const w3c_rule *rule)
{
    void *in = ops->make_in(rule->in);
    tw_carrier_reader reader = ops->reader(in);
    tw_span_context *up = tw_tracer_extract(tracer, ops->format, &reader, NULL);
    tw_span *span = tw_span_start_child(tracer, "rule", up); /* NULL parent: a root */
    void *out = ops->make_out();
    tw_carrier_writer writer = ops->writer(out);
    tw_status st = tw_tracer_inject(tracer, tw_span_get_context(span), ops->format, &writer);
    size_t n_tp = 0, n_ts = 0;
    const char *tp = ops->get_out(out, "traceparent", &n_tp);
    const char *ts = ops->get_out(out, "tracestate", &n_ts);
    const char *why = NULL;
    if (st != TW_OK)
        why = "inject failed";
    else if (n_tp != 1 || !tp || strlen(tp) != 55 || strncmp(tp, "00-", 3) != 0)
        why = "not exactly one version-00 traceparent out";
    else if (rule->continues && strncmp(tp + 3, W3C_RULE_TRACE, 32) != 0)
        why = "the trace id was not kept";
    else if (rule->continues && strncmp(tp + 36, W3C_RULE_PARENT, 16) == 0)
        why = "the parent id was not updated";
    else if (!rule->continues && strncmp(tp + 3, W3C_RULE_TRACE, 32) == 0)
        why = "the trace was not restarted";
    else if (strcmp(tp + 53, rule->flags) != 0)
        why = "wrong trace-flags";
    else if (rule->tracestate && (n_ts != 1 || !ts || strcmp(ts, rule->tracestate) != 0))
        why = "wrong tracestate";
    else if (!rule->tracestate && n_ts != 0)
        why = "a tracestate was sent";
    if (why)
        fprintf(stderr,
                "\n  [%s] %s: %s (traceparent %s, tracestate %s, want flags %s, "
                "tracestate %s)\n",
                ops->name, rule->rule, why, tp ? tp : "-", ts ? ts : "-", rule->flags,
                rule->tracestate ? rule->tracestate : "-");
    ops->free_out(out);
    tw_span_finish(span);
    tw_span_context_unref(up);
    ops->free_in(in);
    return why == NULL;
}

/* Every rule through @ops, with 128-bit and 64-bit trace ids. */
static inline void w3c_rules_run(const w3c_carrier_ops *ops)
{
    for (int is_128bit = 0; is_128bit < 2; is_128bit++) {
        tw_tracer *tracer = w3c_rules_tracer(is_128bit);
        CU_ASSERT_PTR_NOT_NULL_FATAL(tracer);
        for (size_t i = 0; i < sizeof w3c_rules / sizeof w3c_rules[0]; i++)
            CU_ASSERT(w3c_rule_check(ops, tracer, &w3c_rules[i]));
        tw_tracer_free(tracer);
    }
}

#endif /* TW_TESTS_W3C_RULES_H */
