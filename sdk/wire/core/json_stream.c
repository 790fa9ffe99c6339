/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/json_stream.c: splits a JSON input into records without
 * loading it whole (wire/core/json_stream.h), for the JSON decoders.
 *
 * Real span files come as one object, one array of objects, an array of
 * arrays (one batch per inner array), or one document per line (NDJSON),
 * and may be larger than memory. This scanner reads a bounded chunk at a
 * time and tracks only strings, escapes and bracket depth: an object at the
 * top level, or inside up to two levels of arrays, is a record; it comes out
 * as its bytes and the line it starts on, for json_loadb and for messages.
 * It never validates the record (Jansson does that); it only finds where
 * each one ends. With a scanner (tw__json_stream_set_scan, the token
 * record loop), a record is first tried in one pass: the scanner reads the
 * object in place in the chunk and, when it accepts it, that is the
 * record, already scanned; anything else is cut as above. A format's
 * direct reader (tw__json_stream_set_direct) is offered the object before
 * that: what it takes is handed out in place, neither scanned nor copied.
 *
 * Recovery: a byte that cannot start a record (a stray token, a scalar in
 * an array) makes a BAD region that runs to the end of its line; a record
 * over the size limit is skipped to its end and reported BAD (its bytes go
 * on to the spill function, when there is one, so that a --rejects file
 * keeps it whole); an input that ends inside a record reports that record
 * BAD. A top-level record that reaches the limit with a later line starting
 * with '{' is an NDJSON record cut off: it ends before that line, where
 * reading goes on (so nothing after it is lost). The next call goes on.
 *
 * Memory: one read chunk plus the current record (at most max_record_bytes).
 * Single-threaded; one stream per input.
 *
 * tw__json_read_records is the record loop the JSON readers share on top of
 * it: BAD regions rejected, each record parsed with json_loadb and handed to
 * the reader's per-record function, the run ending on a read error or when
 * that function says stop.
 */
#include "wire/core/json_stream.h"

#include "wire/core/error.h"
#include "wire/core/json_scan.h"
#include "wire/core/json_write.h" /* tw__swar_eq */
#include "wire/core/utf8.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#define CHUNK_BYTES ((size_t)64 * 1024)
#define DEFAULT_MAX_RECORD ((size_t)64 * 1024 * 1024)
#define MAX_ARRAY_LEVELS 2

struct tw__json_stream {
    FILE *stream;
    size_t max_record;
    unsigned char chunk[CHUNK_BYTES];
    size_t chunk_len, chunk_pos;
    bool is_eof, is_error, at_start;
    size_t line; /* 1-based line of the next byte */
    int array_level;

    char *rec; /* the current record (or bad region, up to max_record bytes) */
    size_t rec_len, rec_cap;
    char why[256];

    /* Where the bytes of a region over the limit go (nullable), and whether
     * the current region's bytes are going there / stopped doing so. */
    bool (*spill)(void *arg, const void *bytes, size_t len);
    void *spill_arg;
    bool is_spilling, is_spill_stopped;

    /* Resynchronisation: the first line of the current top-level record
     * (after its first) that starts with '{', where reading can go on when
     * the record turns out cut off (0: none), and its line number. */
    size_t resync_at, resync_line;
    /* Bytes given back after a resynchronisation, read before the chunk. */
    char *back;
    size_t back_len, back_pos, back_cap;

    /* One pass (tw__json_stream_set_scan): the scanner that tries each
     * record where it starts in the chunk, and whether it holds the
     * record tw__json_stream_next returned last. */
    tw__json_scan *scan;
    bool is_scanned;
    /* The direct reader (tw__json_stream_set_direct), and whether it took
     * the record tw__json_stream_next returned last. */
    tw__json_direct_fn direct;
    void *direct_arg;
    bool is_direct;
};

tw__json_stream *tw__json_stream_new(FILE *stream, size_t max_record_bytes)
{
    tw__json_stream *js = calloc(1, sizeof *js);
    if (!js)
        return NULL;
    js->stream = stream;
    js->max_record = max_record_bytes ? max_record_bytes : DEFAULT_MAX_RECORD;
    js->line = 1;
    js->at_start = true;
    return js;
}

void tw__json_stream_set_spill(tw__json_stream *js,
                               bool (*spill)(void *arg, const void *bytes, size_t len), void *arg)
{
    js->spill = spill;
    js->spill_arg = arg;
}

void tw__json_stream_set_scan(tw__json_stream *js, tw__json_scan *scan)
{
    js->scan = scan;
}

