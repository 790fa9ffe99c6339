/* SPDX-License-Identifier: Apache-2.0 */
/*
 * clock.h: the two clocks of a span (internal, header-only so the hot path
 * inlines them). Wall time stamps the start (µs since the epoch, what every
 * wire format wants); the monotonic clock measures durations so that a wall
 * clock step cannot make a span negative. Both go through the vDSO.
 */
#ifndef TW_CLOCK_H
#define TW_CLOCK_H

#include <stdint.h>
#include <time.h>

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

#endif /* TW_CLOCK_H */
