/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/agent/test_agent_parts.c: suites "agent/spool", "agent/decode"
 * and "agent/procs": the single-threaded parts of `tracewire agent`
 * (bridge/agent/spool.c, decode.c, procs.c).
 *
 * spool: batches read back in order with their span counts, a restart
 * finds them (and deletes a write cut short), the size cap drops the oldest
 * and counts it, a damaged file is detected by its checksum and dropped;
 * files found damaged at start are counted (by their spans, or as
 * unreadable files), a directory named like one is left alone.
 * decode: the body table (routes, content types with parameters, the 415
 * rows without a decoder), bounded inflation (a bomb is too large, a broken
 * stream malformed, two gzip members read), Jaeger datagrams of the wrong
 * protocol refused with a reason. procs: equal processes share one entry,
 * --tag overrides replace and add, a sweep frees what no span holds.
 * batch (bridge/agent/batch.c): the items the batches keep in slabs (an
 * item cut by size moves to the next batch of its key, items larger than a
 * slab, keys interleaved) make the bodies the SDK's framing makes from the
 * same spans, whole and in ranges (the halves of a refused batch); valgrind
 * and ASan see the slabs freed.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "agent/batch.h"
#include "agent/decode.h"
#include "agent/spool.h"
#include "transport/framing.h"
#include "wire/jaeger/jaeger_view.h"
#include "harness.h"

/* ---- spool ----------------------------------------------------------------------------------- */

static char spool_dir[64];

/* The destination's directory under spool_dir: its name is an HMAC keyed
 * with spool_dir/spool-key (spool.c), so it is found, not built. */
static const char *kdir(void)
{
    static char out[512];
    out[0] = '\0';
    DIR *d = opendir(spool_dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] != '.' && strcmp(e->d_name, "spool-key") != 0)
            snprintf(out, sizeof out, "%s/%s", spool_dir, e->d_name);
    }
    if (d)
        closedir(d);
    return out;
}

static void make_dir(void)
{
    snprintf(spool_dir, sizeof spool_dir, "/tmp/tw-spool-test.XXXXXX");
    CU_ASSERT_FATAL(mkdtemp(spool_dir) != NULL);
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", spool_dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
}

