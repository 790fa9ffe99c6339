/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracewire/pthread.h: pthread_create() that carries the creating thread's
 * active context (tracewire/scope.h) into the new thread.
 *
 * Contrib header: it includes <pthread.h>, so <tracewire/tracewire.h> does
 * not include it (the core headers stay freestanding C: they must compile
 * where <pthread.h> does not exist). A declaration taking `void *` for the
 * pthread_t and attributes would have kept it in scope.h, at the price of
 * the type checks a drop-in replacement for pthread_create() should keep.
 * The function lives in libtracewire, which links pthreads anyway.
 *
 *   tw_span *parent = tw_span_start(tracer, "batch", NULL);
 *   tw_scope *scope = tw_scope_activate(parent, true);
 *   pthread_t th;
 *   tw_pthread_create(tracer, &th, NULL, worker, job); // worker's spans: children of "batch"
 *   tw_scope_close(scope);  // finishes "batch"; the thread keeps its context
 *   pthread_join(th, NULL);
 *
 * Ownership and thread safety: as pthread_create(); the capture made here is
 * freed by the new thread when @start_routine returns or the thread exits.
 */
#ifndef TRACEWIRE_PTHREAD_H
#define TRACEWIRE_PTHREAD_H

#include <pthread.h>

#include "tracewire/common.h"
#include "tracewire/scope.h"
#include "tracewire/tracer.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * tw_pthread_create: pthread_create() whose new thread runs @start_routine
 * with the calling thread's active context of @tracer active (captured
 * before the call returns, as tw_context_capture() does: only the context
 * travels, not the span). The scope ends when @start_routine returns or the
 * thread calls pthread_exit() or is cancelled; scopes of @tracer left open
 * by @start_routine are closed then (a warning each).
 * @tracer: the tracer whose active context travels. Other arguments and the
 * result: as pthread_create().
 * Returns: 0, or an error number (EINVAL for a NULL @tracer, @thread or
 * @start_routine; ENOMEM when the hand-over record cannot be allocated;
 * pthread_create()'s own errors); on error no thread was created and nothing
 * runs. If only the capture cannot be allocated, the thread still starts,
 * without the context (logged).
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN int tw_pthread_create(tw_tracer *tracer, pthread_t *thread, const pthread_attr_t *attr,
                                void *(*start_routine)(void *), void *arg);

#ifdef __cplusplus
}
#endif

#endif /* TRACEWIRE_PTHREAD_H */
