/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/convert.h: what the parts of `tracewire convert` share (internal).
 *
 * Flow (DESIGN.md, "bridge:" row):
 *
 *   reader (readers/ files) -- in->emit --> pipeline (convert_cmd.c: sanitize, limits,
 *   trace-hash sampling) --> assembler (assemble/: window, merge, dedup,
 *   skew, Jaeger shared-span ids) --> writer (sinks/: one per output format)
 *   or sender (sinks/send.c: HTTP / UDP backends)
 *
 * A span travels as a twb_span: one record of the SDK's span model
 * (model/span_data.h; ids, name, timing, typed tags, logs, refs, flags) and
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

#include "internal.h" /* tw__set_error */
#include "wire/core/hex.h"
#include "wire/model/span_data.h"
#include "tracewire/common.h"

/* ---- the span as it travels ------------------------------------------------------------- */

typedef struct twb_span {
    tw__span_data *data;        /* one reference, owned */
    const tw__process *process; /* interned: valid until twb_procs_free */
} twb_span;

/* ---- options shared by readers and writers ---------------------------------------------- */

typedef enum twb_time_unit {
    TWB_TIME_AUTO = 0, /* the format's own unit; for custom logs: by magnitude */
    TWB_TIME_S,
    TWB_TIME_MS,
    TWB_TIME_US,
    TWB_TIME_NS
} twb_time_unit;

/* JSON numbers: decimal; text: hex, or decimal when it starts with '-'
 * (wire/core/hex.h). */
typedef tw__id_base twb_id_base;
#define TWB_ID_AUTO TW__ID_AUTO
#define TWB_ID_HEX TW__ID_HEX
#define TWB_ID_DEC TW__ID_DEC

/* The `custom` reader's field mapping (--map / --map-file). Each member
 * names the input field (JSON member, or TSV column name or 1-based
 * number); NULL when unmapped. */
typedef struct twb_custom_map {
    char *trace_id, *span_id, *parent_id, *name, *service, *host, *ip;
    char *start, *end, *duration, *kind, *error;
    char **tag_fields;           /* fields copied as tags: NULL-terminated; NULL: none */
    bool is_tsv;                 /* input is TSV (else JSON lines) */
    bool has_header;             /* TSV: the first line names the columns */
    twb_time_unit duration_unit; /* TWB_TIME_AUTO: same as the time unit */
    twb_time_unit time_unit;     /* time_unit= of the mapping; AUTO: --time-unit, else by
                                    magnitude */
    twb_id_base id_base;         /* id_base= of the mapping; AUTO: --id-base */
} twb_custom_map;

/* Adds the mapping in @spec to @m (zeroed, or filled by an earlier call:
 * later entries win). @spec is the --map text (`field=name,...`) or, with
 * @is_file_text, a mapping file's text (one `field=name` per line, `#`
 * comments). Keys: trace_id span_id parent_id name service host ip start end
 * duration kind error tags (`a|b|c`), format (jsonl|tsv), header (yes|no),
 * id_base (hex|dec|auto), time_unit and duration_unit (s|ms|us|ns|auto).
 * False with a reason in @why on a bad entry (@m keeps what came before it;
 * free it with twb_custom_map_clear either way). readers/custom.c. */
bool twb_custom_map_parse(twb_custom_map *m, const char *spec, bool is_file_text, char *why,
                          size_t why_size);
/* Frees the strings of @m and zeroes it; NULL is a no-op. */
void twb_custom_map_clear(twb_custom_map *m);

typedef struct twb_options {
    twb_time_unit time_unit;     /* --time-unit */
    twb_id_base id_base;         /* --id-base */
    size_t max_annotations;      /* --max-annotations: tags + logs per span; 0: no cap */
    size_t max_value_bytes;      /* values longer than this are cut, with a marker */
    const char *scribe_category; /* zipkin-v1-thrift Scribe lines: kept category ("zipkin") */
    const twb_custom_map *custom;
} twb_options;

/* ---- the input side --------------------------------------------------------------------- */

