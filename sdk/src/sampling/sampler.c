/*
 * sampling/sampler.c: the const and probabilistic samplers (more samplers,
 * rate-limiting, per-operation, remote and adaptive, come with issue 4).
 *
 * Probabilistic follows Jaeger's clients exactly, so that a tracewire
 * service and a Go/Java service decide alike for the same trace id:
 * boundary = 0x7fffffffffffffff * rate, and a trace is sampled when
 * (traceIdLow & 0x7fffffffffffffff) <= boundary (jaeger-client-go
 * sampler.go). Rate 0 samples nothing (Go would still sample the one id whose
 * low 63 bits are zero). Samplers are immutable: no locking.
 */
#include "sampling/sampling.h"

#include <math.h>
#include <stdlib.h>

#define MAX_RANDOM 0x7fffffffffffffffULL

typedef struct {
    tw_sampler base;
    bool decision;
} const_sampler;

typedef struct {
    tw_sampler base;
    double rate;
    uint64_t boundary;
} probabilistic_sampler;

static bool const_is_sampled(const tw_sampler *s, uint64_t hi, uint64_t lo, const char *op)
{
    (void)hi;
    (void)lo;
    (void)op;
    return ((const const_sampler *)s)->decision;
}

static bool probabilistic_is_sampled(const tw_sampler *s, uint64_t hi, uint64_t lo, const char *op)
{
    (void)hi;
    (void)op;
    const probabilistic_sampler *p = (const probabilistic_sampler *)s;
    if (p->rate <= 0.0)
        return false;
    return (lo & MAX_RANDOM) <= p->boundary;
}

static void plain_free(tw_sampler *s)
{
    free(s);
}

static const tw__sampler_vtable const_vtable = {sizeof(tw__sampler_vtable), "const",
                                                const_is_sampled, plain_free};
static const tw__sampler_vtable probabilistic_vtable = {sizeof(tw__sampler_vtable), "probabilistic",
                                                        probabilistic_is_sampled, plain_free};

tw_sampler *tw_sampler_const_new(bool decision)
{
    const_sampler *s = malloc(sizeof(*s));
    if (!s)
        return NULL;
    s->base.vtable = &const_vtable;
    s->base.param = (tw_value){.type = TW_VALUE_BOOL, .as.boolean = decision};
    s->decision = decision;
    return &s->base;
}

tw_sampler *tw_sampler_probabilistic_new(double rate, tw_error **err)
{
    if (isnan(rate) || rate < 0.0 || rate > 1.0) {
        tw__set_error(err, TW_E_INVALID_ARG, "probabilistic sampler: rate %g is outside [0, 1]",
                      rate);
        return NULL;
    }
    probabilistic_sampler *s = malloc(sizeof(*s));
    if (!s) {
        tw__set_error(err, TW_E_NOMEM, "probabilistic sampler: out of memory");
        return NULL;
    }
    s->base.vtable = &probabilistic_vtable;
    s->base.param = (tw_value){.type = TW_VALUE_DOUBLE, .as.dbl = rate};
    s->rate = rate;
    /* (double)MAX_RANDOM rounds up to 2^63, which does not fit: clamp. */
    double b = (double)MAX_RANDOM * rate;
    s->boundary = b >= 9223372036854775807.0 ? MAX_RANDOM : (uint64_t)b;
    return &s->base;
}

const char *tw_sampler_type(const tw_sampler *sampler)
{
    return sampler ? sampler->vtable->type : "";
}

bool tw_sampler_is_sampled(const tw_sampler *sampler, uint64_t trace_id_high, uint64_t trace_id_low,
                           const char *operation)
{
    TW_CHECK_ARG(sampler, false);
    return tw__sampler_decide(sampler, trace_id_high, trace_id_low, operation ? operation : "");
}

void tw_sampler_free(tw_sampler *sampler)
{
    if (sampler)
        sampler->vtable->free(sampler);
}
