/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/report/test_file_reporter.c: suite "report/file": the
 * Dapper-style span log reporter (tw_reporter_file_new, report/
 * file_sender.c) end to end through the public API, on real files in a
 * temporary directory. Every span becomes one line that our decoder and an
 * independent reader (python3's json module) both parse; the file rotates
 * under its size limit and keeps N rotated files; a missing directory, a
 * full disk (/dev/full) and RLIMIT_FSIZE count spans as failed without
 * killing anything, and writing resumes, with a cut line ended cleanly; two
 * writers sharing one path lose no line.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bounded.h"
#include "harness.h"
#include "internal.h"
#include "tracewire/tracewire.h"
#include "wire/dapper_log.h"

#define START_US INT64_C(1700000000000000)

/* ---- fixtures ----------------------------------------------------------------------------- */

static char scratch_dir[64]; /* a fresh directory per test, removed after it */

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[512];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(path);
        else
            unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static void make_scratch_dir(void)
{
    snprintf(scratch_dir, sizeof scratch_dir, "/tmp/tw-file-test-XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(scratch_dir));
}

static char *in_scratch(const char *name)
{
    static char paths[4][512];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, sizeof paths[0], "%s/%s", scratch_dir, name);
    return p;
}

/* A tracer whose reporter writes @path; NULL on failure. No CUnit macros:
 * the RLIMIT_FSIZE test calls it in a forked child. */
static tw_tracer *make_file_tracer(const char *path, size_t max_bytes, size_t max_files)
{
    tw_reporter_options *ro = tw_reporter_options_new();
    bool ok = ro && tw_reporter_options_set_file_path(ro, path) == TW_OK &&
              tw_reporter_options_set_max_file_bytes(ro, max_bytes) == TW_OK &&
              tw_reporter_options_set_max_files(ro, max_files) == TW_OK &&
              /* Flushes come from the tests (tw_tracer_flush, close), not the clock. */
              tw_reporter_options_set_flush_interval_ms(ro, 60000) == TW_OK &&
              /* Close writes everything (a rotation syncs the file, which on a busy
               * disk can take longer than the default 5 s deadline); the tests of
               * the deadline are the FIFO ones, which never wait that long. */
              tw_reporter_options_set_close_timeout_ms(ro, 60000) == TW_OK;
    tw_reporter *r = ok ? tw_reporter_file_new(ro, NULL) : NULL;
    tw_reporter_options_free(ro);
    if (!r)
        return NULL;
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "file-test");
    tw_tracer_options_set_sampler(opts, tw_sampler_const_new(true));
    tw_tracer_options_set_reporter(opts, r);
    tw_tracer *t = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    return t;
}

static tw_tracer *tracer_writing_file(const char *path, size_t max_bytes, size_t max_files)
{
    tw_tracer *t = make_file_tracer(path, max_bytes, max_files);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_STRING_EQUAL(tw_reporter_name(tw_tracer_reporter(t)), "dapper-file");
    return t;
}

/* One span with a sequence number tag, fixed times, and a kind by parity. */
static void emit_span(tw_tracer *t, const char *name, int64_t seq, const char *writer)
{
    tw_span_options *so = tw_span_options_new();
    tw_span_options_set_start_time_us(so, START_US + seq * 10);
    tw_span *s = tw_span_start(t, name, so);
    tw_span_options_free(so);
    tw_span_set_tag_int64(s, "seq", seq);
    tw_span_set_tag_str(s, "span.kind", seq % 2 ? "server" : "client");
    if (writer)
        tw_span_set_tag_str(s, "writer", writer);
    tw_span_finish_at(s, START_US + seq * 10 + 5);
}

static uint64_t counter(tw_tracer *t, tw_counter c)
{
    return tw_reporter_counter(tw_tracer_reporter(t), c);
}

static void assert_accounted(tw_tracer *t)
{
    CU_ASSERT_EQUAL(counter(t, TW_COUNTER_SPANS_REPORTED),
                    counter(t, TW_COUNTER_SPANS_SENT) + counter(t, TW_COUNTER_DROPPED_QUEUE_FULL) +
                        counter(t, TW_COUNTER_DROPPED_TOO_LARGE) +
                        counter(t, TW_COUNTER_FAILED_TO_EMIT));
}

