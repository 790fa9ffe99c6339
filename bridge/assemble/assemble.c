/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/assemble/assemble.c: the assembler's holding side: the window (a
 * hash table from trace id to the trace's spans, plus a list in order of
 * first arrival), the pass-through group, the sampling decision, the
 * debug set and the set of traces sent (split_traces). A group that leaves
 * goes to group.c (twb__assemble_group) for the per-trace rules, then to
 * @out. The rules are in assemble.h.
 *
 * Cost: O(1) amortised per span in the window (one hash probe, an append);
 * the pass-through path compares the trace id with the previous span's and
 * appends; per trace, one probe of the set of traces sent when it starts
 * and one insertion when it leaves. Memory: the window, the table (one slot
 * per held trace), the debug set (4096 ids) and the set of traces sent
 * (16384 ids, about 400 KiB). Locking: none (one thread per assembler).
 */
#include "assemble/assemble_int.h"

#include <stdlib.h>
#include <string.h>

#include "wire/core/error.h"

#define RUN_MAX 1024u       /* pass-through group bound */
#define DEBUG_IDS_MAX 4096u /* debug trace ids remembered */
#define SENT_IDS_MAX 16384u /* ids of traces sent remembered, to count split traces */
_Static_assert((DEBUG_IDS_MAX & (DEBUG_IDS_MAX - 1)) == 0 &&
                   (SENT_IDS_MAX & (SENT_IDS_MAX - 1)) == 0,
               "an id set's table is a power of two (twice its ids)");
#define SLOT_INLINE 4u    /* spans a window slot holds without a heap array */
#define SLOT_KEEP_CAP 64u /* larger heap arrays are freed when a slot is recycled */

/* A bounded set of trace ids (low halves): see "id sets" below. */
typedef struct id_set {
    uint64_t *slots; /* 2 * max of them (a power of two); 0: empty */
    uint8_t *marks;  /* one per slot, moved with its id */
    uint64_t *ring;  /* the ids held, in order of entry */
    size_t max, n, next;
    bool has_zero;
    uint8_t zero_mark;
} id_set;

/* One trace held in the window. */
typedef struct trace_slot {
    uint64_t high, low;
    struct trace_slot *hnext;         /* hash chain */
    struct trace_slot *older, *newer; /* arrival order */
    twb_span *spans;                  /* inline_spans or heap */
    size_t n, cap;
    twb_span inline_spans[SLOT_INLINE];
} trace_slot;

struct twb_assembler {
    twb_assemble_options o;
    twb_assemble_out out;
    void *arg;
    twb_assemble_stats st;
    twb__group_scratch scratch;

    /* window (window_spans > 0) */
    trace_slot **buckets;
    size_t mask; /* buckets - 1 */
    size_t n_traces;
    size_t held;
    trace_slot *oldest, *newest;
    trace_slot *free_slots;

    /* pass-through group (window_spans == 0) */
    twb_span *run;
    size_t run_n, run_cap;
    uint64_t run_high, run_low;

    id_set debug; /* debug traces (sampling) */
    id_set sent;  /* traces with a kept part sent (split_traces) */
};

/* ---- hashes -------------------------------------------------------------------------------- */

#define SPLITMIX_GAMMA 0x9e3779b97f4a7c15ull

uint64_t twb__splitmix64_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t twb_trace_hash(uint64_t trace_id_high, uint64_t trace_id_low)
{
    (void)trace_id_high; /* see assemble.h: one trace, one decision, whatever its id width */
    return twb__splitmix64_mix(trace_id_low + SPLITMIX_GAMMA);
}

bool twb_trace_sampled(uint64_t trace_id_high, uint64_t trace_id_low, double sample)
{
    if (sample >= 1.0)
        return true;
    double u = (double)(twb_trace_hash(trace_id_high, trace_id_low) >> 11) * 0x1p-53;
    return u < sample;
}

uint64_t twb_shared_span_id(uint64_t client_id)
{
    uint64_t state = client_id, id;
    do {
        state += SPLITMIX_GAMMA;
        id = twb__splitmix64_mix(state);
    } while (id == 0 || id == client_id);
    return id;
}

/* ---- id sets ------------------------------------------------------------------------------
 * The debug traces and the traces already sent: trace ids (low halves), at
 * most `max`, the oldest forgotten first. Linear probing with backward-shift
 * deletion (no tombstones), so lookups stay short however many ids passed
 * through; the ring says which id leaves when the set is full. Each id
 * carries a mark for the caller. Id 0 (the empty slot) is kept aside and
 * never forgotten. The tables are allocated at the first add. */

static size_t idset_mask(const id_set *s)
{
    return 2 * s->max - 1;
}

