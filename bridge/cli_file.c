/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/cli_file.c: the one way the command reads a file the user names
 * as configuration (--map-file, --config, --sampling-strategies, the
 * agent's checkpoint): whole, but never past a bound, so that a path to
 * /dev/zero, a FIFO that never ends or a 10 GB file by mistake is an error
 * naming the file instead of memory that grows until the system kills the
 * process (bridge/cli.h); the check that a file an option names is not
 * an option taken as its value; and the check that an output is not one of
 * the inputs. No state, no locks.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool tw__cli_read_file(const char *path, size_t max_bytes, char **text, size_t *len, int *err_no,
                       char *why, size_t why_size)
{
    *text = NULL;
    *len = 0;
    *err_no = 0;
    /* O_NONBLOCK: a FIFO with no writer must not hold the open (cleared
     * below for the reads, which then end at the writer's close). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        *err_no = errno;
        snprintf(why, why_size, "cannot open: %s", strerror(errno));
        return false;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        *err_no = EISDIR;
        snprintf(why, why_size, "is a directory");
        close(fd);
        return false;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    bool ok = buf != NULL;
    while (ok) {
        if (n == cap) {
            if (cap > max_bytes) {
                snprintf(why, why_size, "larger than %zu bytes (a configuration file)", max_bytes);
                *err_no = EFBIG;
                ok = false;
                break;
            }
            size_t grown_cap = cap * 2 > max_bytes + 1 ? max_bytes + 1 : cap * 2;
            char *grown = realloc(buf, grown_cap + 1);
            if (!grown) {
                ok = false;
                break;
            }
            buf = grown;
            cap = grown_cap;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            *err_no = errno;
            snprintf(why, why_size, "cannot read: %s", strerror(errno));
            ok = false;
            break;
        }
        if (got == 0)
            break;
        n += (size_t)got;
        if (n > max_bytes) {
            snprintf(why, why_size, "larger than %zu bytes (a configuration file)", max_bytes);
            *err_no = EFBIG;
            ok = false;
        }
    }
    close(fd);
    if (!ok) {
        if (!buf || !*err_no) {
            *err_no = ENOMEM;
            snprintf(why, why_size, "out of memory");
        }
        free(buf);
        return false;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return true;
}

bool tw__cli_output_path_ok(const char *option, const char *value, char *why, size_t why_size)
{
    if (!value || value[0] != '-' || value[1] == '\0')
        return true;
    snprintf(why, why_size,
             "%s takes a file, not '%s' (an option?); write ./%s for a file whose name starts "
             "with '-'",
             option, value, value);
    return false;
}

bool tw__cli_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    bool has_a = stat(a, &sa) == 0, has_b = stat(b, &sb) == 0;
    if (has_a || has_b)
        return has_a && has_b && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    const char *base_a = strrchr(a, '/'), *base_b = strrchr(b, '/');
    base_a = base_a ? base_a + 1 : a;
    base_b = base_b ? base_b + 1 : b;
    if (strcmp(base_a, base_b) != 0)
        return false;
    char *dir_a = strndup(a, (size_t)(base_a - a)), *dir_b = strndup(b, (size_t)(base_b - b));
    bool same = dir_a && dir_b && stat(*dir_a ? dir_a : ".", &sa) == 0 &&
                stat(*dir_b ? dir_b : ".", &sb) == 0 && sa.st_dev == sb.st_dev &&
                sa.st_ino == sb.st_ino;
    free(dir_a);
    free(dir_b);
    return same;
}

bool tw__cli_output_not_input(const char *option, const char *path, char *const *inputs, char *why,
                              size_t why_size)
{
    if (!path || strcmp(path, "-") == 0)
        return true;
    bool reads_stdin = !inputs || !inputs[0];
    for (size_t i = 0; inputs && inputs[i]; i++) {
        if (strcmp(inputs[i], "-") == 0) {
            reads_stdin = true;
        } else if (tw__cli_same_file(inputs[i], path)) {
            snprintf(why, why_size, "%s names the input %s: it would be emptied before it is read",
                     option, inputs[i]);
            return false;
        }
    }
    struct stat in, out;
    if (reads_stdin && fstat(STDIN_FILENO, &in) == 0 && S_ISREG(in.st_mode) &&
        stat(path, &out) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
        snprintf(why, why_size,
                 "%s names the file standard input reads: it would be emptied before it is read",
                 option);
        return false;
    }
    return true;
}