/* What a file holds, read with the project's own reader. */
typedef struct file_contents {
    size_t n_records;
    size_t n_malformed;
    int64_t seqs[4096];   /* the "seq" tag of each record, in file order */
    char writers[4096];   /* first letter of the "writer" tag, or 0 */
    size_t n_names_after; /* records named "after" */
} file_contents;

static void read_file(const char *path, file_contents *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    tw__dapper_log_reader *r = tw__dapper_log_reader_new(f, 0);
    for (;;) {
        tw__span_data *span;
        tw__process process;
        tw_status st = tw__dapper_log_reader_next(r, &span, &process, NULL);
        if (st == TW_E_NOT_FOUND)
            break;
        if (st != TW_OK) {
            out->n_malformed++;
            continue;
        }
        CU_ASSERT_STRING_EQUAL(process.service_name, "file-test");
        CU_ASSERT_PTR_NOT_NULL(tw__process_find_tag(&process, "client-uuid"));
        const tw__tag *seq = tw__span_data_find_tag(span, "seq");
        const tw__tag *writer = tw__span_data_find_tag(span, "writer");
        if (out->n_records < 4096) {
            out->seqs[out->n_records] = seq ? seq->v.i64 : -1;
            out->writers[out->n_records] = writer ? writer->v.str[0] : 0;
        }
        if (strcmp(span->operation, "after") == 0)
            out->n_names_after++;
        out->n_records++;
        tw__span_data_unref(span);
        tw__process_clear(&process);
    }
    tw__dapper_log_reader_free(r);
    fclose(f);
}

static off_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

/* ---- an independent reader ---------------------------------------------------------------- */

/* Python's json module over each line: one JSON object per line with the
 * members and types docs/dapper-log-format.md specifies. Prints the count. */
static const char PY_CHECK[] =
    "import json, sys\n"
    "n = 0\n"
    "begin = {'client': 'cs', 'server': 'sr', 'producer': 'ms', 'consumer': 'wr'}\n"
    "end = {'client': 'cr', 'server': 'ss', 'producer': 'ws', 'consumer': 'mr'}\n"
    "types = ('string', 'bool', 'int64', 'float64', 'binary')\n"
    "for path in sys.argv[1:]:\n"
    "    with open(path, 'rb') as f:\n"
    "        for raw in f:\n"
    "            assert raw.endswith(b'\\n')\n"
    "            rec = json.loads(raw.decode('utf-8'))\n"
    "            assert rec['v'] == 1\n"
    "            assert len(rec['trace_id']) in (16, 32) and int(rec['trace_id'], 16) != 0\n"
    "            assert len(rec['span_id']) == 16 and int(rec['span_id'], 16) != 0\n"
    "            assert isinstance(rec['name'], str)\n"
    "            assert rec['end_us'] >= rec['start_us'] > 0\n"
    "            assert rec['flags'] & 1\n"
    "            kind = rec.get('kind')\n"
    "            ann = [(a['value'], a['ts_us']) for a in rec.get('annotations', [])]\n"
    "            if kind:\n"
    "                assert ann == [(begin[kind], rec['start_us']), (end[kind], rec['end_us'])], "
    "ann\n"
    "            else:\n"
    "                assert ann == []\n"
    "            for t in rec.get('tags', []) + rec['process'].get('tags', []):\n"
    "                assert t['type'] in types and isinstance(t['key'], str) and 'value' in t\n"
    "            for log in rec.get('logs', []):\n"
    "                assert isinstance(log['ts_us'], int)\n"
    "                for t in log['fields']:\n"
    "                    assert t['type'] in types\n"
    "            assert isinstance(rec['process']['service'], str)\n"
    "            n += 1\n"
    "print(n)\n";

/* Returns the number of lines python3 accepted, or -1 when python3 is
 * missing (the check is then skipped) or rejected the file (-2). */
