/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/json_stream.h: the record splitter and record loop of the JSON
 * decoders (Zipkin v1 and v2 JSON, Jaeger JSON, OTLP/JSON): a JSON input is
 * cut into records without loading it whole, each record parsed with
 * Jansson and handed to the decoder.
 *
 * Locking: none; one stream per input, one thread.
 */
#ifndef TW_WIRE_CORE_JSON_STREAM_H
#define TW_WIRE_CORE_JSON_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "tracewire/common.h"
#include "wire/core/input.h"

/* ---- the splitter -------------------------------------------------- */

/*
 * Splits a JSON input into records without loading the whole input: the
 * input may be one value, a top-level array of values, an array of arrays
 * (each inner element is a record), or one value per line (NDJSON). Objects
 * are records; arrays are descended into (at most two levels). Each record
 * comes back as bytes with the line it starts on, so a reader can
 * json_loadb it and name the line in errors. Memory: the largest record.
 */
typedef struct tw__json_stream tw__json_stream;
tw__json_stream *tw__json_stream_new(FILE *stream, size_t max_record_bytes);
void tw__json_stream_free(tw__json_stream *js);
/* Hands the bytes of each region over the size limit to @spill, in order,
 * as they are read (the bytes held first), so that the caller can keep it
 * whole elsewhere; the region then comes back BAD with *len 0. A false
 * return stops the pieces of that region. */
void tw__json_stream_set_spill(tw__json_stream *js,
                               bool (*spill)(void *arg, const void *bytes, size_t len), void *arg);
/* One pass: each record that @scan (wire/core/json_scan.h; nullable)
 * reads where it starts in the read buffer comes back already scanned into
 * it, tw__json_stream_is_scanned() then true until the next call; other
 * records come back as before, unscanned. The scanner stays the caller's. */
struct tw__json_scan;
void tw__json_stream_set_scan(tw__json_stream *js, struct tw__json_scan *scan);
bool tw__json_stream_is_scanned(const tw__json_stream *js);
/* A reader that takes a record straight from the read buffer, without the
 * scanner (a format's direct decoder): @text holds the object that starts
 * there (its '{'), up to @len bytes of it (the rest of the buffer, or the
 * record limit). True when it takes the object, *used then its length up to
 * its closing brace: that must be a whole object Jansson reads, so that it
 * ends where the splitter would cut it; what the reader decoded stays with
 * it for the caller. False when it declines, with nothing kept: the record
 * is then scanned or cut as usual. */
typedef bool (*tw__json_direct_fn)(void *arg, const char *text, size_t len, size_t *used);
/* Tries @fn (nullable) first on each record that starts in the read
 * buffer; a record it took comes back in place (in the read buffer, valid
 * until the next call; not NUL-terminated), tw__json_stream_is_direct()
 * then true until the next call. */
void tw__json_stream_set_direct(tw__json_stream *js, tw__json_direct_fn fn, void *arg);
bool tw__json_stream_is_direct(const tw__json_stream *js);
typedef enum tw__json_next {
    TW__JSON_RECORD = 0, /* *rec, *len, *line_no set */
    TW__JSON_END,
    TW__JSON_BAD, /* a malformed or oversized region: rec and len hold its bytes, why the reason; go
                     on */
    TW__JSON_IO   /* read error: *why set; stop */
} tw__json_next;
tw__json_next tw__json_stream_next(tw__json_stream *js, const char **rec, size_t *len,
                                   size_t *line_no, const char **why);

/* After a record that is not valid JSON: when a later line of it starts a
 * record (an NDJSON input whose record was cut off at the end of its line),
 * cuts the record before that line and gives the rest back to be read
 * again. *prefix_len: the bytes the cut record keeps; *resume_line: where
 * reading goes on. False when there is no such line. */
bool tw__json_stream_resync(tw__json_stream *js, size_t *prefix_len, size_t *resume_line);

/*
 * The record loop of the JSON readers. One record of the input: @record is
 * the parsed value (the driver frees it after the call), or NULL when @raw
 * is not valid JSON (@parse_error then holds Jansson's reason and line);
 * @raw and @line_no are for messages and rejects. Returns TW_OK to go on,
 * TW_E_STATE to stop because emit or reject said so, or another status with
 * *err set (e.g. TW_E_NOMEM) to end the run with it.
 */
struct json_t;
struct json_error_t;
typedef tw_status (*tw__json_record_fn)(void *arg, struct json_t *record, const char *raw,
                                        size_t raw_len, size_t line_no,
                                        const struct json_error_t *parse_error, tw_error **err);
/* Splits @stream with tw__json_stream (records up to @max_record_bytes),
 * rejects each BAD region with the splitter's reason, json_loadb's each
 * record with @json_flags and hands it to @fn. A record Jansson refuses is
 * first repaired (invalid UTF-8, control bytes in strings, NUL in member
 * names, numbers beyond int64: one bad value must not cost a whole
 * document; a warning counts the repairs) and parsed again; failing that,
 * an NDJSON record cut off at the end of its line is rejected alone and
 * reading goes on at the next line. Returns TW_OK at the end of
 * the input, TW_E_IO on a read error, TW_E_NOMEM, or what @fn returned when
 * it was not TW_OK. */
tw_status tw__json_read_records(FILE *stream, tw__wire_input *in, size_t max_record_bytes,
                                size_t json_flags, tw__json_record_fn fn, void *arg,
                                tw_error **err);

/*
 * The same record loop for decoders that read tokens (wire/core/json_scan.h)
 * instead of a Jansson tree. Each record is scanned once; only a record the
 * scanner refuses goes to Jansson: for the error message when it is not
 * JSON (the repairs and the NDJSON cut of tw__json_read_records apply
 * alike), or, when Jansson reads it (duplicate member names, the last of
 * which wins, or a repaired record), written back compactly and scanned
 * again, so that one decoder reads every record. @fn gets the tokens, or
 * NULL with @parse_error (a reason such as Jansson's "... near '...'"
 * naming line and column) when the record is not JSON. Returns as
 * tw__json_read_records.
 */
struct tw__json_scan;
typedef tw_status (*tw__json_scan_record_fn)(void *arg, const struct tw__json_scan *record,
                                             const char *raw, size_t raw_len, size_t line_no,
                                             const char *parse_error, tw_error **err);
/* With a @direct reader (nullable; called with @arg too), each record is
 * offered to it first (tw__json_stream_set_direct); @fn then gets a record
 * it took with neither tokens nor @parse_error (both NULL), to finish what
 * @direct decoded. */
tw_status tw__json_scan_records(FILE *stream, tw__wire_input *in, size_t max_record_bytes,
                                tw__json_direct_fn direct, tw__json_scan_record_fn fn, void *arg,
                                tw_error **err);

/* Scans the Jansson value @value (an object or an array) into @scan by way
 * of its compact text: for readers that build a value themselves
 * and decode it with a token decoder. False when the value cannot be
 * written, or is nested deeper than the scanner reads. */
bool tw__json_scan_value(struct tw__json_scan *scan, const struct json_t *value);

#endif /* TW_WIRE_CORE_JSON_STREAM_H */
