/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/spool.c: the file-per-batch spool of spool.h. The index of
 * the files (number, size, spans) is kept in memory in order, so the cap and
 * the oldest file are known without listing the directory again; it is
 * rebuilt from the headers at start.
 */
#include "agent/spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <zlib.h>

#define HEADER_BYTES 32
#define MAGIC "TWSPOOL1"
#define SUFFIX ".twspool"
#define KEY_FILE "spool-key"
#define KEY_BYTES 32

typedef struct entry {
    uint64_t seq;
    uint64_t bytes; /* the file's size */
    uint32_t spans;
} entry;

struct twa_spool {
    char *dir; /* DIR/<key> */
    int dir_fd;
    uint64_t max_bytes, bytes;
    entry *files; /* oldest first: files[head .. head + n) */
    size_t head, n, cap;
    uint64_t next_seq;
    twa_dest_stats *st;
};

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void path_of(const twa_spool *s, uint64_t seq, char *out, size_t size)
{
    snprintf(out, size, "%s/%016" PRIx64 SUFFIX, s->dir, seq);
}

static bool push_entry(twa_spool *s, entry e)
{
    if (s->head + s->n == s->cap) {
        if (s->head > 0) {
            memmove(s->files, s->files + s->head, s->n * sizeof *s->files);
            s->head = 0;
        } else {
            size_t cap = s->cap ? s->cap * 2 : 64;
            entry *grown = realloc(s->files, cap * sizeof *grown);
            if (!grown)
                return false;
            s->files = grown;
            s->cap = cap;
        }
    }
    s->files[s->head + s->n++] = e;
    s->bytes += e.bytes;
    twa_gauge_add(&s->st->spool_bytes, (int64_t)e.bytes);
    twa_gauge_add(&s->st->spool_spans, e.spans);
    twa_gauge_add(&s->st->spool_files, 1);
    return true;
}

/* Removes the oldest entry and its file. */
static void drop_oldest(twa_spool *s)
{
    entry e = s->files[s->head];
    char path[4096];
    path_of(s, e.seq, path, sizeof path);
    if (unlink(path) != 0 && errno != ENOENT)
        twa_log(TWA_WARN, "spool: cannot delete %s: %s", path, strerror(errno));
    s->head++;
    s->n--;
    s->bytes -= e.bytes;
    twa_gauge_add(&s->st->spool_bytes, -(int64_t)e.bytes);
    twa_gauge_add(&s->st->spool_spans, -(int64_t)e.spans);
    twa_gauge_add(&s->st->spool_files, -1);
}

static int cmp_entry(const void *a, const void *b)
{
    uint64_t x = ((const entry *)a)->seq, y = ((const entry *)b)->seq;
    return x < y ? -1 : x > y;
}

/* Reads what a previous run left: headers only. */
static bool load(twa_spool *s, char *why, size_t why_size)
{
    DIR *d = opendir(s->dir);
    if (!d) {
        snprintf(why, why_size, "--spool: cannot read %s: %s", s->dir, strerror(errno));
        return false;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", s->dir, de->d_name);
        if (strncmp(de->d_name, ".tmp-", 5) == 0) { /* a write cut short */
            unlink(path);
            continue;
        }
        size_t len = strlen(de->d_name);
        if (len != 16 + strlen(SUFFIX) || strcmp(de->d_name + 16, SUFFIX) != 0)
            continue;
        char *end;
        uint64_t seq = strtoull(de->d_name, &end, 16);
        if (end != de->d_name + 16)
            continue;
        struct stat sb;
        if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(sb.st_mode)) {
            /* Not ours (a directory, a link): left alone, and said so. */
            twa_log(TWA_WARN, "spool: %s is not a regular file: skipped (not deleted)", path);
            continue;
        }
        uint8_t h[HEADER_BYTES];
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &sb) != 0) {
            twa_log(TWA_WARN, "spool: cannot read %s: %s: skipped", path, strerror(errno));
            if (fd >= 0)
                close(fd);
            continue;
        }
        bool has_header = read(fd, h, sizeof h) == (ssize_t)sizeof h && memcmp(h, MAGIC, 8) == 0;
        bool ok = has_header && get64(h + 24) + HEADER_BYTES == (uint64_t)sb.st_size;
        close(fd);
        if (!ok) {
            /* Cut short or damaged: its batch cannot be sent. With a
             * header, its spans are known and counted like a bad checksum
             * (spool_error); without one, only the file can be counted. */
            bool is_deleted = unlink(path) == 0 || errno == ENOENT;
            char fate[256];
            snprintf(fate, sizeof fate, "%s%s", is_deleted ? "deleted" : "cannot delete it: ",
                     is_deleted ? "" : strerror(errno));
            if (has_header) {
                uint32_t spans = get32(h + 12);
                twa_add(&s->st->dropped[TWA_DROP_SPOOL_ERROR], spans);
                twa_log(TWA_ERROR,
                        "spool: %s is damaged (its length is wrong): %u spans dropped; %s", path,
                        spans, fate);
            } else {
                twa_add(&s->st->spool_unreadable_files, 1);
                twa_log(TWA_ERROR,
                        "spool: %s has no spool header (empty or damaged; its spans are unknown, "
                        "counted as one unreadable spool file); %s",
                        path, fate);
            }
            continue;
        }
        if (!push_entry(s, (entry){seq, (uint64_t)sb.st_size, get32(h + 12)})) {
            closedir(d);
            snprintf(why, why_size, "out of memory");
            return false;
        }
    }
    closedir(d);
    if (s->n)
        qsort(s->files + s->head, s->n, sizeof *s->files, cmp_entry);
    s->next_seq = s->n ? s->files[s->head + s->n - 1].seq + 1 : 1;
    return true;
}

