/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/header_lines.c: reads a block of HTTP header lines from a stream
 * into a tw_headers carrier, and writes a carrier back as lines. It is the
 * text face of `tracewire context extract/inject` (context_cmd.c); the SDK's
 * codecs then read or fill the carrier (sdk/src/propagation/).
 *
 * Parsing follows RFC 9112 section 5 for one header section: field name a
 * token, no whitespace before the colon, optional whitespace around the
 * value, obsolete line folding joined with a space. Tolerated on top, because
 * people paste headers by hand or from curl: LF without CR, a missing final
 * line end, and one leading start line. Everything that is not a header is an
 * error naming the line: the caller must not guess at a context from it.
 * Owns nothing beyond the call; not thread-safe per stream (stdio).
 */
#include "header_lines.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "wire/core/error.h"

/* RFC 9110 5.6.2 tchar. */
static bool is_tchar(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return true;
    return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static bool is_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* "GET / HTTP/1.1" or "HTTP/1.1 200 OK": only ever the first line. */
static bool is_start_line(const char *line)
{
    if (strncmp(line, "HTTP/", 5) == 0)
        return true;
    const char *sp = strrchr(line, ' ');
    return sp && strncmp(sp + 1, "HTTP/", 5) == 0 && !strchr(line, ':');
}

/* One header whose value may still grow by folded lines. */
typedef struct {
    char *name;  /* NULL when there is no pending header */
    char *value; /* malloc'd, NUL-terminated */
    size_t value_len;
} pending_header;

static void pending_clear(pending_header *p)
{
    free(p->name);
    free(p->value);
    p->name = NULL;
    p->value = NULL;
    p->value_len = 0;
}

/* Moves the pending header into @headers. */
static tw_status pending_flush(pending_header *p, tw_headers *headers)
{
    if (!p->name)
        return TW_OK;
    tw_status st = tw_headers_add(headers, p->name, p->value);
    pending_clear(p);
    return st;
}

/* Trims OWS on both sides of [*s, *s + *len). */
static void trim_ows(const char **s, size_t *len)
{
    while (*len && is_ows(**s)) {
        (*s)++;
        (*len)--;
    }
    while (*len && is_ows((*s)[*len - 1]))
        (*len)--;
}

/* Field values: VCHAR, obs-text, SP and HTAB (RFC 9110 5.5); a control byte
 * here means the input is not a header block. Returns the bad byte's index,
 * or @len when all are fine. */
static size_t find_control(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return i;
    }
    return len;
}

/* Appends " " + @s to the pending value (obs-fold). */
static tw_status pending_append(pending_header *p, const char *s, size_t len)
{
    size_t sep = (p->value_len && len) ? 1 : 0;
    char *grown = realloc(p->value, p->value_len + sep + len + 1);
    if (!grown)
        return TW_E_NOMEM;
    p->value = grown;
    if (sep)
        p->value[p->value_len++] = ' ';
    memcpy(p->value + p->value_len, s, len);
    p->value_len += len;
    p->value[p->value_len] = '\0';
    return TW_OK;
}

static tw_status pending_start(pending_header *p, const char *name, size_t name_len,
                               const char *value, size_t value_len)
{
    p->name = strndup(name, name_len);
    p->value = strndup(value, value_len);
    p->value_len = value_len;
    if (!p->name || !p->value) {
        pending_clear(p);
        return TW_E_NOMEM;
    }
    return TW_OK;
}

/* Parses one line (line end removed) of @len bytes. */
static tw_status parse_line(const char *line, size_t len, size_t lineno, pending_header *p,
                            tw_headers *headers, tw_error **err)
{
    size_t bad = find_control(line, len);
    if (bad < len) {
        tw__set_error(err, TW_E_MALFORMED, "line %zu: control byte 0x%02x at column %zu", lineno,
                      (unsigned char)line[bad], bad + 1);
        return TW_E_MALFORMED;
    }
    if (is_ows(line[0])) {
        if (!p->name) {
            tw__set_error(err, TW_E_MALFORMED,
                          "line %zu: starts with white space but no header precedes it", lineno);
            return TW_E_MALFORMED;
        }
        const char *s = line;
        size_t n = len;
        trim_ows(&s, &n);
        return pending_append(p, s, n);
    }
    const char *colon = memchr(line, ':', len);
    if (!colon) {
        tw__set_error(err, TW_E_MALFORMED, "line %zu: not a header (no ':'): \"%.60s\"", lineno,
                      line);
        return TW_E_MALFORMED;
    }
    size_t name_len = (size_t)(colon - line);
    if (name_len == 0) {
        tw__set_error(err, TW_E_MALFORMED, "line %zu: empty header name", lineno);
        return TW_E_MALFORMED;
    }
    for (size_t i = 0; i < name_len; i++) {
        if (!is_tchar((unsigned char)line[i])) {
            tw__set_error(err, TW_E_MALFORMED,
                          "line %zu: header name \"%.*s\" has %s at column %zu", lineno,
                          (int)(name_len > 60 ? 60 : name_len), line,
                          is_ows(line[i]) ? "white space" : "a byte not allowed in a token", i + 1);
            return TW_E_MALFORMED;
        }
    }
    tw_status st = pending_flush(p, headers);
    if (st != TW_OK)
        return st;
    const char *value = colon + 1;
    size_t value_len = len - name_len - 1;
    trim_ows(&value, &value_len);
    return pending_start(p, line, name_len, value, value_len);
}

