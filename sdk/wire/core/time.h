/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/time.h: the units of timestamps and durations in span logs, and
 * their conversion to the model's microseconds since the epoch.
 *
 * Each format has its own unit (Zipkin and Jaeger: µs; OTLP: ns; the Dapper
 * log: µs, named in its keys), checked by magnitude where a span enters the
 * model (tw__wire_time_unit in wire/core/input.h); `--time-unit` forces the
 * unit of the JSON numbers that name none. TW__TIME_AUTO below, per value:
 * |v| < 10^11 is seconds, < 10^14 ms, < 10^17 µs, else ns.
 *
 * No state, no locks: any thread.
 */
#ifndef TW_WIRE_CORE_TIME_H
#define TW_WIRE_CORE_TIME_H

#include <stdbool.h>
#include <stdint.h>

typedef enum tw__time_unit {
    TW__TIME_AUTO = 0, /* by magnitude */
    TW__TIME_S,
    TW__TIME_MS,
    TW__TIME_US,
    TW__TIME_NS
} tw__time_unit;

/* Converts a timestamp in @unit to microseconds (TW__TIME_AUTO: by
 * magnitude). Fractions are rounded to the nearest microsecond. False on
 * overflow or a non-finite value. */
bool tw__time_to_us(double value, tw__time_unit unit, int64_t *us);
/* The same for an exact integer (no double rounding for ns values). */
bool tw__time_int_to_us(int64_t value, tw__time_unit unit, int64_t *us);
/* "s", "ms", "us" (or "µs"), "ns", "auto"; (tw__time_unit)-1 when none. */
tw__time_unit tw__time_unit_parse(const char *text);

#endif /* TW_WIRE_CORE_TIME_H */