bool tw__json_stream_is_scanned(const tw__json_stream *js)
{
    return js->is_scanned;
}

void tw__json_stream_set_direct(tw__json_stream *js, tw__json_direct_fn fn, void *arg)
{
    js->direct = fn;
    js->direct_arg = arg;
}

bool tw__json_stream_is_direct(const tw__json_stream *js)
{
    return js->is_direct;
}

void tw__json_stream_free(tw__json_stream *js)
{
    if (!js)
        return;
    free(js->rec);
    free(js->back);
    free(js);
}

/* The next byte without consuming it; -1 at the end (or on a read error). */
static int peek(tw__json_stream *js)
{
    if (js->back_pos < js->back_len)
        return (unsigned char)js->back[js->back_pos];
    if (js->chunk_pos == js->chunk_len) {
        if (js->is_eof || js->is_error)
            return -1;
        js->chunk_len = fread(js->chunk, 1, CHUNK_BYTES, js->stream);
        js->chunk_pos = 0;
        if (js->chunk_len == 0) {
            if (ferror(js->stream))
                js->is_error = true;
            js->is_eof = true;
            return -1;
        }
    }
    return js->chunk[js->chunk_pos];
}

static void consume(tw__json_stream *js)
{
    unsigned char c = js->back_pos < js->back_len ? (unsigned char)js->back[js->back_pos++]
                                                  : js->chunk[js->chunk_pos++];
    if (c == '\n')
        js->line++;
}

/* Gives back the current record's bytes from the resynchronisation point
 * on, to be read again before anything else; the record keeps the bytes
 * before it. False when there is no such point or memory runs out. */
static bool give_back_rest(tw__json_stream *js)
{
    if (!js->resync_at || js->resync_at >= js->rec_len)
        return false;
    size_t n = js->rec_len - js->resync_at;
    size_t unread = js->back_len - js->back_pos;
    char *back = malloc(n + unread ? n + unread : 1);
    if (!back)
        return false;
    memcpy(back, js->rec + js->resync_at, n);
    if (unread)
        memcpy(back + n, js->back + js->back_pos, unread);
    free(js->back);
    js->back = back;
    js->back_len = js->back_cap = n + unread;
    js->back_pos = 0;
    for (size_t i = 0; i < n; i++)
        js->line -= js->back[i] == '\n';
    js->rec_len = js->resync_at;
    js->resync_at = 0;
    return true;
}

/* A new region starts: nothing of it spilled yet. */
static void region_start(tw__json_stream *js)
{
    js->rec_len = 0;
    js->is_spilling = js->is_spill_stopped = false;
}

/* Bytes of the current region past the limit: handed to the spill function
 * (the bytes held first), or dropped when there is none. */
static void spill(tw__json_stream *js, const void *p, size_t n)
{
    if (!js->spill || js->is_spill_stopped || n == 0)
        return;
    if (!js->is_spilling) {
        js->is_spilling = true;
        if (!js->spill(js->spill_arg, js->rec, js->rec_len)) {
            js->is_spill_stopped = true;
            return;
        }
    }
    if (!js->spill(js->spill_arg, p, n))
        js->is_spill_stopped = true;
}

/* What a BAD region hands back as its bytes: none when they were spilled. */
static void region_bytes(tw__json_stream *js, const char **rec, size_t *len)
{
    *rec = js->rec && !js->is_spilling ? js->rec : "";
    *len = js->is_spilling ? 0 : js->rec_len;
}

/* The length of a record cut before a later line: without the end of the
 * line it stops at (the record's bytes are that line, for --rejects). */
static size_t without_line_end(const char *rec, size_t len)
{
    while (len > 0 && (rec[len - 1] == '\n' || rec[len - 1] == '\r'))
        len--;
    return len;
}

/* Keeps a byte of the current record; past the limit, bytes are counted
 * and spilled, not held (the record is reported as too large). */
static bool keep(tw__json_stream *js, char c, size_t *total)
{
    (*total)++;
    if (js->rec_len >= js->max_record) {
        spill(js, &c, 1);
        return true;
    }
    if (js->rec_len == js->rec_cap) {
        size_t cap = js->rec_cap ? js->rec_cap * 2 : 4096;
        if (cap > js->max_record)
            cap = js->max_record;
        char *grown = realloc(js->rec, cap + 1);
        if (!grown)
            return false;
        js->rec = grown;
        js->rec_cap = cap;
    }
    js->rec[js->rec_len++] = c;
    return true;
}

