/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/report/bounded.h: hang detectors for the reporter tests. A
 * test of "this call never blocks" must fail, not hang, when the call does
 * block: bounded_call runs the call on a helper thread and, if it has not
 * returned by a generous limit, runs a rescue that unblocks it (releases a
 * stuck receiver, opens a FIFO's read end), joins, and reports the failure.
 * wait_child_bounded does the same for a forked child (a child that hangs
 * inside fork() itself never reaches its own alarm): it waits on a pidfd
 * and kills the child at the limit. The limits are hang detectors, far
 * above the time the calls take; nothing here sleeps to let time pass.
 */
#ifndef TW_TESTS_REPORT_BOUNDED_H
#define TW_TESTS_REPORT_BOUNDED_H

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * Whether a forked child of these tests may start threads. Not under
 * ThreadSanitizer as Debian 12 ships it (GCC 12's libtsan, LLVM 14's
 * runtime): glibc gives a thread started in the child of a multi-threaded
 * process the stack, hence the pthread_t, of a parent thread that TSan
 * still counts as alive, and TSan dies ("dup thread with used id"; LLVM 15
 * forgets the parent's threads at fork). Under TSan the children stop
 * before anything that would start a thread (a reporter's or a sampler's
 * restart): what TSan checks is the parent side, every fork hook and the
 * parent's threads racing the fork. The plain and ASan builds run the
 * children whole.
 */
#if defined(__SANITIZE_THREAD__)
#define CHILD_CAN_START_THREADS 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CHILD_CAN_START_THREADS 0
#endif
#endif
#ifndef CHILD_CAN_START_THREADS
#define CHILD_CAN_START_THREADS 1
#endif

/* A child that had to be killed at the limit (not a real exit status). */
#define BOUNDED_CHILD_HUNG 300

static inline int64_t bounded_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

typedef struct bounded_run {
    void (*fn)(void *arg);
    void *arg;
    pthread_mutex_t lock;
    pthread_cond_t cond; /* on CLOCK_MONOTONIC */
    bool is_done;        /* guarded by lock */
    int64_t end_ms;      /* guarded by lock */
} bounded_run;

static inline void *bounded_thread(void *p)
{
    bounded_run *b = p;
    b->fn(b->arg);
    pthread_mutex_lock(&b->lock);
    b->is_done = true;
    b->end_ms = bounded_now_ms();
    pthread_cond_signal(&b->cond);
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

/* Runs fn(arg) on a new thread and waits at most @limit_ms for it. When it
 * is still running then, calls rescue(rescue_arg), which must make fn
 * return, and joins. Returns whether fn returned within the limit;
 * *elapsed_ms (if not NULL) is how long it ran, up to the rescue. */
static inline bool bounded_call(void (*fn)(void *arg), void *arg, unsigned int limit_ms,
                                void (*rescue)(void *rescue_arg), void *rescue_arg,
                                int64_t *elapsed_ms)
{
    bounded_run b = {.fn = fn, .arg = arg};
    pthread_mutex_init(&b.lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&b.cond, &attr);
    pthread_condattr_destroy(&attr);
    int64_t start = bounded_now_ms();
    pthread_t thread;
    if (pthread_create(&thread, NULL, bounded_thread, &b) != 0)
        return false;
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += limit_ms / 1000;
    deadline.tv_nsec += (long)(limit_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&b.lock);
    int rc = 0;
    while (!b.is_done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&b.cond, &b.lock, &deadline);
    bool in_time = b.is_done;
    int64_t end = in_time ? b.end_ms : bounded_now_ms();
    pthread_mutex_unlock(&b.lock);
    if (!in_time && rescue)
        rescue(rescue_arg);
    pthread_join(thread, NULL);
    pthread_cond_destroy(&b.cond);
    pthread_mutex_destroy(&b.lock);
    if (elapsed_ms)
        *elapsed_ms = end - start;
    return in_time;
}

/* Waits at most @limit_ms for child @pid: its exit status, 100 + the
 * signal that killed it, or BOUNDED_CHILD_HUNG after killing it at the
 * limit. */
static inline int wait_child_bounded(pid_t pid, unsigned int limit_ms)
{
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    bool is_hung = false;
    if (fd >= 0) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int64_t end = bounded_now_ms() + limit_ms;
        int rc;
        do {
            int64_t left = end - bounded_now_ms();
            rc = poll(&p, 1, left > 0 ? (int)left : 0);
        } while (rc < 0 && errno == EINTR);
        is_hung = rc == 0;
        close(fd);
    }
    if (is_hung)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return 200;
    }
    if (is_hung)
        return BOUNDED_CHILD_HUNG;
    if (WIFSIGNALED(status))
        return 100 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

#endif /* TW_TESTS_REPORT_BOUNDED_H */
