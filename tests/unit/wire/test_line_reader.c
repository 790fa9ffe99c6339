/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/test_line_reader.c: suite "wire/line_reader", the one line
 * reader of the line-based decoders (sdk/wire/core/line_reader.c).
 *
 * The contract: every line comes back with its exact bytes (NUL bytes and
 * CRs included) and its number, wherever the end of the read buffer cuts
 * it; a last line without "\n" counts; a line over the limit is reported
 * once, its bytes handed to the spill in order, and the next line is read
 * as usual; a read error is reported as one. A line that lies whole in the
 * read buffer is handed out in place (no copy), which the tests check too,
 * since that is what the reader is for.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "harness.h"
#include "wire/core/buf.h"
#include "wire/core/line_reader.h"

/* A temporary file holding @len bytes of @data, rewound (NULL on failure). */
static FILE *file_of(const void *data, size_t len)
{
    FILE *f = tmpfile();
    if (!f)
        return NULL;
    if (len && fwrite(data, 1, len, f) != len) {
        fclose(f);
        return NULL;
    }
    rewind(f);
    return f;
}

/* Deterministic bytes for line @i of length @len: any byte but "\n" (NUL
 * and "\r" among them). */
static void fill_line(char *p, size_t i, size_t len)
{
    uint32_t x = (uint32_t)(i * 2654435761u + 12345u);
    for (size_t k = 0; k < len; k++) {
        x = x * 1103515245u + 12345u;
        char c = (char)(x >> 24);
        p[k] = c == '\n' ? '\0' : c;
    }
}

static bool is_in_read_buffer(const tw__line_reader *lr)
{
    return lr->line >= lr->in && lr->line < lr->in + TW__LINE_READ_BYTES;
}

/* Lines of many lengths, some longer than the read buffer, read through
 * files with stdio buffers of several sizes: every line exact; lines
 * handed out in place outnumber the gathered ones. */
static void test_lines_come_back_exact_across_buffer_ends(void)
{
    size_t lens[400];
    size_t total = 0;
    for (size_t i = 0; i < 400; i++) {
        /* mostly short; now and then a line of one to three read buffers */
        lens[i] = i % 97 == 13 ? TW__LINE_READ_BYTES * (1 + i % 3) + i : (i * 7919) % 3000;
        total += lens[i] + 1;
    }
    char *data = malloc(total);
    CU_ASSERT_PTR_NOT_NULL_FATAL(data);
    size_t at = 0;
    for (size_t i = 0; i < 400; i++) {
        fill_line(data + at, i, lens[i]);
        at += lens[i];
        data[at++] = '\n';
    }
    size_t stdio_buffers[] = {0, 4096, TW__LINE_READ_BYTES, TW__LINE_READ_BYTES * 4};
    for (size_t b = 0; b < sizeof stdio_buffers / sizeof stdio_buffers[0]; b++) {
        FILE *f = file_of(data, total);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        char *vbuf = stdio_buffers[b] ? malloc(stdio_buffers[b]) : NULL;
        if (vbuf)
            setvbuf(f, vbuf, _IOFBF, stdio_buffers[b]);
        tw__line_reader lr;
        tw__line_reader_init(&lr, f, TW__LINE_READ_BYTES * 4);
        size_t wrong = 0, in_place = 0, gathered = 0;
        at = 0;
        for (size_t i = 0; i < 400; i++) {
            int rc = tw__line_reader_next(&lr);
            CU_ASSERT_EQUAL_FATAL(rc, TW__LINE_OK);
            CU_ASSERT_EQUAL(lr.line_no, i + 1);
            if (lr.line_len != lens[i] || memcmp(lr.line, data + at, lens[i]) != 0)
                wrong++;
            if (is_in_read_buffer(&lr))
                in_place++;
            else if (lens[i])
                gathered++;
            at += lens[i] + 1;
        }
        CU_ASSERT_EQUAL(wrong, 0);
        CU_ASSERT(in_place > 10 * gathered);
        CU_ASSERT_EQUAL(tw__line_reader_next(&lr), TW__LINE_END);
        CU_ASSERT_EQUAL(tw__line_reader_next(&lr), TW__LINE_END); /* and stays there */
        tw__line_reader_free(&lr);
        fclose(f);
        free(vbuf);
    }
    free(data);
}

/* NUL bytes and CRs stay in their line; empty lines are lines; the last
 * line counts without its "\n". */
