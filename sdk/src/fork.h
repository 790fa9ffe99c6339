/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fork.h: fork() safety for every lock of the library (internal).
 *
 * A lock held by another thread when a thread calls fork() is copied into
 * the child held by a thread that does not exist there; the child's first
 * use of it waits forever. So every lock that a thread other than the
 * forking one may hold goes through this registry: one pthread_atfork
 * registration (fork.c) takes them all before the fork and releases them on
 * both sides after it, so the child starts with every lock free and every
 * structure consistent.
 *
 * Order is by level, never by when a hook was registered: prepare hooks run
 * from the outermost level to the innermost (a lock is taken before the
 * locks its holder may take while holding it), parent and child hooks in
 * the reverse order, so a child hook may use (free into, log to) anything of
 * a deeper level, which is released already. The innermost locks, under
 * which nothing else is taken, are built in and always last: the span record
 * pool, the id seed and the logger (fork.c calls them itself).
 *
 * Rules for a hook: prepare only takes its locks (it never waits for I/O:
 * fork() must not wait on the network). Child hooks run single-threaded
 * and may allocate; they unlock their mutexes (the forking thread holds
 * them) and reset their rwlocks with tw__rwlock_reset_in_child, because
 * glibc tells a rwlock writer's unlock from a reader's by thread id, which
 * is not the same in the child: a plain unlock there is taken for a
 * reader's and leaves the lock held. Nobody may register or unregister an
 * entry while holding a lock that a prepare hook takes (registration waits
 * for a fork in progress, whose prepare waits for that lock).
 *
 * Thread safety: register and unregister from any thread.
 */
#ifndef TW_FORK_H
#define TW_FORK_H

#include <pthread.h>
#include <stdbool.h>

/* Levels, outermost first. A lock's level is deeper than that of every lock
 * held while it is taken. */
typedef enum tw__fork_level {
    /* the async reporters' queue locks and the memory reporter's lock */
    TW__FORK_LEVEL_REPORTER = 10,
    /* the remote sampler, which decides through the sampler it holds */
    TW__FORK_LEVEL_SAMPLER_OUTER = 20,
    /* samplers with state: token buckets, per-operation tables, adaptive */
    TW__FORK_LEVEL_SAMPLER = 30,
    /* finished-span handlers with state (latency metrics) */
    TW__FORK_LEVEL_HANDLER = 40,
    /* the instrumentation of other libraries (the libcurl side table) */
    TW__FORK_LEVEL_CONTRIB = 50,
} tw__fork_level;

typedef struct tw__fork_entry {
    tw__fork_level level;
    void (*prepare)(void *arg); /* takes the locks */
    void (*parent)(void *arg);  /* releases them in the parent */
    void (*child)(void *arg);   /* frees them in the child */
    void *arg;
    struct tw__fork_entry *prev, *next; /* guarded by the registry lock */
} tw__fork_entry;

/* In a fork child hook: makes @lock, which prepare took for writing, free
 * again. Unlocked (what ThreadSanitizer expects of the thread that locked
 * it) and then initialised anew (what glibc needs: the unlock alone is
 * taken for a reader's, the thread id having changed, and leaves the lock
 * write-held). The caller's rwlock attributes are not kept: pass them in
 * @attr (NULL: defaults). */
void tw__rwlock_reset_in_child(pthread_rwlock_t *lock, const pthread_rwlockattr_t *attr);

/* Installs the library's one pthread_atfork registration (once; also done
 * when the library is loaded). False when pthread_atfork failed. */
bool tw__fork_install(void);

/* Adds @e (caller-owned, filled in, kept until unregistered) after the
 * entries of its level and every shallower one. False when pthread_atfork
 * failed (the entry is not added; a forked child may then hang on its
 * lock, which is logged by the caller). */
bool tw__fork_register(tw__fork_entry *e);
/* Removes @e; waits for a fork in progress. A no-op when not registered. */
void tw__fork_unregister(tw__fork_entry *e);

/* The built-in innermost hooks (fork.c calls them after every entry's
 * prepare and before every entry's parent or child hook). */
void tw__span_data_pool_fork_prepare(void);
void tw__span_data_pool_fork_parent(void);
void tw__span_data_pool_fork_child(void);
void tw__ids_fork_prepare(void);
void tw__ids_fork_parent(void);
void tw__ids_fork_child(void);
void tw__log_fork_prepare(void);
void tw__log_fork_parent(void);
void tw__log_fork_child(void);

#endif /* TW_FORK_H */