static void test_batches_read_back_in_order(void)
{
    make_dir();
    twa_dest_stats st;
    memset(&st, 0, sizeof st);
    char why[256];
    twa_spool *s =
        twa_spool_open(spool_dir, "k", "http://x", "http://x", 1 << 20, &st, why, sizeof why);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT(twa_spool_is_empty(s));
    for (uint32_t i = 1; i <= 3; i++) {
        char body[32];
        int n = snprintf(body, sizeof body, "batch-%u", i);
        CU_ASSERT(twa_spool_append(s, (const uint8_t *)body, (size_t)n, i * 10, i == 2 ? 1 : 0));
    }
    CU_ASSERT_EQUAL(atomic_load(&st.spool_spans), 60);
    CU_ASSERT_EQUAL(atomic_load(&st.spool_files), 3);
    twa_spool_close(s);
    /* a write cut short by a crash */
    char tmp[128];
    snprintf(tmp, sizeof tmp, "%s/.tmp-00000000000000ff", kdir());
    FILE *f = fopen(tmp, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("partial", f);
    fclose(f);
    memset(&st, 0, sizeof st);
    s = twa_spool_open(spool_dir, "k", "http://x", "http://x", 1 << 20, &st, why, sizeof why);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT(access(tmp, F_OK) != 0);
    CU_ASSERT_EQUAL(atomic_load(&st.spool_files), 3);
    tw__buf body;
    tw__buf_init(&body);
    for (uint32_t i = 1; i <= 3; i++) {
        uint32_t n = 0, flags = 9;
        CU_ASSERT_FATAL(twa_spool_peek(s, &body, &n, &flags));
        char want[32];
        snprintf(want, sizeof want, "batch-%u", i);
        CU_ASSERT_EQUAL(body.len, strlen(want));
        CU_ASSERT(memcmp(body.data, want, body.len) == 0);
        CU_ASSERT_EQUAL(n, i * 10);
        CU_ASSERT_EQUAL(flags, i == 2 ? 1u : 0u);
        twa_spool_pop(s);
    }
    CU_ASSERT(twa_spool_is_empty(s));
    CU_ASSERT_EQUAL(atomic_load(&st.spool_bytes), 0);
    tw__buf_free(&body);
    twa_spool_close(s);
    remove_dir();
}

static void test_the_cap_drops_the_oldest_and_counts_it(void)
{
    make_dir();
    twa_dest_stats st;
    memset(&st, 0, sizeof st);
    char why[256];
    uint8_t body[1000];
    memset(body, 'x', sizeof body);
    /* 1032 bytes a file (a 32-byte header): three fit under 3200 */
    twa_spool *s =
        twa_spool_open(spool_dir, "k", "http://x", "http://x", 3200, &st, why, sizeof why);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    for (int i = 0; i < 5; i++) {
        body[0] = (uint8_t)('0' + i);
        CU_ASSERT(twa_spool_append(s, body, sizeof body, 7, 0));
    }
    CU_ASSERT_EQUAL(atomic_load(&st.spool_files), 3);
    CU_ASSERT_EQUAL(twa_get(&st.dropped[TWA_DROP_SPOOL_FULL]), 14);
    tw__buf out;
    tw__buf_init(&out);
    uint32_t n, flags;
    CU_ASSERT_FATAL(twa_spool_peek(s, &out, &n, &flags));
    CU_ASSERT_EQUAL(out.data[0], '2');                 /* 0 and 1 were dropped */
    CU_ASSERT(!twa_spool_append(s, body, 4000, 1, 0)); /* larger than the cap alone */
    tw__buf_free(&out);
    twa_spool_close(s);
    remove_dir();
}

static void test_a_damaged_file_is_dropped_and_counted(void)
{
    make_dir();
    twa_dest_stats st;
    memset(&st, 0, sizeof st);
    char why[256];
    twa_spool *s =
        twa_spool_open(spool_dir, "k", "http://x", "http://x", 1 << 20, &st, why, sizeof why);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT(twa_spool_append(s, (const uint8_t *)"first-body", 10, 3, 0));
    CU_ASSERT(twa_spool_append(s, (const uint8_t *)"second-body", 11, 4, 0));
    /* flip a byte of the first body */
    char path[128];
    snprintf(path, sizeof path, "%s/0000000000000001.twspool", kdir());
    int fd = open(path, O_RDWR);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL(pwrite(fd, "F", 1, 32), 1);
    close(fd);
    tw__buf out;
    tw__buf_init(&out);
    uint32_t n, flags;
    CU_ASSERT_FATAL(twa_spool_peek(s, &out, &n, &flags));
    CU_ASSERT_EQUAL(n, 4);
    CU_ASSERT(out.len == 11 && memcmp(out.data, "second-body", 11) == 0);
    CU_ASSERT_EQUAL(twa_get(&st.dropped[TWA_DROP_SPOOL_ERROR]), 3);
    tw__buf_free(&out);
    twa_spool_close(s);
    remove_dir();
}

/* Files a previous run left damaged are counted when the agent starts: by
 * their spans when the header says how many (cut short, a wrong length),
 * else as unreadable files (empty); a directory with a spool file's name is
 * left alone, and not counted. */
static void test_damaged_files_at_start_are_counted(void)
{
    make_dir();
    twa_dest_stats st;
    memset(&st, 0, sizeof st);
    char why[256], path[128];
    twa_spool *s =
        twa_spool_open(spool_dir, "k", "http://x", "http://x", 1 << 20, &st, why, sizeof why);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT(twa_spool_append(s, (const uint8_t *)"first-body-0123456789", 21, 3, 0));
    CU_ASSERT(twa_spool_append(s, (const uint8_t *)"second-body", 11, 4, 0));
    CU_ASSERT(twa_spool_append(s, (const uint8_t *)"third-body", 10, 5, 0));
    twa_spool_close(s);
    /* 1: cut by 10 bytes; 2: a huge length in its header; 9: empty; a: a directory */
    snprintf(path, sizeof path, "%s/0000000000000001.twspool", kdir());
    CU_ASSERT_EQUAL(truncate(path, 32 + 21 - 10), 0);
    snprintf(path, sizeof path, "%s/0000000000000002.twspool", kdir());
    int fd = open(path, O_RDWR);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL(pwrite(fd, "\xff\xff\xff\xff\xff\xff\xff\x7f", 8, 24), 8);
    close(fd);
    snprintf(path, sizeof path, "%s/0000000000000009.twspool", kdir());
    fd = open(path, O_WRONLY | O_CREAT, 0600);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    char dir[128];
    snprintf(dir, sizeof dir, "%s/000000000000000a.twspool", kdir());
    CU_ASSERT_EQUAL(mkdir(dir, 0700), 0);

    memset(&st, 0, sizeof st);
    s = twa_spool_open(spool_dir, "k", "http://x", "http://x", 1 << 20, &st, why, sizeof why);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(twa_get(&st.dropped[TWA_DROP_SPOOL_ERROR]), 3 + 4);
    CU_ASSERT_EQUAL(twa_get(&st.spool_unreadable_files), 1);
    CU_ASSERT_EQUAL(atomic_load(&st.spool_files), 1);
    CU_ASSERT_EQUAL(atomic_load(&st.spool_spans), 5);
    CU_ASSERT(access(path, F_OK) != 0); /* the empty file is deleted */
    struct stat sb;
    CU_ASSERT(stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode)); /* the directory is left */
    tw__buf out;
    tw__buf_init(&out);
    uint32_t n, flags;
    CU_ASSERT_FATAL(twa_spool_peek(s, &out, &n, &flags));
    CU_ASSERT_EQUAL(n, 5);
    CU_ASSERT(out.len == 10 && memcmp(out.data, "third-body", 10) == 0);
    tw__buf_free(&out);
    twa_spool_close(s);
    remove_dir();
}

