/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/views/opstats.c: per (service, operation) aggregates over any number
 * of traces, for `tracewire stats` and `diff` (views.h, twv_opstats).
 *
 * Each span adds to its row: the count, errors, its duration to the latency
 * quantiles (spans whose duration is unknown are left out and counted in
 * no_duration), its self time, its critical-path time and its number of
 * children. Rows live in an array indexed by an open-addressing table on a
 * hash of the two names. At most max_rows rows are made; the spans of further
 * operations count in an "(other operations)" row of their service (or of
 * "(other services)" once even that cannot be made), and folded_spans says
 * how many: memory stays bounded whatever the input. The totals of time
 * stop at the largest 64-bit value (about 292,000 years) rather than wrap
 * round to negative. Locking: none.
 */
#include "views/views.h"

#include <stdlib.h>
#include <string.h>

#define OTHER_OPERATIONS "(other operations)"
#define OTHER_SERVICES "(other services)"

void twv_opstats_init(twv_opstats *s, size_t max_rows)
{
    memset(s, 0, sizeof *s);
    s->max_rows = max_rows ? max_rows : SIZE_MAX / 4;
}

void twv_opstats_free(twv_opstats *s)
{
    for (size_t i = 0; i < s->n_rows; i++) {
        free(s->rows[i].service);
        free(s->rows[i].operation);
        twv_quantiles_free(&s->rows[i].latency);
    }
    free(s->rows);
    free(s->table);
    memset(s, 0, sizeof *s);
}

static uint64_t hash_names(const char *a, const char *b)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a over both names and a separator */
    for (const unsigned char *p = (const unsigned char *)a; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    h = (h ^ 0xffu) * 0x100000001b3ull;
    for (const unsigned char *p = (const unsigned char *)b; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

static size_t slot_of(const twv_opstats *s, const char *service, const char *operation, uint64_t h)
{
    for (size_t i = (size_t)h & s->table_mask;; i = (i + 1) & s->table_mask) {
        uint32_t k = s->table[i];
        if (k == TWV_NONE)
            return i;
        const twv_opstat *r = &s->rows[k];
        if (strcmp(r->operation, operation) == 0 && strcmp(r->service, service) == 0)
            return i;
    }
}

static bool rehash(twv_opstats *s, size_t size)
{
    uint32_t *table = malloc(size * sizeof *table);
    if (!table)
        return false;
    memset(table, 0xff, size * sizeof *table);
    free(s->table);
    s->table = table;
    s->table_mask = size - 1;
    for (uint32_t k = 0; k < s->n_rows; k++) {
        const twv_opstat *r = &s->rows[k];
        s->table[slot_of(s, r->service, r->operation, hash_names(r->service, r->operation))] = k;
    }
    return true;
}

twv_opstat *twv_opstats_find(const twv_opstats *s, const char *service, const char *operation)
{
    if (!s->table)
        return NULL;
    uint32_t k = s->table[slot_of(s, service, operation, hash_names(service, operation))];
    return k == TWV_NONE ? NULL : &s->rows[k];
}

/* The row of (service, operation), made when new; NULL on allocation failure. */
static twv_opstat *row_of(twv_opstats *s, const char *service, const char *operation, bool may_fold)
{
    if (!s->table && !rehash(s, 64))
        return NULL;
    uint64_t h = hash_names(service, operation);
    size_t slot = slot_of(s, service, operation, h);
    if (s->table[slot] != TWV_NONE)
        return &s->rows[s->table[slot]];
    if (s->n_rows >= s->max_rows && may_fold) {
        s->folded_spans++;
        twv_opstat *other = twv_opstats_find(s, service, OTHER_OPERATIONS);
        if (other)
            return other;
        if (s->n_rows < s->max_rows + 64) /* room for a few "(other)" rows */
            return row_of(s, service, OTHER_OPERATIONS, false);
        return row_of(s, OTHER_SERVICES, OTHER_OPERATIONS, false);
    }
    if (s->n_rows == s->cap_rows) {
        size_t cap = s->cap_rows ? 2 * s->cap_rows : 32;
        twv_opstat *grown = realloc(s->rows, cap * sizeof *grown);
        if (!grown)
            return NULL;
        s->rows = grown;
        s->cap_rows = cap;
    }
    twv_opstat *r = &s->rows[s->n_rows];
    memset(r, 0, sizeof *r);
    r->service = strdup(service);
    r->operation = strdup(operation);
    if (!r->service || !r->operation) {
        free(r->service);
        free(r->operation);
        return NULL;
    }
    r->last_trace = UINT64_MAX;
    twv_quantiles_init(&r->latency);
    s->table[slot] = (uint32_t)s->n_rows++;
    if (2 * s->n_rows > s->table_mask + 1 && !rehash(s, 2 * (s->table_mask + 1)))
        return NULL;
    return &s->rows[s->n_rows - 1];
}

int64_t twv_add_us(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b)
        return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b)
        return INT64_MIN;
    return a + b;
}

bool twv_opstats_add_trace(twv_opstats *s, const twv_trace *t, bool with_critical)
{
    uint64_t trace_no = s->n_traces++;
    for (size_t i = 0; i < t->n_spans; i++) {
        const twv_span *sp = &t->spans[i];
        const char *op = sp->d->operation ? sp->d->operation : "";
        twv_opstat *r = row_of(s, sp->service, op, true);
        if (!r) {
            s->is_nomem = true;
            return false;
        }
        r->count++;
        r->errors += sp->is_error;
        if (sp->has_duration) {
            r->duration_us = twv_add_us(r->duration_us, sp->d->duration_us);
            if (!twv_quantiles_add(&r->latency, sp->d->duration_us)) {
                s->is_nomem = true;
                return false;
            }
        } else {
            r->no_duration++;
        }
        if (sp->self_us >= 0) {
            r->self_us = twv_add_us(r->self_us, sp->self_us);
            r->self_known++;
        }
        if (with_critical)
            r->critical_us = twv_add_us(r->critical_us, sp->critical_us);
        r->children += sp->n_children;
        if (sp->n_children > r->max_children)
            r->max_children = sp->n_children;
        if (r->last_trace != trace_no) {
            r->last_trace = trace_no;
            r->traces++;
        }
    }
    return true;
}
