/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/convert/measure.c: runs one timed command of the conversion
 * benchmark (run_convert_bench.sh, `make bench`) and reports its cost. GNU
 * time (/usr/bin/time) is not always installed, and a wrapper in Python or
 * bash would add its own size to the peak RSS: Linux's ru_maxrss of a child
 * includes the memory of the process it was forked from, up to its exec. This
 * one is about 1 MiB.
 *
 *   measure TIMEOUT_S STDOUT_FILE STDERR_FILE COMMAND [ARG...]
 *
 * Prints one line: "wall_s cpu_s max_rss_kib status sys_s": elapsed time
 * (CLOCK_MONOTONIC), user + system time, the peak resident set that wait4()
 * reports for the command (the largest of it and the descendants it waited
 * for, not their sum), and its exit status (128 + N when killed by signal N;
 * 124, as timeout(1) says, when it ran past TIMEOUT_S and was killed; 127
 * when it could not be started), and the system (kernel) part of cpu_s: reading
 * the input and writing the output through the page cache. Stdin is /dev/null. Exit status 0 when
 * the line was printed, 2 on a usage error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* wait4 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t is_timed_out;
static volatile pid_t child_pid;

static void on_alarm(int signum)
{
    (void)signum;
    is_timed_out = 1;
    kill(-child_pid, SIGKILL); /* the child leads its own process group */
}

static int open_or_die(const char *path, int flags)
{
    int fd = open(path, flags, 0644);
    if (fd < 0) {
        fprintf(stderr, "measure: %s: %s\n", path, strerror(errno));
        exit(2);
    }
    return fd;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: measure TIMEOUT_S STDOUT_FILE STDERR_FILE COMMAND [ARG...]\n");
        return 2;
    }
    double timeout_s = strtod(argv[1], NULL);
    int in = open_or_die("/dev/null", O_RDONLY);
    int out = open_or_die(argv[2], O_WRONLY | O_CREAT | O_TRUNC);
    int err = open_or_die(argv[3], O_WRONLY | O_CREAT | O_TRUNC);

    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pid_t pid = fork();
    if (pid < 0) {
        perror("measure: fork");
        return 2;
    }
    if (pid == 0) {
        setpgid(0, 0);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        execvp(argv[4], argv + 4);
        fprintf(stderr, "measure: %s: %s\n", argv[4], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    child_pid = pid;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval limit = {
        .it_value = {.tv_sec = (time_t)timeout_s,
                     .tv_usec = (suseconds_t)((timeout_s - (double)(time_t)timeout_s) * 1e6)}};
    setitimer(ITIMER_REAL, &limit, NULL);

    int status = 0;
    struct rusage usage;
    while (wait4(pid, &status, 0, &usage) < 0) {
        if (errno != EINTR) {
            perror("measure: wait4");
            return 2;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);

    int code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    if (is_timed_out)
        code = 124;
    double wall = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
    double sys = (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec / 1e6;
    double cpu = (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6 + sys;
    printf("%.3f %.3f %ld %d %.3f\n", wall, cpu, usage.ru_maxrss, code, sys);
    return 0;
}