static bool is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void skip_space(tw__json_stream *js)
{
    for (;;) {
        int c = peek(js);
        if (c < 0)
            return;
        if (js->at_start) {
            js->at_start = false;
            /* A UTF-8 byte order mark, as editors on some systems write. */
            if (c == 0xEF && js->chunk_len - js->chunk_pos >= 3 &&
                memcmp(js->chunk + js->chunk_pos, "\xEF\xBB\xBF", 3) == 0) {
                js->chunk_pos += 3;
                continue;
            }
        }
        if (!is_space(c))
            return;
        consume(js);
    }
}

/* A region that cannot be a record: to the end of its line. */
static tw__json_next bad_line(tw__json_stream *js, const char *why, const char **rec, size_t *len)
{
    region_start(js);
    size_t total = 0;
    for (;;) {
        int c = peek(js);
        if (c < 0 || c == '\n')
            break;
        if (!keep(js, (char)c, &total)) {
            snprintf(js->why, sizeof js->why, "out of memory");
            return TW__JSON_IO;
        }
        consume(js);
    }
    snprintf(js->why, sizeof js->why, "%s", why);
    region_bytes(js, rec, len);
    return TW__JSON_BAD;
}

/* An array element that is not an object (a number, a string, a literal):
 * skipped to the next ',' or ']' of its array, strings and nested brackets
 * respected, so the elements after it on the same line are still read. */
static tw__json_next bad_element(tw__json_stream *js, const char **rec, size_t *len)
{
    region_start(js);
    size_t total = 0, depth = 0;
    bool in_string = false, escaped = false;
    for (;;) {
        int c = peek(js);
        if (c < 0)
            break;
        if (!in_string && depth == 0 && (c == ',' || c == ']'))
            break;
        if (!keep(js, (char)c, &total)) {
            snprintf(js->why, sizeof js->why, "out of memory");
            return TW__JSON_IO;
        }
        consume(js);
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if ((c == '}' || c == ']') && depth > 0) {
            depth--;
        }
    }
    snprintf(js->why, sizeof js->why, "an array element that is not a JSON object");
    region_bytes(js, rec, len);
    return TW__JSON_BAD;
}

/* Room for @need bytes in js->rec: doubling, at most @limit (or @need when
 * that is more). */
static bool reserve(tw__json_stream *js, size_t need, size_t limit)
{
    if (need <= js->rec_cap)
        return true;
    size_t cap = js->rec_cap ? js->rec_cap : 4096;
    while (cap < need)
        cap *= 2;
    if (cap > limit)
        cap = limit > need ? limit : need;
    char *grown = realloc(js->rec, cap + 1);
    if (!grown)
        return false;
    js->rec = grown;
    js->rec_cap = cap;
    return true;
}

/* Keeps @n bytes of the current record at once (keep's rule: past the
 * limit they are counted and spilled, not held). */
static bool keep_run(tw__json_stream *js, const unsigned char *p, size_t n, size_t *total)
{
    *total += n;
    if (js->rec_len >= js->max_record) {
        spill(js, p, n);
        return true;
    }
    size_t room = js->max_record - js->rec_len;
    size_t held = n > room ? room : n;
    if (!reserve(js, js->rec_len + held, js->max_record))
        return false;
    memcpy(js->rec + js->rec_len, p, held);
    js->rec_len += held;
    spill(js, p + held, n - held);
    return true;
}

#ifdef TW__JSON_SWAR
/* Bytes of @x equal to @b, exactly (0x80 of each such byte, no borrows). */
static inline uint64_t exact_eq(uint64_t x, unsigned char b)
{
    const uint64_t low7 = UINT64_C(0x7f7f7f7f7f7f7f7f);
    uint64_t y = x ^ (TW__SWAR_ONES * b);
    return ~(((y & low7) + low7) | y) & TW__SWAR_HIGHS;
}

/* The number of bytes marked in @m (0x80 of a byte each). */
static inline size_t marked(uint64_t m)
{
    return (size_t)(((m >> 7) * TW__SWAR_ONES) >> 56);
}

/*
 * The record splitter's state machine over eight bytes at a time, from @p
 * (@n bytes) on, for as long as nothing in a word needs a byte-by-byte
 * look: no backslash, no newline (line counts, resynchronisation), and
 * fewer closing brackets outside strings than the depth (the record cannot
 * end in them). Returns the bytes done (a multiple of 8); *depth and
 * *in_string are then what the byte loop would leave after them. A byte is
 * inside a string when the quotes up to it are odd in number (a prefix
 * XOR), flipped when the word starts inside one. The byte loop of
 * scan_object is the reference; tests/unit/wire/test_json_swar.c holds the
 * splitter to a byte-by-byte one on random and adversarial inputs.
 */
