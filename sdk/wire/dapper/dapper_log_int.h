/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/dapper/dapper_log_int.h: what the Dapper log's two decoders share (internal
 * to wire/): the general decoder on a Jansson tree (dapper_log.c), which
 * gives every error message, and the fast one on wire/core/json_scan.h tokens
 * (dapper_log_fast.c), which decodes the lines it can prove it reads the
 * same way and declines every other line, and the direct one
 * (dapper_log_direct.c), which reads the encoder's own line shape in place
 * and declines the rest. tw__dapper_log_decode() tries the direct one, then
 * the fast one, then Jansson. The value rules live here once so both apply the same.
 *
 * Locking: none (pure functions; the tables are constant).
 */
#ifndef TW_WIRE_DAPPER_LOG_INT_H
#define TW_WIRE_DAPPER_LOG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/model/span_data.h"
#include "wire/model/conventions.h" /* tw__span_kind */

/* "", "client", "server", "producer", "consumer", indexed by tw__span_kind;
 * the begin and end RPC annotations of each (cs/cr, sr/ss, ms/ws, wr/mr).
 * dapper_log.c. */
extern const char *const tw__dapper_kind_names[5];
extern const char *const tw__dapper_kind_begin[5];
extern const char *const tw__dapper_kind_end[5];

/* 1..max_digits hex digits of either case, left-padded. */
bool tw__dapper_parse_hex_id(const char *s, size_t len, size_t max_digits, uint64_t *high,
                             uint64_t *low);
/* The kind member's value: exactly one of the four lower-case names. */
tw__span_kind tw__dapper_kind_from_name(const char *s);
/* The kind an RPC annotation value (cs cr sr ss ms ws wr mr) belongs to. */
tw__span_kind tw__dapper_kind_of_annotation(const char *s);
/* For the fast decoders (they decline where the Jansson path explains):
 * the kind the member named (@member, TW__KIND_NONE when absent) and the
 * one the RPC annotations imply must agree with each other and with a
 * span.kind tag; a kind known only from them becomes a span.kind tag.
 * False when they disagree or memory runs out. */
bool tw__dapper_settle_kind(tw__span_data *span, tw__span_kind member,
                            tw__span_kind from_annotations);
/* Its two steps, for a decoder that finds the span.kind tag its own way
 * (dapper_log_direct.c): the kind @member and @from_annotations agree on
 * (TW__KIND_NONE: neither names one), false when they disagree; and the
 * span.kind tag of a kind (not TW__KIND_NONE) added, false on no memory. */
static inline bool tw__dapper_merge_kind(tw__span_kind member, tw__span_kind from_annotations,
                                         tw__span_kind *kind)
{
    if (from_annotations != TW__KIND_NONE && member != TW__KIND_NONE && member != from_annotations)
        return false;
    *kind = from_annotations != TW__KIND_NONE ? from_annotations : member;
    return true;
}
bool tw__dapper_add_kind_tag(tw__span_data *span, tw__span_kind kind);
/* An int64 tag written as a decimal string (C string @s of @len bytes). */
bool tw__dapper_int64_text(const char *s, size_t len, int64_t *out);
/* A float64 tag written as "NaN", "Infinity" or "-Infinity" (C string). */
bool tw__dapper_float64_text(const char *s, double *out);

/* The general decoder: tw__dapper_log_decode's contract, on a line already
 * stripped of its "\n" / "\r\n" and checked for NUL bytes. */
tw_status tw__dapper_log_decode_jansson(const char *line, size_t len, size_t line_no,
                                        tw__span_data **span_out, tw__process *process_out,
                                        tw_error **err);

/* The fast decoder on such a line: true with *span_out and *process_out
 * set exactly as tw__dapper_log_decode_jansson would set them; false
 * ("decline": the line is invalid, or valid in a way this decoder leaves
 * to Jansson) with nothing set and nothing leaked. */
bool tw__dapper_log_decode_fast(const char *line, size_t len, tw__span_data **span_out,
                                tw__process *process_out);

/* The direct decoder (dapper_log_direct.c), tried before the fast one: the
 * same contract, for lines in the shape the SDK's encoder writes; it
 * declines every other line, which then goes to the fast decoder. It may
 * be given a line with NUL bytes (tw__dapper_log_decode checks for them
 * only after it): it declines those. */
bool tw__dapper_log_decode_direct(const char *line, size_t len, tw__span_data **span_out,
                                  tw__process *process_out);

/* The direct decoder's process memo (dapper_log_direct.c): the reader's.
 * Bounded (a fixed number of entries of bounded size); one thread at a time.
 * NULL on allocation failure; freeing NULL is a no-op. */
typedef struct tw__dapper_memo tw__dapper_memo;
tw__dapper_memo *tw__dapper_memo_new(void);
void tw__dapper_memo_free(tw__dapper_memo *m);

/* The direct decoder with a memo: the same contract for the span, but the
 * process is the memo's: *process_out is valid and unchanged until the next
 * call with @memo or tw__dapper_memo_free. *stamp_out is that process's
 * stamp: non-zero when the memo keeps it, a number that names its content
 * for good (no other process content, of this memo or any other, is ever
 * handed out with it); 0 when it names nothing. */
bool tw__dapper_log_decode_direct_memo(const char *line, size_t len, tw__dapper_memo *memo,
                                       tw__span_data **span_out, const tw__process **process_out,
                                       uint64_t *stamp_out);

#endif /* TW_WIRE_DAPPER_LOG_INT_H */