static size_t idset_home(const id_set *s, uint64_t key)
{
    return (size_t)(twb__splitmix64_mix(key) & idset_mask(s));
}

/* The slot holding @key, or the empty slot where it would go. */
static size_t idset_find(const id_set *s, uint64_t key)
{
    size_t i = idset_home(s, key);
    while (s->slots[i] != 0 && s->slots[i] != key)
        i = (i + 1) & idset_mask(s);
    return i;
}

/* The mark of @key, or NULL when @key is not in the set. */
static uint8_t *idset_get(id_set *s, uint64_t key)
{
    if (key == 0)
        return s->has_zero ? &s->zero_mark : NULL;
    if (!s->slots)
        return NULL;
    size_t i = idset_find(s, key);
    return s->slots[i] == key ? &s->marks[i] : NULL;
}

static void idset_delete(id_set *s, uint64_t key)
{
    size_t mask = idset_mask(s), i = idset_find(s, key);
    if (s->slots[i] != key)
        return;
    s->slots[i] = 0;
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (s->slots[j] == 0)
            return;
        size_t k = idset_home(s, s->slots[j]);
        /* Move slot j back to the hole unless its home lies cyclically in (i, j]. */
        bool home_between = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!home_between) {
            s->slots[i] = s->slots[j];
            s->marks[i] = s->marks[j];
            s->slots[j] = 0;
            i = j;
        }
    }
}

/* Adds @key (mark 0) unless it is there (its mark kept); false on allocation failure. */
static bool idset_add(id_set *s, uint64_t key)
{
    if (key == 0) {
        if (!s->has_zero)
            s->zero_mark = 0;
        s->has_zero = true;
        return true;
    }
    if (!s->slots) {
        s->slots = calloc(2 * s->max, sizeof(uint64_t));
        s->marks = calloc(2 * s->max, 1);
        s->ring = calloc(s->max, sizeof(uint64_t));
        if (!s->slots || !s->marks || !s->ring) {
            free(s->slots);
            free(s->marks);
            free(s->ring);
            s->slots = s->ring = NULL;
            s->marks = NULL;
            return false;
        }
    }
    size_t i = idset_find(s, key);
    if (s->slots[i] == key)
        return true;
    if (s->n == s->max) {
        idset_delete(s, s->ring[s->next]);
        s->n--;
        i = idset_find(s, key);
    }
    s->slots[i] = key;
    s->marks[i] = 0;
    s->ring[s->next] = key;
    s->next = (s->next + 1) % s->max;
    s->n++;
    return true;
}

static void idset_free(id_set *s)
{
    free(s->slots);
    free(s->marks);
    free(s->ring);
}

/* A trace starts in the window (or a pass-through group): if a kept part of
 * it went out already, the window split it (counted once per trace). */
static void note_start(twb_assembler *a, uint64_t low)
{
    uint8_t *mark = idset_get(&a->sent, low);
    if (mark && !*mark) {
        *mark = 1;
        a->st.split_traces++;
    }
}

/* ---- sending a group ------------------------------------------------------------------------ */

static void release(twb_span *spans, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tw__span_data_unref(spans[i].data);
        spans[i].data = NULL;
    }
}

/* The sampling decision for a group; false on allocation failure (*keep unset). */
static bool decide(twb_assembler *a, const twb_span *spans, size_t n, bool *keep)
{
    if (a->o.sample >= 1.0) {
        *keep = true;
        return true;
    }
    uint64_t low = spans[0].data->trace_id_low;
    for (size_t i = 0; i < n; i++) {
        if (spans[i].data->flags & TW__FLAG_DEBUG) {
            *keep = true;
            return idset_add(&a->debug, low);
        }
    }
    *keep = idset_get(&a->debug, low) != NULL || twb_trace_sampled(0, low, a->o.sample);
    return true;
}

/* Takes over the references in spans[0..n) (all released on return). */
static tw_status send_group(twb_assembler *a, twb_span *spans, size_t n, tw_error **err)
{
    if (n == 0)
        return TW_OK;
    bool keep = false;
    if (!decide(a, spans, n, &keep)) {
        release(spans, n);
        tw__set_error(err, TW_E_NOMEM, "trace assembly: out of memory (debug trace set)");
        return TW_E_NOMEM;
    }
    if (!keep) {
        a->st.sampled_out += n;
        release(spans, n);
        return TW_OK;
    }
    if (!idset_add(&a->sent, spans[0].data->trace_id_low)) {
        release(spans, n);
        tw__set_error(err, TW_E_NOMEM, "trace assembly: out of memory (the set of traces sent)");
        return TW_E_NOMEM;
    }
    size_t kept = n;
    if (n > 1) {
        tw_status st = twb__assemble_group(&a->scratch, &a->o, spans, n, &kept, &a->st, err);
        if (st != TW_OK) {
            release(spans, n);
            return st;
        }
    }
    tw_status st = a->out(a->arg, spans, kept, err);
    release(spans, kept);
    return st;
}