static size_t words_keeping_depth(const unsigned char *p, size_t n, size_t *depth, bool *in_string)
{
    size_t d = *depth, i = 0;
    uint64_t flip = *in_string ? ~UINT64_C(0) : 0;
    for (; n - i >= 8; i += 8) {
        uint64_t x;
        memcpy(&x, p + i, 8);
        if (tw__swar_eq(x, '\\') | tw__swar_eq(x, '\n'))
            break;
        uint64_t inside = exact_eq(x, '"');
        inside ^= inside << 8;
        inside ^= inside << 16;
        inside ^= inside << 32;
        inside ^= flip;
        uint64_t folded = x | (TW__SWAR_ONES * 0x20); /* '[' as '{', ']' as '}' */
        uint64_t opens = exact_eq(folded, '{') & ~inside;
        uint64_t closes = exact_eq(folded, '}') & ~inside;
        if (opens | closes) {
            size_t n_closes = marked(closes);
            if (d <= n_closes)
                break;
            d = d + marked(opens) - n_closes;
        }
        flip = 0 - (inside >> 63);
    }
    *depth = d;
    *in_string = flip != 0;
    return i;
}
#endif

/* Scans one object starting at '{' into js->rec: a run of the bytes at
 * hand (given-back bytes or the chunk) at a time, eight bytes at a time
 * where they need no byte-by-byte look (words_keeping_depth), then the run
 * kept with one copy. */
static tw__json_next scan_object(tw__json_stream *js, const char **rec, size_t *len,
                                 size_t start_line)
{
    region_start(js);
    js->resync_at = 0;
    size_t total = 0, depth = 0;
    bool in_string = false, escaped = false, is_done = false;
    int prev = -1; /* the record's byte before the current one */
    /* The first line whose line break the scan took to be inside a string:
     * valid JSON has none, so a quote is missing (or one too many) there. */
    size_t string_past_line = 0;
    char hint[96];
    while (!is_done) {
        if (peek(js) < 0) {
            if (js->is_error)
                return TW__JSON_IO;
            hint[0] = '\0';
            if (string_past_line)
                snprintf(hint, sizeof hint,
                         " (a string runs past the end of line %zu: a quote is missing there?)",
                         string_past_line);
            if (give_back_rest(js)) {
                snprintf(js->why, sizeof js->why,
                         "the JSON object that starts on line %zu is cut off (the input ends "
                         "inside it)%s; reading goes on at line %zu",
                         start_line, hint, js->resync_line);
                *rec = js->rec;
                *len = without_line_end(js->rec, js->rec_len);
                return TW__JSON_BAD;
            }
            snprintf(js->why, sizeof js->why,
                     "the input ends inside the JSON object that starts on line %zu%s", start_line,
                     hint);
            js->array_level = 0; /* the open arrays end with it: one report is enough */
            region_bytes(js, rec, len);
            return TW__JSON_BAD;
        }
        bool is_back = js->back_pos < js->back_len;
        const unsigned char *p =
            is_back ? (const unsigned char *)js->back + js->back_pos : js->chunk + js->chunk_pos;
        size_t n = is_back ? js->back_len - js->back_pos : js->chunk_len - js->chunk_pos;
        size_t base = total; /* the record index of p[0] */
        size_t i = 0;
#ifdef TW__JSON_SWAR
        size_t slow_until = 0; /* bytes before it go one at a time */
#endif
        while (i < n) {
#ifdef TW__JSON_SWAR
            if (i >= slow_until && n - i >= 8 && !escaped && prev != '\n') {
                size_t done = words_keeping_depth(p + i, n - i, &depth, &in_string);
                i += done;
                if (done)
                    prev = p[i - 1];
                slow_until = i + 8; /* the word that stopped it */
                if (i == n)
                    break;
            }
#endif
            unsigned char c = p[i];
            /* A '{' at the start of a later line of a top-level record
             * (and kept): where an NDJSON input goes on if this record is
             * cut off (a raw newline cannot be inside a valid JSON string,
             * so string state is moot). */
            if (c == '{' && prev == '\n' && !js->resync_at && js->array_level == 0 &&
                base + i < js->max_record) {
                js->resync_at = base + i;
                js->resync_line = js->line;
            }
            i++;
            prev = c;
            if (c == '\n') {
                if (in_string && !string_past_line)
                    string_past_line = js->line;
                js->line++;
            }
            if (in_string) {
                if (escaped)
                    escaped = false;
                else if (c == '\\')
                    escaped = true;
                else if (c == '"')
                    in_string = false;
            } else if (c == '"') {
                in_string = true;
            } else if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                if (depth > 0)
                    depth--;
                if (depth == 0) {
                    is_done = true;
                    break;
                }
            }
        }
        if (!is_done && js->resync_at && !js->is_spilling && js->rec_len + i > js->max_record) {
            /* An NDJSON record cut off at the end of its line, and the lines
             * after it run past the limit: cut it now, before its later line
             * that starts a record, and read on from there (waiting for its
             * end would drop every byte past the limit). The run is held
             * whole for the moment (at most one chunk over the limit). */
            if (!reserve(js, js->rec_len + i, js->max_record)) {
                snprintf(js->why, sizeof js->why, "out of memory");
                return TW__JSON_IO;
            }
            memcpy(js->rec + js->rec_len, p, i);
            js->rec_len += i;
            if (is_back)
                js->back_pos += i;
            else
                js->chunk_pos += i;
            if (!give_back_rest(js)) {
                snprintf(js->why, sizeof js->why, "out of memory");
                return TW__JSON_IO;
            }
            snprintf(js->why, sizeof js->why,
                     "the JSON object that starts on line %zu does not end within %zu bytes; it "
                     "is cut off before line %zu, where reading goes on",
                     start_line, js->max_record, js->resync_line);
            *rec = js->rec;
            *len = without_line_end(js->rec, js->rec_len);
            return TW__JSON_BAD;
        }
        if (!keep_run(js, p, i, &total)) {
            snprintf(js->why, sizeof js->why, "out of memory");
            return TW__JSON_IO;
        }
        if (is_back)
            js->back_pos += i;
        else
            js->chunk_pos += i;
    }
    region_bytes(js, rec, len);
    if (total > js->max_record) {
        snprintf(js->why, sizeof js->why, "a JSON record of %zu bytes (the limit is %zu)", total,
                 js->max_record);
        return TW__JSON_BAD;
    }
    js->rec[js->rec_len] = '\0';
    return TW__JSON_RECORD;
}

