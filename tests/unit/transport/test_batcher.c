/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/transport/test_batcher.c: suite "transport/batcher", the one
 * batcher keyed by process (sdk/transport/batcher.h) that the SDK's HTTP
 * sender, `convert --send` and the agent share.
 *
 * A counting framing stands for the real ones: an item is a malloc'd
 * weight (the tw__batcher_add arg), a body is 10 bytes of envelope plus the
 * items plus one byte between each two (as a JSON list). The contract:
 * spans are grouped by key in arrival order; a batch is cut before its
 * body would pass the limit, by age on tick, by the least recently used
 * key when too many are open and by the largest when the open bodies pass
 * the pending budget; a span too large for any body is refused; discard
 * and free emit nothing; every item and state is freed exactly once.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "harness.h"
#include "transport/batcher.h"

#define MAX_EMITS 64

typedef struct fake {
    int opens, closes, live_items;
    bool refuse_open;
    /* what was emitted: key, span ids and the body size of each batch */
    const void *keys[MAX_EMITS];
    size_t counts[MAX_EMITS];
    size_t bodies[MAX_EMITS];
    uint64_t first_ids[MAX_EMITS];
    void *first_cookies[MAX_EMITS];
    size_t n_emits;
} fake;

static void *f_open(void *ctx, const void *key)
{
    fake *f = ctx;
    (void)key;
    if (f->refuse_open)
        return NULL;
    f->opens++;
    return malloc(1);
}

static void f_close(void *ctx, void *state)
{
    ((fake *)ctx)->closes++;
    free(state);
}

static void *f_encode(void *ctx, void *state, const tw__span_data *span, const void *arg,
                      size_t *size)
{
    (void)state;
    (void)span;
    size_t weight = *(const size_t *)arg;
    if (weight == 0)
        return NULL; /* the encoder refuses it */
    size_t *item = malloc(sizeof *item);
    if (!item)
        return NULL;
    *item = weight;
    *size = weight;
    ((fake *)ctx)->live_items++;
    return item;
}

static void f_free_item(void *ctx, void *item)
{
    ((fake *)ctx)->live_items--;
    free(item);
}

static size_t f_body_size(void *ctx, const void *state, size_t n, size_t items_size)
{
    (void)ctx;
    (void)state;
    return 10 + items_size + (n ? n - 1 : 0);
}

static const tw__batch_ops fake_ops = {f_open, f_close, f_encode, f_free_item, f_body_size};

static void on_emit(void *arg, tw__batch *b)
{
    fake *f = arg;
    CU_ASSERT_FATAL(f->n_emits < MAX_EMITS);
    size_t items = 0;
    for (size_t i = 0; i < b->n; i++)
        items += *(const size_t *)b->items[i];
    CU_ASSERT_EQUAL(items, b->items_size);
    CU_ASSERT_EQUAL(b->body_bytes, f_body_size(NULL, NULL, b->n, b->items_size));
    f->keys[f->n_emits] = b->key;
    f->counts[f->n_emits] = b->n;
    f->bodies[f->n_emits] = b->body_bytes;
    f->first_ids[f->n_emits] = b->n ? b->meta[0].span_id : 0;
    f->first_cookies[f->n_emits] = b->n ? b->meta[0].cookie : NULL;
    f->n_emits++;
}

static tw__batcher *make(fake *f, size_t max_body, size_t max_open, unsigned int flush_ms,
                         size_t max_pending)
{
    memset(f, 0, sizeof *f);
    tw__batcher_limits l = {max_body, max_open, flush_ms, max_pending};
    tw__batcher *b = tw__batcher_new(&fake_ops, f, &l, on_emit, f);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    return b;
}

/* Adds a span of @weight bytes with @span_id under @key. */
static tw__batch_result add(tw__batcher *b, const void *key, size_t weight, uint64_t span_id,
                            int64_t now_ns)
{
    tw__span_data span;
    memset(&span, 0, sizeof span);
    span.span_id = span_id;
    return tw__batcher_add(b, key, &span, &weight, (void *)(uintptr_t)(span_id + 1000), now_ns);
}

static void finish(tw__batcher *b, fake *f)
{
    tw__batcher_free(b);
    CU_ASSERT_EQUAL(f->live_items, 0);
    CU_ASSERT_EQUAL(f->opens, f->closes);
}

static const int key_a = 1, key_b = 2, key_c = 3;

