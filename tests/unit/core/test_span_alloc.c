/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/core/test_span_alloc.c: suite "core/span_alloc": a span that
 * does not record costs no heap allocation once the thread's pool of span
 * handles is warm: the standard workload (start with a name, 2 tags,
 * finish), children, context reads, propagation into a caller's buffer,
 * scopes and the no-op calls of the API.
 *
 * How allocations are counted: this program counts every allocation its
 * own thread makes. In a plain build it replaces malloc, calloc and realloc
 * (glibc supports replacing them in the program, and its own functions such
 * as strdup then call the replacements), forwarding to glibc's allocator.
 * Under AddressSanitizer or ThreadSanitizer, whose allocators must see every
 * block, it installs the sanitizers' malloc hook instead. Either way the
 * library runs the code users get; only the counting differs. Each test
 * first checks that the counter sees a malloc, so it cannot pass blind.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tracewire/tracewire.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define COUNT_WITH_SANITIZER_HOOK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define COUNT_WITH_SANITIZER_HOOK 1
#endif
#endif

/* Allocations made by the calling thread (other threads, such as a
 * reporter's, do not disturb the count). Volatile: the compiler assumes
 * that malloc changes no variable of the program, which a hook does. */
static _Thread_local volatile unsigned long allocations;

#ifdef COUNT_WITH_SANITIZER_HOOK
/* The sanitizers' allocator interface (sanitizer/allocator_interface.h,
 * which GCC does not install). */
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                              void (*free_hook)(const volatile void *));

static void count_malloc(const volatile void *p, size_t n)
{
    (void)p;
    (void)n;
    allocations++;
}

static void count_free(const volatile void *p)
{
    (void)p;
}

static int suite_init(void)
{
    return __sanitizer_install_malloc_and_free_hooks(count_malloc, count_free) ? 0 : 1;
}
#else
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t m);
void *__libc_realloc(void *p, size_t n);

void *malloc(size_t n);
void *malloc(size_t n)
{
    allocations++;
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t m);
void *calloc(size_t n, size_t m)
{
    allocations++;
    return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n);
void *realloc(void *p, size_t n)
{
    allocations++;
    return __libc_realloc(p, n);
}

static int suite_init(void)
{
    return 0;
}
#endif

/* The counter is live: a malloc here is seen. */
static void assert_counter_works(void)
{
    unsigned long before = allocations;
    void *volatile p = malloc(64);
    CU_ASSERT(allocations > before);
    free(p);
}

static tw_tracer *unsampled_tracer(tw_sampler *sampler)
{
    tw_tracer_options *o = tw_tracer_options_new();
    tw_tracer_options_set_service(o, "unit-test");
    tw_tracer_options_set_sampler(o, sampler);
    tw_tracer_options_set_reporter(o, tw_reporter_null_new());
    tw_tracer *t = tw_tracer_new(o, NULL);
    tw_tracer_options_free(o);
    return t;
}

/* The benchmark's unit of work (tests/bench/bench_tracer.c). */
static void standard_span(tw_tracer *t, int64_t i)
{
    tw_span *s = tw_span_start(t, "bench-op", NULL);
    tw_span_set_tag_str(s, "component", "bench");
    tw_span_set_tag_int64(s, "i", i);
    tw_span_finish(s);
}

static void test_never_sampled_spans_allocate_nothing(void)
{
    assert_counter_works();
    tw_sampler *samplers[] = {tw_sampler_const_new(false), tw_sampler_probabilistic_new(0.0, NULL)};
    for (size_t k = 0; k < sizeof samplers / sizeof samplers[0]; k++) {
        tw_tracer *t = unsampled_tracer(samplers[k]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        standard_span(t, -1); /* fills the thread's pool */
        unsigned long before = allocations;
        for (int64_t i = 0; i < 10000; i++)
            standard_span(t, i);
        CU_ASSERT_EQUAL(allocations - before, 0);
        tw_tracer_free(t);
    }
}

/* A carrier that writes into the caller's buffer: what an nginx-like module
 * does with its own header storage. */
typedef struct {
    char buf[512];
    size_t used;
    size_t n_fields;
} fixed_carrier;

static tw_status fixed_set(void *user_data, const char *key, const char *value)
{
    fixed_carrier *c = user_data;
    size_t kl = strlen(key), vl = strlen(value);
    if (c->used + kl + vl + 2 > sizeof c->buf)
        return TW_E_LIMIT;
    memcpy(c->buf + c->used, key, kl);
    c->buf[c->used + kl] = '=';
    memcpy(c->buf + c->used + kl + 1, value, vl);
    c->used += kl + vl + 2;
    c->buf[c->used - 1] = '\n';
    c->n_fields++;
    return TW_OK;
}

/* Everything instrumentation does around an unsampled request. */
static void request_without_tracing(tw_tracer *t, fixed_carrier *out)
{
    tw_span *server = tw_span_start(t, "GET /items", NULL);
    tw_span_set_kind(server, TW_SPAN_KIND_SERVER);
    tw_span_set_tag_str(server, "http.method", "GET");
    tw_span_set_tag_bool(server, "error", false);
    tw_span_set_tag_double(server, "ratio", 0.5);
    tw_span_log_kv(server, "event", "cache miss", NULL);
    tw_span_log_event(server, "parsed");
    tw_scope *scope = tw_scope_activate(server, false);
    tw_span *db = tw_span_start(t, "SELECT", NULL); /* child through the scope */
    tw_span_set_operation_name(db, "SELECT items");
    tw_span_set_error(db, "timeout", "no answer");
    const tw_span_context *c = tw_span_get_context(db);
    tw_span *call = tw_span_start_child(t, "call", c);
    out->used = 0;
    out->n_fields = 0;
    tw_carrier_writer w = {fixed_set, out};
    CU_ASSERT_EQUAL(tw_tracer_inject(t, tw_span_get_context(call), TW_FORMAT_HTTP_HEADERS, &w),
                    TW_OK);
    CU_ASSERT_FALSE(tw_span_is_sampled(call));
    tw_span_finish(call);
    tw_span_finish(db);
    tw_scope_close(scope);
    tw_span_finish(server);
}

static void test_unsampled_requests_with_children_scopes_and_inject_allocate_nothing(void)
{
    assert_counter_works();
    tw_tracer *t = unsampled_tracer(tw_sampler_const_new(false));
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    fixed_carrier out;
    request_without_tracing(t, &out); /* fills the span and scope pools */
    unsigned long before = allocations;
    for (int i = 0; i < 1000; i++)
        request_without_tracing(t, &out);
    CU_ASSERT_EQUAL(allocations - before, 0);
    /* The injected context is a real one: uber-trace-id with its ids. */
    CU_ASSERT_EQUAL(out.n_fields, 1);
    CU_ASSERT(strncmp(out.buf, "uber-trace-id=", 14) == 0);
    tw_tracer_free(t);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("core/span_alloc", suite_init, NULL);
    CU_add_test(suite, "never_sampled_spans_allocate_nothing",
                test_never_sampled_spans_allocate_nothing);
    CU_add_test(suite, "unsampled_requests_with_children_scopes_and_inject_allocate_nothing",
                test_unsampled_requests_with_children_scopes_and_inject_allocate_nothing);
}