/* The one-pass way to a record: the scanner reads the object that starts
 * at the chunk's current byte, in place. When it accepts one that ends in
 * the chunk and is within the limit, that is the record scan_object would
 * cut (for valid JSON its string and bracket tracking is exact), so it is
 * kept and consumed at once, its tokens ready. Otherwise (bytes given
 * back pending, the object crosses the chunk's end, is not what the
 * scanner reads, or is too large) false, nothing consumed: scan_object
 * cuts it. */
static bool scanned_object(tw__json_stream *js, const char **rec, size_t *len)
{
    if (js->back_pos < js->back_len)
        return false;
    const char *p = (const char *)js->chunk + js->chunk_pos;
    size_t n = js->chunk_len - js->chunk_pos, used;
    if (!tw__json_scan_parse_prefix(js->scan, p, n, &used) || used > js->max_record)
        return false;
    region_start(js);
    js->resync_at = 0;
    if (!reserve(js, used, js->max_record))
        return false; /* scan_object reports the lack of memory */
    memcpy(js->rec, p, used);
    js->rec_len = used;
    js->rec[used] = '\0';
    js->chunk_pos += used;
    /* Newlines in it are blanks between tokens: counted for the line. */
    for (const char *q = p, *end = p + used; (q = memchr(q, '\n', (size_t)(end - q))) != NULL; q++)
        js->line++;
    js->is_scanned = true;
    *rec = js->rec;
    *len = used;
    return true;
}

/* The direct reader's way to a record: it reads the object that starts at
 * the chunk's current byte, in place, and when it takes it (a whole valid
 * object: the record scan_object would cut), the object is consumed and
 * handed out where it stands, with no copy. Otherwise (bytes given back
 * pending, the object crosses the chunk's end or is declined) false,
 * nothing consumed. */