static void test_spans_are_grouped_by_key_in_arrival_order(void)
{
    fake f;
    tw__batcher *b = make(&f, 1000, 8, 0, 0);
    CU_ASSERT_EQUAL(add(b, &key_a, 5, 1, 0), TW__BATCH_OK);
    CU_ASSERT_EQUAL(add(b, &key_b, 5, 2, 0), TW__BATCH_OK);
    CU_ASSERT_EQUAL(add(b, &key_a, 5, 3, 0), TW__BATCH_OK);
    CU_ASSERT_EQUAL(add(b, NULL, 5, 4, 0), TW__BATCH_OK); /* NULL is a key too */
    CU_ASSERT_EQUAL(tw__batcher_spans(b), 4);
    CU_ASSERT_EQUAL(tw__batcher_pending_bytes(b), (10 + 5 + 5 + 1) + (10 + 5) + (10 + 5));
    CU_ASSERT_EQUAL(f.n_emits, 0);
    tw__batcher_flush(b);
    CU_ASSERT_EQUAL_FATAL(f.n_emits, 3);
    size_t total = 0;
    for (size_t i = 0; i < f.n_emits; i++) {
        total += f.counts[i];
        if (f.keys[i] == &key_a) {
            CU_ASSERT_EQUAL(f.counts[i], 2);
            CU_ASSERT_EQUAL(f.first_ids[i], 1);
            CU_ASSERT_PTR_EQUAL(f.first_cookies[i], (void *)(uintptr_t)1001);
        }
    }
    CU_ASSERT_EQUAL(total, 4);
    CU_ASSERT_EQUAL(tw__batcher_spans(b), 0);
    CU_ASSERT_EQUAL(tw__batcher_pending_bytes(b), 0);
    finish(b, &f);
}

static void test_a_batch_is_cut_before_its_body_passes_the_limit(void)
{
    fake f;
    tw__batcher *b = make(&f, 100, 8, 0, 0);
    /* 10 + 20k + (k - 1) <= 100 holds for k = 4 (93), not for 5. */
    for (uint64_t i = 0; i < 9; i++)
        CU_ASSERT_EQUAL(add(b, &key_a, 20, i, 0), TW__BATCH_OK);
    CU_ASSERT_EQUAL_FATAL(f.n_emits, 2);
    CU_ASSERT_EQUAL(f.counts[0], 4);
    CU_ASSERT_EQUAL(f.bodies[0], 93);
    CU_ASSERT_EQUAL(f.first_ids[1], 4);
    tw__batcher_flush(b);
    CU_ASSERT_EQUAL_FATAL(f.n_emits, 3);
    CU_ASSERT_EQUAL(f.counts[2], 1);
    for (size_t i = 0; i < f.n_emits; i++)
        CU_ASSERT(f.bodies[i] <= 100);
    finish(b, &f);
}

static void test_a_span_too_large_for_any_body_is_refused(void)
{
    fake f;
    tw__batcher *b = make(&f, 100, 8, 0, 0);
    CU_ASSERT_EQUAL(add(b, &key_a, 50, 1, 0), TW__BATCH_OK);
    CU_ASSERT_EQUAL(add(b, &key_a, 91, 2, 0), TW__BATCH_TOO_LARGE); /* 10 + 91 > 100 */
    CU_ASSERT_EQUAL(add(b, &key_a, 90, 3, 0), TW__BATCH_OK);        /* alone it fits */
    CU_ASSERT_EQUAL(f.n_emits, 1); /* the first went out to make room */
    CU_ASSERT_EQUAL(add(b, &key_a, 0, 4, 0), TW__BATCH_ENCODE);
    CU_ASSERT_EQUAL(tw__batcher_spans(b), 1);
    /* the first span of a key (an empty batch) too */
    CU_ASSERT_EQUAL(add(b, &key_b, 91, 5, 0), TW__BATCH_TOO_LARGE);
    CU_ASSERT_EQUAL(tw__batcher_spans(b), 1);
    finish(b, &f);
}

static void test_tick_emits_only_batches_older_than_flush_ms(void)
{
    fake f;
    const int64_t ms = 1000000;
    tw__batcher *b = make(&f, 1000, 8, 100, 0);
    CU_ASSERT_EQUAL(tw__batcher_deadline(b), INT64_MAX);
    CU_ASSERT_EQUAL(add(b, &key_a, 5, 1, 0), TW__BATCH_OK);
    CU_ASSERT_EQUAL(add(b, &key_b, 5, 2, 60 * ms), TW__BATCH_OK);
    CU_ASSERT_EQUAL(add(b, &key_a, 5, 3, 70 * ms), TW__BATCH_OK); /* the age is the first span's */
    CU_ASSERT_EQUAL(tw__batcher_deadline(b), 100 * ms);
    tw__batcher_tick(b, 99 * ms);
    CU_ASSERT_EQUAL(f.n_emits, 0);
    tw__batcher_tick(b, 100 * ms);
    CU_ASSERT_EQUAL_FATAL(f.n_emits, 1);
    CU_ASSERT_PTR_EQUAL(f.keys[0], &key_a);
    CU_ASSERT_EQUAL(f.counts[0], 2);
    CU_ASSERT_EQUAL(tw__batcher_deadline(b), 160 * ms);
    finish(b, &f);
}

