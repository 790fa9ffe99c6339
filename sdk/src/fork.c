/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report/fork.c: fork() safety for the reporters that own threads and locks
 * (the async reporter, async.c, and through it every sender). One
 * pthread_atfork registration, installed on first use, walks a registry of
 * entries: prepare hooks in registration order before the fork, parent or
 * child hooks in reverse order after it, which is the nesting POSIX's
 * rationale for pthread_atfork describes (take every lock before the fork,
 * release them all on both sides), so that no lock is copied into the child
 * held by a thread that does not exist there.
 *
 * Why a registry rather than one pthread_atfork call per reporter:
 * pthread_atfork handlers can never be removed, and a reporter is freed
 * long before the process exits.
 *
 * Locking: `registry_lock` guards the list. Lock order: registry_lock, then
 * the locks an entry's prepare hook takes; nobody takes registry_lock while
 * holding a reporter lock, so the order is acyclic. The hooks run with
 * registry_lock held; in the child it is released by the child handler,
 * which runs in the thread that locked it (the only thread left).
 */
#include "report/report.h"

#include <pthread.h>

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static tw__fork_entry *head; /* guarded by registry_lock: oldest first */
static tw__fork_entry *tail; /* guarded by registry_lock */
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int install_rc; /* pthread_atfork's result, written once under install_once */

static void on_prepare(void)
{
    pthread_mutex_lock(&registry_lock);
    for (tw__fork_entry *e = head; e; e = e->next) {
        if (e->prepare)
            e->prepare(e->arg);
    }
}

static void on_parent(void)
{
    for (tw__fork_entry *e = tail; e; e = e->prev) {
        if (e->parent)
            e->parent(e->arg);
    }
    pthread_mutex_unlock(&registry_lock);
}

static void on_child(void)
{
    for (tw__fork_entry *e = tail; e; e = e->prev) {
        if (e->child)
            e->child(e->arg);
    }
    pthread_mutex_unlock(&registry_lock);
}

static void install(void)
{
    install_rc = pthread_atfork(on_prepare, on_parent, on_child);
}

bool tw__fork_register(tw__fork_entry *e)
{
    pthread_once(&install_once, install);
    if (install_rc != 0)
        return false;
    pthread_mutex_lock(&registry_lock);
    e->next = NULL;
    e->prev = tail;
    if (tail)
        tail->next = e;
    else
        head = e;
    tail = e;
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