/* ---- pass-through groups (window 0) --------------------------------------------------------- */

static tw_status send_run(twb_assembler *a, tw_error **err)
{
    size_t n = a->run_n;
    a->run_n = 0;
    return send_group(a, a->run, n, err);
}

static tw_status add_pass_through(twb_assembler *a, twb_span span, tw_error **err)
{
    const tw__span_data *d = span.data;
    if (a->run_n > 0) {
        bool same = d->trace_id_low == a->run_low &&
                    (d->trace_id_high == a->run_high || d->trace_id_high == 0 || a->run_high == 0);
        if (!same || a->run_n >= RUN_MAX) {
            tw_status st = send_run(a, err);
            if (st != TW_OK) {
                tw__span_data_unref(span.data);
                return st;
            }
        }
    }
    if (a->run_n == a->run_cap) {
        size_t cap = a->run_cap ? a->run_cap * 2 : 8;
        twb_span *grown = realloc(a->run, cap * sizeof(*grown));
        if (!grown) {
            tw__span_data_unref(span.data);
            tw__set_error(err, TW_E_NOMEM, "trace assembly: out of memory");
            return TW_E_NOMEM;
        }
        a->run = grown;
        a->run_cap = cap;
    }
    if (a->run_n == 0) {
        note_start(a, d->trace_id_low);
        a->run_low = d->trace_id_low;
        a->run_high = d->trace_id_high;
    } else if (a->run_high == 0) {
        a->run_high = d->trace_id_high;
    }
    a->run[a->run_n++] = span;
    return TW_OK;
}

/* ---- the window ---------------------------------------------------------------------------- */

static size_t bucket_of(const twb_assembler *a, uint64_t low)
{
    return (size_t)(twb_trace_hash(0, low) & a->mask);
}

static bool table_grow(twb_assembler *a)
{
    size_t n = (a->mask + 1) * 2;
    trace_slot **b = calloc(n, sizeof(*b));
    if (!b)
        return false;
    for (size_t i = 0; i <= a->mask; i++) {
        trace_slot *s = a->buckets[i];
        while (s) {
            trace_slot *next = s->hnext;
            size_t j = (size_t)(twb_trace_hash(0, s->low) & (n - 1));
            s->hnext = b[j];
            b[j] = s;
            s = next;
        }
    }
    free(a->buckets);
    a->buckets = b;
    a->mask = n - 1;
    return true;
}

static void slot_unlink(twb_assembler *a, trace_slot *s)
{
    trace_slot **p = &a->buckets[bucket_of(a, s->low)];
    while (*p != s)
        p = &(*p)->hnext;
    *p = s->hnext;
    if (s->older)
        s->older->newer = s->newer;
    else
        a->oldest = s->newer;
    if (s->newer)
        s->newer->older = s->older;
    else
        a->newest = s->older;
    a->n_traces--;
    a->held -= s->n;
}

static void slot_recycle(twb_assembler *a, trace_slot *s)
{
    if (s->spans != s->inline_spans && s->cap > SLOT_KEEP_CAP) {
        free(s->spans);
        s->spans = s->inline_spans;
        s->cap = SLOT_INLINE;
    }
    s->n = 0;
    s->hnext = a->free_slots;
    a->free_slots = s;
}

static void slot_free(trace_slot *s)
{
    if (s->spans != s->inline_spans)
        free(s->spans);
    free(s);
}

/* Sends the oldest trace whole. */
static tw_status send_oldest(twb_assembler *a, tw_error **err)
{
    trace_slot *s = a->oldest;
    slot_unlink(a, s);
    size_t n = s->n;
    s->n = 0;
    tw_status st = send_group(a, s->spans, n, err);
    slot_recycle(a, s);
    return st;
}

static trace_slot *slot_find(twb_assembler *a, uint64_t high, uint64_t low)
{
    for (trace_slot *s = a->buckets[bucket_of(a, low)]; s; s = s->hnext) {
        if (s->low == low && (s->high == high || s->high == 0 || high == 0))
            return s;
    }
    return NULL;
}