static bool direct_object(tw__json_stream *js, const char **rec, size_t *len)
{
    if (js->back_pos < js->back_len)
        return false;
    const char *p = (const char *)js->chunk + js->chunk_pos;
    size_t n = js->chunk_len - js->chunk_pos, used;
    if (n > js->max_record)
        n = js->max_record;
    if (!js->direct(js->direct_arg, p, n, &used))
        return false;
    js->resync_at = 0;
    js->chunk_pos += used;
    /* Newlines in it are blanks between tokens: counted for the line. */
    for (const char *q = p, *end = p + used; (q = memchr(q, '\n', (size_t)(end - q))) != NULL; q++)
        js->line++;
    js->is_direct = true;
    *rec = p;
    *len = used;
    return true;
}

tw__json_next tw__json_stream_next(tw__json_stream *js, const char **rec, size_t *len,
                                   size_t *line_no, const char **why)
{
    *why = js->why;
    js->is_scanned = false;
    js->is_direct = false;
    for (;;) {
        skip_space(js);
        int c = peek(js);
        *line_no = js->line;
        if (c < 0) {
            if (js->is_error) {
                snprintf(js->why, sizeof js->why, "read error: %s", strerror(errno));
                return TW__JSON_IO;
            }
            if (js->array_level > 0) {
                js->array_level = 0;
                snprintf(js->why, sizeof js->why, "the input ends inside a JSON array");
                *rec = "";
                *len = 0;
                return TW__JSON_BAD;
            }
            return TW__JSON_END;
        }
        if (c == '{') {
            if (js->direct && direct_object(js, rec, len))
                return TW__JSON_RECORD;
            if (js->scan && scanned_object(js, rec, len))
                return TW__JSON_RECORD;
            return scan_object(js, rec, len, *line_no);
        }
        if (c == '[') {
            if (js->array_level >= MAX_ARRAY_LEVELS)
                return bad_line(js, "arrays nested more than two deep hold no span records", rec,
                                len);
            js->array_level++;
            consume(js);
            continue;
        }
        if (js->array_level > 0 && (c == ',' || c == ']')) {
            if (c == ']')
                js->array_level--;
            consume(js);
            continue;
        }
        if (js->array_level > 0)
            return bad_element(js, rec, len);
        return bad_line(js, "expected a JSON object or array", rec, len);
    }
}

/* ---- repairs before a second parse ------------------------------------------------------------
 */

/* What tw__json_repair changed. */
typedef struct repairs {
    size_t utf8;    /* bytes that were not UTF-8: U+FFFD */
    size_t control; /* raw control bytes inside strings: \u00XX */
    size_t nul_key; /* \u0000 inside member names: \ufffd */
    size_t number;  /* numbers beyond 64 bits or a double: quoted */
} repairs;

static bool number_fits(const char *p, size_t n)
{
    char text[64];
    if (n >= sizeof text)
        return false;
    memcpy(text, p, n);
    text[n] = '\0';
    bool is_real = memchr(text, '.', n) || memchr(text, 'e', n) || memchr(text, 'E', n);
    errno = 0;
    if (is_real) {
        double d = strtod(text, NULL);
        return errno != ERANGE || d == 0; /* underflow to 0 is what Jansson reads too */
    }
    (void)strtoll(text, NULL, 10);
    return errno != ERANGE;
}

/*
 * Writes @text repaired into @out: the values Jansson refuses although the
 * record is well-formed JSON, so that one bad value does not cost a whole
 * document (an OTLP request or Jaeger document can hold thousands of
 * spans): bytes that are not UTF-8 become U+FFFD (the documented repair),
 * raw control bytes inside strings are escaped, a \u0000 inside a member
 * name (Jansson's keys are C strings) becomes \ufffd, and a number beyond
 * int64 or a double is kept as a string (the decoder then rejects the span
 * that holds it, alone, or keeps it as text). Anything else is copied. True
 * when something was changed.
 */
