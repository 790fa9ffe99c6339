/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/pipeline.c: between the receivers and the destinations
 * (agent.h). A receiver decodes one datagram, request or chunk into a
 * twa_spanbuf (the convert readers' twb_input feeds it); flushing the buffer
 * applies the processing and hands every span to every destination's queue:
 *
 *   --drop-name NAME   spans whose operation is NAME are dropped (counted
 *                      `filtered`), the SDK's drop-by-name rule
 *   --redact REGEX     every match in a string tag value or string log field
 *                      is replaced (POSIX extended regex; --redact-with, "***")
 *   --tag KEY=VALUE    set on the process (procs.c, when it is interned)
 *
 * The settings can change on SIGHUP: they sit behind a read-write lock that
 * each flush takes for reading. A record is still private to the receiver
 * thread when it is processed (one reference), so it is changed in place.
 */
#include "agent/agent.h"

#include <glib.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DESTS 16

struct twa_pipeline {
    twa_procs *procs;
    twa_dest *dests[MAX_DESTS];
    size_t n_dests;
    pthread_rwlock_t lock; /* guards the settings below */
    char **drop_names;
    size_t n_drop_names;
    regex_t redact;
    bool has_redact;
    char *redact_with;
};

static void free_settings(char **names, size_t n, regex_t *re, bool has_re, char *with)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (has_re)
        regfree(re);
    free(with);
}

static bool build_settings(const twa_pipeline_options *o, char ***names, regex_t *re, bool *has_re,
                           char **with, char *why, size_t why_size)
{
    *names = calloc(o->n_drop_names + 1, sizeof **names);
    *has_re = false;
    *with = strdup(o->redact_with ? o->redact_with : "***");
    if (!*names || !*with) {
        snprintf(why, why_size, "out of memory");
        return false;
    }
    for (size_t i = 0; i < o->n_drop_names; i++) {
        (*names)[i] = strdup(o->drop_names[i]);
        if (!(*names)[i]) {
            snprintf(why, why_size, "out of memory");
            return false;
        }
    }
    if (o->redact_regex && *o->redact_regex) {
        int rc = regcomp(re, o->redact_regex, REG_EXTENDED);
        if (rc != 0) {
            char msg[128];
            regerror(rc, re, msg, sizeof msg);
            snprintf(why, why_size, "--redact \"%s\": %s", o->redact_regex, msg);
            return false;
        }
        *has_re = true;
    }
    return true;
}

twa_pipeline *twa_pipeline_new(const twa_pipeline_options *o, twa_dest *const *dests,
                               size_t n_dests, char *why, size_t why_size)
{
    if (n_dests > MAX_DESTS) {
        snprintf(why, why_size, "at most %d --send destinations", MAX_DESTS);
        return NULL;
    }
    twa_pipeline *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    pthread_rwlock_init(&p->lock, NULL);
    p->procs = twa_procs_new(o->tags, o->n_tags);
    if (!p->procs) {
        snprintf(why, why_size, "--tag: expected KEY=VALUE");
        twa_pipeline_free(p);
        return NULL;
    }
    if (!build_settings(o, &p->drop_names, &p->redact, &p->has_redact, &p->redact_with, why,
                        why_size)) {
        p->n_drop_names = o->n_drop_names;
        twa_pipeline_free(p);
        return NULL;
    }
    p->n_drop_names = o->n_drop_names;
    if (n_dests)
        memcpy(p->dests, dests, n_dests * sizeof *dests);
    p->n_dests = n_dests;
    return p;
}

