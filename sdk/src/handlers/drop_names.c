/* SPDX-License-Identifier: Apache-2.0 */
/*
 * handlers/drop_names.c: the drop-by-name handler (tw_handler_drop_names_new):
 * drops finished spans whose operation name is in a fixed list, such as
 * health checks and readiness probes.
 *
 * Where it sits: one handler of the finished-span chain (handlers.h), run on
 * the finishing thread. The names are copied into one sorted array at
 * construction and only read afterwards: a binary search (strcmp, so exact,
 * case-sensitive bytes) per span, no lock, no allocation. A hash table would
 * save a few comparisons on long lists; lists are short (a handful of
 * probes), and a sorted array is plainly safe to read from any thread.
 */
#include "handlers/handlers.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    tw_span_handler handler; /* first: the handler lives in its own user_data */
    size_t n;
    char **names; /* sorted; each owned */
} name_dropper;

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static tw_handler_result drop_on_finish(void *user_data, tw_mutable_span *span)
{
    const name_dropper *d = user_data;
    const char *op = tw_mutable_span_operation(span);
    return d->n && bsearch(&op, d->names, d->n, sizeof(char *), compare_names) ? TW_HANDLER_DROP
                                                                               : TW_HANDLER_KEEP;
}

static void drop_destroy(void *user_data)
{
    name_dropper *d = user_data;
    for (size_t i = 0; i < d->n; i++)
        free(d->names[i]);
    free(d->names);
    free(d);
}

tw_span_handler *tw_handler_drop_names_new(const char *const *names, size_t n)
{
    TW_CHECK_ARG(names || n == 0, NULL);
    for (size_t i = 0; i < n; i++)
        TW_CHECK_ARG(names[i] != NULL, NULL);
    name_dropper *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->names = n ? calloc(n, sizeof(char *)) : NULL;
    if (n && !d->names) {
        free(d);
        return NULL;
    }
    for (; d->n < n; d->n++) {
        d->names[d->n] = strdup(names[d->n]);
        if (!d->names[d->n]) {
            drop_destroy(d); /* frees the d->n names copied so far */
            return NULL;
        }
    }
    if (n)
        qsort(d->names, n, sizeof(char *), compare_names);
    d->handler = (tw_span_handler){.size = sizeof(tw_span_handler),
                                   .wants_unsampled = false,
                                   .on_finish = drop_on_finish,
                                   .destroy = drop_destroy,
                                   .user_data = d};
    return &d->handler;
}
