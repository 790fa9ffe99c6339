/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/model/test_span_data.c: suite "model/span_data": the arena
 * (inline block, growth, alignment), tag storage and truncation, references
 * and reference counting of records.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "wire/model/span_data.h"

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
}
