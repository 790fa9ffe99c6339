/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/custom/custom.h: the `custom` decoder: any JSON-lines or TSV span
 * log whose fields are mapped by the user (--map / --map-file of `tracewire
 * convert`). It never detects itself: without a mapping nothing says which
 * field is the trace id.
 *
 * Ownership: a tw__custom_map owns its strings (tw__custom_map_clear frees
 * them). Locking: none.
 */
#ifndef TW_WIRE_CUSTOM_CUSTOM_H
#define TW_WIRE_CUSTOM_CUSTOM_H

#include <stdbool.h>
#include <stddef.h>

#include "wire/core/hex.h"
#include "wire/core/input.h"
#include "wire/core/time.h"

/* The field mapping. Each member names the input field (JSON member, or
 * TSV column name or 1-based number); NULL when unmapped. */
typedef struct tw__custom_map {
    char *trace_id, *span_id, *parent_id, *name, *service, *host, *ip;
    char *start, *end, *duration, *kind, *error;
    char **tag_fields;           /* fields copied as tags: NULL-terminated; NULL: none */
    bool is_tsv;                 /* input is TSV (else JSON lines) */
    bool has_header;             /* TSV: the first line names the columns */
    tw__time_unit duration_unit; /* TW__TIME_AUTO: same as the time unit */
    tw__time_unit time_unit;     /* time_unit= of the mapping; AUTO: --time-unit, else by
                                    magnitude */
    tw__id_base id_base;         /* id_base= of the mapping; AUTO: --id-base */
} tw__custom_map;

/* Adds the mapping in @spec to @m (zeroed, or filled by an earlier call:
 * later entries win). @spec is the --map text (`field=name,...`) or, with
 * @is_file_text, a mapping file's text (one `field=name` per line, `#`
 * comments). Keys: trace_id span_id parent_id name service host ip start end
 * duration kind error tags (`a|b|c`), format (jsonl|tsv), header (yes|no),
 * id_base (hex|dec|auto), time_unit and duration_unit (s|ms|us|ns|auto).
 * False with a reason in @why on a bad entry (@m keeps what came before it;
 * free it with tw__custom_map_clear either way). */
bool tw__custom_map_parse(tw__custom_map *m, const char *spec, bool is_file_text, char *why,
                          size_t why_size);
/* Whether @m is complete enough to read records (trace_id, span_id, start,
 * and end or duration; numbered TSV columns without a header); false with
 * the reason in @why. The decoder checks it too; the command checks it
 * before it opens any output, so a bad mapping is a usage error. */
bool tw__custom_map_check(const tw__custom_map *m, char *why, size_t why_size);
/* Frees the strings of @m and zeroes it; NULL is a no-op. */
void tw__custom_map_clear(tw__custom_map *m);

/* The decoder (in->opts->custom holds the mapping). */
extern const tw__wire_decoder tw__custom_decoder;

#endif /* TW_WIRE_CUSTOM_CUSTOM_H */
