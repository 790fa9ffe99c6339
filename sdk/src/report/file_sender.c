/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report/file_sender.c: the Dapper-style local span log ("Out-of-
 * band collection"): a tw__sender that appends one JSON line per span
 * (wire/dapper/dapper_log.h, docs/dapper-log-format.md) to a file that rotates by
 * size, under the async reporter (async.c), so that the file is opened,
 * written, rotated and synced on the reporter thread only.
 *
 * Lines collect in `pending` and reach the file with one write(2) per
 * flush, or sooner when WRITE_CHUNK bytes are waiting, so memory is bounded
 * by that chunk plus one line. The file is opened O_APPEND: each write is
 * whole lines placed at the end of the file, which is what lets several
 * processes (a prefork server's children) share one path. Before a line
 * that would take the file past max_file_bytes, the pending lines are
 * written and the file rotates: path.N-1 -> path.N, ..., path -> path.1,
 * then a new path. A rotation another writer did first is noticed by
 * comparing the path's inode with ours, and the path is reopened instead.
 *
 * fsync policy: fdatasync at each flush when something was written since the
 * last one, before each rotation and at close (reporter.h has the user-facing
 * statement). Errors never stop the reporter: spans whose write failed count
 * as failed; a short write that cut a line is ended with "\n" before the
 * next write, so the damage is one unreadable line.
 *
 * Never blocking: the file is opened O_NONBLOCK, so a named pipe with no
 * reader fails at once (ENXIO: the spans count as failed, the open is tried
 * again with the next batch) instead of waiting in open() for a reader,
 * which would have stopped the reporter thread and with it flush, close and
 * fork(). Writes to what is not a regular file (a FIFO, a terminal) stay
 * non-blocking: a full pipe is waited for while its reader makes progress,
 * at most WRITE_STALL_MS without any, and never past the close deadline;
 * then the lines not written count as failed, and later writes do not wait
 * again until one gets something through (a reader that stopped costs one
 * stall, not one per batch). A regular file is written
 * blocking (the flag is cleared; the disk is not waited on like a reader).
 *
 * Locking: none. The sender is used by its reporter thread only (and by
 * open/free before and after that thread runs, and by the fork hook in a
 * single-threaded child).
 */
#include "report/report.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "wire/dapper/dapper_log.h"

/* Lines waiting beyond this many bytes are written at once. A write per
 * span would cost a syscall each; a larger chunk only delays the bytes. */
#define WRITE_CHUNK ((size_t)64 << 10)
/* A buffer that one huge span grew beyond this is freed after use, so the
 * sender's memory returns to about WRITE_CHUNK after an outlier. */
#define KEEP_BUFFER_BYTES ((size_t)1 << 20)
/* How long a write to a pipe waits for its reader to take anything. */
#define WRITE_STALL_MS 1000
#define MIN_MAX_FILE_BYTES 1024u
#define MAX_MAX_FILES 1000u

typedef struct {
    tw__sender base;
    char *path;
    char *from, *to;  /* scratch names for rotation: path + ".N" */
    size_t name_size; /* of from and to */
    size_t max_file_bytes;
    size_t max_files;

    int fd;           /* -1 when not open */
    bool is_regular;  /* fd is a regular file: rotated and synced */
    dev_t dev;        /* of fd: a different inode at path means another rotation */
    ino_t ino;        /*   (or a deletion) happened */
    size_t file_size; /* end of file after our last write (other writers included) */
    bool is_dirty;    /* written since the last fdatasync */
    bool is_torn;     /* a short write left a partial line at the end */
    bool is_stalled;  /* the last write found the pipe full for WRITE_STALL_MS: the
                       * next ones do not wait until one gets something through */
    int last_errno;   /* the last error logged, so each new error is logged once */

    tw__dapper_log_encoder *enc;
    tw__buf line;     /* the span being encoded */
    tw__buf pending;  /* complete lines waiting for write(2) */
    size_t n_pending; /* spans in pending */
} file_sender;

static void log_errno(file_sender *f, const char *what, const char *name, int e)
{
    if (e == f->last_errno)
        return;
    f->last_errno = e;
    if (e == ENXIO && strcmp(what, "cannot open") == 0)
        tw__log_for(TW_LOG_WARN, "dapper-file",
                    "dapper-file: cannot open %s: a named pipe with no reader (spans are counted "
                    "as failed until a reader opens it)",
                    name);
    else if (e == EAGAIN)
        tw__log_for(TW_LOG_WARN, "dapper-file",
                    "dapper-file: cannot write %s: its reader took nothing for %d ms (spans are "
                    "counted as failed)",
                    name, WRITE_STALL_MS);
    else
        tw__log_for(TW_LOG_WARN, "dapper-file", "dapper-file: %s %s: %s", what, name, strerror(e));
}

static void sync_file(file_sender *f)
{
    if (f->fd < 0 || !f->is_regular || !f->is_dirty)
        return;
    if (fdatasync(f->fd) != 0)
        log_errno(f, "cannot sync", f->path, errno);
    f->is_dirty = false;
}

static void close_file(file_sender *f)
{
    if (f->fd < 0)
        return;
    sync_file(f);
    close(f->fd);
    f->fd = -1;
}

static bool open_file(file_sender *f)
{
    if (f->fd >= 0)
        return true;
    int fd = open(f->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0644);
    if (fd < 0) {
        log_errno(f, "cannot open", f->path, errno);
        return false;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        log_errno(f, "cannot stat", f->path, errno);
        close(fd);
        return false;
    }
    if (S_ISREG(st.st_mode)) {
        int flags = fcntl(fd, F_GETFL);
        if (flags >= 0)
            fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    }
    f->fd = fd;
    f->is_regular = S_ISREG(st.st_mode);
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    f->file_size = f->is_regular ? (size_t)st.st_size : 0;
    f->is_dirty = false;
    /* A torn line belongs to the file we were writing; this one is another
     * (we close only to rotate or to follow the path to a new file). */
    f->is_torn = false;
    f->is_stalled = false;
    return true;
}

/* Whether @path still names our open file (false when it was renamed away or
 * deleted by another writer, logrotate or a person). */
static bool path_is_ours(file_sender *f)
{
    struct stat st;
    return stat(f->path, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino;
}

/* path.N for N >= 1 into @buf (from or to, sized for it at creation). */
static void numbered(const file_sender *f, char *buf, size_t n)
{
    snprintf(buf, f->name_size, "%s.%zu", f->path, n);
}

/* Shifts the rotated files and moves the current one to path.1 (or deletes
 * it when none are kept), then closes it; the next write opens a new file.
 * Returns false when the current file could not be moved (spans then fail
 * until it can: writing on would break the size bound). */
static bool rotate(file_sender *f)
{
    sync_file(f); /* the rotated file is complete on disk before it is renamed */
    for (size_t n = f->max_files; n > 1; n--) {
        numbered(f, f->from, n - 1);
        numbered(f, f->to, n);
        if (rename(f->from, f->to) != 0 && errno != ENOENT)
            log_errno(f, "cannot rename", f->from, errno);
    }
    int rc;
    if (f->max_files == 0) {
        rc = unlink(f->path);
    } else {
        numbered(f, f->to, 1);
        rc = rename(f->path, f->to);
    }
    if (rc != 0 && errno != ENOENT) {
        log_errno(f, "cannot rotate", f->path, errno);
        return false;
    }
    close_file(f);
    return true;
}

/* Makes room for @need more bytes in the current file: opens it, reopens a
 * path another writer rotated, rotates a full file. */
static bool make_room(file_sender *f, size_t need)
{
    for (int attempt = 0; attempt < 3; attempt++) {
        if (!open_file(f))
            return false;
        if (!f->is_regular || f->file_size + need <= f->max_file_bytes)
            return true;
        if (!path_is_ours(f)) {
            close_file(f); /* rotated (or deleted) by someone else: take the new file */
            continue;
        }
        if (!rotate(f))
            return false;
    }
    return f->fd >= 0 && f->file_size + need <= f->max_file_bytes;
}

/* A non-blocking descriptor is full: waits until it takes more, at most
 * until @stall_end_ns and the close deadline. False when it did not. */
static bool wait_writable(file_sender *f, int64_t stall_end_ns)
{
    for (;;) {
        int64_t left_ns = stall_end_ns - tw__mono_ns();
        unsigned int left_ms = left_ns > 0 ? (unsigned int)((left_ns + 999999) / 1000000) : 0;
        left_ms = tw__sender_ms_left(&f->base, left_ms);
        if (left_ms == 0)
            return false;
        /* Slices, so a close deadline set meanwhile is seen within 100 ms. */
        struct pollfd p = {.fd = f->fd, .events = POLLOUT};
        int rc = poll(&p, 1, left_ms < 100 ? (int)left_ms : 100);
        if (rc > 0)
            return true;
        if (rc < 0 && errno != EINTR)
            return false;
    }
}

/* write(2) all of @len bytes, retrying on EINTR and short writes, and
 * waiting (bounded, see wait_writable) while a pipe is full; returns the
 * bytes written and sets *error to the errno that stopped it (0). */
static size_t write_all(file_sender *f, const uint8_t *data, size_t len, int *error)
{
    size_t done = 0;
    *error = 0;
    int64_t stall_end_ns = tw__mono_ns() + (int64_t)WRITE_STALL_MS * 1000000;
    while (done < len) {
        ssize_t n = write(f->fd, data + done, len - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            bool is_full = errno == EAGAIN || errno == EWOULDBLOCK;
            if (is_full && !f->is_stalled && wait_writable(f, stall_end_ns))
                continue;
            f->is_stalled = is_full;
            *error = is_full ? EAGAIN : errno;
            break;
        }
        if (n > 0) {
            f->is_stalled = false;
            stall_end_ns = tw__mono_ns() + (int64_t)WRITE_STALL_MS * 1000000;
        }
        if (n == 0) {
            *error = EIO;
            break;
        }
        done += (size_t)n;
    }
    return done;
}

/* Writes the pending lines; every pending span ends as sent or failed. */
static void write_pending(file_sender *f)
{
    if (f->n_pending == 0)
        return;
    tw__report_counters *c = f->base.counters;
    size_t n = f->n_pending;
    size_t lines_written = 0;
    int error = 0;
    if (open_file(f)) {
        if (f->is_torn) {
            /* End the cut line first, so the next record starts a line. */
            if (write_all(f, (const uint8_t *)"\n", 1, &error) == 1)
                f->is_torn = false;
        }
        size_t written = 0;
        if (!f->is_torn)
            written = write_all(f, f->pending.data, f->pending.len, &error);
        for (size_t i = 0; i < written; i++)
            lines_written += f->pending.data[i] == '\n';
        if (written > 0) {
            f->is_dirty = true;
            f->is_torn = f->pending.data[written - 1] != '\n';
            tw__count(&c->batches, 1);
            tw__count(&c->bytes, written);
            off_t end = f->is_regular ? lseek(f->fd, 0, SEEK_CUR) : -1;
            f->file_size = end >= 0 ? (size_t)end : f->file_size + written;
        }
        if (error)
            log_errno(f, "cannot write", f->path, error);
        else
            f->last_errno = 0;
    }
    tw__count(&c->sent, lines_written);
    if (n > lines_written)
        tw__count(&c->failed, n - lines_written);
    tw__buf_reset(&f->pending);
    if (f->pending.cap > KEEP_BUFFER_BYTES)
        tw__buf_free(&f->pending);
    f->n_pending = 0;
}

static void file_append(tw__sender *s, tw__span_data *span)
{
    file_sender *f = (file_sender *)s;
    tw__report_counters *c = s->counters;
    tw__buf_reset(&f->line);
    bool is_encoded = tw__dapper_log_encode_span(f->enc, span, &f->line);
    tw__span_data_unref(span);
    if (!is_encoded) {
        tw__count(&c->failed, 1);
        return;
    }
    if (f->line.len > f->max_file_bytes) {
        tw__sender_too_large(s, f->line.len, f->max_file_bytes);
        return;
    }
    if (f->pending.len + f->line.len > WRITE_CHUNK)
        write_pending(f);
    if (f->fd < 0 ||
        (f->is_regular && f->file_size + f->pending.len + f->line.len > f->max_file_bytes)) {
        write_pending(f); /* the lines before this one belong to the current file */
        if (!make_room(f, f->line.len)) {
            tw__count(&c->failed, 1);
            return;
        }
    }
    if (!tw__buf_append(&f->pending, f->line.data, f->line.len)) {
        tw__count(&c->failed, 1);
        return;
    }
    f->n_pending++;
    if (f->line.cap > KEEP_BUFFER_BYTES)
        tw__buf_free(&f->line);
}

static void file_flush(tw__sender *s)
{
    file_sender *f = (file_sender *)s;
    write_pending(f);
    sync_file(f);
    /* Another writer or logrotate may have moved the file: follow the path,
     * so our lines do not go on landing in a rotated or deleted file. */
    if (f->fd >= 0 && f->is_regular && !path_is_ours(f))
        close_file(f);
}

static tw_status file_open(tw__sender *s, const tw__process *process, tw_error **err)
{
    file_sender *f = (file_sender *)s;
    tw__dapper_log_encoder_free(f->enc);
    f->enc = tw__dapper_log_encoder_new(process);
    if (!f->enc) {
        tw__set_error(err, TW_E_NOMEM, "dapper-file: out of memory encoding the process");
        return TW_E_NOMEM;
    }
    return TW_OK; /* the file itself is opened by the reporter thread */
}

static void file_after_fork_child(tw__sender *s)
{
    file_sender *f = (file_sender *)s;
    /* The parent writes these lines; the shared O_APPEND descriptor stays. */
    tw__buf_reset(&f->pending);
    f->n_pending = 0;
}

static void file_free(tw__sender *s)
{
    file_sender *f = (file_sender *)s;
    if (!f)
        return;
    close_file(f);
    tw__dapper_log_encoder_free(f->enc);
    tw__buf_free(&f->line);
    tw__buf_free(&f->pending);
    free(f->path);
    free(f->from);
    free(f->to);
    free(f);
}

static tw__sender *file_fork_clone(const tw__sender *s);

static const tw__sender_vtable file_vtable = {
    .size = sizeof(tw__sender_vtable),
    .name = "dapper-file",
    .open = file_open,
    .append = file_append,
    .flush = file_flush,
    .free = file_free,
    .after_fork_child = file_after_fork_child,
    .fork_clone = file_fork_clone,
    .bound_unit = "log file",
    .bound_setting = "TRACEWIRE_LOG_FILE_MAX_BYTES",
    .bound_max = SIZE_MAX,
};

/* Path, limits and scratch names; false when out of memory. */
static bool file_init(file_sender *f, const char *path, size_t max_file_bytes, size_t max_files)
{
    f->base.vtable = &file_vtable;
    f->fd = -1;
    f->max_file_bytes = max_file_bytes;
    f->max_files = max_files;
    f->name_size = strlen(path) + 24; /* ".<size_t>" and the NUL */
    f->path = strdup(path);
    f->from = malloc(f->name_size);
    f->to = malloc(f->name_size);
    tw__buf_init(&f->line);
    tw__buf_init(&f->pending);
    return f->path && f->from && f->to;
}

/* A forked child's new sender: the path and limits of @s (fixed at
 * creation); it opens the file anew on its first write. */
static tw__sender *file_fork_clone(const tw__sender *s)
{
    const file_sender *o = (const file_sender *)s;
    file_sender *f = calloc(1, sizeof(*f));
    if (f && !file_init(f, o->path, o->max_file_bytes, o->max_files)) {
        file_free(&f->base);
        f = NULL;
    }
    return f ? &f->base : NULL;
}

tw__sender *tw__file_sender_new(const tw_reporter_options *opts, tw_error **err)
{
    if (!opts || !opts->file_path || !*opts->file_path) {
        tw__set_error(err, TW_E_CONFIG,
                      "dapper-file: no path (tw_reporter_options_set_file_path is required)");
        return NULL;
    }
    file_sender *f = calloc(1, sizeof(*f));
    if (!f)
        goto fail_alloc;
    if (!file_init(f, opts->file_path, opts->max_file_bytes, opts->max_files))
        goto fail_names;
    return &f->base;

fail_names:
    file_free(&f->base);
fail_alloc:
    tw__set_error(err, TW_E_NOMEM, "dapper-file: out of memory");
    return NULL;
}

/* ---- public API --------------------------------------------------------------------------- */

tw_status tw_reporter_options_set_file_path(tw_reporter_options *opts, const char *path)
{
    TW_CHECK_ARG(opts && path && *path, TW_E_INVALID_ARG);
    char *copy = strdup(path);
    if (!copy)
        return TW_E_NOMEM;
    free(opts->file_path);
    opts->file_path = copy;
    return TW_OK;
}

tw_status tw_reporter_options_set_max_file_bytes(tw_reporter_options *opts, size_t bytes)
{
    TW_CHECK_ARG(opts && bytes >= MIN_MAX_FILE_BYTES, TW_E_INVALID_ARG);
    opts->max_file_bytes = bytes;
    return TW_OK;
}

tw_status tw_reporter_options_set_max_files(tw_reporter_options *opts, size_t max_files)
{
    TW_CHECK_ARG(opts && max_files <= MAX_MAX_FILES, TW_E_INVALID_ARG);
    opts->max_files = max_files;
    return TW_OK;
}

tw_reporter *tw_reporter_file_new(const tw_reporter_options *opts, tw_error **err)
{
    tw__sender *sender = tw__file_sender_new(opts, err);
    if (!sender)
        return NULL;
    tw__async_options ao = tw__async_options_from(opts);
    return tw__async_reporter_new("dapper-file", sender, &ao, err);
}
