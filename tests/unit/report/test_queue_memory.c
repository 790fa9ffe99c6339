/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/report/test_queue_memory.c: the queue's byte bound, measured
 * on the process's own memory (/proc/self/status), not on the library's
 * word: with a queue of 2^20 spans, 2^20 sampled spans finished as fast as
 * one thread can may raise the peak RSS (VmHWM) by at most the byte bound
 * plus 16 MiB over the RSS before the burst; after a flush (the burst is
 * over: the reporter thread trims the heap) and again after the tracer is
 * freed, VmRSS is back within 16 MiB of it. Every span is accounted for:
 * reported = sent + queue_full + too_large + failed, and the byte-bound
 * drops are a part of queue_full.
 *
 * Nothing here depends on timing: the bounds hold whatever the reporter
 * thread manages to send meanwhile (a fast reporter drops nothing, a slow
 * one drops at the bound).
 *
 * Under AddressSanitizer or ThreadSanitizer the RSS is theirs (shadow
 * memory, quarantine of freed blocks), so there the program runs a smaller
 * burst and checks the accounting only, and says so. It is not in the
 * valgrind list: 2^20 spans under memcheck take minutes, and memcheck's own
 * heap makes the RSS meaningless; the byte bound's logic is checked under
 * valgrind by the UDP reporter suite.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracewire/tracewire.h"
#include "udp_sink.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif

#define MIB ((long)1 << 20)
#define QUEUE_SPANS ((size_t)1 << 20)
#define SLACK_KB (16 * 1024L)

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* A "VmXXX:  N kB" line of /proc/self/status; -1 when absent. */
static long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kb = -1;
    size_t n = strlen(field);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, field, n) == 0 && line[n] == ':') {
            kb = strtol(line + n + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kb;
}

/* Resets VmHWM to the current RSS (Linux 4.0+); false when refused, in
 * which case VmHWM still bounds the burst's peak from above. */
static bool reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f)
        return false;
    bool ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok;
}

static tw_tracer *make_tracer(unsigned int port, size_t max_bytes)
{
    tw_reporter_options *ro = tw_reporter_options_new();
    if (!ro || tw_reporter_options_set_agent(ro, "127.0.0.1", port) != TW_OK ||
        tw_reporter_options_set_max_queue_size(ro, QUEUE_SPANS) != TW_OK ||
        tw_reporter_options_set_max_queue_bytes(ro, max_bytes) != TW_OK) {
        fprintf(stderr, "cannot make the reporter options\n");
        exit(1);
    }
    tw_tracer_options *o = tw_tracer_options_new();
    tw_tracer_options_set_service(o, "queue-memory");
    tw_tracer_options_set_sampler(o, tw_sampler_const_new(true));
    tw_error *err = NULL;
    tw_reporter *r = tw_reporter_jaeger_udp_new(ro, &err);
    tw_reporter_options_free(ro);
    if (!r) {
        fprintf(stderr, "reporter: %s\n", tw_error_message(err));
        exit(1);
    }
    tw_tracer_options_set_reporter(o, r);
    tw_tracer *t = tw_tracer_new(o, &err);
    tw_tracer_options_free(o);
    if (!t) {
        fprintf(stderr, "tracer: %s\n", tw_error_message(err));
        exit(1);
    }
    return t;
}

/* The unit of work of the benchmarks (start + 2 tags + finish), with a
 * longer name and a third tag: a span of 768 bytes of heap (its strings fit in the record). */
static void spans(tw_tracer *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tw_span *s = tw_span_start(t, "queue-memory-burst-operation", NULL);
        tw_span_set_tag_str(s, "component", "test_queue_memory");
        tw_span_set_tag_str(s, "http.url", "http://localhost:8080/some/fairly/long/path/here");
        tw_span_set_tag_int64(s, "i", (int64_t)i);
        tw_span_finish(s);
    }
}

