/* SPDX-License-Identifier: Apache-2.0 */
/*
 * handlers/chain.c: the finished-span handler chain: adding handlers to the
 * tracer options, running them at finish, destroying them at free.
 *
 * Flow: tw_span_finish -> [this chain] -> reporter. span.c calls
 * tw__handlers_run() only when the tracer has a chain, so a tracer without
 * handlers pays one pointer test per sampled span and nothing else.
 *
 * Ownership and locking: the chain belongs to the options, then (moved by
 * tw_tracer_new) to the tracer, which destroys it in tw_tracer_free. Between
 * the two it is never written, so any number of finishing threads run it
 * without a lock; what a handler shares between threads is its own business
 * (tracewire/handler.h tells implementers so). The tracer counters are
 * relaxed atomics, like the others (statistics only).
 */
#include "handlers/handlers.h"

#include <stdlib.h>
#include <string.h>

/* The vtable as version 0.1 defined it: a caller's @size must cover it. */
#define HANDLER_SIZE_0_1 (offsetof(tw_span_handler, user_data) + sizeof(void *))

tw_status tw_tracer_options_add_handler(tw_tracer_options *opts, const tw_span_handler *handler)
{
    TW_CHECK_ARG(opts && handler, TW_E_INVALID_ARG);
    TW_CHECK_ARG(handler->size >= HANDLER_SIZE_0_1, TW_E_INVALID_ARG);
    /* Copy only what both sides know: a newer caller's extra members are
     * ignored, an older caller's struct is never read past its size. */
    tw_span_handler copy;
    memset(&copy, 0, sizeof copy);
    memcpy(&copy, handler, handler->size < sizeof copy ? handler->size : sizeof copy);
    copy.size = sizeof copy;
    TW_CHECK_ARG(copy.on_finish != NULL, TW_E_INVALID_ARG);

    tw__handler_chain *chain = opts->handlers;
    if (!chain) {
        chain = calloc(1, sizeof(*chain));
        if (!chain)
            return TW_E_NOMEM;
    }
    if (chain->n == chain->cap) {
        size_t ncap = chain->cap ? chain->cap * 2 : 4;
        tw_span_handler *grown = realloc(chain->items, ncap * sizeof(*grown));
        if (!grown) {
            if (!opts->handlers)
                free(chain); /* the new empty chain: the options stay as they were */
            return TW_E_NOMEM;
        }
        chain->items = grown;
        chain->cap = ncap;
    }
    chain->items[chain->n++] = copy;
    chain->wants_unsampled = chain->wants_unsampled || copy.wants_unsampled;
    opts->handlers = chain;
    return TW_OK;
}

void tw_span_handler_free(tw_span_handler *handler)
{
    if (handler && handler->size >= HANDLER_SIZE_0_1 && handler->destroy)
        handler->destroy(handler->user_data);
}

void tw__handler_chain_free(tw__handler_chain *chain)
{
    if (!chain)
        return;
    for (size_t i = 0; i < chain->n; i++) {
        if (chain->items[i].destroy)
            chain->items[i].destroy(chain->items[i].user_data);
    }
    free(chain->items);
    free(chain);
}

bool tw__handler_chain_wants_unsampled(const tw__handler_chain *chain)
{
    return chain && chain->wants_unsampled;
}

bool tw__handlers_run(tw_tracer *t, tw__span_data *d)
{
    const tw__handler_chain *chain = t->handlers;
    tw_mutable_span view = {.data = d, .limits = &t->limits};
    bool is_sampled = (d->flags & TW_FLAG_SAMPLED) != 0;
    bool is_kept = true;
    for (size_t i = 0; i < chain->n && is_kept; i++) {
        const tw_span_handler *h = &chain->items[i];
        if (!is_sampled && !h->wants_unsampled)
            continue;
        is_kept = h->on_finish(h->user_data, &view) != TW_HANDLER_DROP;
    }
    if (!is_sampled) {
        atomic_fetch_add_explicit(&t->spans_recorded_locally, 1, memory_order_relaxed);
        return false;
    }
    if (!is_kept)
        atomic_fetch_add_explicit(&t->spans_dropped_by_handler, 1, memory_order_relaxed);
    return is_kept;
}