/* mkdir -p @dir: each missing directory made 0700; a failure names the
 * directory that could not be made (not one below it). */
static bool make_dirs(const char *dir, char *why, size_t why_size)
{
    char *path = strdup(dir);
    bool ok = path != NULL;
    for (char *p = path; ok && *p; p++) {
        if (p[1] != '/' && p[1] != '\0')
            continue;
        char keep = p[1];
        p[1] = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST) {
            snprintf(why, why_size, "--spool: cannot create %s: %s", path, strerror(errno));
            ok = false;
        }
        p[1] = keep;
    }
    if (!path)
        snprintf(why, why_size, "out of memory");
    free(path);
    return ok;
}

static void to_hex(const unsigned char *md, unsigned int len, char *out)
{
    for (unsigned int i = 0; i < len; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static bool parse_key(const char *text, size_t len, unsigned char key[KEY_BYTES])
{
    if (len == 2 * KEY_BYTES + 1 && text[2 * KEY_BYTES] == '\n')
        len--;
    if (len != 2 * KEY_BYTES)
        return false;
    for (size_t i = 0; i < KEY_BYTES; i++) {
        unsigned int v = 0;
        for (size_t j = 0; j < 2; j++) {
            char c = text[2 * i + j];
            unsigned int h = c >= '0' && c <= '9'   ? (unsigned int)(c - '0')
                             : c >= 'a' && c <= 'f' ? (unsigned int)(c - 'a' + 10)
                                                    : 16u;
            if (h == 16u)
                return false;
            v = v << 4 | h;
        }
        key[i] = (unsigned char)v;
    }
    return true;
}

/* DIR/spool-key: the secret the spools' names are keyed with (64 hex digits
 * and a newline, mode 0600), made at the first start. A new key is written
 * whole under a temporary name and then linked to its name, so an agent (or
 * another destination) starting at the same moment reads either no key or
 * the whole of it: link() fails on a name that exists, and the loser reads
 * the winner's key. */
static bool root_key(const char *dir, unsigned char key[KEY_BYTES], char *why, size_t why_size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/" KEY_FILE, dir);
    for (int attempt = 0; attempt < 2; attempt++) {
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd >= 0) {
            char text[2 * KEY_BYTES + 2];
            ssize_t got = read(fd, text, sizeof text);
            close(fd);
            if (got < 0 || !parse_key(text, (size_t)got, key)) {
                snprintf(why, why_size,
                         "--spool: %s is damaged (expected 64 hex digits); it names the spools "
                         "of every destination: restore it, or move DIR away to start afresh",
                         path);
                return false;
            }
            return true;
        }
        if (errno != ENOENT) {
            snprintf(why, why_size, "--spool: cannot read %s: %s", path, strerror(errno));
            return false;
        }
        if (RAND_bytes(key, KEY_BYTES) != 1) {
            snprintf(why, why_size, "--spool: no random bytes for %s", path);
            return false;
        }
        char tmp[4096], text[2 * KEY_BYTES + 2];
        snprintf(tmp, sizeof tmp, "%s/.spool-key.XXXXXX", dir);
        to_hex(key, KEY_BYTES, text);
        text[2 * KEY_BYTES] = '\n';
        int t = mkstemp(tmp);
        bool written = t >= 0 && fchmod(t, 0600) == 0 &&
                       write(t, text, sizeof text - 1) == (ssize_t)(sizeof text - 1) &&
                       fsync(t) == 0;
        int saved = errno;
        if (t >= 0)
            close(t);
        int linked = written ? link(tmp, path) : -1;
        if (written && linked != 0)
            saved = errno;
        if (t >= 0)
            unlink(tmp);
        if (linked == 0) {
            int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (d >= 0) {
                fsync(d);
                close(d);
            }
            return true;
        }
        if (!written || saved != EEXIST) {
            snprintf(why, why_size, "--spool: cannot create %s: %s", path, strerror(saved));
            return false;
        }
    }
    snprintf(why, why_size, "--spool: %s keeps changing", path);
    return false;
}

/* A destination's spool directory name: HMAC-SHA-256, keyed with
 * DIR/spool-key, of the destination's identity (dest.c), in hex. A plain
 * hash of an identity that holds a weak password could be reversed by
 * guessing, and the name shows in the log. @old gets the name earlier
 * versions gave (the plain SHA-256), to take such a spool over. */
static bool spool_names(const unsigned char key[KEY_BYTES], const char *identity,
                        char name[2 * EVP_MAX_MD_SIZE + 1], char old[2 * EVP_MAX_MD_SIZE + 1])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;
    size_t len = strlen(identity);
    if (!HMAC(EVP_sha256(), key, KEY_BYTES, (const unsigned char *)identity, len, md, &md_len))
        return false;
    to_hex(md, md_len, name);
    if (EVP_Digest(identity, len, md, &md_len, EVP_sha256(), NULL) != 1)
        return false;
    to_hex(md, md_len, old);
    return true;
}

