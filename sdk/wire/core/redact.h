/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/redact.h: the project's one rule for text that may quote input
 * or a URL, used by the library's log (log.c, error.c) and by every message
 * and log line of the `tracewire` command (bridge/main.c, bridge/agent/log.c,
 * bridge/sinks/send.c):
 *   - control bytes (C0 and DEL) are written as \xNN, so that input (a file
 *     name, a header value, a span's service name) cannot forge lines or
 *     drive a terminal;
 *   - in a URL ("scheme://..."), the user:password before an '@', every
 *     query value ("?token=...&key=..."; a query component without '=',
 *     "?SECRET", is all value), every path parameter's value
 *     (";jsessionid=...", or ";SECRET" whole) and the fragment ("#...") are
 *     written as ***, so that no credential a URL carries is ever printed.
 *     Query values go whole: a backend may take its key under any name
 *     (api_key, sig, dd-api-key). The one exception is the key the library
 *     itself adds, the remote sampler's ?service=NAME.
 * In free text (tw__redact_text: a message that quotes a URL), a URL ends
 * at a space, a quote, '<', '>' or a control byte; a secret in it only at
 * a space, a quote, '<' or '>' (a control byte inside one is masked with
 * it); a query value, path parameter or fragment also at ": " (the
 * separator after a URL given as a label, kept).
 * A string known to be one URL (tw__redact_url: a label, a destination
 * file, an endpoint a user gave) goes by the whole-URL rules instead: no
 * character ends it early. The user-info runs to the LAST '@', whatever it
 * holds (a space, a quote, '/', '#'); when a '?', '#' or ';' comes before
 * that '@', it may sit in a query value, a fragment or a path parameter,
 * and all after "scheme://" is ***. Query values run to '&', '#' or the
 * end; the fragment is *** whole.
 *
 * No state, no locks: any thread.
 */
#ifndef TW_WIRE_CORE_REDACT_H
#define TW_WIRE_CORE_REDACT_H

#include <stdbool.h>
#include <stddef.h>

/* Copies @in to @out (@size bytes, NUL-terminated, cut when full) under the
 * rules above. Returns the length written. */
size_t tw__redact_text(const char *in, char *out, size_t size);

/* @url, known to be one URL, with its credentials, query and parameter
 * values and fragment as *** (the whole-URL rules above; a text without a
 * "scheme://" is taken as a URL without a scheme, so anything before its
 * last '@' is masked), control bytes as \xNN, cut to @size. */
void tw__redact_url(const char *url, char *out, size_t size);

/* What messages show instead of a value that is not a URL (show_url.c). */
#define TW__URL_NOT_SHOWN "(not a valid URL; the value is not shown: it may hold a secret)"

/* True when libcurl's parser takes @s as a URL (any scheme; show_url.c). */
bool tw__url_parses(const char *s);

/* @url, given by a user as one URL, as messages and rows show it: under the
 * whole-URL rules (tw__redact_url) when it parses, else TW__URL_NOT_SHOWN
 * (a value that is not a URL cannot be told apart into host and
 * credentials, so no part of it is shown). Cut to @size (show_url.c). */
void tw__show_url(const char *url, char *out, size_t size);

#endif /* TW_WIRE_CORE_REDACT_H */
