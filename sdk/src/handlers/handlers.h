/* SPDX-License-Identifier: Apache-2.0 */
/*
 * handlers/handlers.h: the finished-span handler chain (internal; the public
 * side is tracewire/handler.h).
 *
 * Where it sits: span.c's finish() calls tw__handlers_run() between the limit
 * marks and tw__reporter_report(), for sampled records, and for the local
 * records that exist only because a handler wants unsampled spans ("sample
 * local"). The chain is built on the options (chain.c), moves to the tracer in
 * tw_tracer_new() like the sampler, and is immutable from then on until
 * tw_tracer_free() destroys it, so running it takes no lock.
 *
 * tw_mutable_span (mutable_span.c) is a view of the record for the duration
 * of the chain: the record is still private to the finishing thread (its only
 * reference is the span's; the reporter has not seen it), so handlers write
 * into it directly, in its arena (wire/model/span_data.h).
 */
#ifndef TW_HANDLERS_H
#define TW_HANDLERS_H

#include "internal.h"

/* The handlers of one options object, then of one tracer. */
struct tw__handler_chain {
    tw_span_handler *items; /* owned; each item's user_data too (destroy) */
    size_t n, cap;
    bool wants_unsampled; /* some item wants unsampled spans */
};

/* The view a handler gets: the record and the tracer's limits. Lives on the
 * stack of tw__handlers_run(). */
struct tw_mutable_span {
    tw__span_data *data;
    const tw__limits *limits;
};

/* Destroys each handler's user_data (in the order added) and the chain.
 * NULL is a no-op. */
void tw__handler_chain_free(tw__handler_chain *chain);

/* Whether spans of unsampled traces must record for @chain (NULL: no). */
bool tw__handler_chain_wants_unsampled(const tw__handler_chain *chain);

/*
 * Runs @t's chain on the finished record @d (d->flags set, limits marked).
 * For a sampled record: returns true when it is to be reported, false when a
 * handler dropped it (counted in spans_dropped_by_handler). For a local record
 * (not sampled): runs the handlers that want unsampled spans, counts it in
 * spans_recorded_locally and returns false (never reported).
 * The tracer must have a chain (t->handlers != NULL).
 */
bool tw__handlers_run(tw_tracer *t, tw__span_data *d);

#endif /* TW_HANDLERS_H */