bool twa_pipeline_reconfigure(twa_pipeline *p, const twa_pipeline_options *o, char *why,
                              size_t why_size)
{
    char **names = NULL, *with = NULL;
    regex_t re;
    bool has_re = false;
    if (!build_settings(o, &names, &re, &has_re, &with, why, why_size)) {
        free_settings(names, names ? o->n_drop_names : 0, &re, has_re, with);
        return false;
    }
    if (!twa_procs_set_tags(p->procs, o->tags, o->n_tags)) {
        snprintf(why, why_size, "--tag: expected KEY=VALUE");
        free_settings(names, o->n_drop_names, &re, has_re, with);
        return false;
    }
    pthread_rwlock_wrlock(&p->lock);
    char **old_names = p->drop_names, *old_with = p->redact_with;
    size_t old_n = p->n_drop_names;
    regex_t old_re = p->redact;
    bool old_has = p->has_redact;
    p->drop_names = names;
    p->n_drop_names = o->n_drop_names;
    p->redact_with = with;
    if (has_re)
        p->redact = re;
    p->has_redact = has_re;
    pthread_rwlock_unlock(&p->lock);
    free_settings(old_names, old_n, &old_re, old_has, old_with);
    return true;
}

void twa_pipeline_free(twa_pipeline *p)
{
    if (!p)
        return;
    free_settings(p->drop_names, p->n_drop_names, &p->redact, p->has_redact, p->redact_with);
    twa_procs_free(p->procs);
    pthread_rwlock_destroy(&p->lock);
    free(p);
}

twa_procs *twa_pipeline_procs(twa_pipeline *p)
{
    return p->procs;
}

double twa_pipeline_fill(twa_pipeline *p)
{
    double max = 0;
    for (size_t i = 0; i < p->n_dests; i++) {
        double f = twa_dest_fill(p->dests[i]);
        if (f > max)
            max = f;
    }
    return max;
}

/* ---- processing ------------------------------------------------------------------------------ */

/* Replaces every match of the regex in @t's string value (read lock held). */
static void redact_tag(twa_pipeline *p, tw__arena *arena, tw__tag *t)
{
    if (t->type != TW_VALUE_STRING || memchr(t->v.str, '\0', t->len))
        return;
    regmatch_t m;
    if (regexec(&p->redact, t->v.str, 1, &m, 0) != 0)
        return;
    size_t with_len = strlen(p->redact_with);
    GString *out = g_string_sized_new(t->len + 16);
    const char *s = t->v.str;
    int flags = 0;
    while (regexec(&p->redact, s, 1, &m, flags) == 0) {
        g_string_append_len(out, s, m.rm_so);
        g_string_append_len(out, p->redact_with, (gssize)with_len);
        if (m.rm_eo == m.rm_so) { /* an empty match: step over one byte */
            if (!s[m.rm_eo])
                break;
            g_string_append_len(out, s + m.rm_eo, 1);
            s += m.rm_eo + 1;
        } else {
            s += m.rm_eo;
        }
        flags = REG_NOTBOL;
    }
    g_string_append(out, s);
    char *copy = tw__arena_strndup(arena, out->str, out->len);
    if (copy) {
        t->v.str = copy;
        t->len = out->len;
    }
    g_string_free(out, TRUE);
}

static void redact_span(twa_pipeline *p, tw__span_data *s)
{
    for (size_t i = 0; i < s->n_tags; i++)
        redact_tag(p, &s->arena, &s->tags[i]);
    for (size_t i = 0; i < s->n_logs; i++) {
        for (size_t k = 0; k < s->logs[i].n_fields; k++)
            redact_tag(p, &s->arena, &s->logs[i].fields[k]);
    }
}

static bool is_dropped_name(const twa_pipeline *p, const tw__span_data *s)
{
    const char *op = s->operation ? s->operation : "";
    for (size_t i = 0; i < p->n_drop_names; i++) {
        if (strcmp(op, p->drop_names[i]) == 0)
            return true;
    }
    return false;
}

/* ---- the span buffer --------------------------------------------------------------------------
 */

static bool on_emit(twb_input *in, tw__span_data *span, const tw__process *process)
{
    twa_spanbuf *b = in->user_data;
    twa_spanbuf_add(b, span, process);
    return true;
}

static bool on_reject(twb_input *in, size_t line_no, const void *raw, size_t raw_len,
                      const char *reason)
{
    (void)raw;
    (void)raw_len;
    twa_spanbuf *b = in->user_data;
    char why[256];
    if (line_no)
        snprintf(why, sizeof why, "line %zu: %s", line_no, reason);
    else
        snprintf(why, sizeof why, "%s", reason);
    twa_spanbuf_reject(b, why);
    return true;
}

