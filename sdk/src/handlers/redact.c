/* SPDX-License-Identifier: Apache-2.0 */
/*
 * handlers/redact.c: the redaction handler (tw_handler_redact_new): replaces
 * the substrings of string tag values and string log field values that match
 * a regular expression (GLib's GRegex, PCRE syntax) with a literal text.
 *
 * Where it sits: one handler of the finished-span chain (handlers.h), run on
 * the finishing thread; it writes through the public tw_mutable_span calls,
 * as a user's handler would.
 *
 * Locking: none. The GRegex is compiled once and then only read. GLib
 * documents a GRegex as safe to use from several threads because it is not
 * modified between creation and destruction; that holds only without
 * G_REGEX_OPTIMIZE: GLib 2.74's PCRE2 code JIT-compiles on the first match
 * and then writes the GRegex (jit_status, jit_options), a race between the
 * first finishing threads. So the pattern runs in PCRE2's interpreter; a
 * GMatchInfo (never shared) is made per search inside GLib.
 *
 * Cost (callgrind, bench_tracer ir sampled_handlers): about 2,100
 * instructions per string value searched, two thirds of it GLib allocating
 * and freeing the GMatchInfo and PCRE2 match data of each search. JIT with a
 * warm-up match in the constructor saved about 680 of them, but relies on
 * GLib internals to stay race-free; PCRE2 used directly with per-thread
 * match data would save most of the rest, at the price of one more direct
 * dependency.
 *
 * Failing closed: a value that is not valid UTF-8 (PCRE2's UTF mode would
 * refuse or misread it), and a value whose search fails (the backtracking
 * limit), are replaced whole: a secret must not pass because a search could
 * not run.
 */
#include "handlers/handlers.h"

#include <glib.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    tw_span_handler handler; /* first: the handler lives in its own user_data */
    GRegex *regex;
    char *replacement;
} redactor;

/* The redacted copy of @str (g_free it), or NULL when nothing matched. */
static char *redacted(const redactor *r, const char *str, size_t len)
{
    /* g_utf8_validate_len is false for a NUL byte too: binary-safe strings
     * with NULs cannot be searched as C strings. */
    if (!g_utf8_validate_len(str, len, NULL))
        return g_strdup(r->replacement);
    GError *error = NULL;
    if (!g_regex_match_full(r->regex, str, (gssize)len, 0, 0, NULL, &error)) {
        if (!error)
            return NULL;
        g_error_free(error);
        return g_strdup(r->replacement);
    }
    char *out = g_regex_replace_literal(r->regex, str, (gssize)len, 0, r->replacement, 0, &error);
    if (!out) {
        g_error_free(error);
        return g_strdup(r->replacement);
    }
    return out;
}

/* Replaces the value at @index (tag) or @index/@field (log field) with its
 * redacted copy, if anything matched. */
static void redact_value(const redactor *r, tw_mutable_span *span, const tw_value *v, size_t index,
                         size_t field, bool is_log)
{
    if (v->type != TW_VALUE_STRING)
        return;
    char *out = redacted(r, v->as.str, v->len);
    if (!out)
        return;
    tw_status st = is_log ? tw_mutable_span_set_log_field_str(span, index, field, out)
                          : tw_mutable_span_set_tag_str_at(span, index, out);
    g_free(out);
    if (st == TW_OK)
        return;
    /* Out of arena memory: empty the value in place (a static "" needs no
     * allocation) rather than let the secret through. */
    tw__tag *slot = is_log ? &span->data->logs[index].fields[field] : &span->data->tags[index];
    slot->v.str = "";
    slot->len = 0;
    tw__log_msg(TW_LOG_ERROR, "redact: span \"%s\": out of memory; value emptied",
                tw_mutable_span_operation(span));
}

static tw_handler_result redact_on_finish(void *user_data, tw_mutable_span *span)
{
    const redactor *r = user_data;
    tw_value v;
    for (size_t i = 0; tw_mutable_span_tag(span, i, NULL, &v); i++)
        redact_value(r, span, &v, i, 0, false);
    size_t n_logs = tw_mutable_span_log_count(span);
    for (size_t l = 0; l < n_logs; l++) {
        for (size_t f = 0; tw_mutable_span_log_field(span, l, f, NULL, &v); f++)
            redact_value(r, span, &v, l, f, true);
    }
    return TW_HANDLER_KEEP;
}

static void redact_destroy(void *user_data)
{
    redactor *r = user_data;
    g_regex_unref(r->regex);
    free(r->replacement);
    free(r);
}

tw_span_handler *tw_handler_redact_new(const char *value_regex, const char *replacement,
                                       tw_error **err)
{
    if (!value_regex || !replacement) {
        tw__set_error(err, TW_E_INVALID_ARG, "tw_handler_redact_new: %s is NULL",
                      value_regex ? "the replacement" : "the pattern");
        return NULL;
    }
    redactor *r = calloc(1, sizeof(*r));
    if (!r)
        goto fail_alloc;
    r->replacement = strdup(replacement);
    if (!r->replacement)
        goto fail_replacement;
    GError *error = NULL;
    r->regex = g_regex_new(value_regex, 0, 0, &error);
    if (!r->regex) {
        tw__set_error(err, TW_E_CONFIG, "redact: invalid regular expression \"%s\": %s",
                      value_regex, error->message);
        g_error_free(error);
        goto fail_regex;
    }
    r->handler = (tw_span_handler){.size = sizeof(tw_span_handler),
                                   .wants_unsampled = false,
                                   .on_finish = redact_on_finish,
                                   .destroy = redact_destroy,
                                   .user_data = r};
    return &r->handler;

fail_regex:
    free(r->replacement);
    free(r);
    return NULL;
fail_replacement:
    free(r);
fail_alloc:
    tw__set_error(err, TW_E_NOMEM, "redact: out of memory");
    return NULL;
}
