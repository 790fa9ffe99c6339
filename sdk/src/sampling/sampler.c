/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sampling/sampler.c: the public sampler API, and the const and
 * probabilistic samplers.
 *
 * Probabilistic follows Jaeger's clients exactly, so that a tracewire
 * service and a Go/Java service decide alike for the same trace id:
 * boundary = 0x7fffffffffffffff * rate, and a trace is sampled when
 * (traceIdLow & 0x7fffffffffffffff) <= boundary (jaeger-client-go
 * sampler.go). Rate 0 samples nothing (Go would still sample the one id whose
 * low 63 bits are zero). Both samplers are immutable: no locking.
 */
#include "sampling/sampling.h"

#include <math.h>
#include <stdlib.h>

#include "clock.h"

#define MAX_RANDOM 0x7fffffffffffffffULL

int64_t (*tw__sampling_now_ns)(void) = tw__mono_ns;

uint64_t tw__probability_boundary(double rate)
{
    /* (double)MAX_RANDOM rounds up to 2^63, which does not fit: clamp. */
    double b = (double)MAX_RANDOM * rate;
    return b >= 9223372036854775807.0 ? MAX_RANDOM : b <= 0 ? 0 : (uint64_t)b;
}

typedef struct {
    tw_sampler base;
    bool decision;
} const_sampler;

typedef struct {
    tw_sampler base;
    double rate;
    uint64_t boundary;
} probabilistic_sampler;

static void const_decide(tw_sampler *s, tw__trace_id *id, const char *op,
                         tw__sampling_decision *out)
{
    (void)id;
    (void)op;
    bool decision = ((const const_sampler *)s)->decision;
    *out = (tw__sampling_decision){
        decision, TW__SAMPLER_TYPE("const"), {.type = TW_VALUE_BOOL, .as.boolean = decision}};
}

static void probabilistic_decide(tw_sampler *s, tw__trace_id *id, const char *op,
                                 tw__sampling_decision *out)
{
    (void)op;
    const probabilistic_sampler *p = (const probabilistic_sampler *)s;
    *out = (tw__sampling_decision){tw__probabilistic_hit(p->boundary, p->rate, id),
                                   TW__SAMPLER_TYPE("probabilistic"),
                                   {.type = TW_VALUE_DOUBLE, .as.dbl = p->rate}};
}

static void plain_free(tw_sampler *s)
{
    free(s);
}

static const tw__sampler_vtable const_vtable = {sizeof(tw__sampler_vtable), "const", const_decide,
                                                plain_free};
static const tw__sampler_vtable probabilistic_vtable = {sizeof(tw__sampler_vtable), "probabilistic",
                                                        probabilistic_decide, plain_free};

tw_sampler *tw_sampler_const_new(bool decision)
{
    const_sampler *s = malloc(sizeof(*s));
    if (!s)
        return NULL;
    s->base.vtable = &const_vtable;
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
    s->rate = rate;
    s->boundary = tw__probability_boundary(rate);
    return &s->base;
}

bool tw__sampler_never_samples(const tw_sampler *s)
{
    if (s->vtable == &const_vtable)
        return !((const const_sampler *)s)->decision;
    if (s->vtable == &probabilistic_vtable)
        return ((const probabilistic_sampler *)s)->rate == 0.0;
    return false;
}

const char *tw_sampler_type(const tw_sampler *sampler)
{
    return sampler ? sampler->vtable->type : "";
}

bool tw_sampler_is_sampled(const tw_sampler *sampler, uint64_t trace_id_high, uint64_t trace_id_low,
                           const char *operation)
{
    TW_CHECK_ARG(sampler, false);
    tw__sampling_decision d;
    /* Samplers with state (rate limiters, adaptive) synchronise internally;
     * the public pointer is const because a decision changes no setting. */
    tw__sampler_decide((tw_sampler *)sampler, trace_id_high, trace_id_low,
                       operation ? operation : "", &d);
    return d.is_sampled;
}

void tw_sampler_free(tw_sampler *sampler)
{
    if (sampler)
        sampler->vtable->free(sampler);
}
