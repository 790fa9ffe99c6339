/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/cli_file.c: the one way the command reads a file the user names
 * as configuration (--map-file, --config, --sampling-strategies, the
 * agent's checkpoint): whole, but never past a bound, so that a path to
 * /dev/zero, a FIFO that never ends or a 10 GB file by mistake is an error
 * naming the file instead of memory that grows until the system kills the
 * process (bridge/cli.h); and the check that a file an option names is not
 * an option taken as its value. No state, no locks.
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