/* The spool an earlier version made for this destination, under its plain
 * SHA-256 name, is renamed to the keyed name (once; logged without either
 * name's old form). */
static void take_over_old(const char *dir, const char *old, const char *s_dir, const char *label)
{
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, old);
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return;
    if (lstat(s_dir, &st) == 0) {
        twa_log(TWA_WARN,
                "spool for %s: a spool directory named by an earlier version is left as is "
                "(its batches are not replayed): both names exist",
                label);
        return;
    }
    if (rename(path, s_dir) != 0)
        twa_log(TWA_WARN, "spool for %s: cannot take over the earlier version's spool: %s", label,
                strerror(errno));
    else
        twa_log(TWA_INFO, "spool %s: taken over from the name an earlier version gave it", s_dir);
}

twa_spool *twa_spool_open(const char *dir, const char *identity, const char *shown_url,
                          const char *label, uint64_t max_bytes, twa_dest_stats *st, char *why,
                          size_t why_size)
{
    if (!make_dirs(dir, why, why_size))
        return NULL;
    twa_spool *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    s->dir_fd = -1;
    s->st = st;
    s->max_bytes = max_bytes;
    unsigned char key[KEY_BYTES];
    char name[2 * EVP_MAX_MD_SIZE + 1], old[2 * EVP_MAX_MD_SIZE + 1];
    if (!root_key(dir, key, why, why_size)) {
        twa_spool_close(s);
        return NULL;
    }
    bool named = spool_names(key, identity, name, old);
    OPENSSL_cleanse(key, sizeof key);
    if (!named || asprintf(&s->dir, "%s/%s", dir, name) < 0) {
        s->dir = NULL;
        snprintf(why, why_size, named ? "out of memory" : "--spool: no SHA-256 from OpenSSL");
        twa_spool_close(s);
        return NULL;
    }
    take_over_old(dir, old, s->dir, label);
    if (mkdir(s->dir, 0700) != 0 && errno != EEXIST) {
        snprintf(why, why_size, "--spool: cannot create %s: %s", s->dir, strerror(errno));
        twa_spool_close(s);
        return NULL;
    }
    s->dir_fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (s->dir_fd < 0 || access(s->dir, W_OK) != 0) {
        snprintf(why, why_size, "--spool: %s is not a writable directory: %s", s->dir,
                 strerror(errno));
        twa_spool_close(s);
        return NULL;
    }
    if (!load(s, why, why_size)) {
        twa_spool_close(s);
        return NULL;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/destination", s->dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%s\n", shown_url);
        fclose(f);
    }
    if (s->n)
        twa_log(TWA_INFO, "spool %s: %zu batches (%" PRIu64 " bytes) to replay to %s", s->dir, s->n,
                s->bytes, label);
    return s;
}