static long python_count(const char *path)
{
    if (access("/usr/bin/python3", X_OK) != 0)
        return -1;
    char *script = in_scratch("check.py");
    FILE *f = fopen(script, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(PY_CHECK, f);
    fclose(f);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s", script, path);
    FILE *p = popen(cmd, "r");
    long n = -2;
    if (p) {
        if (fscanf(p, "%ld", &n) != 1)
            n = -2;
        if (pclose(p) != 0)
            n = -2;
    }
    return n;
}

/* ---- tests -------------------------------------------------------------------------------- */

static void test_each_span_is_one_line_any_reader_can_parse(void)
{
    make_scratch_dir();
    const char *path = in_scratch("spans.log");
    tw_tracer *t = tracer_writing_file(path, (size_t)1 << 20, 3);
    for (int i = 0; i < 50; i++) {
        tw_span_options *so = tw_span_options_new();
        tw_span_options_set_start_time_us(so, START_US + i);
        tw_span *s = tw_span_start(t, "op \"quoted\" \xc3\xa9", so);
        tw_span_options_free(so);
        tw_span_set_tag_int64(s, "seq", i);
        tw_span_set_tag_str(s, "span.kind", i % 2 ? "server" : "client");
        tw_span_set_tag_double(s, "ratio", i / 3.0);
        tw_span_set_tag_bool(s, "cached", i % 3 == 0);
        tw_span_set_tag_binary(s, "bytes", "\0\n\"", 3);
        tw_span_set_tag_str(s, "multi\nline", "tab\there\nnewline");
        tw_span_log_kv(s, "event", "step", "i", "x", NULL);
        if (i % 5 == 0)
            tw_span_set_error(s, "boom", "failed\non purpose");
        tw_span_finish_at(s, START_US + i + 100);
    }
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
    CU_ASSERT_EQUAL(counter(t, TW_COUNTER_SPANS_SENT), 50);
    CU_ASSERT_EQUAL(counter(t, TW_COUNTER_FAILED_TO_EMIT), 0);
    CU_ASSERT_EQUAL(counter(t, TW_COUNTER_BYTES_SENT), (uint64_t)file_size(path));
    assert_accounted(t);
    file_contents got = {0};
    read_file(path, &got);
    CU_ASSERT_EQUAL(got.n_records, 50);
    CU_ASSERT_EQUAL(got.n_malformed, 0);
    for (size_t i = 0; i < got.n_records; i++)
        CU_ASSERT_EQUAL(got.seqs[i], (int64_t)i);
    long n = python_count(path);
    if (n == -1)
        fprintf(stderr, "(no /usr/bin/python3: the independent reader is skipped)\n");
    else
        CU_ASSERT_EQUAL(n, 50);
    tw_tracer_free(t);
    remove_tree(scratch_dir);
}

/* Reads path.N .. path.1, path (oldest first) and checks the kept spans are
 * the newest ones, in order, each file within @max_bytes. Returns how many. */
static size_t check_rotated_tail(const char *path, size_t max_files, size_t max_bytes,
                                 int64_t last_seq)
{
    file_contents *all = calloc(1, sizeof(*all));
    char name[600];
    snprintf(name, sizeof name, "%s.%zu", path, max_files + 1);
    CU_ASSERT_EQUAL(file_size(name), -1); /* never more than max_files rotated */
    for (size_t n = max_files + 1; n-- > 0;) {
        if (n == 0)
            snprintf(name, sizeof name, "%s", path);
        else
            snprintf(name, sizeof name, "%s.%zu", path, n);
        off_t size = file_size(name);
        CU_ASSERT(size >= 0 && size <= (off_t)max_bytes);
        read_file(name, all);
    }
    CU_ASSERT_EQUAL(all->n_malformed, 0);
    CU_ASSERT_FATAL(all->n_records > 0);
    for (size_t i = 1; i < all->n_records; i++)
        CU_ASSERT_EQUAL(all->seqs[i], all->seqs[i - 1] + 1);
    CU_ASSERT_EQUAL(all->seqs[all->n_records - 1], last_seq);
    size_t n_records = all->n_records;
    free(all);
    return n_records;
}

static void test_rotation_keeps_n_files_under_the_size_limit(void)
{
    make_scratch_dir();
    const char *path = in_scratch("spans.log");
    tw_tracer *t = tracer_writing_file(path, 4096, 2);
    for (int i = 0; i < 300; i++) {
        emit_span(t, "rotating", i, NULL);
        if (i % 40 == 39)
            tw_tracer_flush(t, 5000);
    }
    tw_tracer_close(t);
    CU_ASSERT_EQUAL(counter(t, TW_COUNTER_SPANS_SENT), 300);
    CU_ASSERT_EQUAL(counter(t, TW_COUNTER_FAILED_TO_EMIT), 0);
    size_t kept = check_rotated_tail(path, 2, 4096, 299);
    CU_ASSERT(kept < 300);              /* older files were deleted */
    CU_ASSERT(kept > 2 * (4096 / 700)); /* three files' worth is kept */
    tw_tracer_free(t);
    remove_tree(scratch_dir);
}

static void test_zero_rotated_files_starts_the_file_again(void)
{
    make_scratch_dir();
    const char *path = in_scratch("spans.log");
    tw_tracer *t = tracer_writing_file(path, 4096, 0);
    for (int i = 0; i < 100; i++)
        emit_span(t, "restarting", i, NULL);
    tw_tracer_close(t);
    CU_ASSERT_EQUAL(counter(t, TW_COUNTER_SPANS_SENT), 100);
    CU_ASSERT(check_rotated_tail(path, 0, 4096, 99) < 100);
    tw_tracer_free(t);
    remove_tree(scratch_dir);
}

static void test_line_longer_than_the_file_limit_is_too_large(void)
{
    make_scratch_dir();
    const char *path = in_scratch("spans.log");
    tw_tracer *t = tracer_writing_file(path, 1024, 1);
    char big[2001];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    tw_span *s = tw_span_start(t, "huge", NULL);
    tw_span_set_tag_str(s, "payload", big);
    tw_span_finish(s);
    emit_span(t, "small", 1, NULL);
    tw_tracer_flush(t, 5000);
    CU_ASSERT_EQUAL(counter(t, TW_COUNTER_DROPPED_TOO_LARGE), 1);
    CU_ASSERT_EQUAL(counter(t, TW_COUNTER_SPANS_SENT), 1);
    assert_accounted(t);
    CU_ASSERT(file_size(path) <= 1024);
    tw_tracer_free(t);
    remove_tree(scratch_dir);
}

static void test_missing_directory_counts_failed_then_recovers(void)
{
    make_scratch_dir();
    const char *dir = in_scratch("later");
    char path[600];
    snprintf(path, sizeof path, "%s/spans.log", dir);
    tw_tracer *t = tracer_writing_file(path, 4096, 1); /* not fatal: nothing opened yet */
    for (int i = 0; i < 3; i++)
        emit_span(t, "lost", i, NULL);
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
    CU_ASSERT_EQUAL(counter(t, TW_COUNTER_FAILED_TO_EMIT), 3);
    CU_ASSERT_EQUAL(counter(t, TW_COUNTER_SPANS_SENT), 0);
    CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
    for (int i = 3; i < 5; i++)
        emit_span(t, "kept", i, NULL);
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
    CU_ASSERT_EQUAL(counter(t, TW_COUNTER_SPANS_SENT), 2);
    assert_accounted(t);
    file_contents got = {0};
    read_file(path, &got);
    CU_ASSERT_EQUAL(got.n_records, 2);
    CU_ASSERT_EQUAL(got.seqs[0], 3);
    tw_tracer_free(t);
    remove_tree(scratch_dir);
}

static void test_full_disk_counts_failed_and_never_rotates_a_device(void)
{
    struct stat dev_full;
    if (stat("/dev/full", &dev_full) != 0 || !S_ISCHR(dev_full.st_mode)) {
        fprintf(stderr, "(no /dev/full here; test skipped)\n");
        return;
    }
    make_scratch_dir();
    /* Through a symlink: even a rotation bug would rename the link, not the
     * device (we run as root in CI containers). */
    const char *path = in_scratch("full.log");
    CU_ASSERT_EQUAL_FATAL(symlink("/dev/full", path), 0);
    tw_tracer *t = tracer_writing_file(path, 1024, 2);
    for (int i = 0; i < 40; i++)
        emit_span(t, "nowhere", i, NULL);
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
    CU_ASSERT_EQUAL(counter(t, TW_COUNTER_FAILED_TO_EMIT), 40);
    CU_ASSERT_EQUAL(counter(t, TW_COUNTER_SPANS_SENT), 0);
    assert_accounted(t);
    tw_tracer_free(t);
    struct stat st;
    CU_ASSERT(lstat(path, &st) == 0 && S_ISLNK(st.st_mode));
    CU_ASSERT_EQUAL(file_size(in_scratch("full.log.1")), -1);
    CU_ASSERT(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode));
    remove_tree(scratch_dir);
}

