/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/model/test_span_data.c: suite "model/span_data": the arena
 * (inline block, growth, alignment), tag storage (the one store's cases, the
 * small block a seventh tag takes) and truncation, references
 * and reference counting of records, and the record pool: a released
 * record is kept for reuse and, under AddressSanitizer or memcheck,
 * poisoned until then (all but its pool link), and a thread that exits
 * gives back what it kept.
 */
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "wire/model/span_data.h"

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifdef TEST_ASAN
#include <sanitizer/asan_interface.h>
#endif
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define TEST_VALGRIND 1
#endif
#endif

static void test_arena_grows_past_inline_block_and_aligns(void)
{
    tw__span_data *s = tw__span_data_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    void *ptrs[200];
    for (int i = 0; i < 200; i++) {
        ptrs[i] = tw__arena_alloc(&s->arena, (size_t)(i % 37) + 1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ptrs[i]);
        CU_ASSERT_EQUAL((uintptr_t)ptrs[i] % _Alignof(max_align_t), 0);
        memset(ptrs[i], 0xab, (size_t)(i % 37) + 1);
    }
    void *big = tw__arena_alloc(&s->arena, 100000);
    CU_ASSERT_PTR_NOT_NULL(big);
    memset(big, 1, 100000);
    tw__span_data_unref(s);
}

static void test_refcount_frees_at_zero(void)
{
    tw__span_data *s = tw__span_data_new();
    tw__span_data_ref(s);
    tw__span_data_unref(s);
    CU_ASSERT_EQUAL(atomic_load(&s->refcount), 1);
    tw__span_data_unref(s);
    tw__span_data_unref(NULL);
}

static void test_tags_store_every_type_and_grow(void)
{
    tw__span_data *s = tw__span_data_new();
    char key[16];
    for (int i = 0; i < 100; i++) {
        tw__tag *t = tw__span_data_push_tag(s);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        snprintf(key, sizeof key, "k%d", i);
        tw_value v = {.type = TW_VALUE_INT64, .as.i64 = i};
        bool cut = false;
        CU_ASSERT(tw__tag_set(&s->arena, t, key, &v, SIZE_MAX, &cut));
        s->n_tags++;
    }
    CU_ASSERT_EQUAL(s->tags[99].v.i64, 99);
    CU_ASSERT_STRING_EQUAL(s->tags[42].key, "k42");
    const tw__tag *found = tw__span_data_find_tag(s, "k7");
    CU_ASSERT(found && found->v.i64 == 7);
    CU_ASSERT_PTR_NULL(tw__span_data_find_tag(s, "absent"));
    tw__span_data_unref(s);
}

static void test_truncation_marks_and_respects_utf8(void)
{
    tw__span_data *s = tw__span_data_new();
    tw__tag t;
    bool cut = false;
    tw_value euro = {.type = TW_VALUE_STRING, .as.str = "ab\xe2\x82\xac", .len = 5};
    CU_ASSERT(tw__tag_set(&s->arena, &t, "k", &euro, 4, &cut));
    CU_ASSERT(cut);
    CU_ASSERT_EQUAL(t.len, 2); /* never half a character */
    CU_ASSERT_STRING_EQUAL(t.v.str, "ab");
    cut = false;
    static const uint8_t bytes[5] = {1, 2, 3, 4, 5};
    tw_value bin = {.type = TW_VALUE_BINARY, .as.bin = bytes, .len = 5};
    CU_ASSERT(tw__tag_set(&s->arena, &t, "b", &bin, 3, &cut));
    CU_ASSERT(cut && t.len == 3 && t.v.bin[2] == 3);
    cut = false;
    tw_value exact = {.type = TW_VALUE_STRING, .as.str = "abcd", .len = 4};
    CU_ASSERT(tw__tag_set(&s->arena, &t, "e", &exact, 4, &cut));
    CU_ASSERT_FALSE(cut);
    tw_value bad = {.type = (tw_value_type)99};
    CU_ASSERT_FALSE(tw__tag_set(&s->arena, &t, "x", &bad, 4, &cut));
    tw__span_data_unref(s);
}

