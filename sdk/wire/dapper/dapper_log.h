/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/dapper/dapper_log.h: the project's one encoder and one decoder of the
 * Dapper-style local span log (internal). The SDK's file reporter
 * (report/file_sender.c) writes it; the bridge's dapper reader reads it back
 * into the same span model (wire/model/span_data.h), so both sides share this code.
 *
 * Format: JSON lines, one span per line, specified in docs/dapper-log-format.md
 * (format version 1). The record, in the order the encoder writes it:
 *
 *   key          JSON type        model field / rule
 *   v            integer          format version, 1
 *   trace_id     string           16 lowercase hex (trace_id_high 0) or 32
 *   span_id      string           16 lowercase hex, never all zeros
 *   parent_id    string (opt)     16 hex; absent for a root span
 *   name         string           operation
 *   kind         string (opt)     client|server|producer|consumer: the last span.kind tag
 *                                 (any case; other values give no kind)
 *   start_us     integer          start_us (us since the epoch)
 *   end_us       integer          start_us + duration_us
 *   flags        integer          Jaeger flags (1 sampled, 2 debug, 8 firehose)
 *   shared       bool (opt)       the record's `shared` (written only when true)
 *   duration_unknown bool (opt)   is_duration_unknown (written only when true)
 *   annotations  array (opt)      [{ts_us, value}] RPC annotations derived from
 *                                 kind and timing: cs/cr, sr/ss, ms/ws, wr/mr
 *   tags         array (opt)      [{key, type, value}] every tag, in order
 *   logs         array (opt)      [{ts_us, fields: [{key, type, value}]}]
 *   refs         array (opt)      [{type: child_of|follows_from, trace_id, span_id}]
 *   process      object           {service, host (opt), ip (opt), tags (opt)}
 *
 *   type         value
 *   string       JSON string (invalid UTF-8 becomes U+FFFD when written)
 *   bool         true / false
 *   int64        JSON integer when |v| <= 2^53-1, else a decimal string
 *   float64      JSON number, or "NaN", "Infinity", "-Infinity"
 *   binary       standard base64 with padding (RFC 4648 section 4)
 *
 * Locking: an encoder is used by one thread at a time (the reporter thread);
 * the decoder and the reader keep no shared state.
 */
#ifndef TW_WIRE_DAPPER_LOG_H
#define TW_WIRE_DAPPER_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "wire/model/span_data.h"
#include "wire/core/buf.h"

/* The format version this code writes and the highest it reads. */
#define TW__DAPPER_LOG_VERSION 1

typedef struct tw__dapper_log_encoder tw__dapper_log_encoder;

/* An encoder for spans of @process (copied: the process JSON is built once
 * here and appended to every line). NULL on allocation failure. */
tw__dapper_log_encoder *tw__dapper_log_encoder_new(const tw__process *process);
/* NULL is a no-op. */
void tw__dapper_log_encoder_free(tw__dapper_log_encoder *enc);

/* Appends one record, including its final "\n", to @out. The line contains
 * no other newline. Returns false (out unchanged, encoder still usable) on a
 * NULL argument, a start_us + duration_us that overflows, a negative
 * duration, or allocation failure. */
bool tw__dapper_log_encode_span(tw__dapper_log_encoder *enc, const tw__span_data *span,
                                tw__buf *out);

/* Decodes one record: @len bytes at @line (a final "\n" or "\r\n" is
 * allowed; NUL bytes are not). @line_no names the line in errors, which all
 * read "line N: reason" and have status TW_E_MALFORMED (TW_E_NOMEM when
 * memory runs out). On success *span_out holds a new record (refcount 1,
 * tw__span_data_unref it) and *process_out an initialised process
 * (tw__process_clear it); on failure neither is set and nothing leaks. */
tw_status tw__dapper_log_decode(const char *line, size_t len, size_t line_no,
                                tw__span_data **span_out, tw__process *process_out, tw_error **err);

/* ---- a line reader over a stream (the bridge's input, the tests' checker) ---------------- */

typedef struct tw__dapper_log_reader tw__dapper_log_reader;

/* Reads records from @stream (borrowed; the caller closes it). Lines longer
 * than @max_line_bytes (0: 16 MiB) are skipped and reported, so memory stays
 * bounded by that size. NULL on allocation failure. */
tw__dapper_log_reader *tw__dapper_log_reader_new(FILE *stream, size_t max_line_bytes);
void tw__dapper_log_reader_free(tw__dapper_log_reader *r);

/* The next record. Returns TW_OK (outputs set as for tw__dapper_log_decode),
 * TW_E_NOT_FOUND at end of stream (no error set), TW_E_MALFORMED for a bad
 * or oversized line (error set; call again for the next line), or TW_E_IO
 * for a read error (error set). Empty lines are skipped. */
tw_status tw__dapper_log_reader_next(tw__dapper_log_reader *r, tw__span_data **span_out,
                                     tw__process *process_out, tw_error **err);
/* As tw__dapper_log_reader_next, but the process is the reader's own: on
 * TW_OK *process_out is valid and unchanged until the next call or
 * tw__dapper_log_reader_free (nothing to clear), and *stamp_out is 0 or a
 * number that names that process's content for good: a later record handed
 * out with the same stamp has the same process at the same address, and no
 * other content (of any reader) ever gets that stamp. Lines that repeat a
 * process (each line of a log carries its whole process) then share one
 * decoded process instead of decoding it again (dapper_log_direct.c). */
tw_status tw__dapper_log_reader_next_shared(tw__dapper_log_reader *r, tw__span_data **span_out,
                                            const tw__process **process_out, uint64_t *stamp_out,
                                            tw_error **err);
/* Hands the bytes of each line longer than the reader holds to @spill, in
 * order, as they are read (tw__line_reader's spill), before the line is
 * reported oversized: how the bridge keeps such a line whole in its
 * rejects file. */
void tw__dapper_log_reader_set_spill(tw__dapper_log_reader *r,
                                     bool (*spill)(void *arg, const void *bytes, size_t len),
                                     void *arg);
/* The number of the line last returned (1-based). */
size_t tw__dapper_log_reader_line(const tw__dapper_log_reader *r);
/* The bytes of the line last returned (without its "\n"), valid until the
 * next call: what the bridge writes verbatim to its rejects file. For an
 * oversized line, the part that was kept (*len may be 0). */
const char *tw__dapper_log_reader_raw(const tw__dapper_log_reader *r, size_t *len);

#endif /* TW_WIRE_DAPPER_LOG_H */
