/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/pipeline.h: the input side every span-log command shares (internal):
 * open each input (a file or stdin), detect its format from its first bytes
 * (or take --from), run its reader, check and bound every span (the rules of
 * docs/bridge.md, "Values" and "Time"), intern its process, optionally drop
 * spans a caller does not want, and hand the rest to the assembler, whose
 * groups go to the caller's callback. `tracewire convert` sends the groups to
 * a writer or a sender; the views (bridge/views/) look at them.
 *
 * Messages: a bad record is reported on stderr as "tracewire: FILE:LINE:
 * reason" (the first 100; the rest are counted), copied verbatim to the
 * rejects file when there is one, and stops the run only when is_strict. A
 * progress line goes to stderr when has_progress (the caller decides: convert
 * shows it on a terminal).
 *
 * Ownership: the pipeline owns its process table and assembler; interned
 * processes stay valid until twb_pipeline_free, so a caller may keep them
 * after its callback returned (with a reference on the span records it
 * keeps). The rejects file is borrowed. Locking: none; one thread.
 */
#ifndef TW_BRIDGE_PIPELINE_H
#define TW_BRIDGE_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "assemble/assemble.h"
#include "convert.h"

/* Drops a span before assembly when it returns false (the span is released
 * by the pipeline and counted as filtered). @process is the interned one. */
typedef bool (*twb_pipeline_keep_fn)(void *arg, const tw__span_data *span,
                                     const tw__process *process);

typedef struct twb_pipeline_config {
    const char *command;             /* "convert", "show": names the progress line */
    twb_options opts;                /* reader options (copied; opts.custom is borrowed) */
    twb_assemble_options assemble;   /* window, Jaeger ids, skew, sampling */
    const twb_reader *from;          /* --from; NULL: detect per input */
    FILE *rejects;                   /* --rejects file (borrowed) or NULL */
    const char *rejects_name;        /* its name, for messages (borrowed; nullable) */
    bool is_strict;                  /* stop at the first rejected record */
    bool has_progress;               /* show the progress line on stderr */
    const uint64_t *progress_done;   /* optional: a count the progress line shows... */
    const char *progress_done_label; /* ...named so ("converted") */
    twb_assemble_out out;            /* receives the assembled groups */
    void *out_arg;
    twb_pipeline_keep_fn keep; /* NULL: keep every span */
    void *keep_arg;
} twb_pipeline_config;

typedef struct twb_pipeline_counts {
    uint64_t read;                          /* spans the readers emitted */
    uint64_t filtered;                      /* spans @keep dropped */
    uint64_t rejected, warnings;            /* bad records; records kept with a change */
    uint64_t truncated;                     /* values cut at max_value_bytes */
    uint64_t dropped_annotations;           /* tags + logs over max_annotations */
    uint64_t fixed_durations;               /* negative durations set to 1 us */
    uint64_t files, failed_files;           /* inputs opened; inputs that could not be read */
    uint64_t shown_rejects, shown_warnings; /* messages issued (the first 100 printed) */
} twb_pipeline_counts;

#define TWB_PIPELINE_SHOWN_MAX 100 /* messages printed per kind; the rest are counted */

typedef struct twb_pipeline twb_pipeline;

/* A new pipeline; NULL on allocation failure. */
twb_pipeline *twb_pipeline_new(const twb_pipeline_config *config);
void twb_pipeline_free(twb_pipeline *p); /* NULL is a no-op */

/* Sizes the progress bar: the total bytes of the inputs that are regular
 * files (@paths NULL-terminated; "-" is stdin). Only useful with progress. */
void twb_pipeline_measure(twb_pipeline *p, char *const *paths);

/* Reads one input ("-" is stdin) to its end. An input that cannot be opened,
 * read or recognised is reported and counted in failed_files; the run goes
 * on. Returns false when the run must stop (--strict after a reject, or a
 * fatal error: see twb_pipeline_fatal). */
bool twb_pipeline_read(twb_pipeline *p, const char *path);

/* End of input: releases every trace the assembler still holds to the
 * callback (unless the run already failed). Returns the status. */
tw_status twb_pipeline_flush(twb_pipeline *p);

/* Closes the progress line, if one was shown. */
void twb_pipeline_progress_end(twb_pipeline *p);

/* A span a writer left out of its output (the format cannot hold it): counted
 * as a rejected record and named by its ids with @reason, as the writers'
 * span_rejected callback (twb_options) reports it. */
void twb_pipeline_span_rejected(twb_pipeline *p, const twb_span *span, const char *reason);

const twb_pipeline_counts *twb_pipeline_get_counts(const twb_pipeline *p);
void twb_pipeline_assemble_stats(const twb_pipeline *p, twb_assemble_stats *st);
/* After the flush: when the window split traces (twb_assemble_stats.split_traces), one
 * warning on stderr saying how many and what a larger --window does; nothing otherwise. */
void twb_pipeline_warn_split(const twb_pipeline *p);
/* True when the run stopped early (--strict, or a fatal error). */
bool twb_pipeline_is_stopped(const twb_pipeline *p);
/* The error that stopped the run (owned by the pipeline; the caller may set
 * one through the pointer, e.g. a writer's failure at the end). */
tw_error **twb_pipeline_fatal(twb_pipeline *p);

#endif /* TW_BRIDGE_PIPELINE_H */
