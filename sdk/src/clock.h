/* SPDX-License-Identifier: Apache-2.0 */
/*
 * clock.h: the two clocks of a span (internal, inline so the hot path
 * inlines them). Wall time stamps the start (µs since the epoch, what every
 * wire format wants); the monotonic clock measures durations so that a wall
 * clock step cannot make a span negative. Both go through the vDSO.
 *
 * A span's start needs both: tw__start_times reads the monotonic clock and
 * derives the wall time from it with a per-thread anchor (the difference
 * of the two clocks), read again whenever it is a millisecond old. Both
 * clocks run at the same rate (NTP's frequency corrections apply to both),
 * so between readings the difference changes only when the wall clock is
 * stepped, and a step shows in start times within a millisecond. The
 * anchor lives in span.c.
 */
#ifndef TW_CLOCK_H
#define TW_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "wire/core/tls.h"

static inline int64_t tw__now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline int64_t tw__mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The calling thread's anchor: wall minus monotonic nanoseconds, as read
 * at mono_at_ns (TW__ANCHOR_NEVER before the first reading). */
typedef struct tw__wall_anchor {
    int64_t mono_at_ns;
    int64_t wall_minus_mono_ns;
} tw__wall_anchor;

#define TW__ANCHOR_NEVER (-(INT64_C(1) << 62))
#define TW__ANCHOR_REFRESH_NS INT64_C(1000000)

extern TW__TLS tw__wall_anchor tw__anchor;

/* Reads the wall clock into the anchor at @mono_ns; returns its µs. */
int64_t tw__anchor_refresh(int64_t mono_ns);

/* A span's start: the monotonic time into *@mono_ns, the wall time (µs
 * since the epoch) returned; one clock read, most of the time. */
static inline int64_t tw__start_times(int64_t *mono_ns)
{
    int64_t mono = tw__mono_ns();
    *mono_ns = mono;
    const tw__wall_anchor *a = &tw__anchor;
    if (__builtin_expect(mono - a->mono_at_ns >= TW__ANCHOR_REFRESH_NS, 0))
        return tw__anchor_refresh(mono);
    return (mono + a->wall_minus_mono_ns) / 1000;
}

#endif /* TW_CLOCK_H */