/* The child's half of the RLIMIT_FSIZE test; returns its exit status. */
static int fsize_child(const char *path, int out_fd)
{
    struct rlimit saved, limited;
    if (getrlimit(RLIMIT_FSIZE, &saved) != 0)
        return 10;
    limited = saved;
    limited.rlim_cur = 3000;
    if (setrlimit(RLIMIT_FSIZE, &limited) != 0)
        return 11;
    tw_tracer *t = make_file_tracer(path, (size_t)1 << 20, 1);
    if (!t)
        return 15;
    for (int i = 0; i < 30; i++)
        emit_span(t, "before", i, NULL);
    if (tw_tracer_flush(t, 5000) != TW_OK)
        return 12;
    uint64_t counts[4] = {counter(t, TW_COUNTER_SPANS_SENT), counter(t, TW_COUNTER_FAILED_TO_EMIT),
                          0, 0};
    if (setrlimit(RLIMIT_FSIZE, &saved) != 0) /* the disk has room again */
        return 13;
    for (int i = 30; i < 35; i++)
        emit_span(t, "after", i, NULL);
    tw_tracer_close(t);
    counts[2] = counter(t, TW_COUNTER_SPANS_SENT);
    counts[3] = counter(t, TW_COUNTER_FAILED_TO_EMIT);
    tw_tracer_free(t);
    return write(out_fd, counts, sizeof counts) == (ssize_t)sizeof counts ? 0 : 14;
}

