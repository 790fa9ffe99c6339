/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/redact.c: control bytes escaped, URL credentials, query
 * values, path parameter values and fragments masked (wire/core/redact.h).
 * One pass, no allocation.
 */
#include "wire/core/redact.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

/* Where the scan is in a URL. */
enum { OUTSIDE, PATH, QUERY };

typedef struct sink {
    char *out;
    size_t size, n;
    bool is_full; /* a piece did not fit: nothing more is written */
} sink;

static void put(sink *s, const char *p, size_t len)
{
    if (s->is_full || s->n + len >= s->size) {
        s->is_full = true;
        return;
    }
    memcpy(s->out + s->n, p, len);
    s->n += len;
}

static void put_char(sink *s, unsigned char c)
{
    static const char hex[] = "0123456789abcdef";
    if (c < 0x20 || c == 0x7f) {
        char esc[4] = {'\\', 'x', hex[c >> 4], hex[c & 0xf]};
        put(s, esc, sizeof esc);
    } else {
        put(s, (const char *)&c, 1);
    }
}

static bool ends_url(unsigned char c)
{
    return c == '\0' || c == ' ' || c == '"' || c == '\'' || c == '<' || c == '>' || c < 0x20 ||
           c == 0x7f;
}

/* A secret (user:password, a query value) ends only where the text does
 * or at a space, quote or angle bracket: a control byte inside it is
 * masked with it, not taken for the URL's end with the rest shown. */
static bool ends_secret(unsigned char c)
{
    return c == '\0' || c == ' ' || c == '"' || c == '\'' || c == '<' || c == '>';
}

/* The authority of a URL starting at @p (just after "://") ends at '/',
 * '?', '#' or the URL's end. Returns the position of its last '@', or
 * NULL. */
static const unsigned char *userinfo_end(const unsigned char *p)
{
    const unsigned char *at = NULL;
    for (; !ends_secret(*p) && *p != '/' && *p != '?' && *p != '#'; p++) {
        if (*p == '@')
            at = p;
    }
    return at;
}

/* Query keys whose values are shown: the ones the library itself adds
 * (the remote sampler's ?service=NAME), never a credential. */
static bool is_shown_key(const unsigned char *key, size_t len)
{
    return len == 7 && strncasecmp((const char *)key, "service", 7) == 0;
}

/* Whether "://" starts in [@p, @end). */
static bool has_url(const unsigned char *p, const unsigned char *end)
{
    for (; p + 2 < end; p++) {
        if (p[0] == ':' && p[1] == '/' && p[2] == '/')
            return true;
    }
    return false;
}

/* Writes the name of a "name=value" piece (a query component or a path
 * parameter) from @p to @end, and its value as ***; a piece without '=',
 * or whose name holds a URL (and so maybe a user:password), is all value.
 * Returns @end. */
static const unsigned char *mask_piece(sink *s, const unsigned char *p, const unsigned char *end)
{
    const unsigned char *eq = memchr(p, '=', (size_t)(end - p));
    if (eq && !has_url(p, eq)) {
        for (; p <= eq; p++)
            put_char(s, *p);
    }
    if (p < end)
        put(s, "***", 3);
    return end;
}

/* The end of a piece starting at @p: the first of @stops, or where a
 * secret ends, or at ": ", which in a message ends a URL given as a label
 * ("URL: what happened"; a value here ends at a space anyway, so only the
 * ':' is moved from the mask to the message, where it belongs). A piece
 * that stops at '/' stops also at a "://", so that it cannot end inside a
 * URL within it and leave that URL's user:password shown. */
static const unsigned char *piece_end(const unsigned char *p, const char *stops)
{
    bool is_path = strchr(stops, '/') != NULL;
    while (!ends_secret(*p) && !strchr(stops, *p) && !(p[0] == ':' && p[1] == ' ') &&
           !(is_path && p[0] == ':' && p[1] == '/' && p[2] == '/'))
        p++;
    return p;
}