/* What a reader reports to: the pipeline (convert_cmd.c) or a test. */
typedef struct twb_input twb_input;
struct twb_input {
    const char *name; /* "path" or "<stdin>", for messages */
    const twb_options *opts;
    /* One span read. Takes @span's reference (also on failure); @process is
     * borrowed. Returns false when the run must stop (write error, --strict
     * after a reject); the reader then returns at once. */
    bool (*emit)(twb_input *in, tw__span_data *span, const tw__process *process);
    /* A bad record: @line_no (1-based; 0 when the input has no lines), the
     * reason, and the record's raw bytes (written verbatim to --rejects).
     * Returns false when the run must stop. */
    bool (*reject)(twb_input *in, size_t line_no, const void *raw, size_t raw_len,
                   const char *reason);
    /* A record read but kept with a change the user should know about
     * (e.g. a 10-byte I64 annotation): counted and shown as "file:line:
     * warning: reason". Never stops the run. */
    void (*warn)(twb_input *in, size_t line_no, const char *reason);
    void *user_data;
};

/* Convenience wrappers: format the reason with printf rules. */
bool twb_reject(twb_input *in, size_t line_no, const void *raw, size_t raw_len, const char *fmt,
                ...) TW_PRINTF(5, 6);
void twb_warn(twb_input *in, size_t line_no, const char *fmt, ...) TW_PRINTF(3, 4);

/*
 * A reader: decodes a whole stream, calling in->emit per span and
 * in->reject per bad record. Streams: memory stays bounded by the largest
 * record (or the documented unit, e.g. one Jaeger JSON document), never by
 * the input. Returns TW_OK at the end of input, TW_E_IO on a read error
 * (with @err), or the status that stopped it when emit/reject returned
 * false (TW_E_STATE, no error set).
 */
typedef struct twb_reader {
    const char *name;    /* the --from value */
    const char *summary; /* one line for --help */
    tw_status (*read)(FILE *stream, twb_input *in, tw_error **err);
    /* Format detection on the first bytes of a file (@len may be short):
     * a score 0 (not this format) .. 100 (certain). NULL: never detected. */
    int (*sniff)(const uint8_t *head, size_t len);
} twb_reader;

extern const twb_reader twb_reader_dapper;
extern const twb_reader twb_reader_zipkin_v1_json;
extern const twb_reader twb_reader_zipkin_v2_json;
extern const twb_reader twb_reader_zipkin_v1_thrift;
extern const twb_reader twb_reader_jaeger_thrift;
extern const twb_reader twb_reader_jaeger_json;
extern const twb_reader twb_reader_otlp_json;
extern const twb_reader twb_reader_custom;

/* The readers, in detection priority order; NULL-terminated. */
extern const twb_reader *const twb_readers[];
const twb_reader *twb_reader_find(const char *name);
/* The reader whose sniff scores highest on @head (NULL if all are 0). */
const twb_reader *twb_reader_detect(const uint8_t *head, size_t len);

/* ---- the output side -------------------------------------------------------------------- */

typedef struct twb_writer twb_writer;

