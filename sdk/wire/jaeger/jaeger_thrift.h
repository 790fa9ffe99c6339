/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/jaeger/jaeger_thrift.h: the project's one Jaeger Thrift encoder (internal).
 *
 * Encodes the span model (wire/model/span_data.h) into jaeger.thrift structs
 * through Apache Thrift c_glib's protocol layer (compact or binary protocol
 * over a ThriftMemoryBuffer), writing fields through the protocol API rather
 * than building generated GObject structs per span (the generated code of
 * thrift/jaeger.thrift and thrift/agent.thrift is still built, and the tests
 * decode our output with it).
 *
 * Spans are encoded one at a time into caller buffers so that the UDP
 * batcher can measure each span and predict the exact size of the whole
 * emitBatch datagram before it assembles it (a struct inside a list encodes
 * the same wherever it sits, in both protocols).
 *
 * Locking: an encoder is used by one thread at a time (the reporter thread).
 *
 * Wire layout (jaeger-idl thrift/jaeger.thrift and agent.thrift,
 * our copies in thrift/). Fields are written in id order; "opt" fields are written only
 * when non-empty, as Jaeger's own clients do:
 *
 *   Span      1 i64 traceIdLow   2 i64 traceIdHigh   3 i64 spanId
 *             4 i64 parentSpanId 5 string operationName
 *             6 list<SpanRef> references (opt)       7 i32 flags
 *             8 i64 startTime (us) 9 i64 duration (us)
 *             10 list<Tag> tags (opt)                11 list<Log> logs (opt)
 *   Tag       1 string key  2 i32 vType, then exactly one of
 *             3 string vStr | 4 double vDouble | 5 bool vBool |
 *             6 i64 vLong | 7 binary vBinary        (vType 0..4 in that order)
 *   Log       1 i64 timestamp (us)   2 list<Tag> fields (always written)
 *   SpanRef   1 i32 refType (0 CHILD_OF, 1 FOLLOWS_FROM)
 *             2 i64 traceIdLow  3 i64 traceIdHigh  4 i64 spanId
 *   Process   1 string serviceName   2 list<Tag> tags (opt)
 *   Batch     1 Process process  2 list<Span> spans
 *             3 i64 seqNo (opt)  4 ClientStats stats (opt)
 *   ClientStats 1 i64 fullQueueDroppedSpans 2 i64 tooLargeDroppedSpans
 *               3 i64 failedToEmitSpans
 *
 *   emitBatch message = message header (name "emitBatch", type ONEWAY = 4,
 *   seq id), then the args struct { 1 Batch batch }, i.e. its field header,
 *   the Batch, the Batch's stop byte and the args' stop byte.
 *
 * Identifiers are unsigned in the model and are written as the signed i64
 * with the same bits (a cast, as every Jaeger client does).
 */
#ifndef TW_WIRE_JAEGER_THRIFT_H
#define TW_WIRE_JAEGER_THRIFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/core/buf.h"
#include "wire/core/thrift.h" /* tw__thrift_protocol */
#include "wire/model/span_data.h"

/* Jaeger ClientStats (cumulative since the reporter started). */
typedef struct tw__client_stats {
    int64_t full_queue_dropped_spans;
    int64_t too_large_dropped_spans;
    int64_t failed_to_emit_spans;
} tw__client_stats;

typedef struct tw__jaeger_encoder tw__jaeger_encoder;

/* Returns NULL for an unknown protocol or when the encoder cannot be
 * allocated. (GLib aborts on out-of-memory while creating the Thrift objects;
 * an encoder is created once per sender, not per span.) */
tw__jaeger_encoder *tw__jaeger_encoder_new(tw__thrift_protocol protocol);
/* NULL is a no-op. */
void tw__jaeger_encoder_free(tw__jaeger_encoder *enc);

/* Appends one jaeger.thrift Span struct (as a list element) to @out.
 * Returns false (out unchanged, encoder still usable) on failure: a NULL
 * argument, a tag of unknown type, a string or list longer than Thrift's
 * i32 lengths, or allocation failure in @out. */
bool tw__jaeger_encode_span(tw__jaeger_encoder *enc, const tw__span_data *span, tw__buf *out);