/* ---- decode -------------------------------------------------------------------------------------
 */

static void test_the_body_table(void)
{
    bool known;
    const twa_body_format *f = twa_body_format_find("/v1/traces", "application/json", &known);
    CU_ASSERT(f && f->decode && known);
    f = twa_body_format_find("/v1/traces", "Application/JSON; charset=utf-8", &known);
    CU_ASSERT(f && f->decode);
    f = twa_body_format_find("/v1/traces", "application/x-protobuf", &known);
    CU_ASSERT(f && f->decode && known && strcmp(f->receiver, "otlp") == 0);
    f = twa_body_format_find("/api/v2/spans", "application/x-protobuf", &known);
    CU_ASSERT(f && f->decode && strcmp(f->receiver, "zipkin") == 0);
    f = twa_body_format_find("/v1/traces", "text/plain", &known);
    CU_ASSERT(!f && known);
    f = twa_body_format_find("/nope", "application/json", &known);
    CU_ASSERT(!f && !known);
    f = twa_body_format_find("/api/v1/spans", "application/x-thrift", &known);
    CU_ASSERT(f && f->decode && strcmp(f->receiver, "zipkin") == 0);
    char accepted[128];
    twa_body_formats_of("/api/v1/spans", accepted, sizeof accepted);
    CU_ASSERT_STRING_EQUAL(accepted, "application/json, application/x-thrift");
}

/* @window_bits as deflateInit2 takes them: 31 gzip, 15 zlib, -15 raw. */
static size_t compress_as(int window_bits, const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
    z_stream z = {0};
    deflateInit2(&z, 9, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY);
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    deflate(&z, Z_FINISH);
    size_t n = z.total_out;
    deflateEnd(&z);
    return n;
}

static size_t gzip_of(const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
    return compress_as(31, in, len, out, cap);
}

/* Content-Encoding: deflate is zlib by the letter of HTTP and raw deflate
 * from many clients: both are read, bounded the same way, and the errors
 * say deflate. */
static void test_deflate_zlib_or_raw(void)
{
    const char *text = "{\"resourceSpans\":[]} and some more text, some more text";
    size_t len = strlen(text);
    uint8_t packed[256];
    tw__buf out;
    tw__buf_init(&out);
    char why[256];
    for (int bits = -15; bits <= 15; bits += 30) {
        size_t n = compress_as(bits, (const uint8_t *)text, len, packed, sizeof packed);
        CU_ASSERT_EQUAL(twa_inflate_deflate(packed, n, 1000, &out, why, sizeof why), TWA_DECODE_OK);
        CU_ASSERT(out.len == len && memcmp(out.data, text, len) == 0);
        CU_ASSERT_EQUAL(twa_inflate_deflate(packed, n, 10, &out, why, sizeof why),
                        TWA_DECODE_TOO_LARGE);
        CU_ASSERT_EQUAL(twa_inflate_deflate(packed, n / 2, 1000, &out, why, sizeof why),
                        TWA_DECODE_MALFORMED);
        CU_ASSERT_PTR_NOT_NULL(strstr(why, "deflate"));
    }
    CU_ASSERT_EQUAL(
        twa_inflate_deflate((const uint8_t *)"\xff\xff\xff\xff", 4, 100, &out, why, sizeof why),
        TWA_DECODE_MALFORMED);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "bad deflate body"));
    tw__buf_free(&out);
}

