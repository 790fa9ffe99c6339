/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fork.c: the library's one pthread_atfork registration and the registry of
 * fork hooks (fork.h): every lock that a thread other than the forking one
 * may hold at a fork, taken before it and released on both sides after it,
 * outermost level first on the way in and innermost first on the way out,
 * which is the nesting POSIX's rationale for pthread_atfork describes.
 *
 * Why one registration with levels: pthread_atfork runs prepare handlers in
 * the reverse order of their registration and the others in order, so with
 * one registration per module the nesting depended on which module happened
 * to register first. The record pool registered lazily, after the
 * reporters, so in the child the reporters' hook freed queued spans into a
 * pool whose lock was still held: the child never returned from fork().
 * Here the order is the level's, whatever the order of registration. And
 * pthread_atfork handlers can never be removed, while reporters and
 * samplers are freed long before the process exits.
 *
 * Locking: `registry_lock` guards the list; it is held from prepare to
 * parent/child (in the child the forking thread, which holds it, unlocks).
 * Lock order: registry_lock, then the entries' locks by level, then the
 * built-in leaves: the record pool, the id seed, the logger.
 */
#include "fork.h"

#include <pthread.h>
#include <stddef.h>

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static tw__fork_entry *head; /* guarded by registry_lock: by level, then age */
static tw__fork_entry *tail; /* guarded by registry_lock */
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int install_rc = -1; /* pthread_atfork's result, written once under install_once */

static void on_prepare(void)
{
    pthread_mutex_lock(&registry_lock);
    for (tw__fork_entry *e = head; e; e = e->next)
        e->prepare(e->arg);
    /* The leaves, innermost last: anything above may log or free spans. */
    tw__span_data_pool_fork_prepare();
    tw__ids_fork_prepare();
    tw__log_fork_prepare();
}

static void on_parent(void)
{
    tw__log_fork_parent();
    tw__ids_fork_parent();
    tw__span_data_pool_fork_parent();
    for (tw__fork_entry *e = tail; e; e = e->prev)
        e->parent(e->arg);
    pthread_mutex_unlock(&registry_lock);
}

static void on_child(void)
{
    tw__log_fork_child();
    tw__ids_fork_child();
    tw__span_data_pool_fork_child();
    for (tw__fork_entry *e = tail; e; e = e->prev)
        e->child(e->arg);
    pthread_mutex_unlock(&registry_lock);
}

static void install(void)
{
    install_rc = pthread_atfork(on_prepare, on_parent, on_child);
}

void tw__rwlock_reset_in_child(pthread_rwlock_t *lock, const pthread_rwlockattr_t *attr)
{
    pthread_rwlock_unlock(lock);
    pthread_rwlock_init(lock, attr);
}

bool tw__fork_install(void)
{
    pthread_once(&install_once, install);
    return install_rc == 0;
}

/* At load time, so the hooks exist before any thread of the library can
 * hold a lock; the calls on first use cover a library whose constructors
 * did not run. */
__attribute__((constructor)) static void install_at_load(void)
{
    tw__fork_install();
}

bool tw__fork_register(tw__fork_entry *e)
{
    if (!tw__fork_install())
        return false;
    pthread_mutex_lock(&registry_lock);
    /* After the last entry of the same or a shallower level. */
    tw__fork_entry *before = tail;
    while (before && before->level > e->level)
        before = before->prev;
    e->prev = before;
    e->next = before ? before->next : head;
    if (e->next)
        e->next->prev = e;
    else
        tail = e;
    if (before)
        before->next = e;
    else
        head = e;
    pthread_mutex_unlock(&registry_lock);
    return true;
}

void tw__fork_unregister(tw__fork_entry *e)
{
    pthread_mutex_lock(&registry_lock);
    bool is_linked = e->prev || e->next || head == e;
    if (is_linked) {
        if (e->prev)
            e->prev->next = e->next;
        else
            head = e->next;
        if (e->next)
            e->next->prev = e->prev;
        else
            tail = e->prev;
        e->prev = e->next = NULL;
    }
    pthread_mutex_unlock(&registry_lock);
}