static void test_file_size_limit_fails_writes_and_recovers_cleanly(void)
{
    make_scratch_dir();
    const char *path = in_scratch("limited.log");
    int pipe_fds[2];
    CU_ASSERT_EQUAL_FATAL(pipe(pipe_fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        close(pipe_fds[0]);
        _exit(fsize_child(path, pipe_fds[1]));
    }
    close(pipe_fds[1]);
    uint64_t counts[4] = {0};
    ssize_t got_bytes = read(pipe_fds[0], counts, sizeof counts);
    close(pipe_fds[0]);
    int status = 0;
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    /* Not killed by SIGXFSZ: the reporter thread blocks it and sees EFBIG. */
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (WIFSIGNALED(status))
        fprintf(stderr, "child killed by signal %d\n", WTERMSIG(status));
    CU_ASSERT_EQUAL_FATAL(got_bytes, (ssize_t)sizeof counts);
    uint64_t sent_before = counts[0], failed_before = counts[1];
    CU_ASSERT_EQUAL(sent_before + failed_before, 30);
    CU_ASSERT(sent_before > 0 && failed_before > 0);
    CU_ASSERT_EQUAL(counts[2], sent_before + 5);
    CU_ASSERT_EQUAL(counts[3], failed_before);
    /* What reached the file: the lines counted sent, at most one cut line
     * (ended by the repair newline), then the five later spans. */
    file_contents got = {0};
    read_file(path, &got);
    CU_ASSERT_EQUAL(got.n_records, sent_before + 5);
    CU_ASSERT(got.n_malformed <= 1);
    CU_ASSERT_EQUAL(got.n_names_after, 5);
    CU_ASSERT_EQUAL(got.seqs[got.n_records - 1], 34);
    remove_tree(scratch_dir);
}

static void test_two_writers_share_one_path_without_losing_lines(void)
{
    make_scratch_dir();
    const char *path = in_scratch("shared.log");
    enum { MAX_FILES = 200, PER_WRITER = 200 };
    tw_tracer *a = tracer_writing_file(path, 4096, MAX_FILES);
    tw_tracer *b = tracer_writing_file(path, 4096, MAX_FILES);
    for (int i = 0; i < PER_WRITER; i++) {
        emit_span(a, "a", i, "a");
        emit_span(b, "b", i, "b");
        if (i % 10 == 9) {
            tw_tracer_flush(a, 5000);
            tw_tracer_flush(b, 5000);
        }
    }
    tw_tracer_close(a);
    tw_tracer_close(b);
    CU_ASSERT_EQUAL(counter(a, TW_COUNTER_SPANS_SENT), PER_WRITER);
    CU_ASSERT_EQUAL(counter(b, TW_COUNTER_SPANS_SENT), PER_WRITER);
    file_contents *all = calloc(1, sizeof(*all));
    char name[600];
    for (size_t n = 0; n <= MAX_FILES; n++) {
        if (n == 0)
            snprintf(name, sizeof name, "%s", path);
        else
            snprintf(name, sizeof name, "%s.%zu", path, n);
        read_file(name, all);
    }
    CU_ASSERT_EQUAL(all->n_malformed, 0);
    CU_ASSERT_EQUAL(all->n_records, 2 * PER_WRITER);
    int seen[2][PER_WRITER] = {{0}};
    for (size_t i = 0; i < all->n_records && i < 4096; i++) {
        int w = all->writers[i] == 'b';
        if (all->seqs[i] >= 0 && all->seqs[i] < PER_WRITER)
            seen[w][all->seqs[i]]++;
    }
    size_t exactly_once = 0;
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < PER_WRITER; i++)
            exactly_once += seen[w][i] == 1;
    CU_ASSERT_EQUAL(exactly_once, 2 * PER_WRITER);
    free(all);
    tw_tracer_free(a);
    tw_tracer_free(b);
    remove_tree(scratch_dir);
}