static trace_slot *slot_new(twb_assembler *a, uint64_t high, uint64_t low)
{
    if (a->n_traces > a->mask && !table_grow(a))
        return NULL;
    trace_slot *s = a->free_slots;
    if (s) {
        a->free_slots = s->hnext;
    } else {
        s = malloc(sizeof(*s));
        if (!s)
            return NULL;
        s->spans = s->inline_spans;
        s->cap = SLOT_INLINE;
    }
    s->high = high;
    s->low = low;
    s->n = 0;
    note_start(a, low);
    size_t b = bucket_of(a, low);
    s->hnext = a->buckets[b];
    a->buckets[b] = s;
    s->newer = NULL;
    s->older = a->newest;
    if (a->newest)
        a->newest->newer = s;
    else
        a->oldest = s;
    a->newest = s;
    a->n_traces++;
    return s;
}

static bool slot_append(trace_slot *s, twb_span span)
{
    if (s->n == s->cap) {
        size_t cap = s->cap * 2;
        twb_span *grown;
        if (s->spans == s->inline_spans) {
            grown = malloc(cap * sizeof(*grown));
            if (grown)
                memcpy(grown, s->spans, s->n * sizeof(*grown));
        } else {
            grown = realloc(s->spans, cap * sizeof(*grown));
        }
        if (!grown)
            return false;
        s->spans = grown;
        s->cap = cap;
    }
    s->spans[s->n++] = span;
    return true;
}

static tw_status add_windowed(twb_assembler *a, twb_span span, tw_error **err)
{
    const tw__span_data *d = span.data;
    trace_slot *s = slot_find(a, d->trace_id_high, d->trace_id_low);
    if (!s) {
        s = slot_new(a, d->trace_id_high, d->trace_id_low);
    } else if (s->high == 0) {
        s->high = d->trace_id_high; /* the longest id wins */
    }
    if (!s || !slot_append(s, span)) {
        if (s && s->n == 0) { /* a fresh slot: take it back out */
            slot_unlink(a, s);
            slot_recycle(a, s);
        }
        tw__span_data_unref(span.data);
        tw__set_error(err, TW_E_NOMEM, "trace assembly: out of memory");
        return TW_E_NOMEM;
    }
    a->held++;
    while (a->held > a->o.window_spans) {
        tw_status st = send_oldest(a, err);
        if (st != TW_OK)
            return st;
    }
    return TW_OK;
}

/* ---- public ---------------------------------------------------------------------------------- */

twb_assembler *twb_assembler_new(const twb_assemble_options *o, twb_assemble_out out, void *arg)
{
    if (!o || !out)
        return NULL;
    twb_assembler *a = calloc(1, sizeof(*a));
    if (!a)
        return NULL;
    a->o = *o;
    a->out = out;
    a->arg = arg;
    a->debug.max = DEBUG_IDS_MAX;
    a->sent.max = SENT_IDS_MAX;
    if (o->window_spans > 0) {
        a->buckets = calloc(64, sizeof(*a->buckets));
        if (!a->buckets) {
            free(a);
            return NULL;
        }
        a->mask = 63;
    }
    return a;
}

tw_status twb_assembler_add(twb_assembler *a, twb_span span, tw_error **err)
{
    if (!a || !span.data) {
        if (span.data)
            tw__span_data_unref(span.data);
        tw__set_error(err, TW_E_INVALID_ARG, "trace assembly: NULL assembler or span");
        return TW_E_INVALID_ARG;
    }
    if (a->o.window_spans == 0)
        return add_pass_through(a, span, err);
    return add_windowed(a, span, err);
}

tw_status twb_assembler_flush(twb_assembler *a, tw_error **err)
{
    if (!a) {
        tw__set_error(err, TW_E_INVALID_ARG, "trace assembly: NULL assembler");
        return TW_E_INVALID_ARG;
    }
    tw_status first = TW_OK;
    if (a->run_n > 0)
        first = send_run(a, err);
    while (a->oldest) {
        if (first != TW_OK) { /* an error stopped the run: release the rest unsent */
            trace_slot *s = a->oldest;
            slot_unlink(a, s);
            release(s->spans, s->n);
            slot_recycle(a, s);
            continue;
        }
        first = send_oldest(a, err);
    }
    return first;
}

void twb_assembler_stats(const twb_assembler *a, twb_assemble_stats *st)
{
    if (!st)
        return;
    if (!a) {
        memset(st, 0, sizeof(*st));
        return;
    }
    *st = a->st;
}

void twb_assembler_free(twb_assembler *a)
{
    if (!a)
        return;
    release(a->run, a->run_n);
    free(a->run);
    while (a->oldest) {
        trace_slot *s = a->oldest;
        slot_unlink(a, s);
        release(s->spans, s->n);
        s->n = 0;
        slot_free(s);
    }
    while (a->free_slots) {
        trace_slot *s = a->free_slots;
        a->free_slots = s->hnext;
        slot_free(s);
    }
    free(a->buckets);
    idset_free(&a->debug);
    idset_free(&a->sent);
    twb__group_scratch_free(&a->scratch);
    free(a);
}