/* Reads one line of @in (through its '\n', if any) into *line (grown as
 * needed, at most @budget bytes plus a NUL). The bound applies to the read,
 * not to the result: a line longer than @budget stops after @budget + 1
 * bytes with *is_too_long set, so an endless line (/dev/zero) costs bounded
 * time and memory. Returns the bytes read (0 at EOF), or -1 with errno on a
 * read error or a failed allocation (ENOMEM). */
static ssize_t read_line_bounded(FILE *in, char **line, size_t *cap, size_t budget,
                                 bool *is_too_long)
{
    size_t len = 0;
    *is_too_long = false;
    for (;;) {
        int c = getc(in);
        if (c == EOF)
            return ferror(in) ? -1 : (ssize_t)len;
        if (len == budget) {
            *is_too_long = true;
            return (ssize_t)len;
        }
        if (len + 2 > *cap) {
            size_t want = *cap ? *cap * 2 : 256;
            if (want > budget + 2)
                want = budget + 2;
            char *grown = realloc(*line, want);
            if (!grown) {
                errno = ENOMEM;
                return -1;
            }
            *line = grown;
            *cap = want;
        }
        (*line)[len++] = (char)c;
        (*line)[len] = '\0';
        if (c == '\n')
            return (ssize_t)len;
    }
}

tw_headers *tw__header_lines_read(FILE *in, tw_error **err)
{
    tw_headers *headers = tw_headers_new();
    if (!headers) {
        tw__set_error(err, TW_E_NOMEM, "out of memory");
        return NULL;
    }
    pending_header pending = {NULL, NULL, 0};
    char *line = NULL;
    size_t cap = 0, total = 0, lineno = 0;
    tw_status st = TW_OK;
    for (;;) {
        errno = 0;
        bool is_too_long = false;
        ssize_t n =
            read_line_bounded(in, &line, &cap, TW__HEADER_LINES_MAX_BYTES - total, &is_too_long);
        if (n < 0) {
            st = errno == ENOMEM ? TW_E_NOMEM : TW_E_IO;
            tw__set_error(err, st, "reading headers: %s", strerror(errno));
            break;
        }
        if (n == 0 && !is_too_long)
            break; /* end of input */
        lineno++;
        total += (size_t)n;
        if (is_too_long) {
            tw__set_error(err, TW_E_LIMIT, "header block longer than %u bytes",
                          TW__HEADER_LINES_MAX_BYTES);
            st = TW_E_LIMIT;
            break;
        }
        size_t len = (size_t)n;
        if (len && line[len - 1] == '\n')
            len--;
        if (len && line[len - 1] == '\r')
            len--;
        if (len == 0)
            break; /* the empty line that ends a header section */
        if (memchr(line, '\0', len)) {
            tw__set_error(err, TW_E_MALFORMED, "line %zu: NUL byte", lineno);
            st = TW_E_MALFORMED;
            break;
        }
        line[len] = '\0';
        if (lineno == 1 && is_start_line(line))
            continue;
        st = parse_line(line, len, lineno, &pending, headers, err);
        if (st != TW_OK)
            break;
    }
    if (st == TW_OK)
        st = pending_flush(&pending, headers);
    pending_clear(&pending);
    free(line);
    if (st != TW_OK) {
        /* Parse errors have set @err already (a set error is never overwritten);
         * a failed allocation or tw_headers_add has not. */
        tw__set_error(err, st, "%s", tw_status_str(st));
        tw_headers_free(headers);
        return NULL;
    }
    return headers;
}

tw_status tw__header_lines_write(const tw_headers *headers, FILE *out)
{
    const char *key, *value;
    for (size_t i = 0; tw_headers_item(headers, i, &key, &value); i++) {
        if (fprintf(out, "%s: %s\n", key, value) < 0)
            return TW_E_IO;
    }
    return ferror(out) ? TW_E_IO : TW_OK;
}