static void test_nul_cr_empty_and_unterminated_lines(void)
{
    static const char text[] = "a\0b\r\n\n\r\nlast";
    FILE *f = file_of(text, sizeof text - 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    tw__line_reader lr;
    tw__line_reader_init(&lr, f, 100);
    CU_ASSERT_EQUAL_FATAL(tw__line_reader_next(&lr), TW__LINE_OK);
    CU_ASSERT_EQUAL_FATAL(lr.line_len, 4);
    CU_ASSERT(memcmp(lr.line, "a\0b\r", 4) == 0);
    CU_ASSERT_EQUAL_FATAL(tw__line_reader_next(&lr), TW__LINE_OK);
    CU_ASSERT_EQUAL(lr.line_len, 0);
    CU_ASSERT_EQUAL_FATAL(tw__line_reader_next(&lr), TW__LINE_OK);
    CU_ASSERT_EQUAL_FATAL(lr.line_len, 1);
    CU_ASSERT_EQUAL(lr.line[0], '\r');
    CU_ASSERT_EQUAL_FATAL(tw__line_reader_next(&lr), TW__LINE_OK);
    CU_ASSERT_EQUAL_FATAL(lr.line_len, 4);
    CU_ASSERT(memcmp(lr.line, "last", 4) == 0);
    CU_ASSERT_EQUAL(lr.line_no, 4);
    CU_ASSERT_EQUAL(tw__line_reader_next(&lr), TW__LINE_END);
    tw__line_reader_free(&lr);
    fclose(f);
}

static void test_empty_stream_has_no_lines(void)
{
    FILE *f = file_of("", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    tw__line_reader lr;
    tw__line_reader_init(&lr, f, 100);
    CU_ASSERT_EQUAL(tw__line_reader_next(&lr), TW__LINE_END);
    CU_ASSERT_EQUAL(lr.line_no, 0);
    tw__line_reader_free(&lr);
    fclose(f);
}

static bool spill_into(void *arg, const void *bytes, size_t len)
{
    return tw__buf_append(arg, bytes, len);
}

/* A line over the limit, cut by the end of the read buffer: reported once
 * with its number, its bytes spilled whole and in order; a line of exactly
 * the limit is a line; the lines around both are read as usual. */
static void test_long_line_is_spilled_whole_and_skipped(void)
{
    size_t max = TW__LINE_READ_BYTES / 2 + 17;
    size_t over = max + 1;
    /* two lines that put the long one across the end of the first read */
    size_t first = max - 50;
    size_t second = TW__LINE_READ_BYTES - 100 - (first + 1) - 1;
    size_t total = first + 1 + second + 1 + over + 1 + max + 1 + 2;
    char *data = malloc(total);
    CU_ASSERT_PTR_NOT_NULL_FATAL(data);
    fill_line(data, 1, first);
    data[first] = '\n';
    fill_line(data + first + 1, 4, second);
    data[first + 1 + second] = '\n';
    char *long_line = data + first + 1 + second + 1;
    fill_line(long_line, 2, over);
    long_line[over] = '\n';
    char *exact = long_line + over + 1;
    fill_line(exact, 3, max);
    exact[max] = '\n';
    memcpy(exact + max + 1, "z\n", 2);
    FILE *f = file_of(data, total);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    tw__buf spilled;
    tw__buf_init(&spilled);
    tw__line_reader lr;
    tw__line_reader_init(&lr, f, max);
    lr.spill = spill_into;
    lr.spill_arg = &spilled;
    CU_ASSERT_EQUAL_FATAL(tw__line_reader_next(&lr), TW__LINE_OK);
    CU_ASSERT_EQUAL(lr.line_len, first);
    CU_ASSERT_EQUAL_FATAL(tw__line_reader_next(&lr), TW__LINE_OK);
    CU_ASSERT_EQUAL(lr.line_len, second);
    CU_ASSERT_EQUAL_FATAL(tw__line_reader_next(&lr), TW__LINE_TOO_LONG);
    CU_ASSERT_EQUAL(lr.line_no, 3);
    CU_ASSERT_EQUAL(lr.line_len, 0);
    CU_ASSERT_EQUAL_FATAL(spilled.len, over);
    CU_ASSERT(memcmp(spilled.data, long_line, over) == 0);
    CU_ASSERT_EQUAL_FATAL(tw__line_reader_next(&lr), TW__LINE_OK);
    CU_ASSERT_EQUAL_FATAL(lr.line_len, max);
    CU_ASSERT(memcmp(lr.line, exact, max) == 0);
    CU_ASSERT_EQUAL_FATAL(tw__line_reader_next(&lr), TW__LINE_OK);
    CU_ASSERT_EQUAL_FATAL(lr.line_len, 1);
    CU_ASSERT_EQUAL(lr.line[0], 'z');
    CU_ASSERT_EQUAL(lr.line_no, 5);
    CU_ASSERT_EQUAL(tw__line_reader_next(&lr), TW__LINE_END);
    tw__line_reader_free(&lr);
    tw__buf_free(&spilled);
    fclose(f);
    free(data);
}

/* A stream that gives a few bytes, then fails. */
typedef struct failing {
    int calls;
} failing;

static ssize_t failing_read(void *cookie, char *buf, size_t size)
{
    failing *fl = cookie;
    if (fl->calls++ == 0 && size >= 6) {
        memcpy(buf, "ok\npar", 6);
        return 6;
    }
    return -1;
}

static void test_read_error_is_reported(void)
{
    failing fl = {0};
    cookie_io_functions_t io = {.read = failing_read};
    FILE *f = fopencookie(&fl, "r", io);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    tw__line_reader lr;
    tw__line_reader_init(&lr, f, 100);
    CU_ASSERT_EQUAL_FATAL(tw__line_reader_next(&lr), TW__LINE_OK);
    CU_ASSERT_EQUAL(lr.line_len, 2);
    CU_ASSERT_EQUAL(tw__line_reader_next(&lr), TW__LINE_IO); /* not "par" as a last line */
    tw__line_reader_free(&lr);
    fclose(f);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("wire/line_reader", NULL, NULL);
    if (!suite)
        return;
    CU_ADD_TEST(suite, test_lines_come_back_exact_across_buffer_ends);
    CU_ADD_TEST(suite, test_nul_cr_empty_and_unterminated_lines);
    CU_ADD_TEST(suite, test_empty_stream_has_no_lines);
    CU_ADD_TEST(suite, test_long_line_is_spilled_whole_and_skipped);
    CU_ADD_TEST(suite, test_read_error_is_reported);
}
