/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/time.c: timestamps and durations of span logs in any unit, to
 * the model's microseconds (wire/core/time.h). No state, no locks.
 */
#include "wire/core/time.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- units ------------------------------------------------------------------------------------
 */

static tw__time_unit unit_by_magnitude(double v)
{
    double a = fabs(v);
    if (a < 1e11)
        return TW__TIME_S; /* seconds until the year 5138 */
    if (a < 1e14)
        return TW__TIME_MS; /* ms: 1973 .. 5138 */
    if (a < 1e17)
        return TW__TIME_US; /* µs: 1973 .. 5138 */
    return TW__TIME_NS;
}

bool tw__time_to_us(double value, tw__time_unit unit, int64_t *us)
{
    if (!isfinite(value))
        return false;
    if (unit == TW__TIME_AUTO)
        unit = unit_by_magnitude(value);
    double scaled;
    switch (unit) {
    case TW__TIME_S:
        scaled = value * 1e6;
        break;
    case TW__TIME_MS:
        scaled = value * 1e3;
        break;
    case TW__TIME_NS:
        scaled = value / 1e3;
        break;
    default:
        scaled = value;
        break;
    }
    scaled = nearbyint(scaled);
    /* 2^63 as a double: the first value that does not fit. */
    if (!(scaled > -9223372036854775808.0 && scaled < 9223372036854775808.0))
        return false;
    *us = (int64_t)scaled;
    return true;
}

bool tw__time_int_to_us(int64_t value, tw__time_unit unit, int64_t *us)
{
    if (unit == TW__TIME_AUTO)
        unit = unit_by_magnitude((double)value);
    switch (unit) {
    case TW__TIME_S:
        if (value > INT64_MAX / 1000000 || value < INT64_MIN / 1000000)
            return false;
        *us = value * 1000000;
        return true;
    case TW__TIME_MS:
        if (value > INT64_MAX / 1000 || value < INT64_MIN / 1000)
            return false;
        *us = value * 1000;
        return true;
    case TW__TIME_NS: {
        /* Round half away from zero to the nearest microsecond. */
        int64_t q = value / 1000, r = value % 1000;
        if (r >= 500)
            q++;
        else if (r <= -500)
            q--;
        *us = q;
        return true;
    }
    default:
        *us = value;
        return true;
    }
}

tw__time_unit tw__time_unit_parse(const char *text)
{
    static const struct {
        const char *name;
        tw__time_unit unit;
    } names[] = {{"auto", TW__TIME_AUTO}, {"s", TW__TIME_S},   {"ms", TW__TIME_MS},
                 {"us", TW__TIME_US},     {"ns", TW__TIME_NS}, {"µs", TW__TIME_US}};
    for (size_t i = 0; text && i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(text, names[i].name) == 0)
            return names[i].unit;
    }
    return (tw__time_unit)-1;
}
