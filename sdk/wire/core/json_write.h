/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/json_write.h: the JSON writing primitives of the direct
 * encoders (Zipkin v2, OTLP/JSON, Jaeger JSON, the Dapper log): the
 * project's one JSON string escaper, integers, doubles, ids, and the one
 * typed-tag writer ({"key","type","value"}: the Jaeger JSON and Dapper log
 * form). They append to a tw__buf; no JSON tree is built.
 *
 * Why not Jansson here: building and dumping a Jansson tree per span cost
 * the JSON transports 60-120k instructions per span (callgrind,
 * tests/bench/bench_encode.c), a Jansson value and a hash table per member.
 * These writers emit the bytes Jansson's compact dump would (the escaper
 * restates its rules; the differential suites in tests/unit/wire/ parse
 * every direct encoder's output back with Jansson and compare it with the
 * reference Jansson encoders on large random corpora).
 *
 * Every writer returns false on allocation failure (the buffer may then
 * hold part of the value: callers restore its length). No state, no locks.
 */
#ifndef TW_WIRE_CORE_JSON_WRITE_H
#define TW_WIRE_CORE_JSON_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wire/core/buf.h"
#include "wire/model/span_data.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define TW__JSON_SWAR 1
/* Eight bytes @x (loaded little-endian): a mask whose lowest set bit is in
 * the first byte that JSON strings cannot hold as it is ('"', '\\', below
 * 0x20, above 0x7f), 0 when there is none. The usual SWAR tests; their
 * false positives only sit above a true one, so the lowest bit is exact. */
static inline uint64_t tw__json_special_mask(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    uint64_t quote = x ^ (ones * '"');
    uint64_t backslash = x ^ (ones * '\\');
    return (((quote - ones) & ~quote) | ((backslash - ones) & ~backslash) | (x - ones * 0x20) | x) &
           highs;
}
#endif

/* The number of leading bytes of @p (at most @n) that JSON strings hold as
 * they are: printable ASCII other than '"' and '\\'. */
static inline size_t tw__json_plain_run(const unsigned char *p, size_t n)
{
    size_t i = 0;
#ifdef TW__JSON_SWAR
    for (; n - i >= 8; i += 8) {
        uint64_t x;
        memcpy(&x, p + i, 8);
        uint64_t m = tw__json_special_mask(x);
        if (m)
            return i + ((size_t)__builtin_ctzll(m) >> 3);
    }
#endif
    while (i < n && p[i] >= 0x20 && p[i] < 0x80 && p[i] != '"' && p[i] != '\\')
        i++;
    return i;
}

/* Appends @len bytes of @text as a JSON string (quotes included), as
 * Jansson's compact dump writes a string: invalid UTF-8 bytes become
 * U+FFFD; '"', '\\' and the controls \b \f \n \r \t get their short escapes,
 * other bytes below 0x20 \u00XX with upper-case hex; '/' and non-ASCII are
 * written as they are. @text may hold NUL bytes (written \u0000). */
bool tw__json_append_text(tw__buf *out, const char *text, size_t len);

/* A JSON integer, as Jansson dumps one ("%lld"). */
bool tw__json_put_int(tw__buf *out, int64_t v);
bool tw__json_put_uint(tw__buf *out, uint64_t v);
/* The same inside quotes: "123" (proto3 JSON's 64-bit integers). */
bool tw__json_put_quoted_int(tw__buf *out, int64_t v);
bool tw__json_put_quoted_uint(tw__buf *out, uint64_t v);

/* The shortest decimal text that strtod() reads back as exactly @value
 * ("0.25", "3.141592653589793", "1e+21", "-0"); "NaN", "Infinity" and
 * "-Infinity" (the spellings of Java, JavaScript and proto3 JSON) for the
 * non-finite values. @size must be at least 32. Returns the length. */
size_t tw__double_text(double value, char *out, size_t size);
/* A double as a JSON value: a finite one as a number that reads back as a
 * real (tw__double_text, with ".0" added when it would read as an integer:
 * "1.0", "-0.0"); NaN and the infinities as the strings "NaN", "Infinity",
 * "-Infinity" (JSON has no such numbers). */
bool tw__json_put_double(tw__buf *out, double value);

/* A 64-bit id as a 16-digit hex string, quotes included. */
bool tw__json_put_hex64(tw__buf *out, uint64_t id);
/* A trace id as a hex string: 16 digits when @high is 0, else 32. */
bool tw__json_put_trace_id(tw__buf *out, uint64_t high, uint64_t low);
/* A trace id as 32 hex digits always (OTLP), quotes included. */
bool tw__json_put_hex128(tw__buf *out, uint64_t high, uint64_t low);

/* Integers beyond +-(2^53 - 1) do not survive JSON readers that hold
 * numbers as doubles (JavaScript, jq): typed writers put them in strings. */
#define TW__JSON_MAX_SAFE_INTEGER INT64_C(9007199254740991)

/* A typed value as Jaeger JSON and the Dapper log write it: string as a
 * string, bool, int64 as a number (a decimal string beyond
 * +-(2^53-1)), float64 by tw__json_put_double, binary as padded base64. */
bool tw__json_put_typed_value(tw__buf *out, const tw__tag *tag);
/* The type name of that form: "string", "bool", "int64", "float64",
 * "binary". */
const char *tw__json_type_name(tw_value_type type);
/* {"key":K,"type":T,"value":V}: the one typed-tag writer. */
bool tw__json_put_typed_tag(tw__buf *out, const tw__tag *tag);

#endif /* TW_WIRE_CORE_JSON_WRITE_H */
