/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/follow.c: follow mode (follow.h). The follower thread expands
 * the globs every poll_ms, matches what it finds to the files it tracks
 * (inode, then fingerprint), reads new complete lines through each file's
 * open descriptor (at most READ_BYTES a time, so memory stays flat on a file
 * of any size), hands each line to the reader and the spans to the pipeline
 * (waiting for room in the queues instead of dropping), and advances the
 * checkpoint over the lines that are done.
 *
 * Checkpoint file (text, rewritten whole each time):
 *   tracewire-checkpoint 1
 *   <dev> <inode> <offset> <fingerprint hex or -> <ranges or -> <path, C-escaped>
 * where <ranges> is "start-end,start-end" of done lines after <offset>.
 */
#include "agent/follow.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FP_BYTES 256
#define READ_BYTES ((size_t)256 * 1024)
#define MAX_LINE_BYTES ((size_t)16 * 1024 * 1024)
#define MAX_PENDING_LINES 65536  /* per file: lines read and not done; reading waits past it */
#define UNMATCHED_GRACE_MS 60000 /* a file renamed out of the globs is still read this long */

typedef struct range {
    uint64_t start, end;
} range;

typedef struct twa_file {
    char *path;
    dev_t dev;
    ino_t ino;
    int fd;
    uint8_t fp[FP_BYTES];
    size_t fp_len;
    uint64_t acked;   /* every line before this is done */
    uint64_t read_at; /* the next byte to read */
    twa_chunk *head, *tail;
    size_t n_chunks;
    range *skip; /* from the checkpoint: done lines after `acked` */
    size_t n_skip;
    bool matched;
    bool is_stale;           /* its inode now holds other content: read no more */
    int64_t unmatched_since; /* ms: when the globs stopped naming it (0: they name it) */
    struct twa_file *next;
} twa_file;

struct twa_follow {
    twa_follow_options o;
    char **globs;
    char *checkpoint;
    const twb_reader *reader;
    twb_options reader_opts;
    pthread_mutex_t lock;
    twa_file *files;
    bool first_scan_done;
    atomic_bool stop;
    pthread_t thread;
    bool has_thread;
    twa_recv_stats *stats;
    uint8_t *buf;
    size_t buf_cap;
    char last_checkpoint_error[128];
};

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void file_free(twa_file *f)
{
    if (!f)
        return;
    twa_chunk *c = f->head;
    while (c) {
        twa_chunk *next = c->next;
        free(c);
        c = next;
    }
    if (f->fd >= 0)
        close(f->fd);
    free(f->skip);
    free(f->path);
    free(f);
}

/* ---- the checkpoint -----------------------------------------------------------------------------
 */

static void hex(const uint8_t *p, size_t n, GString *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        g_string_append_c(out, digits[p[i] >> 4]);
        g_string_append_c(out, digits[p[i] & 15]);
    }
}

