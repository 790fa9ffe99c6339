/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/input.h: what every decoder of the wire layer reports to, and
 * how a decoder is described.
 *
 * A decoder reads a whole stream (a file, a pipe, a socket's bytes) and
 * hands each span to in->emit, each bad record to in->reject (with its raw
 * bytes, so that the caller can keep them verbatim) and each change it made
 * to a record it kept to in->warn. `tracewire convert` implements the input
 * (its pipeline: limits, assembly, writers); the agent and the tests do too.
 * Decoders stream: memory stays bounded by the largest record (or a
 * documented unit, such as one Jaeger JSON document), never by the input.
 *
 * Ownership: emit takes the span's reference (also when it returns false);
 * the process is borrowed for the call. Locking: none; an input and a
 * decoder run on one thread.
 */
#ifndef TW_WIRE_CORE_INPUT_H
#define TW_WIRE_CORE_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracewire/common.h"
#include "wire/core/hex.h"  /* tw__id_base */
#include "wire/core/time.h" /* tw__time_unit */
#include "wire/model/span_data.h"

struct tw__custom_map; /* wire/custom/custom.h */
struct tw__wire_span;  /* wire/core/output.h */

/* What the caller asks of the decoders. */
typedef struct tw__wire_options {
    tw__time_unit time_unit;     /* --time-unit: AUTO decides by magnitude (wire/core/time.h) */
    tw__id_base id_base;         /* --id-base */
    size_t max_annotations;      /* tags + logs per span (the caller applies it); 0: no cap */
    size_t max_value_bytes;      /* longer values are cut (the caller applies it) */
    const char *scribe_category; /* zipkin-v1-thrift Scribe lines: kept category ("zipkin") */
    const struct tw__custom_map *custom; /* the custom decoder's field mapping */
    /* Writers (wire/core/output.h): a span the output format cannot hold is
     * left out and reported here with a reason naming it (nullable). */
    void (*span_rejected)(void *user_data, const struct tw__wire_span *span, const char *reason);
    void *span_rejected_data;
} tw__wire_options;

typedef struct tw__wire_input tw__wire_input;
struct tw__wire_input {
    const char *name; /* "path" or "<stdin>", for messages */
    const tw__wire_options *opts;
    /* One span read. Takes @span's reference (also on failure); @process is
     * borrowed. Returns false when the run must stop; the decoder then
     * returns at once. */
    bool (*emit)(tw__wire_input *in, tw__span_data *span, const tw__process *process);
    /* A bad record: @line_no (1-based; 0 when the input has no lines), the
     * reason, and the record's raw bytes. Returns false when the run must
     * stop. */
    bool (*reject)(tw__wire_input *in, size_t line_no, const void *raw, size_t raw_len,
                   const char *reason);
    /* A record over the decoder's size bound is not held whole (memory stays
     * bounded): when this is set (nullable), its bytes come here in order,
     * piece by piece, as the decoder reads them, and the in->reject that
     * follows (raw_len 0) ends the record. Unset, such a reject carries only
     * the bytes held, if any. Returns false when the run must stop (the
     * decoder then gives no more pieces of the record, but still rejects
     * it). */
    bool (*reject_part)(tw__wire_input *in, const void *bytes, size_t len);
    /* A record read but kept with a change the user should know about.
     * Never stops the run. NULL: warnings are dropped. */
    void (*warn)(tw__wire_input *in, size_t line_no, const char *reason);
    void *user_data;
    /* Set by a decoder around one emit (0 otherwise): non-zero, a number
     * that names the content of the process that emit is given for good
     * (the Dapper reader's shared processes, dapper_log.h; the Zipkin v2
     * reader's endpoint memo): the same stamp
     * again is the same process at the same address, unchanged. 0 promises
     * nothing. What the caller may skip with it: comparing the process. */
    uint64_t process_stamp;
    /* The wire layer's own state for this input (warnings it gives once per
     * input): zero it, then leave it alone. */
    unsigned int said;
};

/* The spill function of the bounded readers (tw__line_reader, the JSON
 * record splitter) for @in (a tw__wire_input): hands a piece of a record
 * too large to hold to in->reject_part. */
bool tw__wire_reject_part(void *in, const void *bytes, size_t len);

/* in->reject / in->warn with a printf-formatted reason. */
bool tw__wire_reject(tw__wire_input *in, size_t line_no, const void *raw, size_t raw_len,
                     const char *fmt, ...) TW_PRINTF(5, 6);
void tw__wire_warn(tw__wire_input *in, size_t line_no, const char *fmt, ...) TW_PRINTF(3, 4);

/*
 * The unit a span's times are in, by the magnitude of its @start read in
 * the format's own @unit: @unit when a unit is forced (opts->time_unit),
 * when @start is 0 or a plausible date (1980-01-01 to 2100-01-01) in it;
 * else the one of seconds, milliseconds, microseconds and nanoseconds in
 * which @start is a plausible date (a warning says so, once per input);
 * else @unit, with a warning that the date is implausible (once per input).
 * The plausible range spans less than a factor of 1000, so one unit at most
 * fits. Decoders whose unit is not µs (OTLP: ns) call it on the raw value
 * so that no digit is lost; tw__wire_admit_span does it for the others.
 */
tw__time_unit tw__wire_time_unit(tw__wire_input *in, size_t line_no, int64_t start,
                                 tw__time_unit unit);

/*
 * What every decoded span goes through where it enters the model, once:
 *   - its time unit (tw__wire_time_unit, its times read as µs): the
 *     start, the duration and the log times are scaled alike;
 *   - its times within the model's range (tw__span_data_check_times).
 * False, with a reason naming the span and the value in @why, when the
 * span must be rejected.
 */
bool tw__wire_admit_span(tw__wire_input *in, size_t line_no, tw__span_data *span, char *why,
                         size_t why_size);

/* Hands a decoded span to in->emit after tw__wire_admit_span; a span that
 * fails it is rejected alone with @raw as its record (the span is
 * released). Returns what emit or reject returned. Decoders that hold a
 * span's own bytes only on the way (a Thrift list, a JSON array) call
 * tw__wire_admit_span themselves and reject those bytes. */
bool tw__wire_emit(tw__wire_input *in, size_t line_no, tw__span_data *span,
                   const tw__process *process, const void *raw, size_t raw_len);

/* A decoder: a format's reading side. */
typedef struct tw__wire_decoder {
    const char *name;    /* the format's name (--from) */
    const char *summary; /* one line for --help */
    /* Decodes the whole @stream. Returns TW_OK at the end of the input,
     * TW_E_IO on a read error (with @err), TW_E_NOMEM, or TW_E_STATE when
     * emit or reject asked to stop (no error set). */
    tw_status (*read)(FILE *stream, tw__wire_input *in, tw_error **err);
    /* A score from the first bytes of a file (@len may be short): 0 (not
     * this format) .. 100 (certain). NULL: never detected. */
    int (*sniff)(const uint8_t *head, size_t len);
} tw__wire_decoder;

/* A new process_stamp: non-zero and never handed out before in this
 * process, by any decoder (so a stamp cannot match one of another reader's
 * at a reused address). Thread-safe. */
uint64_t tw__wire_new_stamp(void);

#endif /* TW_WIRE_CORE_INPUT_H */
