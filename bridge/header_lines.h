/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/header_lines.h: HTTP header blocks as text (`Name: value` lines),
 * read into and written from the SDK's tw_headers carrier.
 *
 * Ownership: the returned list belongs to the caller (tw_headers_free).
 * Thread safety: one thread at a time per FILE.
 */
#ifndef TW_BRIDGE_HEADER_LINES_H
#define TW_BRIDGE_HEADER_LINES_H

#include <stdio.h>

#include "tracewire/propagation.h"

/* The most input tw__header_lines_read accepts, in bytes (line ends included). */
#define TW__HEADER_LINES_MAX_BYTES (1024u * 1024u)

/*
 * tw__header_lines_read: reads `Name: value` lines from @in until an empty
 * line or EOF.
 * - LF or CRLF line ends; a last line without one counts.
 * - An HTTP start line ("GET / HTTP/1.1", "HTTP/1.1 200 OK") as the first
 *   line is skipped, so `curl -sD -` output can be piped in.
 * - The name must be an RFC 9110 token with no space before the colon;
 *   spaces and tabs around the value are dropped. A line that starts with
 *   a space or tab continues the previous value (obsolete line folding,
 *   RFC 9112 5.2), joined with one space.
 * - Duplicate names are kept, in order (the codecs decide which wins).
 * Returns: (transfer full) (nullable) the headers, possibly empty; NULL with
 * @err set (TW_E_MALFORMED naming the line and the fault, TW_E_LIMIT past
 * TW__HEADER_LINES_MAX_BYTES, TW_E_IO, TW_E_NOMEM).
 */
tw_headers *tw__header_lines_read(FILE *in, tw_error **err);

/*
 * tw__header_lines_write: writes every pair of @headers as "key: value\n".
 * Returns: TW_OK, or TW_E_IO when the stream reports an error.
 */
tw_status tw__header_lines_write(const tw_headers *headers, FILE *out);

#endif /* TW_BRIDGE_HEADER_LINES_H */
