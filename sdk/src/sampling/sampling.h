/*
 * sampling/sampling.h: sampler internals shared with the core. Samplers
 * implement tw__sampler_vtable (internal.h); adding one touches its own file
 * and the public constructor in sampler.h. Decisions are made once per trace,
 * at the root span, and travel in the context's sampled flag.
 */
#ifndef TW_SAMPLING_H
#define TW_SAMPLING_H

#include "internal.h"

/* The decision plus the tags a root span carries (sampler.type/param). */
static inline bool tw__sampler_decide(const tw_sampler *s, uint64_t hi, uint64_t lo, const char *op)
{
    return s->vtable->is_sampled(s, hi, lo, op);
}

#endif /* TW_SAMPLING_H */
