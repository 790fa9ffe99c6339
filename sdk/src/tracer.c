/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer.c: tracer options, creation (process tags, sampler, reporter
 * start), flush, close and free.
 *
 * The tracer is shared by all threads. Its sampler, reporter and limits are
 * set before it is published and then only read; close flips `is_closed`
 * (release) and stops the reporter; the sampler and reporter objects
 * themselves are destroyed only by tw_tracer_free, so a thread racing with
 * close still reads valid memory. The handle memory is reference-counted
 * (the user's handle plus one per recording span) so a span finished after
 * free does not touch freed memory.
 */
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers/handlers.h"
#include "propagation/propagation.h"
#include "report/report.h"
#include "sampling/sampling.h"
#include "scope/scope.h"

bool tw__host_name(char *buf, size_t size);
bool tw__host_ipv4(char *buf, size_t size);
void tw__uuid4(char out[37]);
void tw__span_pool_drain_thread(void);

#define DEFAULT_MAX_TAGS 256u
#define DEFAULT_MAX_LOGS 256u
#define DEFAULT_MAX_LOG_FIELDS 64u
#define DEFAULT_MAX_VALUE_BYTES 4096u

/* ---- options ------------------------------------------------------------------------------ */

tw_tracer_options *tw_tracer_options_new(void)
{
    tw_tracer_options *o = calloc(1, sizeof(*o));
    if (!o)
        return NULL;
    tw__process_init(&o->tags);
    o->is_128bit = true;
    o->use_active_span = true;
    o->is_parent_based = true;
    o->limits = (tw__limits){DEFAULT_MAX_TAGS, DEFAULT_MAX_LOGS, DEFAULT_MAX_LOG_FIELDS,
                             DEFAULT_MAX_VALUE_BYTES};
    return o;
}

void tw_tracer_options_free(tw_tracer_options *opts)
{
    if (!opts)
        return;
    free(opts->service);
    tw__process_clear(&opts->tags);
    tw_sampler_free(opts->sampler);
    tw_reporter_free(opts->reporter);
    tw_propagator_free(opts->propagator);
    tw__handler_chain_free(opts->handlers);
    free(opts);
}

tw_status tw_tracer_options_set_service(tw_tracer_options *opts, const char *service)
{
    TW_CHECK_ARG(opts && service, TW_E_INVALID_ARG);
    char *copy = strdup(service);
    if (!copy)
        return TW_E_NOMEM;
    free(opts->service);
    opts->service = copy;
    return TW_OK;
}

static tw_status add_option_tag(tw_tracer_options *opts, const char *key, tw_value v)
{
    TW_CHECK_ARG(opts && key && *key, TW_E_INVALID_ARG);
    return tw__process_add_tag(&opts->tags, key, &v) ? TW_OK : TW_E_NOMEM;
}

tw_status tw_tracer_options_add_tag_str(tw_tracer_options *opts, const char *key, const char *value)
{
    TW_CHECK_ARG(value, TW_E_INVALID_ARG);
    return add_option_tag(
        opts, key, (tw_value){.type = TW_VALUE_STRING, .as.str = value, .len = strlen(value)});
}

tw_status tw_tracer_options_add_tag_bool(tw_tracer_options *opts, const char *key, bool value)
{
    return add_option_tag(opts, key, (tw_value){.type = TW_VALUE_BOOL, .as.boolean = value});
}

tw_status tw_tracer_options_add_tag_int64(tw_tracer_options *opts, const char *key, int64_t value)
{
    return add_option_tag(opts, key, (tw_value){.type = TW_VALUE_INT64, .as.i64 = value});
}

tw_status tw_tracer_options_add_tag_double(tw_tracer_options *opts, const char *key, double value)
{
    return add_option_tag(opts, key, (tw_value){.type = TW_VALUE_DOUBLE, .as.dbl = value});
}

tw_status tw_tracer_options_set_trace_id_128bit(tw_tracer_options *opts, bool is_128bit)
{
    TW_CHECK_ARG(opts, TW_E_INVALID_ARG);
    opts->is_128bit = is_128bit;
    return TW_OK;
}

tw_status tw_tracer_options_set_sampler(tw_tracer_options *opts, tw_sampler *sampler)
{
    TW_CHECK_ARG(opts && sampler, TW_E_INVALID_ARG);
    if (opts->sampler != sampler)
        tw_sampler_free(opts->sampler);
    opts->sampler = sampler;
    return TW_OK;
}

tw_status tw_tracer_options_set_reporter(tw_tracer_options *opts, tw_reporter *reporter)
{
    TW_CHECK_ARG(opts && reporter, TW_E_INVALID_ARG);
    if (opts->reporter != reporter)
        tw_reporter_free(opts->reporter);
    opts->reporter = reporter;
    return TW_OK;
}

tw_status tw_tracer_options_set_propagator(tw_tracer_options *opts, tw_propagator *propagator)
{
    TW_CHECK_ARG(opts && propagator, TW_E_INVALID_ARG);
    if (opts->propagator != propagator)
        tw_propagator_free(opts->propagator);
    opts->propagator = propagator;
    return TW_OK;
}

#define LIMIT_SETTER(name, field)                                                                  \
    tw_status tw_tracer_options_set_##name(tw_tracer_options *opts, size_t value)                  \
    {                                                                                              \
        TW_CHECK_ARG(opts != NULL && value > 0, TW_E_INVALID_ARG);                                 \
        opts->limits.field = value;                                                                \
        return TW_OK;                                                                              \
    }
LIMIT_SETTER(max_tags, max_tags)
LIMIT_SETTER(max_logs, max_logs)
LIMIT_SETTER(max_log_fields, max_log_fields)
LIMIT_SETTER(max_value_bytes, max_value_bytes)

tw_status tw_tracer_options_set_use_active_span(tw_tracer_options *opts, bool use_active_span)
{
    TW_CHECK_ARG(opts, TW_E_INVALID_ARG);
    opts->use_active_span = use_active_span;
    return TW_OK;
}

tw_status tw_tracer_options_set_parent_based(tw_tracer_options *opts, bool is_parent_based)
{
    TW_CHECK_ARG(opts, TW_E_INVALID_ARG);
    opts->is_parent_based = is_parent_based;
    return TW_OK;
}

/* ---- tracer ------------------------------------------------------------------------------- */

static bool add_str_tag(tw__process *p, const char *key, const char *value)
{
    tw_value v = {.type = TW_VALUE_STRING, .as.str = value, .len = strlen(value)};
    return tw__process_add_tag(p, key, &v);
}

/* Process tags: detected hostname/ip (unless the user set them), versions,
 * client-uuid, then the user's tags in their order. */
static bool build_process(tw__process *p, const char *service, const tw__process *user)
{
    if (!tw__process_set_service(p, service))
        return false;
    char buf[256];
    if (!tw__process_find_tag(user, "hostname") && tw__host_name(buf, sizeof buf) &&
        !add_str_tag(p, "hostname", buf))
        return false;
    if (!tw__process_find_tag(user, "ip") && tw__host_ipv4(buf, sizeof buf) &&
        !add_str_tag(p, "ip", buf))
        return false;
    if (!add_str_tag(p, "tracewire.version", TW_VERSION_STRING) ||
        !add_str_tag(p, "jaeger.version", "C-" TW_VERSION_STRING))
        return false;
    char uuid[37];
    tw__uuid4(uuid);
    if (!add_str_tag(p, "client-uuid", uuid))
        return false;
    for (size_t i = 0; i < user->n_tags; i++) {
        const tw__tag *t = &user->tags[i];
        tw_value v;
        tw__tag_to_value(t, &v);
        if (!tw__process_add_tag(p, t->key, &v))
            return false;
    }
    return true;
}

tw_tracer *tw_tracer_new(tw_tracer_options *opts, tw_error **err)
{
    if (!opts) {
        tw__set_error(err, TW_E_INVALID_ARG, "tw_tracer_new: options are NULL");
        return NULL;
    }
    /* The sampler, reporter and propagator move to the tracer (or die with it). */
    tw_sampler *sampler = opts->sampler;
    tw_reporter *reporter = opts->reporter;
    tw_propagator *propagator = opts->propagator;
    tw__handler_chain *handlers = opts->handlers;
    opts->sampler = NULL;
    opts->reporter = NULL;
    opts->propagator = NULL;
    opts->handlers = NULL;

    tw_tracer *t = NULL;
    /* Each failure sets the error of its real cause, and only that one (a
     * set error is never overwritten, and a second, vaguer message would
     * still reach the logger). */
    if (!opts->service || !*opts->service) {
        tw__set_error(err, TW_E_CONFIG, "tracer: the service name is missing or empty");
        goto fail;
    }
    if (!sampler && !(sampler = tw_sampler_const_new(true))) {
        tw__set_error(err, TW_E_NOMEM, "tracer: out of memory for the default sampler");
        goto fail;
    }
    if (!reporter && !(reporter = tw_reporter_jaeger_udp_new(NULL, err)))
        goto fail; /* the constructor said why (TW_E_IO: no socket; TW_E_NOMEM) */
    if (!propagator && !(propagator = tw__propagator_default())) {
        tw__set_error(err, TW_E_NOMEM, "tracer: out of memory for the default propagator");
        goto fail;
    }
    t = calloc(1, sizeof(*t));
    if (!t) {
        tw__set_error(err, TW_E_NOMEM, "tracer: out of memory");
        goto fail;
    }
    atomic_init(&t->refcount, 1);
    atomic_init(&t->is_closed, false);
    t->is_128bit = opts->is_128bit;
    t->use_active_span = opts->use_active_span;
    t->scope_key = tw__scope_new_key();
    t->limits = opts->limits;
    tw__process_init(&t->process);
    if (!build_process(&t->process, opts->service, &opts->tags)) {
        tw__set_error(err, TW_E_NOMEM, "tracer: out of memory for process tags");
        goto fail_process;
    }
    if (tw__reporter_start(reporter, &t->process, err) != TW_OK)
        goto fail_process;
    t->sampler = sampler;
    t->reporter = reporter;
    t->propagator = propagator;
    t->handlers = handlers;
    t->records_unsampled = tw__handler_chain_wants_unsampled(handlers);
    t->samples_every_span = !opts->is_parent_based;
    t->never_samples = tw__sampler_never_samples(sampler);
    t->no_propagation = opts->no_propagation;
    return t;

fail_process:
    tw__process_clear(&t->process);
    free(t);
fail:
    tw_sampler_free(sampler);
    tw_reporter_free(reporter);
    tw_propagator_free(propagator);
    tw__handler_chain_free(handlers);
    return NULL;
}

const char *tw_tracer_service_name(const tw_tracer *tracer)
{
    return tracer ? tracer->process.service_name : "";
}

bool tw_tracer_is_closed(const tw_tracer *tracer)
{
    return !tracer || atomic_load_explicit(&tracer->is_closed, memory_order_acquire);
}

tw_status tw_tracer_flush(tw_tracer *tracer, unsigned int timeout_ms)
{
    TW_CHECK_ARG(tracer, TW_E_INVALID_ARG);
    if (tw_tracer_is_closed(tracer))
        return TW_E_CLOSED;
    return tw__reporter_flush(tracer->reporter, tw__flush_deadline(timeout_ms));
}

tw_status tw_tracer_close(tw_tracer *tracer)
{
    TW_CHECK_ARG(tracer, TW_E_INVALID_ARG);
    if (tracer->is_noop) {
        tw__log_msg(TW_LOG_ERROR, "tw_tracer_close: the no-op global tracer is never closed");
        return TW_E_INVALID_ARG;
    }
    bool expected = false;
    if (!atomic_compare_exchange_strong(&tracer->is_closed, &expected, true)) {
        tw__log_msg(TW_LOG_WARN, "tw_tracer_close: tracer \"%s\" is already closed",
                    tracer->process.service_name);
        return TW_E_CLOSED;
    }
    tw__reporter_close(tracer->reporter);
    return TW_OK;
}

void tw__tracer_destroy(tw_tracer *t)
{
    tw__process_clear(&t->process);
    free(t);
}

/* ---- the global tracer --------------------------------------------------------------------- */

static _Atomic(tw_tracer *) global_tracer;
static tw_tracer *noop_tracer;
static pthread_once_t noop_once = PTHREAD_ONCE_INIT;

/* The tracer tw_tracer_global() returns when none is set: it samples
 * nothing, reports nowhere and propagates nothing (a library instrumented
 * through it must not send "not sampled" headers on behalf of an
 * application that chose no tracing). Made once, never freed. */
static void make_noop_tracer(void)
{
    tw_tracer_options *o = tw_tracer_options_new();
    if (!o)
        return;
    tw_tracer_options_set_service(o, "tracewire-noop");
    tw_sampler *never = tw_sampler_const_new(false);
    tw_reporter *nowhere = tw_reporter_null_new();
    if (never)
        tw_tracer_options_set_sampler(o, never);
    if (nowhere)
        tw_tracer_options_set_reporter(o, nowhere);
    o->no_propagation = true;
    tw_tracer *t = never && nowhere ? tw_tracer_new(o, NULL) : NULL;
    tw_tracer_options_free(o);
    if (t)
        t->is_noop = true;
    noop_tracer = t;
}

void tw_tracer_set_global(tw_tracer *tracer)
{
    if (tracer && tracer->is_noop)
        tracer = NULL;
    atomic_store_explicit(&global_tracer, tracer, memory_order_release);
}

tw_tracer *tw_tracer_global(void)
{
    tw_tracer *t = atomic_load_explicit(&global_tracer, memory_order_acquire);
    if (t)
        return t;
    pthread_once(&noop_once, make_noop_tracer);
    return noop_tracer;
}

bool tw_tracer_is_noop(const tw_tracer *tracer)
{
    return tracer && tracer->is_noop;
}

void tw_tracer_free(tw_tracer *tracer)
{
    if (!tracer)
        return;
    if (tracer->is_noop) {
        tw__log_msg(TW_LOG_ERROR, "tw_tracer_free: the no-op global tracer is never freed");
        return;
    }
    /* The global slot forgets a tracer that goes away. */
    tw_tracer *expected = tracer;
    atomic_compare_exchange_strong(&global_tracer, &expected, NULL);
    /* Before close: spans owned by scopes left open on this thread are then
     * reported, not dropped as finished after close. */
    tw__scope_tracer_free(tracer);
    if (!tw_tracer_is_closed(tracer))
        tw_tracer_close(tracer);
    tw_reporter_free(tracer->reporter);
    tw_sampler_free(tracer->sampler);
    tracer->reporter = NULL;
    tracer->sampler = NULL;
    tw_propagator_free(tracer->propagator);
    tracer->propagator = NULL;
    /* Closed: no finish runs the chain any more (span.c checks is_closed). */
    tw__handler_chain_free(tracer->handlers);
    tracer->handlers = NULL;
    tw__span_pool_drain_thread();
    tw__span_data_pool_trim();
    tw__tracer_release(tracer);
}

tw_reporter *tw_tracer_reporter(const tw_tracer *tracer)
{
    return tracer ? tracer->reporter : NULL;
}

bool tw_tracer_process_tag(const tw_tracer *tracer, const char *key, tw_value *value)
{
    if (!tracer || !key)
        return false;
    const tw__tag *t = tw__process_find_tag(&tracer->process, key);
    if (!t)
        return false;
    if (value)
        tw__tag_to_value(t, value);
    return true;
}

tw_status tw_tracer_inject(tw_tracer *tracer, const tw_span_context *ctx, tw_format format,
                           const tw_carrier_writer *carrier)
{
    TW_CHECK_ARG(tracer && tracer->propagator, TW_E_INVALID_ARG);
    if (tracer->no_propagation)
        return TW_OK; /* OTEL_PROPAGATORS=none, or the no-op tracer: nothing to write */
    return tw_propagator_inject(tracer->propagator, ctx, format, carrier);
}

tw_span_context *tw_tracer_extract(tw_tracer *tracer, tw_format format,
                                   const tw_carrier_reader *carrier, tw_error **err)
{
    if (!tracer || !tracer->propagator) {
        tw__set_error(err, TW_E_INVALID_ARG, "tw_tracer_extract: the tracer is NULL or freed");
        return NULL;
    }
    if (tracer->no_propagation) {
        tw__set_error(err, TW_E_NOT_FOUND, "tw_tracer_extract: this tracer propagates nothing");
        return NULL;
    }
    /* Warnings reach the logger inside the extract; here they are counted. */
    size_t n_warnings = 0;
    tw_span_context *ctx =
        tw__propagator_extract(tracer->propagator, format, carrier, NULL, NULL, &n_warnings, err);
    if (n_warnings)
        atomic_fetch_add_explicit(&tracer->extract_warnings, n_warnings, memory_order_relaxed);
    return ctx;
}

uint64_t tw_tracer_counter(const tw_tracer *tracer, tw_tracer_counter_id id)
{
    if (!tracer)
        return 0;
    switch (id) {
    case TW_TRACER_SPANS_STARTED_SAMPLED:
        return atomic_load_explicit(&tracer->spans_started_sampled, memory_order_relaxed);
    case TW_TRACER_SPANS_FINISHED_SAMPLED:
        return atomic_load_explicit(&tracer->spans_finished_sampled, memory_order_relaxed);
    case TW_TRACER_SPANS_FINISHED_AFTER_CLOSE:
        return atomic_load_explicit(&tracer->spans_after_close, memory_order_relaxed);
    case TW_TRACER_TRACES_STARTED_SAMPLED:
        return atomic_load_explicit(&tracer->traces_started_sampled, memory_order_relaxed);
    case TW_TRACER_EXTRACT_WARNINGS:
        return atomic_load_explicit(&tracer->extract_warnings, memory_order_relaxed);
    case TW_TRACER_SPANS_DROPPED_BY_HANDLER:
        return atomic_load_explicit(&tracer->spans_dropped_by_handler, memory_order_relaxed);
    case TW_TRACER_SPANS_RECORDED_LOCALLY:
        return atomic_load_explicit(&tracer->spans_recorded_locally, memory_order_relaxed);
    case TW_TRACER_BAGGAGE_DROPPED:
        return atomic_load_explicit(&tracer->baggage_dropped, memory_order_relaxed);
    }
    return 0;
}