void twa_spool_close(twa_spool *s)
{
    if (!s)
        return;
    if (s->dir_fd >= 0)
        close(s->dir_fd);
    /* The gauges describe the files, which stay for the next run. */
    twa_gauge_add(&s->st->spool_bytes, -(int64_t)s->bytes);
    for (size_t i = 0; i < s->n; i++)
        twa_gauge_add(&s->st->spool_spans, -(int64_t)s->files[s->head + i].spans);
    twa_gauge_add(&s->st->spool_files, -(int64_t)s->n);
    free(s->files);
    free(s->dir);
    free(s);
}

bool twa_spool_is_empty(const twa_spool *s)
{
    return s->n == 0;
}

static bool write_all(int fd, const uint8_t *p, size_t len)
{
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        p += w;
        len -= (size_t)w;
    }
    return true;
}

bool twa_spool_append(twa_spool *s, const uint8_t *body, size_t len, uint32_t n_spans,
                      uint32_t flags)
{
    uint64_t size = (uint64_t)len + HEADER_BYTES;
    if (size > s->max_bytes) {
        twa_log(TWA_WARN, "spool %s: a batch of %" PRIu64 " bytes is larger than --spool-max",
                s->dir, size);
        twa_add(&s->st->dropped[TWA_DROP_SPOOL_FULL], n_spans);
        return false;
    }
    while (s->n && s->bytes + size > s->max_bytes) {
        uint32_t lost = s->files[s->head].spans;
        drop_oldest(s);
        twa_add(&s->st->dropped[TWA_DROP_SPOOL_FULL], lost);
        twa_log(TWA_WARN, "spool %s: full (--spool-max): the oldest batch (%u spans) dropped",
                s->dir, lost);
    }
    uint8_t h[HEADER_BYTES] = {0};
    memcpy(h, MAGIC, 8);
    put32(h + 8, flags);
    put32(h + 12, n_spans);
    put32(h + 16, (uint32_t)crc32(0L, body, (uInt)len));
    put64(h + 24, len);
    uint64_t seq = s->next_seq++;
    char tmp[4096], path[4096];
    snprintf(tmp, sizeof tmp, "%s/.tmp-%016" PRIx64, s->dir, seq);
    path_of(s, seq, path, sizeof path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    bool ok =
        fd >= 0 && write_all(fd, h, sizeof h) && write_all(fd, body, len) && fdatasync(fd) == 0;
    int saved = errno;
    if (fd >= 0)
        close(fd);
    ok = ok && rename(tmp, path) == 0;
    if (ok)
        fsync(s->dir_fd);
    else
        saved = errno;
    if (!ok) {
        unlink(tmp);
        twa_log(TWA_ERROR, "spool %s: cannot write a batch of %u spans: %s", s->dir, n_spans,
                strerror(saved));
        twa_add(&s->st->dropped[TWA_DROP_SPOOL_ERROR], n_spans);
        return false;
    }
    if (!push_entry(s, (entry){seq, size, n_spans})) {
        unlink(path);
        twa_add(&s->st->dropped[TWA_DROP_SPOOL_ERROR], n_spans);
        return false;
    }
    twa_add(&s->st->spooled_spans, n_spans);
    return true;
}

bool twa_spool_peek(twa_spool *s, tw__buf *body, uint32_t *n_spans, uint32_t *flags)
{
    while (s->n) {
        entry e = s->files[s->head];
        char path[4096];
        path_of(s, e.seq, path, sizeof path);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        uint8_t h[HEADER_BYTES];
        bool ok = fd >= 0 && read(fd, h, sizeof h) == (ssize_t)sizeof h &&
                  memcmp(h, MAGIC, 8) == 0 && get64(h + 24) + HEADER_BYTES == e.bytes;
        size_t len = ok ? (size_t)get64(h + 24) : 0;
        tw__buf_reset(body);
        ok = ok && tw__buf_reserve(body, len ? len : 1);
        size_t got = 0;
        while (ok && got < len) {
            ssize_t r = read(fd, body->data + got, len - got);
            if (r <= 0) {
                ok = false;
                break;
            }
            got += (size_t)r;
        }
        if (fd >= 0)
            close(fd);
        ok = ok && (uint32_t)crc32(0L, body->data, (uInt)len) == get32(h + 16);
        if (ok) {
            body->len = len;
            *n_spans = get32(h + 12);
            *flags = get32(h + 8);
            return true;
        }
        twa_log(TWA_ERROR, "spool: %s is damaged (header, length or checksum): %u spans dropped",
                path, e.spans);
        twa_add(&s->st->dropped[TWA_DROP_SPOOL_ERROR], e.spans);
        drop_oldest(s);
    }
    return false;
}

void twa_spool_pop(twa_spool *s)
{
    if (s->n)
        drop_oldest(s);
}
