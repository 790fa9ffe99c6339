/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/tail.h: the pipeline's trace-level tail sampler (tail.c says
 * how it decides and how its memory is bounded). Thread-safe: receivers add,
 * its own thread decides and forwards.
 */
#ifndef TW_BRIDGE_AGENT_TAIL_H
#define TW_BRIDGE_AGENT_TAIL_H

#include "agent/agent.h"

typedef struct twa_tail_options {
    double keep_share;     /* share of the other traces kept (0..1) */
    int64_t slow_us;       /* a span this long or longer keeps its trace; 0: none */
    unsigned int quiet_ms; /* a trace is decided after this long without a new span */
    size_t max_traces;     /* traces held at most (and decisions remembered) */
} twa_tail_options;

typedef struct twa_tail_stats {
    atomic_uint_fast64_t kept, sampled_out, early_decisions;
    atomic_int_fast64_t traces_held, spans_held;
} twa_tail_stats;

typedef struct twa_tail twa_tail;

/* @dests (borrowed) receive the kept spans. NULL on allocation failure. */
twa_tail *twa_tail_new(const twa_tail_options *o, twa_dest *const *dests, size_t n_dests);
bool twa_tail_start(twa_tail *t);
/* Takes @n items (their references move to the sampler). */
void twa_tail_add(twa_tail *t, twa_item *items, size_t n);
/* Stops the thread and decides every trace held now (before the
 * destinations stop). */
void twa_tail_stop(twa_tail *t);
void twa_tail_free(twa_tail *t);
twa_tail_stats *twa_tail_get_stats(twa_tail *t);

#endif /* TW_BRIDGE_AGENT_TAIL_H */