/* Writes the checkpoint (lock held). */
static void write_checkpoint(twa_follow *fw)
{
    if (!fw->checkpoint)
        return;
    GString *s = g_string_new("tracewire-checkpoint 1\n");
    for (twa_file *f = fw->files; f; f = f->next) {
        g_string_append_printf(s, "%" PRIu64 " %" PRIu64 " %" PRIu64 " ", (uint64_t)f->dev,
                               (uint64_t)f->ino, f->acked);
        if (f->fp_len)
            hex(f->fp, f->fp_len, s);
        else
            g_string_append_c(s, '-');
        g_string_append_c(s, ' ');
        /* done lines after `acked`, merged into ranges */
        size_t n_ranges = 0;
        uint64_t rs = 0, re = 0;
        bool open_range = false;
        for (twa_chunk *c = f->head; c; c = c->next) {
            bool done = atomic_load_explicit(&c->pending, memory_order_acquire) == 0;
            if (done && open_range && c->start_offset == re) {
                re = c->end_offset;
            } else if (done) {
                if (open_range)
                    g_string_append_printf(s, "%s%" PRIu64 "-%" PRIu64, n_ranges++ ? "," : "", rs,
                                           re);
                rs = c->start_offset;
                re = c->end_offset;
                open_range = true;
            } else if (open_range) {
                g_string_append_printf(s, "%s%" PRIu64 "-%" PRIu64, n_ranges++ ? "," : "", rs, re);
                open_range = false;
            }
        }
        if (open_range)
            g_string_append_printf(s, "%s%" PRIu64 "-%" PRIu64, n_ranges++ ? "," : "", rs, re);
        /* ranges from the previous run not reached yet */
        for (size_t i = 0; i < f->n_skip; i++) {
            if (f->skip[i].start >= f->read_at)
                g_string_append_printf(s, "%s%" PRIu64 "-%" PRIu64, n_ranges++ ? "," : "",
                                       f->skip[i].start, f->skip[i].end);
        }
        if (!n_ranges)
            g_string_append_c(s, '-');
        gchar *esc = g_strescape(f->path, NULL);
        g_string_append_printf(s, " %s\n", esc);
        g_free(esc);
    }
    char *tmp = g_strdup_printf("%s.tmp", fw->checkpoint);
    /* The reason of a failure is the errno of the step that failed (a later
     * successful call may leave an unrelated one behind). */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int failed = fd >= 0 ? 0 : errno;
    size_t done = 0;
    while (!failed && done < s->len) {
        ssize_t w = write(fd, s->str + done, s->len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w > 0)
            done += (size_t)w;
        else
            failed = w < 0 ? errno : EIO;
    }
    if (!failed && fdatasync(fd) != 0)
        failed = errno;
    if (fd >= 0)
        close(fd);
    if (!failed && rename(tmp, fw->checkpoint) != 0)
        failed = errno;
    bool ok = !failed;
    if (ok) {
        char *dir = g_path_get_dirname(fw->checkpoint);
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            fsync(dfd);
            close(dfd);
        }
        g_free(dir);
        fw->last_checkpoint_error[0] = '\0';
    } else {
        char why[128];
        snprintf(why, sizeof why, "%s", strerror(failed));
        if (strcmp(why, fw->last_checkpoint_error) != 0) {
            twa_log(TWA_ERROR, "--checkpoint %s: cannot write: %s", fw->checkpoint, why);
            snprintf(fw->last_checkpoint_error, sizeof fw->last_checkpoint_error, "%s", why);
        }
        unlink(tmp);
    }
    g_free(tmp);
    g_string_free(s, TRUE);
}