static void test_inflation_is_bounded(void)
{
    size_t big = 4u << 20;
    uint8_t *zeros = calloc(1, big), *gz = malloc(64 * 1024);
    CU_ASSERT_FATAL(zeros && gz);
    size_t n = gzip_of(zeros, big, gz, 64 * 1024);
    CU_ASSERT(n < 16 * 1024);
    tw__buf out;
    tw__buf_init(&out);
    char why[256];
    CU_ASSERT_EQUAL(twa_inflate(gz, n, 1 << 20, &out, why, sizeof why), TWA_DECODE_TOO_LARGE);
    CU_ASSERT(strstr(why, "larger than") != NULL);
    CU_ASSERT(out.cap <= (1 << 20) + 1);
    CU_ASSERT_EQUAL(twa_inflate(gz, n, big, &out, why, sizeof why), TWA_DECODE_OK);
    CU_ASSERT_EQUAL(out.len, big);
    CU_ASSERT_EQUAL(twa_inflate(gz, n / 2, big, &out, why, sizeof why), TWA_DECODE_MALFORMED);
    /* two members, as RFC 1952 allows */
    size_t n2 = gzip_of((const uint8_t *)"abc", 3, gz, 64 * 1024);
    n2 += gzip_of((const uint8_t *)"def", 3, gz + n2, 64 * 1024 - n2);
    CU_ASSERT_EQUAL(twa_inflate(gz, n2, 100, &out, why, sizeof why), TWA_DECODE_OK);
    CU_ASSERT(out.len == 6 && memcmp(out.data, "abcdef", 6) == 0);
    gz[3] ^= 0xff; /* flags byte */
    CU_ASSERT_EQUAL(twa_inflate((const uint8_t *)"\x1f\x8bxx", 4, 100, &out, why, sizeof why),
                    TWA_DECODE_MALFORMED);
    tw__buf_free(&out);
    free(zeros);
    free(gz);
}

static void test_jaeger_datagrams_of_the_wrong_protocol_are_refused(void)
{
    twa_pipeline_options po = {0};
    char why[256];
    twa_pipeline *p = twa_pipeline_new(&po, NULL, 0, why, sizeof why);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    twa_recv_stats stats = {.name = "test"};
    twa_spanbuf sb;
    twa_spanbuf_init(&sb, p, &stats);
    /* a binary message header sent to the compact receiver */
    static const uint8_t binary_head[] = {0x80, 0x01, 0x00, 0x04, 0, 0, 0, 9, 'e', 'm', 'i'};
    CU_ASSERT_EQUAL(
        twa_decode_jaeger_compact(binary_head, sizeof binary_head, &sb, why, sizeof why),
        TWA_DECODE_MALFORMED);
    CU_ASSERT(strstr(why, "compact") != NULL);
    CU_ASSERT_EQUAL(twa_decode_jaeger_binary((const uint8_t *)"", 0, &sb, why, sizeof why),
                    TWA_DECODE_MALFORMED);
    static const uint8_t not_zipkin[] = {0x82, 0x81, 0x00, 0x09, 'e', 'm',  'i', 't',
                                         'B',  'a',  't',  'c',  'h', 0x19, 0x1c};
    CU_ASSERT_EQUAL(twa_decode_zipkin_compact(not_zipkin, sizeof not_zipkin, &sb, why, sizeof why),
                    TWA_DECODE_MALFORMED);
    CU_ASSERT(strstr(why, "emitZipkinBatch") != NULL);
    CU_ASSERT_EQUAL(sb.n, 0);
    twa_spanbuf_clear(&sb);
    twa_pipeline_free(p);
}

/* ---- procs ------------------------------------------------------------------------------------
 */