/* Output conventions each writer needs from the assembler. */
typedef enum twb_target_flags {
    TWB_TARGET_JAEGER_IDS = 1 << 0, /* give shared server spans their own ids (Jaeger) */
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

extern const twb_writer_vtable *const twb_writers[]; /* NULL-terminated */
const twb_writer_vtable *twb_writer_find(const char *name);

/* ---- shared parsing rules (convert_util.c) ------------------------------------------------ */

/* Ids from text: the wire layer's one parser (wire/core/hex.h). */
#define twb_parse_trace_id tw__parse_trace_id
#define twb_parse_span_id tw__parse_span_id

/* Converts a timestamp in @unit to microseconds since the epoch.
 * TWB_TIME_AUTO picks by magnitude (|v| < 1e11: s, < 1e14: ms, < 1e17: us,
 * else ns). Fractions are rounded to the nearest microsecond. False on
 * overflow or a non-finite value. */
bool twb_time_to_us(double value, twb_time_unit unit, int64_t *us);
/* The same for an exact integer (no double rounding for ns values). */
bool twb_time_int_to_us(int64_t value, twb_time_unit unit, int64_t *us);
twb_time_unit twb_time_unit_parse(const char *text); /* "s","ms","us","ns","auto"; -1 if bad */

/* Adds a string tag / a typed tag to a record (copied into its arena).
 * False on allocation failure. */
bool twb_tag_str(tw__span_data *s, const char *key, const char *value, size_t len);
bool twb_tag_value(tw__span_data *s, const char *key, const tw_value *value);
/* Adds a log with one field `event` = @value (a Zipkin annotation). */
bool twb_log_event(tw__span_data *s, int64_t ts_us, const char *value, size_t len);

/* Appends @len bytes to a writer's output; TW_E_IO (with @err naming the
 * system's reason) on a write error. */
tw_status twb_write_out(FILE *out, const void *data, size_t len, tw_error **err);
/* Flushes a writer's output; TW_E_IO on error. */
tw_status twb_flush_out(FILE *out, tw_error **err);

/* The text of any JSON value, for readers that keep a non-string value as a
 * string: a string as it is, anything else as compact JSON. malloc'd (the
 * caller frees it); NULL on allocation failure. */
struct json_t;
char *twb_json_value_text(const struct json_t *v, size_t *len);

/* ---- the process table (procs.c) ---------------------------------------------------------- */

typedef struct twb_procs twb_procs;
twb_procs *twb_procs_new(void);
void twb_procs_free(twb_procs *t); /* NULL is a no-op */
/* The interned copy of @p (equal service and tags, in order); NULL on
 * allocation failure. */
const tw__process *twb_procs_intern(twb_procs *t, const tw__process *p);
size_t twb_procs_count(const twb_procs *t);

/* ---- JSON value splitter (json_stream.c) -------------------------------------------------- */

/*
 * Splits a JSON input into records without loading the whole input: the
 * input may be one value, a top-level array of values, an array of arrays
 * (each inner element is a record), or one value per line (NDJSON). Objects
 * are records; arrays are descended into (at most two levels). Each record
 * comes back as bytes with the line it starts on, so a reader can
 * json_loadb it and name the line in errors. Memory: the largest record.
 */
typedef struct twb_json_stream twb_json_stream;
twb_json_stream *twb_json_stream_new(FILE *stream, size_t max_record_bytes);
void twb_json_stream_free(twb_json_stream *js);
typedef enum twb_json_next {
    TWB_JSON_RECORD = 0, /* *rec, *len, *line_no set */
    TWB_JSON_END,
    TWB_JSON_BAD, /* a malformed or oversized region: rec and len hold its bytes, why the reason; go
                     on */
    TWB_JSON_IO   /* read error: *why set; stop */
} twb_json_next;
twb_json_next twb_json_stream_next(twb_json_stream *js, const char **rec, size_t *len,
                                   size_t *line_no, const char **why);

/*
 * The record loop of the JSON readers. One record of the input: @record is
 * the parsed value (the driver frees it after the call), or NULL when @raw
 * is not valid JSON (@parse_error then holds Jansson's reason and line);
 * @raw and @line_no are for messages and rejects. Returns TW_OK to go on,
 * TW_E_STATE to stop because emit or reject said so, or another status with
 * *err set (e.g. TW_E_NOMEM) to end the run with it.
 */
struct json_error_t;
typedef tw_status (*twb_json_record_fn)(void *arg, struct json_t *record, const char *raw,
                                        size_t raw_len, size_t line_no,
                                        const struct json_error_t *parse_error, tw_error **err);
/* Splits @stream with twb_json_stream (records up to @max_record_bytes),
 * rejects each BAD region with the splitter's reason, json_loadb's each
 * record with @json_flags and hands it to @fn. Returns TW_OK at the end of
 * the input, TW_E_IO on a read error, TW_E_NOMEM, or what @fn returned when
 * it was not TW_OK. */
tw_status twb_json_read_records(FILE *stream, twb_input *in, size_t max_record_bytes,
                                size_t json_flags, twb_json_record_fn fn, void *arg,
                                tw_error **err);

#endif /* TW_BRIDGE_CONVERT_H */