static void test_options_are_checked(void)
{
    tw_error *err = NULL;
    CU_ASSERT_PTR_NULL(tw_reporter_file_new(NULL, &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_CONFIG);
    tw_error_free(err);
    err = NULL;
    tw_reporter_options *ro = tw_reporter_options_new();
    CU_ASSERT_PTR_NULL(tw_reporter_file_new(ro, &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), "tw_reporter_options_set_file_path"));
    tw_error_free(err);
    CU_ASSERT_EQUAL(tw_reporter_options_set_file_path(ro, ""), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_file_path(ro, NULL), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_file_path(NULL, "x"), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_max_file_bytes(ro, 1023), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_max_file_bytes(ro, 1024), TW_OK);
    CU_ASSERT_EQUAL(tw_reporter_options_set_max_files(ro, 1001), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_max_files(ro, 0), TW_OK);
    CU_ASSERT_EQUAL(tw_reporter_options_set_file_path(ro, "/nonexistent/dir/x.log"), TW_OK);
    /* A reporter never given to a tracer: freed without touching the file. */
    tw_reporter *r = tw_reporter_file_new(ro, NULL);
    CU_ASSERT_PTR_NOT_NULL(r);
    tw_reporter_free(r);
    tw_reporter_options_free(ro);
}

/* ---- named pipes: the reporter never blocks on one ------------------------------------------- */

/* A FIFO's read end, opened by the test (or by a rescue) and never read. */
typedef struct fifo_reader {
    const char *path;
    int fd; /* -1 until opened */
} fifo_reader;

static void fifo_open_reader(void *arg)
{
    fifo_reader *f = arg;
    if (f->fd < 0)
        f->fd = open(f->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}

/* Rescue for a writer blocked on a full pipe: the read end goes away, so
 * the write fails (EPIPE) instead of waiting. */
static void fifo_close_reader(void *arg)
{
    fifo_reader *f = arg;
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
}

typedef struct tracer_call {
    tw_tracer *tracer;
    tw_status status;
} tracer_call;

static void call_flush(void *arg)
{
    tracer_call *c = arg;
    c->status = tw_tracer_flush(c->tracer, 5000);
}

static void call_close(void *arg)
{
    tracer_call *c = arg;
    c->status = tw_tracer_close(c->tracer);
}

static int fifo_child(void *arg)
{
    tw_tracer *t = arg;
    if (counter(t, TW_COUNTER_SPANS_REPORTED) != 0)
        return 2;
    if (!CHILD_CAN_START_THREADS)
        return 0;
    emit_span(t, "child", 1, NULL);
    tw_status st = tw_tracer_flush(t, 5000);
    bool ok = st == TW_OK && counter(t, TW_COUNTER_SPANS_REPORTED) == 1 &&
              counter(t, TW_COUNTER_FAILED_TO_EMIT) == 1;
    tw_tracer_free(t);
    return ok ? 0 : 1;
}

static void call_fork(void *arg)
{
    tracer_call *c = arg;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(20);
        _exit(fifo_child(c->tracer));
    }
    c->status = pid < 0 ? TW_E_IO : TW_OK;
    int rc = pid < 0 ? 200 : wait_child_bounded(pid, 30000);
    if (rc != 0) {
        fprintf(stderr, "fifo child: status %d\n", rc);
        c->status = TW_E_STATE;
    }
}

/* Opening a FIFO for writing waits for a reader; the reporter thread must
 * not, or flush, fork() and close would wait with it. The spans fail,
 * counted, and the open is tried again with the next batch. */