static bool repair(const char *text, size_t len, tw__buf *out, repairs *r)
{
    memset(r, 0, sizeof *r);
    tw__buf_reset(out);

    size_t nul_escapes[16];
    size_t n_nul = 0;
    bool in_string = false, ok = true;
    for (size_t i = 0; i < len && ok;) {
        unsigned char c = (unsigned char)text[i];
        if (c >= 0x80) {
            size_t n = tw__utf8_sequence((const unsigned char *)text + i, len - i);
            if (n == 0) {
                ok = tw__buf_put(out, TW__UTF8_REPLACEMENT, 3);
                r->utf8++;
                i++;
            } else {
                ok = tw__buf_put(out, text + i, n);
                i += n;
            }
            continue;
        }
        if (in_string) {
            if (c == '\\' && i + 1 < len) {
                if (len - i >= 6 && memcmp(text + i, "\\u0000", 6) == 0 && n_nul < 16)
                    nul_escapes[n_nul++] = out->len;
                ok = tw__buf_put(out, text + i, 2);
                i += 2;
                continue;
            }
            if (c == '"') {
                in_string = false;
                ok = tw__buf_put_byte(out, c);
                i++;
                /* A member name when a ':' follows. */
                size_t j = i;
                while (j < len &&
                       (text[j] == ' ' || text[j] == '\t' || text[j] == '\r' || text[j] == '\n'))
                    j++;
                if (j < len && text[j] == ':') {
                    for (size_t k = 0; k < n_nul; k++)
                        memcpy(out->data + nul_escapes[k], "\\ufffd", 6);
                    r->nul_key += n_nul;
                }
                continue;
            }
            if (c < 0x20) {
                char esc[7];
                snprintf(esc, sizeof esc, "\\u%04X", c);
                ok = tw__buf_put(out, esc, 6);
                r->control++;
                i++;
                continue;
            }
            ok = tw__buf_put_byte(out, c);
            i++;
            continue;
        }
        if (c == '"') {
            in_string = true;
            n_nul = 0;
            ok = tw__buf_put_byte(out, c);
            i++;
            continue;
        }
        if (c == '-' || (c >= '0' && c <= '9')) {
            size_t j = i + 1;
            while (j < len && (strchr("0123456789.eE+-", text[j]) != NULL))
                j++;
            if (number_fits(text + i, j - i)) {
                ok = tw__buf_put(out, text + i, j - i);
            } else {
                ok = tw__buf_put_byte(out, '"') && tw__buf_put(out, text + i, j - i) &&
                     tw__buf_put_byte(out, '"');
                r->number++;
            }
            i = j;
            continue;
        }
        ok = tw__buf_put_byte(out, c);
        i++;
    }
    return ok && (r->utf8 || r->control || r->nul_key || r->number);
}

bool tw__json_stream_resync(tw__json_stream *js, size_t *prefix_len, size_t *resume_line)
{
    size_t line = js->resync_line;
    if (!give_back_rest(js))
        return false;
    *prefix_len = without_line_end(js->rec, js->rec_len);
    *resume_line = line;
    return true;
}

/* ---- the record loop of the JSON readers ---------------------------------------------------- */

/* One record that Jansson refused: repaired and parsed again, or cut at the
 * next line that starts a record (NDJSON), or handed over as invalid. */
static tw_status retry_record(tw__json_stream *js, tw__wire_input *in, const char *rec, size_t len,
                              size_t line_no, size_t json_flags, json_error_t *first_error,
                              tw__json_record_fn fn, void *arg, tw_error **err)
{
    tw__buf fixed;
    tw__buf_init(&fixed);
    repairs r;
    if (repair(rec, len, &fixed, &r)) {
        json_error_t jerr;
        json_t *record = json_loadb((const char *)fixed.data, fixed.len, json_flags, &jerr);
        if (record) {
            tw__wire_warn(in, line_no,
                          "repaired before reading: %zu invalid UTF-8 bytes (U+FFFD), %zu "
                          "control bytes in strings, %zu NUL in member names, %zu numbers out "
                          "of range (kept as strings)",
                          r.utf8, r.control, r.nul_key, r.number);
            tw_status status = fn(arg, record, rec, len, line_no, NULL, err);
            json_decref(record);
            tw__buf_free(&fixed);
            return status;
        }
    }
    tw__buf_free(&fixed);
    size_t prefix, resume;
    if (tw__json_stream_resync(js, &prefix, &resume)) {
        bool go_on = tw__wire_reject(in, line_no, rec, prefix,
                                     "not valid JSON: %s; the record is cut off before line "
                                     "%zu, where reading goes on",
                                     first_error->text, resume);
        return go_on ? TW_OK : TW_E_STATE;
    }
    return fn(arg, NULL, rec, len, line_no, first_error, err);
}

/* ---- the record loop (Jansson values and scanner tokens) ------------------------------------ */

typedef struct scan_loop {
    tw__json_scan scan;
    tw__json_scan_record_fn fn;
    void *arg;
} scan_loop;

bool tw__json_scan_value(tw__json_scan *scan, const json_t *value)
{
    scan->max_depth = TW__JSON_SCAN_DEEPEST;
    char *text = json_dumps(value, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!text)
        return false;
    bool ok = tw__json_scan_parse(scan, text, strlen(text));
    free(text);
    return ok;
}

