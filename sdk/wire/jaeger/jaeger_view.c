/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/jaeger/jaeger_view.c: the Jaeger targets' error and service rules
 * (wire/jaeger/jaeger_view.h has them).
 */
#include "wire/jaeger/jaeger_view.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "wire/model/conventions.h"

void tw__jaeger_view_init(tw__jaeger_view *v)
{
    memset(v, 0, sizeof *v);
}

void tw__jaeger_view_clear(tw__jaeger_view *v)
{
    free(v->tags);
    memset(v, 0, sizeof *v);
}

/* Whether tag @t's key is the @len bytes of @key (a literal). */
static inline bool key_is(const tw__tag *t, const char *key, size_t len)
{
    return t->key_len == len && t->key && memcmp(t->key, key, len) == 0;
}

/* Whether the view differs from the span, in one pass over its tags (every
 * span of every Jaeger target comes here): the keys looked for have three
 * lengths, so most tags are passed over on their length alone. */
static bool needs_change(const tw__span_data *s, bool *rename_lc)
{
    bool lc = false, component = false, error_string = false;
    for (size_t i = 0; i < s->n_tags; i++) {
        const tw__tag *t = &s->tags[i];
        /* Lengths 2, 5 and 9 (bits 0x224): most keys fail this one test. */
        if (t->key_len >= 32 || !((UINT32_C(1) << t->key_len) & 0x224))
            continue;
        switch (t->key_len) {
        case 2:
            lc = lc || key_is(t, "lc", 2);
            break;
        case 5:
            error_string = error_string || (t->type == TW_VALUE_STRING && key_is(t, "error", 5));
            break;
        case 9:
            component = component || key_is(t, "component", 9);
            break;
        default:
            break;
        }
    }
    *rename_lc = lc && !component;
    return *rename_lc || error_string;
}

const tw__span_data *tw__jaeger_view_of(tw__jaeger_view *v, const tw__span_data *s)
{
    bool rename_lc;
    bool fix_duration = s->duration_us <= 0;
    if (!needs_change(s, &rename_lc) && !fix_duration)
        return s;
    size_t n_errors = 0;
    for (size_t i = 0; i < s->n_tags; i++)
        n_errors += tw__tag_key_is(&s->tags[i], "error");
    size_t need = s->n_tags + n_errors;
    if (need > v->cap_tags) {
        tw__tag *grown = realloc(v->tags, need * sizeof *grown);
        if (!grown)
            return NULL;
        v->tags = grown;
        v->cap_tags = need;
    }
    size_t n = 0;
    for (size_t i = 0; i < s->n_tags; i++) {
        const tw__tag *t = &s->tags[i];
        v->tags[n] = *t;
        if (rename_lc && tw__tag_key_is(t, "lc")) {
            v->tags[n].key = "component";
            v->tags[n].key_len = (uint32_t)strlen("component");
        }
        if (t->type != TW_VALUE_STRING || !tw__tag_key_is(t, "error")) {
            n++;
            continue;
        }
        tw__tag *e = &v->tags[n++];
        e->type = TW_VALUE_BOOL;
        e->len = 0;
        if (t->len == 0 || strcasecmp(t->v.str, "true") == 0) {
            e->v.boolean = true;
        } else if (strcasecmp(t->v.str, "false") == 0) {
            e->v.boolean = false;
        } else {
            e->v.boolean = true;
            tw__tag *m = &v->tags[n++];
            *m = *t; /* the message, borrowed from the record */
            m->key = "error.message";
            m->key_len = (uint32_t)strlen("error.message");
        }
    }
    v->span = *s;
    v->span.tags = v->tags;
    v->span.n_tags = n;
    v->span.cap_tags = v->cap_tags;
    if (fix_duration)
        v->span.duration_us = 1;
    return &v->span;
}

const tw__process *tw__process_named(const tw__process *p, const char *name, tw__process *scratch)
{
    if (p && p->service_name && *p->service_name)
        return p;
    memset(scratch, 0, sizeof *scratch);
    if (p)
        *scratch = *p;
    scratch->service_name = name;
    return scratch;
}

const tw__process *tw__jaeger_process(const tw__process *p, tw__process *scratch)
{
    return tw__process_named(p, TW__JAEGER_EMPTY_SERVICE, scratch);
}
