/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/propagation/prop_test.h: helpers shared by the propagation
 * suites (test_jaeger.c, test_b3.c, test_w3c.c, test_binary.c,
 * test_composite.c): contexts built from parts, extraction from a literal
 * list of pairs with the warnings collected, and checks of the error a
 * malformed header must give. Header-only so each suite stays one program.
 */
#ifndef TW_TESTS_PROP_TEST_H
#define TW_TESTS_PROP_TEST_H

#include <CUnit/CUnit.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "propagation/propagation.h"

/* Warnings an extract reported through its callback. */
typedef struct collected_warnings {
    size_t n;
    char all[8192]; /* every message, one per line (cut when full) */
} collected_warnings;

static inline void collect_warning(const char *message, void *user_data)
{
    collected_warnings *w = user_data;
    size_t used = strlen(w->all);
    w->n++;
    snprintf(w->all + used, sizeof w->all - used, "%s\n", message);
}

static inline bool warned(const collected_warnings *w, const char *needle)
{
    return strstr(w->all, needle) != NULL;
}

/* A context from its parts; baggage from "k", "v" pairs ending in NULL. */
static inline tw_span_context *make_context(uint64_t hi, uint64_t lo, uint64_t span,
                                            uint64_t parent, uint32_t flags, const char *key, ...)
{
    tw__baggage *bag = NULL;
    va_list ap;
    va_start(ap, key);
    for (const char *k = key; k; k = va_arg(ap, const char *)) {
        const char *v = va_arg(ap, const char *);
        bool is_empty;
        tw__baggage *next = tw__baggage_with(bag, k, v, &is_empty);
        tw__baggage_unref(bag);
        bag = next;
    }
    va_end(ap);
    tw__context_parts parts = {.trace_id_high = hi,
                               .trace_id_low = lo,
                               .span_id = span,
                               .parent_id = parent,
                               .flags = flags,
                               .baggage = bag};
    tw_span_context *c = tw__span_context_build(&parts);
    tw__baggage_unref(bag);
    return c;
}

/* Headers from "k", "v" pairs ending in NULL (appended, duplicates kept). */
static inline tw_headers *headers_of(const char *key, ...)
{
    tw_headers *h = tw_headers_new();
    va_list ap;
    va_start(ap, key);
    for (const char *k = key; k; k = va_arg(ap, const char *))
        tw_headers_add(h, k, va_arg(ap, const char *));
    va_end(ap);
    return h;
}

/* Extracts with a propagator of one codec. */
static inline tw_span_context *extract_with(tw_codec codec, tw_format format,
                                            const tw_headers *headers, collected_warnings *w,
                                            tw_error **err)
{
    tw_propagator *p = tw_propagator_new(&codec, 1, NULL);
    tw_carrier_reader reader = tw_headers_reader(headers);
    tw_span_context *c =
        tw_propagator_extract(p, format, &reader, w ? collect_warning : NULL, w, err);
    tw_propagator_free(p);
    return c;
}

/* Extracts from literal pairs with one codec; *err receives the error. */
static inline tw_span_context *extract_pairs(tw_codec codec, tw_format format,
                                             collected_warnings *w, tw_error **err, const char *key,
                                             ...)
{
    tw_headers *h = tw_headers_new();
    va_list ap;
    va_start(ap, key);
    for (const char *k = key; k; k = va_arg(ap, const char *))
        tw_headers_add(h, k, va_arg(ap, const char *));
    va_end(ap);
    tw_span_context *c = extract_with(codec, format, h, w, err);
    tw_headers_free(h);
    return c;
}

/* Injects with one codec into a new list. */
static inline tw_headers *inject_with(tw_codec codec, tw_format format, const tw_span_context *c,
                                      tw_status *status)
{
    tw_propagator *p = tw_propagator_new(&codec, 1, NULL);
    tw_headers *h = tw_headers_new();
    tw_carrier_writer writer = tw_headers_writer(h);
    tw_status st = tw_propagator_inject(p, c, format, &writer);
    if (status)
        *status = st;
    tw_propagator_free(p);
    return h;
}

/* The message of a malformed-header error must name the header and say why. */
#define ASSERT_MALFORMED(ctx, err, header, reason)                                                 \
    do {                                                                                           \
        CU_ASSERT_PTR_NULL(ctx);                                                                   \
        CU_ASSERT_EQUAL(tw_error_status(err), TW_E_MALFORMED);                                     \
        CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), header));                             \
        if (!strstr(tw_error_message(err), reason))                                                \
            fprintf(stderr, "\n  message \"%s\" lacks \"%s\"\n", tw_error_message(err), reason);   \
        CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), reason));                             \
        tw_span_context_unref(ctx);                                                                \
        tw_error_free(err);                                                                        \
        err = NULL;                                                                                \
    } while (0)

static inline bool ids_equal(const tw_span_context *c, uint64_t hi, uint64_t lo, uint64_t span,
                             uint64_t parent)
{
    return c && tw_span_context_trace_id_high(c) == hi && tw_span_context_trace_id_low(c) == lo &&
           tw_span_context_span_id(c) == span && tw_span_context_parent_id(c) == parent;
}

/* A value of @n copies of @c (freed by the caller). */
static inline char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

#endif /* TW_TESTS_PROP_TEST_H */
