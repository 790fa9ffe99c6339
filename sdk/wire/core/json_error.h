/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/json_error.h: the text of a Jansson parse error for a message
 * to the user. Jansson's text, with its "near '...'" context, is kept,
 * except where it names one of Jansson's own flags (a \u0000 given to a
 * parser that does not take it: "... without JSON_ALLOW_NUL"), which is
 * said in the input's terms instead. Inline, so that the library and the
 * command use it without linking anything. No state, no locks.
 */
#ifndef TW_WIRE_JSON_ERROR_H
#define TW_WIRE_JSON_ERROR_H

#include <stdio.h>
#include <string.h>

#include <jansson.h>

/* The text for @e: @e's own, or one written to @buf (@size bytes). */
static inline const char *tw__json_error_text(const json_error_t *e, char *buf, size_t size)
{
    if (json_error_code(e) != json_error_null_character || size == 0)
        return e->text;
    const char *near = strstr(e->text, " near ");
    snprintf(buf, size, "a string holds \\u0000 (NUL), which is not allowed here%s",
             near ? near : "");
    return buf;
}

#endif /* TW_WIRE_JSON_ERROR_H */