/* A record Jansson had to read (tw__json_record_fn): its value scanned from
 * Jansson's compact text, or its error handed on. */
static tw_status via_jansson(void *arg, json_t *record, const char *raw, size_t raw_len,
                             size_t line_no, const json_error_t *parse_error, tw_error **err)
{
    scan_loop *loop = arg;
    if (!record)
        return loop->fn(loop->arg, NULL, raw, raw_len, line_no, parse_error->text, err);
    if (!tw__json_scan_value(&loop->scan, record)) {
        /* Valid JSON the scanner does not read: 2048 empty containers deep,
         * or memory ran out writing it. */
        return loop->fn(loop->arg, NULL, raw, raw_len, line_no,
                        "nested too deep, or too large to read", err);
    }
    return loop->fn(loop->arg, &loop->scan, raw, raw_len, line_no, NULL, err);
}

/* The one record loop of the JSON readers: each record the splitter gives
 * is taken by @direct (with a @scan only) or scanned into @scan's tokens
 * when there is a @scan and the scanner reads it; otherwise Jansson reads
 * it (and repairs it, retry_record) for @fn. A record over the limit goes
 * whole to in->reject_part when there is one. */
static tw_status record_loop(FILE *stream, tw__wire_input *in, size_t max_record_bytes,
                             size_t json_flags, tw__json_record_fn fn, void *arg, scan_loop *scan,
                             tw__json_direct_fn direct, tw_error **err)
{
    tw__json_stream *js = tw__json_stream_new(stream, max_record_bytes);
    if (!js) {
        tw__set_error(err, TW_E_NOMEM, "%s: out of memory", in->name);
        return TW_E_NOMEM;
    }
    if (in->reject_part)
        tw__json_stream_set_spill(js, tw__wire_reject_part, in);
    if (scan) {
        tw__json_stream_set_scan(js, &scan->scan);
        tw__json_stream_set_direct(js, direct, scan->arg);
    }
    tw_status status = TW_OK;
    while (status == TW_OK) {
        const char *rec, *why;
        size_t len, line_no;
        tw__json_next next = tw__json_stream_next(js, &rec, &len, &line_no, &why);
        if (next == TW__JSON_END)
            break;
        if (next == TW__JSON_IO) {
            tw__set_error(err, TW_E_IO, "%s: %s", in->name, why);
            status = TW_E_IO;
        } else if (next == TW__JSON_BAD) {
            if (!in->reject(in, line_no, rec, len, why))
                status = TW_E_STATE;
        } else if (scan && tw__json_stream_is_direct(js)) {
            status = scan->fn(scan->arg, NULL, rec, len, line_no, NULL, err);
        } else if (scan && (tw__json_stream_is_scanned(js) ||
                            (memchr(rec, '\0', len) == NULL &&
                             tw__json_scan_parse(&scan->scan, rec, len)))) {
            status = scan->fn(scan->arg, &scan->scan, rec, len, line_no, NULL, err);
        } else {
            json_error_t jerr;
            json_t *record = json_loadb(rec, len, json_flags, &jerr);
            if (record)
                status = fn(arg, record, rec, len, line_no, NULL, err);
            else
                status = retry_record(js, in, rec, len, line_no, json_flags, &jerr, fn, arg, err);
            json_decref(record);
        }
    }
    tw__json_stream_free(js);
    return status;
}

tw_status tw__json_read_records(FILE *stream, tw__wire_input *in, size_t max_record_bytes,
                                size_t json_flags, tw__json_record_fn fn, void *arg, tw_error **err)
{
    return record_loop(stream, in, max_record_bytes, json_flags, fn, arg, NULL, NULL, err);
}

tw_status tw__json_scan_records(FILE *stream, tw__wire_input *in, size_t max_record_bytes,
                                tw__json_direct_fn direct, tw__json_scan_record_fn fn, void *arg,
                                tw_error **err)
{
    scan_loop *loop = malloc(sizeof *loop);
    if (!loop) {
        tw__set_error(err, TW_E_NOMEM, "%s: out of memory", in->name);
        return TW_E_NOMEM;
    }
    tw__json_scan_init(&loop->scan);
    loop->scan.max_depth = TW__JSON_SCAN_DEEPEST;
    loop->fn = fn;
    loop->arg = arg;
    tw_status status = record_loop(stream, in, max_record_bytes, JSON_ALLOW_NUL, via_jansson, loop,
                                   loop, direct, err);
    tw__json_scan_free(&loop->scan);
    free(loop);
    return status;
}