static void run(sink *s, const unsigned char *p, int where)
{
    while (*p && !s->is_full) {
        if (p[0] == ':' && p[1] == '/' && p[2] == '/') {
            put(s, "://", 3);
            p += 3;
            const unsigned char *at = userinfo_end(p);
            if (at) {
                put(s, "***", 3);
                p = at;
            }
            where = PATH;
            continue;
        }
        unsigned char c = *p;
        if (where != OUTSIDE && ends_url(c)) {
            where = OUTSIDE;
        } else if (where == PATH && c == ';') {
            /* A path parameter (";jsessionid=..."): its value is masked. */
            put(s, ";", 1);
            p = mask_piece(s, p + 1, piece_end(p + 1, "/;?#"));
            continue;
        } else if ((where == PATH && c == '?') || (where == QUERY && c == '&')) {
            /* A query component: "name=value" shows its name, one without
             * '=' is masked whole. */
            where = QUERY;
            put(s, (const char *)&c, 1);
            const unsigned char *end = piece_end(p + 1, "&#");
            const unsigned char *eq = memchr(p + 1, '=', (size_t)(end - p - 1));
            if (eq && is_shown_key(p + 1, (size_t)(eq - p - 1))) {
                p++; /* shown as it is, up to the next '&' or '#' */
                continue;
            }
            p = mask_piece(s, p + 1, end);
            continue;
        } else if ((where == PATH || where == QUERY) && c == '#') {
            /* The fragment goes whole: a client may carry a token there. */
            put(s, "#", 1);
            const unsigned char *end = piece_end(p + 1, "");
            if (end > p + 1)
                put(s, "***", 3);
            p = end;
            where = OUTSIDE;
            continue;
        }
        put_char(s, c);
        p++;
    }
}

size_t tw__redact_text(const char *in, char *out, size_t size)
{
    if (size == 0)
        return 0;
    sink s = {.out = out, .size = size};
    run(&s, (const unsigned char *)in, OUTSIDE);
    out[s.n] = '\0';
    return s.n;
}

/* Whether [@p, @end) is a URL scheme: a letter, then letters, digits,
 * '+', '-' or '.' (RFC 3986, section 3.1). */
static bool is_scheme(const unsigned char *p, const unsigned char *end)
{
    if (p == end || !((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z'))
        return false;
    for (; p < end; p++) {
        unsigned char c = *p;
        if (!((c | 0x20) >= 'a' && (c | 0x20) <= 'z') && !(c >= '0' && c <= '9') && c != '+' &&
            c != '-' && c != '.')
            return false;
    }
    return true;
}

/* The end of a piece of a whole URL starting at @p: the first of @stops
 * or the URL's end; no other byte ends it (a space, a quote, ": " are
 * part of a value). */
static const unsigned char *whole_piece_end(const unsigned char *p, const char *stops)
{
    while (*p && !strchr(stops, *p))
        p++;
    return p;
}

/* The whole-URL rules (wire/core/redact.h): @p starts the authority (just
 * after "scheme://", or the text's start when it has no scheme). */
static void run_whole(sink *s, const unsigned char *p)
{
    const unsigned char *at = (const unsigned char *)strrchr((const char *)p, '@');
    if (at) {
        /* The user-info runs to the last '@', whatever it holds ('/',
         * a space, a quote). When a '?', '#' or ';' comes before that '@',
         * the '@' may as well sit in a query value, a fragment or a path
         * parameter, whose rest would follow it: nothing more is shown. */
        put(s, "***", 3);
        for (const unsigned char *q = p; q < at; q++) {
            if (*q == '?' || *q == '#' || *q == ';')
                return;
        }
        p = at;
    }
    /* Host and port, then the path: shown. */
    while (*p && *p != '?' && *p != '#' && *p != ';' && !s->is_full)
        put_char(s, *p++);
    while (*p == ';' && !s->is_full) {
        /* A path parameter: its value is masked up to the next '/', ';',
         * '?' or '#'; the path after it is shown. */
        put(s, ";", 1);
        p = mask_piece(s, p + 1, whole_piece_end(p + 1, "/;?#"));
        while (*p && *p != '?' && *p != '#' && *p != ';' && !s->is_full)
            put_char(s, *p++);
    }
    if (*p == '?') {
        do {
            /* A query component: its value runs to the next '&' or '#'. */
            put_char(s, *p);
            const unsigned char *end = whole_piece_end(p + 1, "&#");
            const unsigned char *eq = memchr(p + 1, '=', (size_t)(end - p - 1));
            if (eq && is_shown_key(p + 1, (size_t)(eq - p - 1))) {
                for (p++; p < end; p++)
                    put_char(s, *p);
            } else {
                p = mask_piece(s, p + 1, end);
            }
        } while (*p == '&' && !s->is_full);
    }
    if (*p == '#') {
        /* The fragment: masked whole. */
        put(s, "#", 1);
        if (p[1])
            put(s, "***", 3);
    }
}

void tw__redact_url(const char *url, char *out, size_t size)
{
    if (size == 0)
        return;
    sink s = {.out = out, .size = size};
    const unsigned char *p = (const unsigned char *)url;
    const char *sep = strstr(url, "://");
    if (sep && is_scheme(p, (const unsigned char *)sep)) {
        put(&s, url, (size_t)(sep - url) + 3);
        p = (const unsigned char *)sep + 3;
    }
    /* Without a scheme ("user:password@host/...", or a mangled scheme,
     * "htp:/user:pw@host"), the text is read as a URL from its authority
     * on: anything before its last '@' could be a credential. */
    run_whole(&s, p);
    out[s.n] = '\0';
}