static void on_warn(twb_input *in, size_t line_no, const char *reason)
{
    (void)line_no;
    twa_log(TWA_DEBUG, "%s: %s", in->name, reason);
}

void twa_spanbuf_init(twa_spanbuf *b, twa_pipeline *p, twa_recv_stats *stats)
{
    memset(b, 0, sizeof *b);
    b->pipeline = p;
    b->stats = stats;
    b->opts.max_value_bytes = 65536;
    b->opts.max_annotations = 1000;
    b->in.opts = &b->opts;
    b->in.emit = on_emit;
    b->in.reject = on_reject;
    b->in.warn = on_warn;
    b->in.user_data = b;
}

twb_input *twa_spanbuf_input(twa_spanbuf *b, const char *name)
{
    b->in.name = name;
    return &b->in;
}

static twa_proc *intern(twa_spanbuf *b, const tw__process *process)
{
    return twa_procs_intern(b->pipeline->procs, process);
}

bool twa_spanbuf_add(twa_spanbuf *b, tw__span_data *span, const tw__process *process)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        twa_item *grown = realloc(b->items, cap * sizeof *grown);
        if (!grown) {
            b->is_nomem = true;
            tw__span_data_unref(span);
            twa_spanbuf_reject(b, "out of memory");
            return false;
        }
        b->items = grown;
        b->cap = cap;
    }
    twa_proc *p = intern(b, process);
    if (!p) {
        b->is_nomem = true;
        tw__span_data_unref(span);
        twa_spanbuf_reject(b, "out of memory");
        return false;
    }
    b->items[b->n++] = (twa_item){span, p, b->chunk};
    return true;
}

void twa_spanbuf_reject(twa_spanbuf *b, const char *reason)
{
    if (b->n_rejected++ == 0)
        snprintf(b->first_reject, sizeof b->first_reject, "%s", reason);
}

size_t twa_spanbuf_flush(twa_spanbuf *b)
{
    twa_pipeline *p = b->pipeline;
    twa_add(&b->stats->received, b->n + b->n_rejected);
    twa_add(&b->stats->invalid, b->n_rejected);
    b->n_rejected = 0;
    b->first_reject[0] = '\0';
    size_t kept = 0, filtered = 0;
    pthread_rwlock_rdlock(&p->lock);
    for (size_t i = 0; i < b->n; i++) {
        if (p->n_drop_names && is_dropped_name(p, b->items[i].data)) {
            twa_item_release(&b->items[i]);
            filtered++;
            continue;
        }
        if (p->has_redact)
            redact_span(p, b->items[i].data);
        b->items[kept++] = b->items[i];
    }
    pthread_rwlock_unlock(&p->lock);
    twa_add(&b->stats->filtered, filtered);
    /* Follow mode: each span is one delivery per destination for its line. */
    for (size_t i = 0; i < kept; i++) {
        if (b->items[i].chunk)
            atomic_fetch_add_explicit(&b->items[i].chunk->pending, (long)p->n_dests,
                                      memory_order_acq_rel);
    }
    size_t accepted = kept;
    for (size_t d = 0; d < p->n_dests; d++) {
        size_t took = twa_dest_push(p->dests[d], b->items, kept, b->can_wait);
        if (took < accepted)
            accepted = took;
        /* Follow mode stopped while waiting: those lines stay not done (read
         * again at the next start). */
        for (size_t i = took; i < kept && !b->can_wait; i++)
            twa_chunk_done(b->items[i].chunk, 1);
    }
    for (size_t i = 0; i < kept; i++)
        twa_item_release(&b->items[i]);
    b->n = 0;
    return accepted;
}

void twa_spanbuf_discard(twa_spanbuf *b)
{
    for (size_t i = 0; i < b->n; i++)
        twa_item_release(&b->items[i]);
    b->n = 0;
    b->n_rejected = 0;
    b->first_reject[0] = '\0';
}

void twa_spanbuf_clear(twa_spanbuf *b)
{
    twa_spanbuf_discard(b);
    free(b->items);
    b->items = NULL;
    b->cap = 0;
}