int main(void)
{
#ifdef UNDER_SANITIZER
    const size_t burst = QUEUE_SPANS / 16;
    const bool check_rss = false;
    printf("under a sanitizer: %zu spans, accounting only (its shadow memory and quarantine "
           "are not the library's RSS)\n",
           burst);
#else
    const size_t burst = QUEUE_SPANS;
    const bool check_rss = true;
#endif
    const size_t max_bytes = (size_t)8 << 20; /* the documented default, set explicitly */
    udp_sink sink;
    /* A socket nobody reads: the kernel drops what its buffer cannot hold,
     * the reporter counts every datagram as sent. Only memory is measured. */
    if (!udp_sink_open(&sink, "127.0.0.1")) {
        fprintf(stderr, "cannot open a UDP socket on loopback\n");
        return 1;
    }
    tw_tracer *t = make_tracer(sink.port, max_bytes);
    tw_reporter *r = tw_tracer_reporter(t);

    /* Warm up: the record pool, the sender's buffers, the stdio buffers. */
    spans(t, 20000);
    CHECK(tw_tracer_flush(t, 60000) == TW_OK, "warm-up flush");
    long before_kb = status_kb("VmRSS");
    bool is_peak_reset = reset_peak();
    if (!is_peak_reset && check_rss)
        printf("note: /proc/self/clear_refs refused; VmHWM includes the warm-up's peak\n");

    spans(t, burst);
    long peak_kb = status_kb("VmHWM");
    CHECK(tw_tracer_flush(t, 60000) == TW_OK, "flush after the burst");
    long after_flush_kb = status_kb("VmRSS");

    uint64_t reported = tw_reporter_counter(r, TW_COUNTER_SPANS_REPORTED);
    uint64_t sent = tw_reporter_counter(r, TW_COUNTER_SPANS_SENT);
    uint64_t full = tw_reporter_counter(r, TW_COUNTER_DROPPED_QUEUE_FULL);
    uint64_t by_bytes = tw_reporter_counter(r, TW_COUNTER_DROPPED_QUEUE_BYTES);
    uint64_t large = tw_reporter_counter(r, TW_COUNTER_DROPPED_TOO_LARGE);
    uint64_t failed = tw_reporter_counter(r, TW_COUNTER_FAILED_TO_EMIT);
    uint64_t queued_bytes = tw_reporter_counter(r, TW_COUNTER_QUEUE_BYTES);
    printf("burst of %zu spans: sent %" PRIu64 ", dropped %" PRIu64 " (%" PRIu64
           " at the byte bound), too large %" PRIu64 ", failed %" PRIu64 "\n",
           burst, sent, full, by_bytes, large, failed);
    CHECK(reported == 20000 + burst, "reported %" PRIu64, reported);
    CHECK(reported == sent + full + large + failed, "accounting: %" PRIu64 " != %" PRIu64, reported,
          sent + full + large + failed);
    CHECK(by_bytes <= full, "byte-bound drops %" PRIu64 " > queue_full %" PRIu64, by_bytes, full);
    CHECK(full == by_bytes, "%" PRIu64 " drops at the span bound, which 2^20 spans cannot reach",
          full - by_bytes);
    CHECK(queued_bytes == 0, "%" PRIu64 " bytes still counted as queued after the flush",
          queued_bytes);
    CHECK(large == 0 && failed == 0, "too large %" PRIu64 ", failed %" PRIu64, large, failed);

    tw_tracer_free(t);
    long after_close_kb = status_kb("VmRSS");
    udp_sink_close(&sink);

    long bound_kb = (long)(max_bytes / 1024) + SLACK_KB;
    printf("RSS before the burst %ld KiB; peak +%ld KiB (bound +%ld KiB%s); after the flush "
           "%+ld KiB, after close %+ld KiB (bound +%ld KiB)\n",
           before_kb, peak_kb - before_kb, bound_kb,
           is_peak_reset ? "" : ", peak includes the warm-up", after_flush_kb - before_kb,
           after_close_kb - before_kb, SLACK_KB);
    if (check_rss) {
        CHECK(before_kb > 0 && peak_kb > 0, "no VmRSS/VmHWM in /proc/self/status");
        CHECK(peak_kb - before_kb <= bound_kb,
              "the burst raised the peak RSS by %ld KiB, more than the byte bound + 16 MiB "
              "(%ld KiB)",
              peak_kb - before_kb, bound_kb);
        CHECK(after_flush_kb - before_kb <= SLACK_KB,
              "after the burst RSS stays %ld KiB above what it was (more than 16 MiB)",
              after_flush_kb - before_kb);
        CHECK(after_close_kb - before_kb <= SLACK_KB,
              "after close RSS stays %ld KiB above what it was before the burst (more than "
              "16 MiB)",
              after_close_kb - before_kb);
    }
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
