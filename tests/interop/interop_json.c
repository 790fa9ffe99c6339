/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/interop/interop_json.c: see interop_json.h.
 */
#include "interop_json.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

void ij_string(FILE *f, const char *s, size_t len)
{
    /* Jansson writes the string (this test checks our escaper against an independent one);
     * the other helpers here write only literal keys and hex digits. */
    json_t *str = json_stringn_nocheck(s, len);
    if (!str || json_dumpf(str, f, JSON_ENCODE_ANY) != 0) {
        fprintf(stderr, "interop_json: cannot write a JSON string of %zu bytes\n", len);
        abort();
    }
    json_decref(str);
}

void ij_hex(FILE *f, const uint8_t *b, size_t len)
{
    fputc('"', f);
    for (size_t i = 0; i < len; i++)
        fprintf(f, "%02x", b[i]);
    fputc('"', f);
}

void ij_id(FILE *f, const char *key, uint64_t id)
{
    fprintf(f, "\"%s\": \"%016" PRIx64 "\"", key, id);
}

void ij_tag(FILE *f, const char *key, size_t key_len, const tw_value *value)
{
    /* jaeger.thrift TagType names, indexed by tw_value_type (same order). */
    static const char *const type_names[] = {"STRING", "DOUBLE", "BOOL", "LONG", "BINARY"};
    fputs("{\"key\": ", f);
    ij_string(f, key, key_len);
    fprintf(f, ", \"vType\": \"%s\", ", type_names[value->type]);
    switch (value->type) {
    case TW_VALUE_STRING:
        fputs("\"vStr\": ", f);
        ij_string(f, value->as.str, value->len);
        break;
    case TW_VALUE_DOUBLE: {
        /* The bits, not a decimal rendering: exact for NaN, -0.0 and
         * denormals, whatever either side's printf or float parser does. */
        uint64_t bits;
        memcpy(&bits, &value->as.dbl, sizeof(bits));
        fprintf(f, "\"vDouble\": \"%016" PRIx64 "\"", bits);
        break;
    }
    case TW_VALUE_BOOL:
        fprintf(f, "\"vBool\": %s", value->as.boolean ? "true" : "false");
        break;
    case TW_VALUE_INT64:
        fprintf(f, "\"vLong\": %" PRId64, value->as.i64);
        break;
    case TW_VALUE_BINARY:
        fputs("\"vBinary\": ", f);
        ij_hex(f, value->as.bin, value->len);
        break;
    }
    fputc('}', f);
}