static void test_fifo_without_a_reader_never_blocks_flush_fork_or_close(void)
{
    make_scratch_dir();
    fifo_reader reader = {in_scratch("spans.fifo"), -1};
    CU_ASSERT_EQUAL_FATAL(mkfifo(reader.path, 0600), 0);
    tw_tracer *t = tracer_writing_file(reader.path, 1 << 20, 1);
    emit_span(t, "unread", 1, NULL);
    tracer_call c = {t, TW_OK};
    CU_ASSERT(bounded_call(call_flush, &c, 20000, fifo_open_reader, &reader, NULL));
    CU_ASSERT_EQUAL(c.status, TW_OK);
    CU_ASSERT_EQUAL(counter(t, TW_COUNTER_FAILED_TO_EMIT), 1);
    CU_ASSERT(bounded_call(call_fork, &c, 40000, fifo_open_reader, &reader, NULL));
    CU_ASSERT_EQUAL(c.status, TW_OK);
    emit_span(t, "unread", 2, NULL);
    CU_ASSERT(bounded_call(call_close, &c, 20000, fifo_open_reader, &reader, NULL));
    CU_ASSERT_EQUAL(c.status, TW_OK);
    CU_ASSERT_EQUAL(counter(t, TW_COUNTER_FAILED_TO_EMIT), 2);
    assert_accounted(t);
    fifo_close_reader(&reader);
    tw_tracer_free(t);
    remove_tree(scratch_dir);
}

/* A reader that opened the FIFO but never reads: once the pipe is full the
 * writes cannot go on; close must still end, with every span counted. */
static void test_fifo_reader_that_never_reads_does_not_hold_up_close(void)
{
    make_scratch_dir();
    fifo_reader reader = {in_scratch("spans.fifo"), -1};
    CU_ASSERT_EQUAL_FATAL(mkfifo(reader.path, 0600), 0);
    fifo_open_reader(&reader);
    CU_ASSERT_FATAL(reader.fd >= 0);
    tw_tracer *t = tracer_writing_file(reader.path, 1 << 20, 1);
    for (int i = 0; i < 2000; i++) /* several times a pipe's 64 KiB */
        emit_span(t, "stuck in the pipe", i, NULL);
    tracer_call c = {t, TW_OK};
    int64_t elapsed_ms = 0;
    CU_ASSERT(bounded_call(call_close, &c, 30000, fifo_close_reader, &reader, &elapsed_ms));
    CU_ASSERT_EQUAL(c.status, TW_OK);
    CU_ASSERT_EQUAL(counter(t, TW_COUNTER_SPANS_REPORTED), 2000);
    CU_ASSERT(counter(t, TW_COUNTER_SPANS_SENT) > 0);
    CU_ASSERT(counter(t, TW_COUNTER_FAILED_TO_EMIT) > 0);
    assert_accounted(t);
    fprintf(stderr, "(close with a full pipe took %lld ms) ", (long long)elapsed_ms);
    fifo_close_reader(&reader);
    tw_tracer_free(t);
    remove_tree(scratch_dir);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("report/file", NULL, NULL);
    CU_add_test(suite, "each_span_is_one_line_any_reader_can_parse",
                test_each_span_is_one_line_any_reader_can_parse);
    CU_add_test(suite, "rotation_keeps_n_files_under_the_size_limit",
                test_rotation_keeps_n_files_under_the_size_limit);
    CU_add_test(suite, "zero_rotated_files_starts_the_file_again",
                test_zero_rotated_files_starts_the_file_again);
    CU_add_test(suite, "line_longer_than_the_file_limit_is_too_large",
                test_line_longer_than_the_file_limit_is_too_large);
    CU_add_test(suite, "missing_directory_counts_failed_then_recovers",
                test_missing_directory_counts_failed_then_recovers);
    CU_add_test(suite, "full_disk_counts_failed_and_never_rotates_a_device",
                test_full_disk_counts_failed_and_never_rotates_a_device);
    CU_add_test(suite, "file_size_limit_fails_writes_and_recovers_cleanly",
                test_file_size_limit_fails_writes_and_recovers_cleanly);
    CU_add_test(suite, "two_writers_share_one_path_without_losing_lines",
                test_two_writers_share_one_path_without_losing_lines);
    CU_add_test(suite, "options_are_checked", test_options_are_checked);
    CU_add_test(suite, "fifo_without_a_reader_never_blocks_flush_fork_or_close",
                test_fifo_without_a_reader_never_blocks_flush_fork_or_close);
    CU_add_test(suite, "fifo_reader_that_never_reads_does_not_hold_up_close",
                test_fifo_reader_that_never_reads_does_not_hold_up_close);
}