static int unhex(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static bool load_checkpoint(twa_follow *fw, char *why, size_t why_size)
{
    char *text = NULL;
    size_t len = 0;
    int err_no;
    char ferr[160];
    if (!tw__cli_read_file(fw->checkpoint, TW_CLI_MAX_CONFIG_BYTES, &text, &len, &err_no, ferr,
                           sizeof ferr)) {
        bool missing = err_no == ENOENT;
        if (!missing)
            snprintf(why, why_size, "--checkpoint %s: %s", fw->checkpoint, ferr);
        return missing;
    }
    gchar **lines = g_strsplit(text, "\n", -1);
    free(text);
    bool ok = lines[0] && strcmp(lines[0], "tracewire-checkpoint 1") == 0;
    for (size_t i = 1; ok && lines[i]; i++) {
        if (!lines[i][0])
            continue;
        gchar **f = g_strsplit(lines[i], " ", 6);
        ok = g_strv_length(f) == 6;
        twa_file *tf = ok ? calloc(1, sizeof *tf) : NULL;
        if (tf) {
            tf->fd = -1;
            char *end;
            tf->dev = (dev_t)strtoull(f[0], &end, 10);
            ok = !*end;
            tf->ino = (ino_t)strtoull(f[1], &end, 10);
            ok = ok && !*end;
            tf->acked = tf->read_at = strtoull(f[2], &end, 10);
            ok = ok && !*end;
            if (ok && strcmp(f[3], "-") != 0) {
                size_t n = strlen(f[3]);
                ok = n % 2 == 0 && n / 2 <= FP_BYTES;
                for (size_t k = 0; ok && k < n / 2; k++) {
                    int a = unhex(f[3][2 * k]), b = unhex(f[3][2 * k + 1]);
                    ok = a >= 0 && b >= 0;
                    tf->fp[k] = (uint8_t)(a << 4 | b);
                }
                tf->fp_len = n / 2;
            }
            if (ok && strcmp(f[4], "-") != 0) {
                gchar **rs = g_strsplit(f[4], ",", -1);
                size_t n = g_strv_length(rs);
                tf->skip = calloc(n, sizeof *tf->skip);
                ok = tf->skip != NULL;
                for (size_t k = 0; ok && k < n; k++) {
                    ok = sscanf(rs[k], "%" SCNu64 "-%" SCNu64, &tf->skip[k].start,
                                &tf->skip[k].end) == 2 &&
                         tf->skip[k].start < tf->skip[k].end;
                }
                tf->n_skip = n;
                g_strfreev(rs);
            }
            tf->path = g_strcompress(f[5]);
            tf->next = fw->files;
            fw->files = tf;
        }
        g_strfreev(f);
    }
    g_strfreev(lines);
    if (!ok)
        snprintf(why, why_size,
                 "--checkpoint %s: not a tracewire checkpoint (or damaged); move it away to "
                 "start again",
                 fw->checkpoint);
    return ok;
}

/* Whether the checkpoint can be written: its temporary file is created in its
 * directory and removed, so that an unwritable place is a start failure, not
 * a log line per batch and files read again after a restart. */
static bool can_write_checkpoint(twa_follow *fw, char *why, size_t why_size)
{
    char *tmp = g_strdup_printf("%s.tmp", fw->checkpoint);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        snprintf(why, why_size, "--checkpoint %s: cannot write %s: %s", fw->checkpoint, tmp,
                 strerror(errno));
    else {
        close(fd);
        unlink(tmp);
    }
    g_free(tmp);
    return fd >= 0;
}

/* ---- creation
 * ------------------------------------------------------------------------------------ */

twa_follow *twa_follow_new(const twa_follow_options *o, char *why, size_t why_size)
{
    twa_follow *fw = calloc(1, sizeof *fw);
    if (!fw) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    fw->o = *o;
    pthread_mutex_init(&fw->lock, NULL);
    atomic_init(&fw->stop, false);
    fw->globs = calloc(o->n_globs + 1, sizeof *fw->globs);
    for (size_t i = 0; fw->globs && i < o->n_globs; i++)
        fw->globs[i] = strdup(o->globs[i]);
    fw->checkpoint = o->checkpoint ? strdup(o->checkpoint) : NULL;
    fw->reader = o->reader ? o->reader : &twb_reader_dapper;
    if (o->reader_opts)
        fw->reader_opts = *o->reader_opts;
    else
        fw->reader_opts.max_value_bytes = 65536;
    fw->o.globs = NULL;
    fw->o.checkpoint = NULL;
    if (!fw->o.poll_ms)
        fw->o.poll_ms = 250;
    fw->stats = twa_stats_receiver("follow");
    fw->buf_cap = READ_BYTES;
    fw->buf = malloc(fw->buf_cap);
    if (!fw->globs || !fw->buf) {
        snprintf(why, why_size, "out of memory");
        twa_follow_free(fw);
        return NULL;
    }
    if (fw->checkpoint &&
        (!load_checkpoint(fw, why, why_size) || !can_write_checkpoint(fw, why, why_size))) {
        /* Not started: the checkpoint on disk is left as it is (a damaged
         * one is the user's to look at). */
        free(fw->checkpoint);
        fw->checkpoint = NULL;
        twa_follow_free(fw);
        return NULL;
    }
    return fw;
}

/* ---- matching files ----------------------------------------------------------------------------
 */

/* The first bytes of @fd (up to FP_BYTES) into @out; their count. */
static size_t read_head(int fd, uint8_t *out)
{
    ssize_t n = pread(fd, out, FP_BYTES, 0);
    return n > 0 ? (size_t)n : 0;
}

/* Whether a file starting with @head (@len bytes, @size in all) holds the
 * content fingerprinted @fp. */
static bool same_content(const twa_file *f, const uint8_t *head, size_t len)
{
    if (len < f->fp_len)
        return false;
    return memcmp(head, f->fp, f->fp_len) == 0;
}

typedef struct candidate {
    char *path;
    struct stat st;
    uint8_t head[FP_BYTES];
    size_t head_len;
    int fd;
    bool used;
} candidate;

static void refresh_fp(twa_follow *fw, twa_file *f)
{
    uint8_t head[FP_BYTES];
    if (f->fd < 0 || f->fp_len >= FP_BYTES)
        return;
    size_t n = read_head(f->fd, head);
    pthread_mutex_lock(&fw->lock);
    if (n > f->fp_len && memcmp(head, f->fp, f->fp_len) == 0) {
        memcpy(f->fp, head, n);
        f->fp_len = n;
    }
    pthread_mutex_unlock(&fw->lock);
}

/* Where a file seen for the first time starts. */
static uint64_t start_of(twa_follow *fw, const candidate *c)
{
    if (!fw->o.from_end || fw->first_scan_done || c->st.st_size == 0)
        return 0;
    /* From the end, at a line start: after the last newline. */
    size_t back = c->st.st_size < 65536 ? (size_t)c->st.st_size : 65536;
    uint64_t from = (uint64_t)c->st.st_size - back;
    uint8_t *tail = malloc(back);
    uint64_t at = (uint64_t)c->st.st_size;
    if (tail && pread(c->fd, tail, back, (off_t)from) == (ssize_t)back) {
        size_t i = back;
        while (i > 0 && tail[i - 1] != '\n')
            i--;
        at = from + i;
    }
    free(tail);
    return at;
}

static void scan(twa_follow *fw)
{
    GPtrArray *cands = g_ptr_array_new();
    for (size_t g = 0; fw->globs[g]; g++) {
        glob_t gl;
        if (glob(fw->globs[g], GLOB_NOSORT, NULL, &gl) != 0)
            continue;
        for (size_t i = 0; i < gl.gl_pathc; i++) {
            candidate *c = calloc(1, sizeof *c);
            if (!c)
                continue;
            c->fd = open(gl.gl_pathv[i], O_RDONLY | O_CLOEXEC);
            if (c->fd < 0 || fstat(c->fd, &c->st) != 0 || !S_ISREG(c->st.st_mode)) {
                if (c->fd >= 0)
                    close(c->fd);
                free(c);
                continue;
            }
            bool dup = false; /* two globs naming one file */
            for (guint k = 0; k < cands->len && !dup; k++) {
                candidate *o = cands->pdata[k];
                dup = o->st.st_dev == c->st.st_dev && o->st.st_ino == c->st.st_ino;
            }
            if (dup) {
                close(c->fd);
                free(c);
                continue;
            }
            c->path = strdup(gl.gl_pathv[i]);
            c->head_len = read_head(c->fd, c->head);
            g_ptr_array_add(cands, c);
        }
        globfree(&gl);
    }
    pthread_mutex_lock(&fw->lock);
    for (twa_file *f = fw->files; f; f = f->next)
        f->matched = false;
    /* 1. Same inode, same content. */
    for (guint k = 0; k < cands->len; k++) {
        candidate *c = cands->pdata[k];
        for (twa_file *f = fw->files; f && !c->used; f = f->next) {
            if (f->matched || f->dev != c->st.st_dev || f->ino != c->st.st_ino)
                continue;
            bool truncated = (uint64_t)c->st.st_size < f->read_at;
            if (!truncated && same_content(f, c->head, c->head_len)) {
                c->used = f->matched = true;
                f->unmatched_since = 0;
                free(f->path);
                f->path = c->path;
                c->path = NULL;
                if (f->fd < 0) {
                    f->fd = c->fd;
                    c->fd = -1;
                }
            }
        }
    }
    /* 2. A new inode holding a tracked file's content (copytruncate's copy,
     * a move across file systems): that file continues there. */
    for (guint k = 0; k < cands->len; k++) {
        candidate *c = cands->pdata[k];
        for (twa_file *f = fw->files; f && !c->used; f = f->next) {
            if (f->matched || f->fp_len == 0 || !same_content(f, c->head, c->head_len) ||
                (uint64_t)c->st.st_size < f->read_at)
                continue;
            twa_log(TWA_INFO,
                    "follow: %s holds the content of %s (copied or moved): continuing "
                    "at byte %" PRIu64,
                    c->path, f->path, f->read_at);
            c->used = f->matched = true;
            f->unmatched_since = 0;
            f->is_stale = false;
            f->dev = c->st.st_dev;
            f->ino = c->st.st_ino;
            free(f->path);
            f->path = c->path;
            c->path = NULL;
            if (f->fd >= 0)
                close(f->fd);
            f->fd = c->fd;
            c->fd = -1;
        }
    }
    /* 3. Tracked files not found: a replaced inode (truncated: new content
     * there), or a file gone from the globs (still read to its end through
     * its descriptor, then forgotten). */
    for (twa_file **pp = &fw->files; *pp;) {
        twa_file *f = *pp;
        bool forget = false;
        if (!f->matched) {
            if (!f->unmatched_since)
                f->unmatched_since = mono_ms();
            if (f->fd < 0) {
                if (!f->head) {
                    twa_log(TWA_WARN,
                            "follow: %s (from the checkpoint) is gone: lines after byte %" PRIu64
                            " of it were not read",
                            f->path, f->acked);
                    forget = true;
                }
            } else {
                struct stat st;
                bool same = fstat(f->fd, &st) == 0;
                uint8_t head[FP_BYTES];
                size_t hl = same ? read_head(f->fd, head) : 0;
                bool replaced =
                    !same || (uint64_t)st.st_size < f->read_at || !same_content(f, head, hl);
                bool read_all = same && (uint64_t)st.st_size <= f->read_at && !f->head;
                if (replaced) {
                    f->is_stale = true; /* read no more; forgotten once its lines are done */
                    forget = !f->head;
                } else if (read_all && (st.st_nlink == 0 ||
                                        mono_ms() - f->unmatched_since > UNMATCHED_GRACE_MS)) {
                    /* Deleted, or renamed out of the globs for a while (writers may
                     * still append after a rename), and read to its end. */
                    forget = true;
                }
            }
        }
        if (forget) {
            *pp = f->next;
            file_free(f);
        } else {
            pp = &f->next;
        }
    }
    /* 4. New files (also a tracked inode now holding new content). */
    for (guint k = 0; k < cands->len; k++) {
        candidate *c = cands->pdata[k];
        if (c->used)
            continue;
        /* A copy of a tracked file that is still where it was (copytruncate
         * between its copy and its truncation, or a plain copy): not read.
         * Once the original is truncated, step 2 moves the tracking here. */
        bool is_copy = false;
        for (twa_file *f = fw->files; f && !is_copy; f = f->next)
            is_copy = f->matched && f->fp_len > 0 && same_content(f, c->head, c->head_len);
        if (is_copy)
            continue;
        for (twa_file *f = fw->files; f; f = f->next) {
            if (f->dev == c->st.st_dev && f->ino == c->st.st_ino) {
                /* The old content of this inode is no longer here: read no more of it. */
                f->dev = 0;
                f->ino = 0;
                if (f->fd >= 0)
                    close(f->fd);
                f->fd = -1;
            }
        }
        twa_file *f = calloc(1, sizeof *f);
        if (!f)
            continue;
        f->path = c->path;
        c->path = NULL;
        f->dev = c->st.st_dev;
        f->ino = c->st.st_ino;
        f->fd = c->fd;
        c->fd = -1;
        f->acked = f->read_at = start_of(fw, c);
        memcpy(f->fp, c->head, c->head_len);
        f->fp_len = c->head_len;
        f->next = fw->files;
        fw->files = f;
        twa_log(TWA_INFO, "follow: %s: reading from byte %" PRIu64, f->path, f->read_at);
    }
    fw->first_scan_done = true;
    pthread_mutex_unlock(&fw->lock);
    for (guint k = 0; k < cands->len; k++) {
        candidate *c = cands->pdata[k];
        if (c->fd >= 0)
            close(c->fd);
        free(c->path);
        free(c);
    }
    g_ptr_array_free(cands, TRUE);
}

/* ---- progress
 * ------------------------------------------------------------------------------------ */

/* Moves each file's `acked` over its done lines (lock held). True when it
 * moved. */
static bool advance(twa_follow *fw)
{
    bool moved = false;
    for (twa_file *f = fw->files; f; f = f->next) {
        while (f->head && atomic_load_explicit(&f->head->pending, memory_order_acquire) == 0) {
            twa_chunk *c = f->head;
            f->acked = c->end_offset;
            f->head = c->next;
            if (!f->head)
                f->tail = NULL;
            f->n_chunks--;
            free(c);
            moved = true;
        }
        if (!f->head && f->acked < f->read_at) {
            f->acked = f->read_at; /* lines skipped as done in the previous run */
            moved = true;
        }
    }
    return moved;
}

void twa_follow_on_delivery(void *arg, twa_outcome outcome, size_t n_spans)
{
    (void)outcome;
    (void)n_spans;
    twa_follow *fw = arg;
    pthread_mutex_lock(&fw->lock);
    advance(fw);
    write_checkpoint(fw);
    pthread_mutex_unlock(&fw->lock);
}

/* Whether [start, end) was done in the previous run. */
static bool was_done(const twa_file *f, uint64_t start, uint64_t end)
{
    for (size_t i = 0; i < f->n_skip; i++) {
        if (start >= f->skip[i].start && end <= f->skip[i].end)
            return true;
    }
    return false;
}

/* Reads the new complete lines of @f (one buffer's worth). True when it read
 * something. */
static bool read_file(twa_follow *fw, twa_file *f, twa_spanbuf *sb)
{
    if (f->fd < 0 || f->is_stale || f->n_chunks >= MAX_PENDING_LINES)
        return false;
    ssize_t n = pread(f->fd, fw->buf, fw->buf_cap, (off_t)f->read_at);
    if (n <= 0)
        return false;
    size_t len = (size_t)n;
    uint8_t *nl = memrchr(fw->buf, '\n', len);
    if (!nl) {
        if (len < fw->buf_cap)
            return false; /* a line still being written */
        if (fw->buf_cap < MAX_LINE_BYTES) {
            uint8_t *bigger = realloc(fw->buf, fw->buf_cap * 2);
            if (bigger) {
                fw->buf = bigger;
                fw->buf_cap *= 2;
            }
            return true; /* read again with room for the line */
        }
        /* A line longer than MAX_LINE_BYTES: skipped up to the next newline. */
        twa_log(TWA_WARN,
                "follow: %s: a line at byte %" PRIu64 " is longer than %zu bytes: skipped", f->path,
                f->read_at, MAX_LINE_BYTES);
        twa_add(&fw->stats->received, 1);
        twa_add(&fw->stats->invalid, 1);
        twa_chunk *c = calloc(1, sizeof *c);
        if (!c)
            return false;
        c->start_offset = f->read_at;
        c->end_offset = f->read_at + len;
        pthread_mutex_lock(&fw->lock);
        if (f->tail)
            f->tail->next = c;
        else
            f->head = c;
        f->tail = c;
        f->n_chunks++;
        f->read_at += len;
        pthread_mutex_unlock(&fw->lock);
        return true;
    }
    len = (size_t)(nl - fw->buf) + 1;
    twa_add(&fw->stats->requests, 1);
    twa_add(&fw->stats->bytes, len);
    /* The lines as chunks, appended under the lock; each holds a reading
     * reference (+1) until its spans are queued. */
    twa_chunk *first = NULL, *last = NULL;
    size_t count = 0;
    for (size_t at = 0; at < len;) {
        uint8_t *end = memchr(fw->buf + at, '\n', len - at);
        size_t line_end = (size_t)(end - fw->buf) + 1;
        twa_chunk *c = calloc(1, sizeof *c);
        if (!c)
            break;
        c->start_offset = f->read_at + at;
        c->end_offset = f->read_at + line_end;
        atomic_init(&c->pending, 1);
        if (last)
            last->next = c;
        else
            first = c;
        last = c;
        count++;
        at = line_end;
    }
    if (!first)
        return false;
    uint64_t base = f->read_at;
    pthread_mutex_lock(&fw->lock);
    if (f->tail)
        f->tail->next = first;
    else
        f->head = first;
    f->tail = last;
    f->n_chunks += count;
    f->read_at = last->end_offset;
    pthread_mutex_unlock(&fw->lock);
    twb_input *in = twa_spanbuf_input(sb, f->path);
    sb->opts = fw->reader_opts;
    for (twa_chunk *c = first;; c = c->next) {
        size_t at = (size_t)(c->start_offset - base),
               line_len = (size_t)(c->end_offset - c->start_offset);
        size_t body = line_len - 1;
        while (body && (fw->buf[at + body - 1] == '\r'))
            body--;
        bool blank = true;
        for (size_t i = 0; i < body && blank; i++)
            blank = fw->buf[at + i] == ' ' || fw->buf[at + i] == '\t';
        if (!blank && !was_done(f, c->start_offset, c->end_offset)) {
            FILE *mem = fmemopen(fw->buf + at, body, "r");
            if (mem) {
                sb->chunk = c;
                tw_error *e = NULL;
                fw->reader->read(mem, in, &e);
                tw_error_free(e);
                fclose(mem);
            }
        }
        if (c == last)
            break;
    }
    sb->chunk = NULL;
    if (sb->n_rejected)
        twa_log(TWA_DEBUG, "follow: %s: %zu lines rejected; the first: %s", f->path, sb->n_rejected,
                sb->first_reject);
    twa_spanbuf_flush(sb);
    for (twa_chunk *c = first;; c = c->next) {
        twa_chunk_done(c, 1);
        if (c == last)
            break;
    }
    return true;
}

static void *follow_run(void *arg)
{
    twa_follow *fw = arg;
    twa_spanbuf sb;
    twa_spanbuf_init(&sb, fw->o.pipeline, fw->stats);
    sb.can_wait = true;
    int64_t next_scan = 0;
    while (!atomic_load(&fw->stop) && !atomic_load(&twa_stopping)) {
        if (mono_ms() >= next_scan) {
            scan(fw);
            next_scan = mono_ms() + fw->o.poll_ms;
        }
        bool any = false;
        /* The file list changes only here and in scan (this thread). */
        for (twa_file *f = fw->files; f && !atomic_load(&twa_stopping); f = f->next) {
            if (read_file(fw, f, &sb)) {
                any = true;
                if (f->fp_len < FP_BYTES)
                    refresh_fp(fw, f);
            }
        }
        pthread_mutex_lock(&fw->lock);
        if (advance(fw))
            write_checkpoint(fw);
        pthread_mutex_unlock(&fw->lock);
        if (!any) {
            struct timespec ts = {0, 50 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    twa_spanbuf_clear(&sb);
    return NULL;
}

void twa_follow_set_pipeline(twa_follow *fw, twa_pipeline *p)
{
    fw->o.pipeline = p;
}

bool twa_follow_start(twa_follow *fw, char *why, size_t why_size)
{
    int rc = pthread_create(&fw->thread, NULL, follow_run, fw);
    if (rc != 0) {
        snprintf(why, why_size, "cannot start a thread: %s", strerror(rc));
        return false;
    }
    fw->has_thread = true;
    return true;
}

void twa_follow_stop(twa_follow *fw)
{
    if (!fw || !fw->has_thread)
        return;
    atomic_store(&fw->stop, true);
    pthread_join(fw->thread, NULL);
    fw->has_thread = false;
}

void twa_follow_free(twa_follow *fw)
{
    if (!fw)
        return;
    twa_follow_stop(fw);
    pthread_mutex_lock(&fw->lock);
    advance(fw);
    write_checkpoint(fw);
    twa_file *f = fw->files;
    while (f) {
        twa_file *next = f->next;
        file_free(f);
        f = next;
    }
    pthread_mutex_unlock(&fw->lock);
    for (size_t i = 0; fw->globs && fw->globs[i]; i++)
        free(fw->globs[i]);
    free(fw->globs);
    free(fw->checkpoint);
    free(fw->buf);
    pthread_mutex_destroy(&fw->lock);
    free(fw);
}