static void test_no_flush_ms_never_emits_by_time(void)
{
    fake f;
    tw__batcher *b = make(&f, 1000, 8, 0, 0);
    CU_ASSERT_EQUAL(add(b, &key_a, 5, 1, 0), TW__BATCH_OK);
    tw__batcher_tick(b, INT64_MAX / 2);
    CU_ASSERT_EQUAL(f.n_emits, 0);
    CU_ASSERT_EQUAL(tw__batcher_deadline(b), INT64_MAX);
    finish(b, &f);
}

static void test_a_new_key_past_max_open_emits_the_least_recently_used(void)
{
    fake f;
    tw__batcher *b = make(&f, 1000, 2, 0, 0);
    CU_ASSERT_EQUAL(add(b, &key_a, 5, 1, 0), TW__BATCH_OK);
    CU_ASSERT_EQUAL(add(b, &key_b, 5, 2, 0), TW__BATCH_OK);
    CU_ASSERT_EQUAL(add(b, &key_a, 5, 3, 0), TW__BATCH_OK); /* b is now the least recent */
    CU_ASSERT_EQUAL(add(b, &key_c, 5, 4, 0), TW__BATCH_OK);
    CU_ASSERT_EQUAL_FATAL(f.n_emits, 1);
    CU_ASSERT_PTR_EQUAL(f.keys[0], &key_b);
    CU_ASSERT_EQUAL(tw__batcher_spans(b), 3);
    finish(b, &f);
}

static void test_open_bodies_past_the_budget_emit_the_largest(void)
{
    fake f;
    tw__batcher *b = make(&f, 100, 8, 0, 60);
    CU_ASSERT_EQUAL(add(b, &key_a, 20, 1, 0), TW__BATCH_OK); /* 30 */
    CU_ASSERT_EQUAL(add(b, &key_b, 5, 2, 0), TW__BATCH_OK);  /* 15: 45 in all */
    CU_ASSERT_EQUAL(f.n_emits, 0);
    CU_ASSERT_EQUAL(add(b, &key_a, 10, 3, 0), TW__BATCH_OK); /* a 41: 56 */
    CU_ASSERT_EQUAL(f.n_emits, 0);
    CU_ASSERT_EQUAL(add(b, &key_b, 10, 4, 0), TW__BATCH_OK); /* b 26: 67 > 60 */
    CU_ASSERT_EQUAL_FATAL(f.n_emits, 1);
    CU_ASSERT_PTR_EQUAL(f.keys[0], &key_a);
    CU_ASSERT_EQUAL(tw__batcher_pending_bytes(b), 26);
    finish(b, &f);
}

static void test_discard_and_free_emit_nothing_and_free_everything(void)
{
    fake f;
    tw__batcher *b = make(&f, 1000, 8, 0, 0);
    CU_ASSERT_EQUAL(add(b, &key_a, 5, 1, 0), TW__BATCH_OK);
    CU_ASSERT_EQUAL(add(b, &key_b, 5, 2, 0), TW__BATCH_OK);
    tw__batcher_discard(b);
    CU_ASSERT_EQUAL(f.n_emits, 0);
    CU_ASSERT_EQUAL(f.live_items, 0);
    CU_ASSERT_EQUAL(tw__batcher_spans(b), 0);
    CU_ASSERT_EQUAL(add(b, &key_a, 5, 3, 0), TW__BATCH_OK); /* still usable */
    finish(b, &f);
    CU_ASSERT_EQUAL(f.n_emits, 0);
    tw__batcher_free(NULL);
}

static void test_a_key_the_framing_cannot_open_is_refused(void)
{
    fake f;
    tw__batcher *b = make(&f, 1000, 8, 0, 0);
    f.refuse_open = true;
    CU_ASSERT_EQUAL(add(b, &key_a, 5, 1, 0), TW__BATCH_ENCODE);
    f.refuse_open = false;
    CU_ASSERT_EQUAL(add(b, &key_a, 5, 2, 0), TW__BATCH_OK);
    CU_ASSERT_EQUAL(tw__batcher_spans(b), 1);
    finish(b, &f);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("transport/batcher", NULL, NULL);
    if (!suite)
        return;
    CU_ADD_TEST(suite, test_spans_are_grouped_by_key_in_arrival_order);
    CU_ADD_TEST(suite, test_a_batch_is_cut_before_its_body_passes_the_limit);
    CU_ADD_TEST(suite, test_a_span_too_large_for_any_body_is_refused);
    CU_ADD_TEST(suite, test_tick_emits_only_batches_older_than_flush_ms);
    CU_ADD_TEST(suite, test_no_flush_ms_never_emits_by_time);
    CU_ADD_TEST(suite, test_a_new_key_past_max_open_emits_the_least_recently_used);
    CU_ADD_TEST(suite, test_open_bodies_past_the_budget_emit_the_largest);
    CU_ADD_TEST(suite, test_discard_and_free_emit_nothing_and_free_everything);
    CU_ADD_TEST(suite, test_a_key_the_framing_cannot_open_is_refused);
}
