/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scope/pthread.c: tw_pthread_create, pthread_create() that carries the
 * creator's active context into the new thread (tracewire/pthread.h).
 *
 * Where it sits: before any span of the new thread; the capture is taken on
 * the creating thread and activated first thing in the new one.
 *
 * The hand-over record (start routine, argument, capture) is malloc'd by the
 * creator and freed by the new thread. pthread_create() orders the two, so
 * no other synchronisation is needed. The scope is closed and the record
 * freed by a cleanup handler, so pthread_exit() and cancellation inside the
 * start routine leak nothing.
 */
#include "scope/scope.h"

#include <errno.h>
#include <stdlib.h>

#include "tracewire/pthread.h"

typedef struct {
    void *(*start_routine)(void *);
    void *arg;
    tw_captured *captured; /* NULL: the capture failed; the thread runs without it */
    tw_scope *scope;       /* set by the new thread */
} handover;

static void handover_end(void *p)
{
    handover *h = p;
    tw__scope_close_unwinding(h->scope, "tw_pthread_create: the start routine");
    tw_captured_free(h->captured);
    free(h);
}

static void *thread_main(void *p)
{
    handover *h = p;
    void *result = NULL;
    pthread_cleanup_push(handover_end, h);
    h->scope = tw_captured_activate(h->captured);
    result = h->start_routine(h->arg);
    pthread_cleanup_pop(1);
    return result;
}

int tw_pthread_create(tw_tracer *tracer, pthread_t *thread, const pthread_attr_t *attr,
                      void *(*start_routine)(void *), void *arg)
{
    TW_CHECK_ARG(tracer && thread && start_routine, EINVAL);
    handover *h = malloc(sizeof(*h));
    if (!h) {
        tw__log_msg(TW_LOG_ERROR, "tw_pthread_create: out of memory");
        return ENOMEM;
    }
    h->start_routine = start_routine;
    h->arg = arg;
    h->captured = tw_context_capture(tracer); /* NULL on OOM (logged): start without it */
    h->scope = NULL;
    int rc = pthread_create(thread, attr, thread_main, h);
    if (rc != 0) {
        tw_captured_free(h->captured);
        free(h);
    }
    return rc;
}
