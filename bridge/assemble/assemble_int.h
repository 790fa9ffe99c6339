/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/assemble/assemble_int.h: what assemble.c (holding: window,
 * pass-through groups, sampling) and group.c (the per-group rules: trace id,
 * dedup, merge, backfill, Jaeger ids, clock skew) share. Internal to
 * bridge/assemble/. Locking: none.
 */
#ifndef TW_BRIDGE_ASSEMBLE_INT_H
#define TW_BRIDGE_ASSEMBLE_INT_H

#include "assemble/assemble.h"

/* Work arrays reused from group to group (grown, never shrunk, until free). */
typedef struct twb__group_scratch {
    struct twb__item *items;
    size_t items_cap;
    struct twb__reid *reids;
    size_t reids_cap;
    size_t *stack;
    size_t stack_cap;
    struct twb__item *sorted; /* the items in order, swapped with items after a sort */
    size_t sorted_cap;
    struct twb__item **order; /* the insertion sort's pointers */
    size_t order_cap;
} twb__group_scratch;

void twb__group_scratch_free(twb__group_scratch *sc);

/*
 * Applies the group rules of assemble.h to spans[0..n) (n >= 2, one trace),
 * which hold one reference each. On TW_OK, spans[0..*kept) are the
 * survivors in arrival order, one reference each; the others were released.
 * On failure (TW_E_NOMEM with @err) every spans[i].data is a held reference
 * or NULL, for the caller to release.
 */
tw_status twb__assemble_group(twb__group_scratch *sc, const twb_assemble_options *o,
                              twb_span *spans, size_t n, size_t *kept, twb_assemble_stats *st,
                              tw_error **err);

/* The splitmix64 finalizer (assemble.h, twb_trace_hash). */
uint64_t twb__splitmix64_mix(uint64_t z);

#endif /* TW_BRIDGE_ASSEMBLE_INT_H */
