/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/convert.h: what the parts of `tracewire convert` share (internal).
 *
 * Flow:
 *
 *   reader (a decoder of the format registry, sdk/wire/formats.h) -- in->emit -->
 *   pipeline (convert_cmd.c: sanitize, limits, trace-hash sampling) --> assembler
 *   (assemble/: window, merge, dedup, skew, Jaeger shared-span ids) --> writer
 *   (sinks/writers.c: one generic writer per registry encoder) or sender
 *   (sinks/send.c: HTTP / UDP backends)
 *
 * A span travels as a twb_span: one record of the SDK's span model
 * (wire/model/span_data.h; ids, name, timing, typed tags, logs, refs, flags) and
 * the process that recorded it (service and process tags), interned in the
 * run's twb_procs table so that equal processes are one pointer.
 *
 * Model conventions every reader writes and every writer reads (the SDK's
 * encoders already read them; docs/bridge.md lists them for users):
 *   kind             tag `span.kind` = client|server|producer|consumer (string)
 *   shared           tw__span_data.shared (a Zipkin SERVER half sharing its
 *                    client's span id)
 *   local endpoint   process service name; process tags `ip` (IPv4 or IPv6
 *                    text), `ipv6` (text, when both exist), `port` (int64)
 *   remote endpoint  tags peer.service, peer.ipv4 (text), peer.ipv6 (text),
 *                    peer.port (int64)
 *   annotation       a log with exactly one field `event` = the value (string)
 *   Zipkin `lc`      tag `lc` (Zipkin's v2 convention; Jaeger targets rename it component)
 *   error            tag `error`, as the input had it (string message or bool);
 *                    each writer applies its target's rule
 *   debug / sampled  TW__FLAG_DEBUG / TW__FLAG_SAMPLED
 *
 * Ownership: twb_emit takes the caller's reference on the span record; the
 * process passed to it is borrowed (copied into the table when new).
 * Locking: none. `tracewire convert` is single-threaded.
 */
#ifndef TW_BRIDGE_CONVERT_H
#define TW_BRIDGE_CONVERT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracewire/common.h"
#include "wire/core/error.h" /* tw__set_error */
#include "wire/core/hex.h"
#include "wire/core/input.h"
#include "wire/core/json_stream.h"
#include "wire/core/output.h"
#include "wire/core/time.h"
#include "wire/custom/custom.h"
#include "wire/formats.h"
#include "wire/model/span_data.h"

/*
 * The names below are the convert pipeline's view of the wire layer's
 * interfaces (sdk/wire/): the decoders, their input and options, the span
 * pair, the shared parsing rules. They are the wire layer's own types and
 * functions under the names `tracewire convert`, the agent and the views
 * were written with.
 */

/* ---- the span as it travels ------------------------------------------------------------- */

/* data: one reference, owned; process: interned, valid until twb_procs_free. */
typedef tw__wire_span twb_span;

/* ---- options shared by readers and writers ---------------------------------------------- */

/* The unit of input timestamps (wire/core/time.h). */
typedef tw__time_unit twb_time_unit;
#define TWB_TIME_AUTO TW__TIME_AUTO
#define TWB_TIME_S TW__TIME_S
#define TWB_TIME_MS TW__TIME_MS
#define TWB_TIME_US TW__TIME_US
#define TWB_TIME_NS TW__TIME_NS

/* JSON numbers: decimal; text: hex, or decimal when it starts with '-'
 * (wire/core/hex.h). */
typedef tw__id_base twb_id_base;
#define TWB_ID_AUTO TW__ID_AUTO
#define TWB_ID_HEX TW__ID_HEX
#define TWB_ID_DEC TW__ID_DEC

/* The `custom` reader's field mapping (wire/custom/custom.h). */
typedef tw__custom_map twb_custom_map;
#define twb_custom_map_parse tw__custom_map_parse
#define twb_custom_map_clear tw__custom_map_clear
#define twb_custom_map_check tw__custom_map_check

/* --time-unit, --id-base, the caps, --scribe-category, the custom mapping
 * (wire/core/input.h). */
typedef tw__wire_options twb_options;

/* ---- the input side --------------------------------------------------------------------- */

/* What a reader reports to: the pipeline (convert_cmd.c) or a test
 * (wire/core/input.h: emit, reject, warn). */
typedef tw__wire_input twb_input;
#define twb_reject tw__wire_reject
#define twb_warn tw__wire_warn

/* A reader: a format's decoder (wire/core/input.h). */
typedef tw__wire_decoder twb_reader;

/* The readers of the registry (wire/formats.h), by their former names. */
#define twb_reader_dapper tw__dapper_decoder
#define twb_reader_zipkin_v1_json tw__zipkin_v1_json_decoder
#define twb_reader_zipkin_v2_json tw__zipkin_v2_json_decoder
#define twb_reader_zipkin_v1_thrift tw__zipkin_v1_thrift_decoder
#define twb_reader_jaeger_thrift tw__jaeger_thrift_decoder
#define twb_reader_jaeger_json tw__jaeger_json_decoder
#define twb_reader_otlp_json tw__otlp_json_decoder
#define twb_reader_custom tw__custom_decoder
#define twb_reader_otlp_proto tw__otlp_proto_decoder
#define twb_reader_zipkin_v2_proto tw__zipkin_v2_proto_decoder
#define twb_reader_jaeger_api_v2_json tw__jaeger_api_v2_json_decoder

/* The readers, in detection priority order; NULL-terminated (formats.c). */
extern const twb_reader *const twb_readers[];
const twb_reader *twb_reader_find(const char *name);
/* The reader whose sniff scores highest on @head (NULL if all are 0). */
const twb_reader *twb_reader_detect(const uint8_t *head, size_t len);
/* When the detected reader @rejected refused the first record of a file:
 * the first other detectable reader that reads @head's first record as a
 * span (a dry run over the first bytes), or NULL. formats.c. */
const twb_reader *twb_reader_alternative(const uint8_t *head, size_t len,
                                         const twb_reader *rejected, const twb_options *opts);

/* ---- the output side -------------------------------------------------------------------- */

typedef struct twb_writer twb_writer;

/* What the command knows of each writer (wire/core/output.h): conventions it
 * needs from the assembler, and whether its document is binary. */
typedef enum twb_target_flags {
    TWB_TARGET_JAEGER_IDS = TW__ENCODER_JAEGER_IDS, /* give shared server spans their own ids */
    TWB_TARGET_BINARY = TW__ENCODER_BINARY,         /* never written to a terminal */
} twb_target_flags;

typedef struct twb_writer_vtable {
    const char *name;    /* the --to value */
    const char *summary; /* one line for --help */
    unsigned int target_flags;
    /* A writer appending to @out (borrowed). NULL with @err on failure. */
    twb_writer *(*new_writer)(FILE *out, const twb_options *opts, tw_error **err);
    /* Writes @n spans (typically one trace, or one record's spans). The
     * spans stay the caller's. TW_E_IO (with @err) on a write error. */
    tw_status (*write)(twb_writer *w, const twb_span *spans, size_t n, tw_error **err);
    /* Ends the document (closing brackets) and flushes. */
    tw_status (*finish)(twb_writer *w, tw_error **err);
    void (*free_writer)(twb_writer *w); /* NULL is a no-op */
} twb_writer_vtable;

extern const twb_writer_vtable twb_writer_zipkin_v2_json;
extern const twb_writer_vtable twb_writer_zipkin_v1_json;
extern const twb_writer_vtable twb_writer_jaeger_json;
extern const twb_writer_vtable twb_writer_jaeger_thrift;
extern const twb_writer_vtable twb_writer_otlp_json;
extern const twb_writer_vtable twb_writer_dapper;
extern const twb_writer_vtable twb_writer_otlp_proto;
extern const twb_writer_vtable twb_writer_zipkin_v2_proto;

extern const twb_writer_vtable *const twb_writers[]; /* NULL-terminated */
const twb_writer_vtable *twb_writer_find(const char *name);

/* ---- shared parsing rules (sdk/wire/) ---------------------------------------------------- */

/* Ids from text (wire/core/hex.h). */
#define twb_parse_trace_id tw__parse_trace_id
#define twb_parse_span_id tw__parse_span_id

/* Timestamps in any unit to µs (wire/core/time.h). */
#define twb_time_to_us tw__time_to_us
#define twb_time_int_to_us tw__time_int_to_us
#define twb_time_unit_parse tw__time_unit_parse

/* Tags and Zipkin-style annotations added to a record (wire/model/span_data.h). */
#define twb_tag_str tw__span_data_add_str_tag
#define twb_tag_value tw__span_data_add_tag
#define twb_log_event tw__span_data_add_event

/* The text of any JSON value (wire/core/json_common.h). */
#define twb_json_value_text tw__json_value_text

/* Appends @len bytes to a writer's output; TW_E_IO (with @err naming the
 * system's reason) on a write error. convert_util.c. */
tw_status twb_write_out(FILE *out, const void *data, size_t len, tw_error **err);
/* Flushes a writer's output; TW_E_IO on error. */
tw_status twb_flush_out(FILE *out, tw_error **err);

/* ---- the process table (procs.c) ---------------------------------------------------------- */

typedef struct twb_procs twb_procs;
twb_procs *twb_procs_new(void);
void twb_procs_free(twb_procs *t); /* NULL is a no-op */
/* The interned copy of @p (equal service and tags, in order); NULL on
 * allocation failure. */
const tw__process *twb_procs_intern(twb_procs *t, const tw__process *p);
/* The same, with @stamp as tw__wire_input's process_stamp promises (0:
 * none): a process given again at the same address with the same non-zero
 * stamp is taken as unchanged, without comparing it. */
const tw__process *twb_procs_intern_stamped(twb_procs *t, const tw__process *p, uint64_t stamp);
size_t twb_procs_count(const twb_procs *t);

/* ---- the JSON splitter (wire/core/json_stream.h) ------------------------------------------ */

typedef tw__json_stream twb_json_stream;
typedef tw__json_next twb_json_next;
typedef tw__json_record_fn twb_json_record_fn;
#define twb_json_stream_new tw__json_stream_new
#define twb_json_stream_free tw__json_stream_free
#define twb_json_stream_next tw__json_stream_next
#define twb_json_read_records tw__json_read_records
#define TWB_JSON_RECORD TW__JSON_RECORD
#define TWB_JSON_END TW__JSON_END
#define TWB_JSON_BAD TW__JSON_BAD
#define TWB_JSON_IO TW__JSON_IO

#endif /* TW_BRIDGE_CONVERT_H */