static void test_references_and_logs_accumulate(void)
{
    tw__span_data *s = tw__span_data_new();
    for (uint64_t i = 1; i <= 10; i++)
        CU_ASSERT(tw__span_data_add_ref(s, i % 2 ? TW__REF_CHILD_OF : TW__REF_FOLLOWS_FROM, 0, i,
                                        i * 10));
    CU_ASSERT_EQUAL(s->n_refs, 10);
    CU_ASSERT_EQUAL(s->refs[9].span_id, 100);
    CU_ASSERT_EQUAL(s->refs[1].type, TW__REF_FOLLOWS_FROM);
    for (int i = 0; i < 20; i++) {
        tw__log *l = tw__span_data_push_log(s, 2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(l);
        l->timestamp_us = i;
        s->n_logs++;
    }
    CU_ASSERT_EQUAL(s->logs[19].timestamp_us, 19);
    tw__span_data_unref(s);
}

static void test_process_tags(void)
{
    tw__process p;
    tw__process_init(&p);
    CU_ASSERT(tw__process_set_service(&p, "svc"));
    tw_value v = {.type = TW_VALUE_BOOL, .as.boolean = true};
    CU_ASSERT(tw__process_add_tag(&p, "flag", &v));
    CU_ASSERT_STRING_EQUAL(p.service_name, "svc");
    CU_ASSERT_PTR_NOT_NULL(tw__process_find_tag(&p, "flag"));
    CU_ASSERT_PTR_NULL(tw__process_find_tag(&p, "none"));
    tw__process_clear(&p);
}

/* The pool is on in sanitizer builds; what it keeps is off limits to the
 * tools until it is handed out again (the check is the tool's own: under
 * neither, only the reuse is checked). */
static void test_released_record_is_off_limits_until_reused(void)
{
    tw__span_data *s = tw__span_data_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    tw__span_data_unref(s); /* kept: this thread's list has room */
#ifdef TEST_ASAN
    CU_ASSERT(__asan_address_is_poisoned(&s->operation));
    CU_ASSERT(__asan_address_is_poisoned(&s->inline_tags[5]));
    CU_ASSERT(!__asan_address_is_poisoned(&s->next_free));
#endif
#ifdef TEST_VALGRIND
    if (RUNNING_ON_VALGRIND) {
        unsigned char vbits[sizeof s->operation];
        /* 3: not addressable (memcheck's client request says so without
         * reporting an error) */
        CU_ASSERT_EQUAL(VALGRIND_GET_VBITS(&s->operation, vbits, sizeof vbits), 3);
    }
#endif
    tw__span_data *again = tw__span_data_new(); /* the same record, usable again */
    CU_ASSERT_PTR_EQUAL(again, s);
#ifdef TEST_ASAN
    CU_ASSERT(!__asan_address_is_poisoned(&again->operation));
#endif
    CU_ASSERT(tw__span_data_set_operation(again, "reused", 6));
    CU_ASSERT_STRING_EQUAL(again->operation, "reused");
    tw__span_data_unref(again);
    tw__span_data_pool_trim();
}

/* ---- records kept by threads that exit ------------------------------------------------- */

#define N_RECORDS 100

static tw__span_data *records[N_RECORDS];

/* Makes N_RECORDS records and releases them all, then exits: its list goes
 * to the shared one. */
static void *make_and_release(void *arg)
{
    (void)arg;
    for (size_t i = 0; i < N_RECORDS; i++)
        records[i] = tw__span_data_new();
    for (size_t i = 0; i < N_RECORDS; i++)
        tw__span_data_unref(records[i]);
    return NULL;
}

/* Starts one span and exits without releasing anything: it took a batch
 * of records from the shared list and keeps all but one. */
static void *take_one(void *arg)
{
    *(tw__span_data **)arg = tw__span_data_new();
    return NULL;
}

static bool is_one_of_the_records(const tw__span_data *s)
{
    for (size_t i = 0; i < N_RECORDS; i++)
        if (records[i] == s)
            return true;
    return false;
}

/* A thread that only starts spans (another thread finishes them) gives
 * back the rest of the batch it took when it exits: every record is found
 * again, none is lost with the thread. */
static void test_exiting_thread_gives_its_records_back(void)
{
    tw__span_data_pool_trim();
    pthread_t t;
    CU_ASSERT_FATAL(pthread_create(&t, NULL, make_and_release, NULL) == 0);
    pthread_join(t, NULL);
    tw__span_data *taken = NULL;
    CU_ASSERT_FATAL(pthread_create(&t, NULL, take_one, &taken) == 0);
    pthread_join(t, NULL);
    CU_ASSERT_FATAL(is_one_of_the_records(taken));
    tw__span_data_unref(taken); /* finished on this thread */
    size_t found = 0;
    tw__span_data *again[N_RECORDS];
    for (size_t i = 0; i < N_RECORDS; i++) {
        again[i] = tw__span_data_new();
        found += is_one_of_the_records(again[i]);
    }
    CU_ASSERT_EQUAL(found, N_RECORDS);
    for (size_t i = 0; i < N_RECORDS; i++)
        tw__span_data_unref(again[i]);
    tw__span_data_pool_trim();
}

/* What the reporter queue's byte bound counts: the record with its inline
 * arena, plus every arena block a large span chains, each with malloc's
 * overhead. */
static void test_footprint_counts_the_record_and_its_blocks(void)
{
    tw__span_data *s = tw__span_data_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    size_t empty = tw__span_data_footprint(s);
    CU_ASSERT(empty >= sizeof(tw__span_data) + TW__SPAN_INLINE_ARENA);
    CU_ASSERT(tw__span_data_add_str_tag(s, "k", "short", 5));
    CU_ASSERT_EQUAL(tw__span_data_footprint(s), empty); /* in the record */
    static char big[8192];
    memset(big, 'x', sizeof big);
    CU_ASSERT(tw__span_data_add_str_tag(s, "big", big, sizeof big));
    size_t grown = tw__span_data_footprint(s);
    CU_ASSERT(grown >= empty + sizeof big);
    CU_ASSERT(grown <= empty + 3 * sizeof big); /* blocks double: not much more */
    tw__span_data_unref(s);
}

/* tw__tag_store, the one store behind every setter: each type's bytes,
 * a NULL string as empty, and the tag untouched when it refuses. */
static void test_tag_store_cases(void)
{
    tw__span_data *s = tw__span_data_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    tw__tag t;
    memset(&t, 0x5a, sizeof t);
    tw_value b = {.type = TW_VALUE_BOOL, .as.i64 = -1}; /* only the bool byte is the value */
    b.as.boolean = true;
    CU_ASSERT_FATAL(tw__tag_store(&s->arena, &t, "flagged!", 7, &b));
    CU_ASSERT_STRING_EQUAL(t.key, "flagged");
    CU_ASSERT_EQUAL(t.key_len, 7);
    CU_ASSERT_EQUAL(t.type, TW_VALUE_BOOL);
    CU_ASSERT_EQUAL(t.v.i64, (int64_t)(bool)true); /* the bool's other bytes zero */
    CU_ASSERT_EQUAL(t.len, 0);
    tw_value d = {.type = TW_VALUE_DOUBLE, .as.dbl = -0.0};
    CU_ASSERT_FATAL(tw__tag_store(&s->arena, &t, "d", 1, &d));
    CU_ASSERT(t.v.dbl == 0.0 && signbit(t.v.dbl));
    tw_value none = {.type = TW_VALUE_STRING, .len = 99, .as.str = NULL};
    CU_ASSERT_FATAL(tw__tag_store(&s->arena, &t, "", 0, &none));
    CU_ASSERT_STRING_EQUAL(t.key, "");
    CU_ASSERT_STRING_EQUAL(t.v.str, "");
    CU_ASSERT_EQUAL(t.len, 0);
    static const uint8_t bytes[40] = {1, 0, 2};
    tw_value bin = {.type = TW_VALUE_BINARY, .len = sizeof bytes, .as.bin = bytes};
    CU_ASSERT_FATAL(tw__tag_store(&s->arena, &t, "b", 1, &bin));
    CU_ASSERT_EQUAL(t.len, sizeof bytes);
    CU_ASSERT_EQUAL(memcmp(t.v.bin, bytes, sizeof bytes), 0);
    CU_ASSERT_EQUAL(t.v.bin[sizeof bytes], 0); /* a NUL after it, as after a string */
    tw__tag before = t;
    tw_value bad = {.type = (tw_value_type)7};
    CU_ASSERT_FALSE(tw__tag_store(&s->arena, &t, "x", 1, &bad));
    CU_ASSERT_EQUAL(memcmp(&before, &t, sizeof t), 0);
#if SIZE_MAX > UINT32_MAX
    /* A key of 4 GiB is refused before a byte of it is read. */
    tw_value str = {.type = TW_VALUE_STRING, .len = 1, .as.str = "v"};
    CU_ASSERT_FALSE(tw__tag_store(&s->arena, &t, "k", (size_t)UINT32_MAX + 1, &str));
    CU_ASSERT_FALSE(tw__tag_store(&s->arena, &t, "k", (size_t)UINT32_MAX + 1, &d));
    CU_ASSERT_EQUAL(memcmp(&before, &t, sizeof t), 0);
#endif
    tw__span_data_unref(s);
}

/* A span whose record block is full when its seventh tag comes takes one
 * heap block of twice the record's block for the grown array and its
 * later strings, and the footprint counts exactly that block. */
static void test_seventh_tag_takes_a_small_block(void)
{
    tw__span_data *s = tw__span_data_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    size_t empty = tw__span_data_footprint(s);
    char value[41];
    memset(value, 'v', sizeof value);
    for (int i = 0; i < 6; i++) /* 6 * 48 bytes of the record's 352 */
        CU_ASSERT_FATAL(tw__span_data_add_str_tag(s, "key", value, 40));
    CU_ASSERT_PTR_NULL(s->arena.extra);
    for (int i = 0; i < 6; i++)
        CU_ASSERT_FATAL(tw__span_data_add_str_tag(s, "key", value, 40));
    CU_ASSERT_PTR_NOT_NULL_FATAL(s->arena.extra);
    CU_ASSERT_PTR_NULL(s->arena.extra->next);
    size_t first = TW__SPAN_INLINE_ARENA - sizeof(tw__arena_block);
    CU_ASSERT_EQUAL(s->arena.extra->size, 2 * first);
    CU_ASSERT_EQUAL(s->cap_tags, 12);
    CU_ASSERT_EQUAL(tw__span_data_footprint(s), empty + sizeof(tw__arena_block) + 2 * first + 16);
    for (size_t i = 0; i < s->n_tags; i++) {
        CU_ASSERT_STRING_EQUAL(s->tags[i].key, "key");
        CU_ASSERT_EQUAL(s->tags[i].len, 40);
    }
    /* The thirteenth doubles the array again, in a block of its own. */
    CU_ASSERT_FATAL(tw__span_data_add_str_tag(s, "key", value, 40));
    CU_ASSERT_EQUAL(s->cap_tags, 24);
    CU_ASSERT_EQUAL(s->n_tags, 13);
    CU_ASSERT_STRING_EQUAL(s->tags[0].key, "key");
    tw__span_data_unref(s);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("model/span_data", NULL, NULL);
    CU_add_test(suite, "arena_grows_past_inline_block_and_aligns",
                test_arena_grows_past_inline_block_and_aligns);
    CU_add_test(suite, "refcount_frees_at_zero", test_refcount_frees_at_zero);
    CU_add_test(suite, "tags_store_every_type_and_grow", test_tags_store_every_type_and_grow);
    CU_add_test(suite, "truncation_marks_and_respects_utf8",
                test_truncation_marks_and_respects_utf8);
    CU_add_test(suite, "references_and_logs_accumulate", test_references_and_logs_accumulate);
    CU_add_test(suite, "process_tags", test_process_tags);
    CU_add_test(suite, "footprint_counts_the_record_and_its_blocks",
                test_footprint_counts_the_record_and_its_blocks);
    CU_add_test(suite, "tag_store_cases", test_tag_store_cases);
    CU_add_test(suite, "seventh_tag_takes_a_small_block", test_seventh_tag_takes_a_small_block);
    CU_add_test(suite, "released_record_is_off_limits_until_reused",
                test_released_record_is_off_limits_until_reused);
    CU_add_test(suite, "exiting_thread_gives_its_records_back",
                test_exiting_thread_gives_its_records_back);
}