/* Appends one jaeger.thrift Process struct to @out. Same failure rules. */
bool tw__jaeger_encode_process(tw__jaeger_encoder *enc, const tw__process *process, tw__buf *out);

/* The message seq id to send with the batch numbered @seq_no: seq_no modulo
 * 2^31 (so it is never negative), 0 when seq_no < 0. Compact encodes the seq
 * id as a varint, so its size depends on the value; tw__jaeger_emit_batch_size
 * assumes this seq id, and the UDP sender passes it. */
int32_t tw__jaeger_msg_seq_id(int64_t seq_no);

/* Exact byte size of the agent emitBatch message (compact: the whole UDP
 * datagram) holding a process of @process_len bytes and @n_spans spans whose
 * encodings total @spans_len bytes, with this seqNo and stats (seq_no < 0
 * omits seqNo, stats NULL omits stats) and msg_seq_id =
 * tw__jaeger_msg_seq_id(seq_no). Computed by encoding the envelope, so it
 * matches tw__jaeger_emit_batch_message byte for byte; the envelope is cached
 * per (seqNo, stats), so repeated calls while a batch fills cost a few
 * comparisons and the list header's length, computed. Returns 0 on failure (NULL encoder, n_spans
 * or a length beyond Thrift's i32 limits); a real message is never empty. */
size_t tw__jaeger_emit_batch_size(tw__jaeger_encoder *enc, size_t process_len, size_t n_spans,
                                  size_t spans_len, int64_t seq_no, const tw__client_stats *stats);

/* Writes the whole Agent.emitBatch oneway message (message header, args
 * struct whose field 1 is the Batch {process, spans, seqNo, stats}, stops)
 * into @out (reset first). @spans holds @n_spans concatenated span
 * encodings from tw__jaeger_encode_span (made with an encoder of the same
 * protocol) and @process one from tw__jaeger_encode_process; both are copied
 * as they are. seq_no < 0 omits seqNo, stats NULL omits stats. Pass
 * tw__jaeger_msg_seq_id(seq_no) as @msg_seq_id for the size to be what
 * tw__jaeger_emit_batch_size predicted. Returns false on failure (out
 * unchanged). */
bool tw__jaeger_emit_batch_message(tw__jaeger_encoder *enc, const uint8_t *process,
                                   size_t process_len, const uint8_t *spans, size_t spans_len,
                                   size_t n_spans, int64_t seq_no, const tw__client_stats *stats,
                                   int32_t msg_seq_id, tw__buf *out);

/* The same message without copying the process and the spans, for a
 * gathering send (sendmsg): the message is data[0, head_len), the process,
 * the next mid_len bytes of data, the spans, then the last tail_len bytes
 * of data. @data belongs to the encoder and is valid until its next call.
 * Same arguments and failures as tw__jaeger_emit_batch_message. */
typedef struct tw__jaeger_frame {
    const uint8_t *data;
    size_t head_len, mid_len, tail_len;
} tw__jaeger_frame;
bool tw__jaeger_emit_batch_frame(tw__jaeger_encoder *enc, size_t process_len, size_t n_spans,
                                 size_t spans_len, int64_t seq_no, const tw__client_stats *stats,
                                 int32_t msg_seq_id, tw__jaeger_frame *out);

/* Writes a bare Batch struct (no message envelope), as the collector's
 * HTTP endpoint takes it, into @out (reset first). seq_no < 0 omits seqNo,
 * stats NULL omits stats. Returns false on failure (out unchanged). */
bool tw__jaeger_batch_struct(tw__jaeger_encoder *enc, const uint8_t *process, size_t process_len,
                             const uint8_t *spans, size_t spans_len, size_t n_spans, int64_t seq_no,
                             const tw__client_stats *stats, tw__buf *out);
/* The same Batch struct (no seqNo, no stats) appended to @out as it is
 * written, without a copy through the encoder's scratch buffer: what a
 * document of many batches uses. False on failure (@out as it was). */
bool tw__jaeger_batch_append(tw__jaeger_encoder *enc, const uint8_t *process, size_t process_len,
                             const uint8_t *spans, size_t spans_len, size_t n_spans, tw__buf *out);

#endif /* TW_WIRE_JAEGER_THRIFT_H */