static void test_processes_are_shared_overridden_and_swept(void)
{
    const char *tags[] = {"env=prod", "region=eu"};
    twa_procs *t = twa_procs_new(tags, 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    tw__process p;
    tw__process_init(&p);
    tw__process_set_service(&p, "svc");
    tw_value v = {.type = TW_VALUE_STRING, .len = 4, .as.str = "test"};
    tw__process_add_tag(&p, "env", &v);
    twa_proc *a = twa_procs_intern(t, &p);
    twa_proc *b = twa_procs_intern(t, &p);
    CU_ASSERT_PTR_EQUAL(a, b);
    CU_ASSERT_EQUAL(twa_procs_count(t), 1);
    const tw__tag *env = tw__process_find_tag(&a->process, "env");
    CU_ASSERT(env && strcmp(env->v.str, "prod") == 0);
    CU_ASSERT_PTR_NOT_NULL(tw__process_find_tag(&a->process, "region"));
    CU_ASSERT_EQUAL(a->process.n_tags, 2);
    twa_proc *c = twa_procs_intern(t, NULL);
    CU_ASSERT(c && c != a && strcmp(c->process.service_name, "") == 0);
    twa_proc_unref(c);
    CU_ASSERT_EQUAL(twa_procs_sweep(t), 1); /* a is still held */
    twa_proc_unref(a);
    twa_proc_unref(b);
    CU_ASSERT_EQUAL(twa_procs_sweep(t), 0);
    const char *bad[] = {"novalue"};
    CU_ASSERT(!twa_procs_set_tags(t, bad, 1));
    tw__process_clear(&p);
    twa_procs_free(t);
}

/* ---- batch ------------------------------------------------------------------------------------
 */

#define BATCH_SPANS 600

typedef struct batch_check {
    tw__span_data *spans[BATCH_SPANS + 1]; /* by span id */
    const twa_framing *framing;
    size_t batches, spans_seen, mismatches;
} batch_check;

/* The body of b's items [lo, lo + n) as the SDK's framing makes it from the spans. */
static bool reference_body(batch_check *c, const twa_batch *b, size_t lo, size_t n, tw__buf *out)
{
    const tw__http_format_vtable *vt = &tw__http_otlp_proto_format;
    tw__http_format *fmt = vt->new_format();
    const twa_proc *proc = b->key;
    tw__process named; /* the agent's OTLP name for an empty service */
    const tw__process *p = tw__process_named(&proc->process, TW__OTLP_EMPTY_SERVICE, &named);
    bool ok = fmt && vt->open(fmt, p, NULL) == TW_OK;
    void *items[BATCH_SPANS];
    size_t made = 0;
    for (size_t i = 0; ok && i < n; i++) {
        size_t size;
        items[i] = vt->encode(fmt, c->spans[b->meta[lo + i].span_id], &size);
        ok = items[i] != NULL;
        made += ok;
    }
    static const tw__client_stats zero = {0, 0, 0};
    ok = ok && vt->build(fmt, items, n, 0, &zero, out);
    for (size_t i = 0; i < made; i++)
        vt->free_item(items[i]);
    vt->free_format(fmt);
    return ok;
}

static void on_checked_batch(void *arg, twa_batch *b)
{
    batch_check *c = arg;
    tw__buf got, want;
    tw__buf_init(&got);
    tw__buf_init(&want);
    c->batches++;
    c->spans_seen += b->n;
    /* The whole batch, then its halves (send_range's split). */
    size_t ranges[3][2] = {{0, b->n}, {0, b->n / 2}, {b->n / 2, b->n - b->n / 2}};
    for (size_t r = 0; r < 3; r++) {
        if (!ranges[r][1])
            continue;
        bool ok = twa_batch_body(c->framing, b, ranges[r][0], ranges[r][1], &got) &&
                  reference_body(c, b, ranges[r][0], ranges[r][1], &want);
        if (!ok || got.len != want.len || memcmp(got.data, want.data, got.len) != 0)
            c->mismatches++;
    }
    tw__buf_free(&got);
    tw__buf_free(&want);
}

static void test_slab_items_make_the_sdk_bodies(void)
{
    char why[128];
    twa_procs *procs = twa_procs_new(NULL, 0);
    twa_framing *f = twa_framing_new(TWA_FRAME_OTLP_PROTO, NULL, why, sizeof why);
    CU_ASSERT_PTR_NOT_NULL_FATAL(procs);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    static batch_check c;
    memset(&c, 0, sizeof c);
    c.framing = f;
    /* Bodies of up to 160 KiB: several slabs each, and room for a span larger than a slab. */
    twa_batcher *b = twa_batcher_new(f, 160 << 10, 4, 0, on_checked_batch, &c);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    twa_proc *keys[3];
    const char *services[3] = {"", "svc-a", "svc-b"}; /* "": renamed unknown_service */
    for (size_t k = 0; k < 3; k++) {
        tw__process p;
        tw__process_init(&p);
        tw__process_set_service(&p, services[k]);
        keys[k] = twa_procs_intern(procs, &p);
        tw__process_clear(&p);
        CU_ASSERT_PTR_NOT_NULL_FATAL(keys[k]);
    }
    static char big[100 << 10];
    memset(big, 'x', sizeof big);
    size_t added = 0;
    for (uint64_t id = 1; id <= BATCH_SPANS; id++) {
        tw__span_data *s = tw__span_data_new();
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        s->trace_id_low = 0xabcdef;
        s->span_id = id;
        s->start_us = 1700000000000000LL + (int64_t)id;
        s->duration_us = 10;
        tw__span_data_set_operation(s, "op", 2);
        /* Mostly small spans; every 97th one larger than the largest slab. */
        size_t len = id % 97 == 0 ? sizeof big : (size_t)(id * 37 % 3000);
        tw__tag *t = tw__span_data_push_tag(s);
        tw_value v = {.type = TW_VALUE_STRING, .len = len, .as.str = big};
        CU_ASSERT_FATAL(t && tw__tag_set(&s->arena, t, "payload", &v, SIZE_MAX, NULL));
        s->n_tags++;
        c.spans[id] = s;
        /* Keys interleaved, in runs, so that slabs of several batches are live at once. */
        twa_item it = {.data = s, .proc = keys[(id / 3 + id % 2) % 3]};
        if (twa_batcher_add(b, &it, (int64_t)id) == TWA_ADD_OK)
            added++;
    }
    twa_batcher_flush(b);
    CU_ASSERT_EQUAL(added, BATCH_SPANS);
    CU_ASSERT_EQUAL(c.spans_seen, added);
    CU_ASSERT(c.batches > 10);
    CU_ASSERT_EQUAL(c.mismatches, 0);
    twa_batcher_free(b);
    twa_framing_free(f);
    for (uint64_t id = 1; id <= BATCH_SPANS; id++)
        tw__span_data_unref(c.spans[id]);
    for (size_t k = 0; k < 3; k++)
        twa_proc_unref(keys[k]);
    twa_procs_free(procs);
}

void tw_test_register(void)
{
    CU_pSuite s = CU_add_suite("agent/spool", NULL, NULL);
    CU_add_test(s, "batches read back in order, also after a restart",
                test_batches_read_back_in_order);
    CU_add_test(s, "the cap drops the oldest and counts it",
                test_the_cap_drops_the_oldest_and_counts_it);
    CU_add_test(s, "a damaged file is dropped and counted",
                test_a_damaged_file_is_dropped_and_counted);
    CU_add_test(s, "damaged files found at start are counted, a directory left",
                test_damaged_files_at_start_are_counted);
    s = CU_add_suite("agent/decode", NULL, NULL);
    CU_add_test(s, "the body table: routes, content types, 415 rows", test_the_body_table);
    CU_add_test(s, "inflation is bounded", test_inflation_is_bounded);
    CU_add_test(s, "deflate: zlib or raw", test_deflate_zlib_or_raw);
    CU_add_test(s, "Jaeger datagrams of the wrong protocol are refused with a reason",
                test_jaeger_datagrams_of_the_wrong_protocol_are_refused);
    s = CU_add_suite("agent/procs", NULL, NULL);
    CU_add_test(s, "processes are shared, overridden and swept",
                test_processes_are_shared_overridden_and_swept);
    s = CU_add_suite("agent/batch", NULL, NULL);
    CU_add_test(s, "items kept in slabs make the SDK's bodies, whole and in halves",
                test_slab_items_make_the_sdk_bodies);
}
