/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/zipkin/zipkin_v2_json.c: the project's one Zipkin v2 JSON encoder
 * (wire/zipkin/zipkin_v2_json.h has every mapping rule): span model ->
 * Zipkin v2 span JSON, written straight into a byte buffer. The SDK's
 * Zipkin HTTP reporter, `tracewire convert --to zipkin-v2-json`, `--send` to
 * Zipkin and the Zipkin v1 JSON encoder (which converts its output) all use
 * it.
 *
 * It writes exactly the bytes of Jansson's compact dump of the JSON object
 * the rules describe (the reference Jansson encoder, kept in
 * tests/unit/wire/oracle_zipkin_v2.c, builds that object): object members
 * keep their first position when set again and move to the end when deleted
 * and set again, as in a Jansson object. Why not Jansson: a tree per span
 * cost 77,000 instructions per span on the reporter thread and 120,000 in
 * `convert` (callgrind); the guard is the differential suite
 * tests/unit/wire/test_zipkin_text.c (byte-identical on 20,000 random
 * spans: control characters, invalid UTF-8 in keys and values, NUL bytes,
 * repeated keys, hundreds of tags, every error rule).
 *
 * Most spans take one hopeful pass: keys taken to be distinct, plain and
 * free of the error rule, which the tags writer (put_tags_plain) checks as
 * it writes; when one is not, the span is taken back and written again the
 * general way (winners first, then tag_map's rules). Both ways are held to
 * the reference by test_zipkin_text.
 *
 * Memory: a scratch buffer per call for stringified values; the tags
 * object's members in a stack table (heap beyond 32, with a hash index);
 * with a tw__zipkin_process_cache (the zipkin-v2-json document's), each
 * process's rendered part, bounded per entry and in number of entries.
 * Locking: none (a cache is one thread's at a time).
 */
#include "wire/zipkin/zipkin_v2_json.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "wire/core/hex.h"
#include "wire/core/json_write.h"
#include "wire/core/utf8.h"
#include "wire/model/conventions.h"

/* ---- the tags object: an ordered map with Jansson's object semantics ----------------------- */

/* How a tags member's value is written. */
typedef enum { VALUE_TAG, VALUE_MESSAGE, VALUE_TRUE } value_mode;

typedef struct {
    const char *key; /* the key as Jansson keeps it: valid UTF-8, cut at a NUL */
    size_t key_len;
    const tw__tag *tag; /* the value (VALUE_TAG) or the message (VALUE_MESSAGE) */
    value_mode mode;
    bool is_deleted; /* json_object_del: gone; a later set appends the key again */
    bool owns_key;   /* key is a repaired copy (malloc) */
} member;

#define MAP_INLINE 32

/* json_object_set_new on an existing key replaces the value in place (the
 * key keeps its position); json_object_del removes it, and a later set
 * appends it at the end. Lookups are linear up to MAP_INLINE members, then
 * through an open-addressing index (member index + 1; 0 empty). */
typedef struct {
    member *m;
    size_t n, cap;
    member inline_m[MAP_INLINE];
    uint32_t *index;
    size_t index_cap; /* a power of two, at least twice n */
    uint64_t seen;    /* bit key_sign(key) set for every key added (deleted ones too) */
    bool failed;
} tag_map;

/* One of 64 bits for a key, from its length and its first and last bytes:
 * a key whose bit is not in `seen` is not in the map, and most keys of a
 * span differ there, so that most sets append without a scan. */
static inline uint64_t key_sign(const char *key, size_t len)
{
    unsigned h = (unsigned)len * 7u;
    if (len)
        h += (unsigned char)key[0] * 3u + (unsigned char)key[len - 1];
    return (uint64_t)1 << (h & 63);
}

static void map_init(tag_map *map)
{
    map->m = map->inline_m;
    map->n = 0;
    map->cap = MAP_INLINE;
    map->index = NULL;
    map->index_cap = 0;
    map->seen = 0;
    map->failed = false;
}

static void map_free(tag_map *map)
{
    for (size_t i = 0; i < map->n; i++) {
        if (map->m[i].owns_key)
            free((void *)map->m[i].key);
    }
    if (map->m != map->inline_m)
        free(map->m);
    free(map->index);
}

static uint64_t key_hash(const char *key, size_t len)
{
    uint64_t h = 0xcbf29ce484222325u; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)key[i]) * 0x100000001b3u;
    return h;
}

static bool key_is(const member *m, const char *key, size_t len)
{
    return !m->is_deleted && m->key_len == len && memcmp(m->key, key, len) == 0;
}

static bool index_insert(tag_map *map, size_t i)
{
    size_t at = key_hash(map->m[i].key, map->m[i].key_len) & (map->index_cap - 1);
    while (map->index[at])
        at = (at + 1) & (map->index_cap - 1);
    map->index[at] = (uint32_t)(i + 1);
    return true;
}

/* (Re)builds the index for the live members; false on allocation failure. */
static bool index_build(tag_map *map, size_t cap)
{
    uint32_t *index = calloc(cap, sizeof *index);
    if (!index)
        return false;
    free(map->index);
    map->index = index;
    map->index_cap = cap;
    for (size_t i = 0; i < map->n; i++) {
        if (!map->m[i].is_deleted)
            index_insert(map, i);
    }
    return true;
}

static size_t map_find(const tag_map *map, const char *key, size_t len)
{
    if (!(map->seen & key_sign(key, len)))
        return SIZE_MAX;
    if (!map->index) {
        for (size_t i = 0; i < map->n; i++) {
            if (key_is(&map->m[i], key, len))
                return i;
        }
        return SIZE_MAX;
    }
    /* Deleted members stay in the index (they do not match): probing goes on past them. */
    for (size_t at = key_hash(key, len) & (map->index_cap - 1); map->index[at];
         at = (at + 1) & (map->index_cap - 1)) {
        size_t i = map->index[at] - 1;
        if (key_is(&map->m[i], key, len))
            return i;
    }
    return SIZE_MAX;
}

/* The key of @t as a Jansson object keeps it: cut at a NUL, invalid UTF-8
 * repaired (each bad byte U+FFFD). *owned: a malloc'd repair. */
static bool effective_key(const char *key, size_t key_len, const char **out, size_t *out_len,
                          bool *owned)
{
    size_t len = strnlen(key, key_len);
    *owned = false;
    if (tw__utf8_is_valid(key, len)) {
        *out = key;
        *out_len = len;
        return true;
    }
    tw__buf fixed = {0};
    if (!tw__utf8_repair_append(&fixed, key, len, NULL)) {
        tw__buf_free(&fixed);
        return false;
    }
    *out = (const char *)fixed.data;
    *out_len = fixed.len;
    *owned = true;
    return true;
}

static void map_set(tag_map *map, const char *raw_key, size_t raw_len, const tw__tag *tag,
                    value_mode mode)
{
    const char *key;
    size_t len;
    bool owned;
    if (map->failed || !effective_key(raw_key, raw_len, &key, &len, &owned)) {
        map->failed = true;
        return;
    }
    size_t i = map_find(map, key, len);
    if (i != SIZE_MAX) {
        if (owned)
            free((void *)key);
        map->m[i].tag = tag;
        map->m[i].mode = mode;
        return;
    }
    if (map->n == map->cap) {
        size_t cap = map->cap * 2;
        member *grown = malloc(cap * sizeof *grown);
        if (!grown) {
            if (owned)
                free((void *)key);
            map->failed = true;
            return;
        }
        memcpy(grown, map->m, map->n * sizeof *grown);
        if (map->m != map->inline_m)
            free(map->m);
        map->m = grown;
        map->cap = cap;
    }
    i = map->n++;
    map->m[i] = (member){key, len, tag, mode, false, owned};
    map->seen |= key_sign(key, len);
    if (map->n > MAP_INLINE && map->n * 2 > map->index_cap) {
        if (!index_build(map, map->index_cap ? map->index_cap * 2 : 4 * MAP_INLINE))
            map->failed = true;
    } else if (map->index) {
        index_insert(map, i);
    }
}

static void map_del(tag_map *map, const char *key)
{
    size_t i = map_find(map, key, strlen(key));
    if (i != SIZE_MAX)
        map->m[i].is_deleted = true;
}

/* ---- endpoints ------------------------------------------------------------------------------ */

/* An endpoint's members (at most 4), with the same replace-in-place rule
 * as tag_map. */
typedef enum { EP_SERVICE_NAME, EP_IPV4, EP_IPV6, EP_PORT } ep_key;

/* Each member's name as written: quoted, with its colon; padded to 16
 * bytes, copied as two words. */
static const struct {
    char text[16];
    size_t len;
} ep_names[] = {
    [EP_SERVICE_NAME] = {"\"serviceName\":", 14},
    [EP_IPV4] = {"\"ipv4\":", 7},
    [EP_IPV6] = {"\"ipv6\":", 7},
    [EP_PORT] = {"\"port\":", 7},
};

typedef struct {
    ep_key key;
    const char *text; /* serviceName (repaired when written), address text */
    size_t len;
    int64_t port;
    char buf[INET6_ADDRSTRLEN];
} ep_member;

typedef struct {
    ep_member m[4];
    size_t n;
} endpoint;

static ep_member *ep_slot(endpoint *ep, ep_key key)
{
    for (size_t i = 0; i < ep->n; i++) {
        if (ep->m[i].key == key)
            return &ep->m[i];
    }
    ep_member *m = &ep->m[ep->n++];
    m->key = key;
    return m;
}

static void ep_text(endpoint *ep, ep_key key, const char *text, size_t len)
{
    ep_member *m = ep_slot(ep, key);
    m->text = text;
    m->len = len;
}

static void ep_copy(endpoint *ep, ep_key key, const char *text)
{
    ep_member *m = ep_slot(ep, key);
    size_t len = strlen(text);
    memcpy(m->buf, text, len + 1);
    m->text = m->buf;
    m->len = len;
}

/* Sets ipv4 of @ep from a string tag that is IPv4 text; false when it is not. */
static bool ep_ipv4_text(endpoint *ep, const tw__tag *t)
{
    size_t len = tw__ipv4_canonical_len(t->v.str);
    if (!len) {
        struct in_addr v4;
        if (inet_pton(AF_INET, t->v.str, &v4) != 1)
            return false;
        len = strlen(t->v.str);
    }
    ep_text(ep, EP_IPV4, t->v.str, len);
    return true;
}

/* Sets ipv4 or ipv6 of @ep from an address tag: IPv4/IPv6 text, a packed
 * big-endian IPv4 int64 (as Jaeger's Java client writes the process ip), or
 * 16 raw IPv6 bytes. False when the value is none of these. */
static bool ep_address(endpoint *ep, const tw__tag *t)
{
    char text[INET6_ADDRSTRLEN];
    struct in_addr v4;
    struct in6_addr v6;
    if (t->type == TW_VALUE_STRING) {
        if (ep_ipv4_text(ep, t))
            return true;
        if (inet_pton(AF_INET6, t->v.str, &v6) == 1 &&
            inet_ntop(AF_INET6, &v6, text, sizeof text)) {
            ep_copy(ep, EP_IPV6, text);
            return true;
        }
        return false;
    }
    if (t->type == TW_VALUE_INT64 && t->v.i64 >= INT32_MIN && t->v.i64 <= (int64_t)UINT32_MAX) {
        v4.s_addr = htonl((uint32_t)t->v.i64);
        if (!inet_ntop(AF_INET, &v4, text, sizeof text))
            return false;
        ep_copy(ep, EP_IPV4, text);
        return true;
    }
    if (t->type == TW_VALUE_BINARY && t->len == 16) {
        memcpy(&v6, t->v.bin, 16);
        if (!inet_ntop(AF_INET6, &v6, text, sizeof text))
            return false;
        ep_copy(ep, EP_IPV6, text);
        return true;
    }
    return false;
}

/* Sets port from a port tag: an int64 or up to 5 digits, 1..65535. */
static bool ep_port(endpoint *ep, const tw__tag *t)
{
    int64_t port = -1;
    if (t->type == TW_VALUE_INT64) {
        port = t->v.i64;
    } else if (t->type == TW_VALUE_STRING && t->len > 0 && t->len <= 5 &&
               strspn(t->v.str, "0123456789") == t->len) {
        port = strtol(t->v.str, NULL, 10);
    }
    if (port < 1 || port > 65535)
        return false;
    ep_slot(ep, EP_PORT)->port = port;
    return true;
}

/* ---- the per-process cache (tw__zipkin_process_cache) --------------------------------------- */

/* A process's part of a span's JSON is the same for every span it
 * recorded: the localEndpoint object, which process tags it used, and the
 * process tags at the head of the tags object (with the keys put_tags_plain
 * has then seen). `convert` writes thousands of spans per process, and
 * rendering that part cost about 800 instructions per span (callgrind,
 * dapper -> zipkin-v2-json), so a cache keeps it per process.
 *
 * A process is identified by its content, never by its address alone: an
 * entry keeps a fingerprint of everything the cached part depends on (the
 * service name, each tag's key, type and value, bytes compared), and a
 * process whose address matches but whose content differs (freed, and
 * another allocated there) is a miss. Each entry's bytes are bounded
 * (PROC_ENTRY_MAX); a bigger process is rendered every time.
 *
 * Within a batch (tw__zipkin_process_cache_new_batch: the caller's spans of
 * one call, whose processes all stay alive and unchanged until the next
 * batch), two processes at one address are one process: an entry compared
 * once in the batch is taken without comparing again (the comparison cost
 * about 450 instructions per span, most of what the cache saves). */
#define PROC_SLOTS 64 /* two ways of 32: a process may sit in slot h or h ^ 1 */
#define PROC_ENTRY_MAX 4096

typedef struct {
    const tw__process *p; /* NULL: empty */
    bool is_ready;        /* fingerprint, endpoint and tags recorded */
    bool has_plain_tags;  /* the process tags take put_tags_plain's way */
    uint64_t checked;     /* the batch in which it was last compared (0: none) */
    size_t local_used[3];
    tw__buf mem;           /* fingerprint, then endpoint text, then tags text */
    size_t fp_len, ep_len; /* (the tags text is the rest) */
    uint64_t bloom[4];     /* put_tags_plain's key_set after the process tags */
    size_t n_keys;
    uint8_t key_index[64]; /* its tags, as indexes into p->tags */
} proc_entry;

struct tw__zipkin_process_cache {
    proc_entry e[PROC_SLOTS];
    uint64_t batch; /* 0 until the first tw__zipkin_process_cache_new_batch */
};

void tw__zipkin_process_cache_new_batch(tw__zipkin_process_cache *cache)
{
    if (cache)
        cache->batch++;
}

tw__zipkin_process_cache *tw__zipkin_process_cache_new(void)
{
    return calloc(1, sizeof(tw__zipkin_process_cache));
}

void tw__zipkin_process_cache_free(tw__zipkin_process_cache *cache)
{
    if (!cache)
        return;
    for (size_t i = 0; i < PROC_SLOTS; i++)
        tw__buf_free(&cache->e[i].mem);
    free(cache);
}

/* The fingerprint of a tag: this header, then its key bytes, then (string
 * and binary) its value bytes. */
typedef struct {
    uint32_t key_len; /* UINT32_MAX: no key */
    uint32_t type;
    uint64_t value; /* len (string, binary), else the value's bits */
} fp_tag;

static inline fp_tag fp_header(const tw__tag *t)
{
    fp_tag h = {t->key ? t->key_len : UINT32_MAX, (uint32_t)t->type, 0};
    switch (t->type) {
    case TW_VALUE_STRING:
    case TW_VALUE_BINARY:
        h.value = t->len;
        break;
    case TW_VALUE_INT64:
        h.value = (uint64_t)t->v.i64;
        break;
    case TW_VALUE_DOUBLE:
        memcpy(&h.value, &t->v.dbl, sizeof t->v.dbl);
        break;
    case TW_VALUE_BOOL:
        h.value = t->v.boolean;
        break;
    }
    return h;
}

static inline const void *fp_bytes(const tw__tag *t)
{
    return t->type == TW_VALUE_STRING ? (const void *)t->v.str : (const void *)t->v.bin;
}

static inline bool fp_has_bytes(const tw__tag *t)
{
    return t->type == TW_VALUE_STRING || t->type == TW_VALUE_BINARY;
}

/* Whether @n bytes at @a and @b are equal: the short ones (nearly every
 * key and value) by overlapping loads, without a call. */
static inline bool same_bytes(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
#ifdef TW__JSON_SSE2
    if (n > 16 && n <= 32) {
        __m128i eq = _mm_and_si128(
            _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)x),
                           _mm_loadu_si128((const __m128i *)(const void *)y)),
            _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(x + n - 16)),
                           _mm_loadu_si128((const __m128i *)(const void *)(y + n - 16))));
        return _mm_movemask_epi8(eq) == 0xffff;
    }
#endif
    if (n >= 8 && n <= 16) {
        uint64_t x0, x1, y0, y1;
        memcpy(&x0, x, 8);
        memcpy(&y0, y, 8);
        memcpy(&x1, x + n - 8, 8);
        memcpy(&y1, y + n - 8, 8);
        return ((x0 ^ y0) | (x1 ^ y1)) == 0;
    }
    if (n >= 4 && n < 8) {
        uint32_t x0, x1, y0, y1;
        memcpy(&x0, x, 4);
        memcpy(&y0, y, 4);
        memcpy(&x1, x + n - 4, 4);
        memcpy(&y1, y + n - 4, 4);
        return ((x0 ^ y0) | (x1 ^ y1)) == 0;
    }
    if (n < 4) /* (0 to 3 bytes: the first, middle and last are all of them) */
        return n == 0 || (x[0] == y[0] && x[n >> 1] == y[n >> 1] && x[n - 1] == y[n - 1]);
    return memcmp(x, y, n) == 0;
}

/* The service name's fingerprint: its length (SIZE_MAX when NULL), then its bytes. */
static size_t service_len(const tw__process *p)
{
    return p->service_name ? strlen(p->service_name) : SIZE_MAX;
}

/* Records @p's fingerprint in @e->mem; false when it would pass PROC_ENTRY_MAX. */
static bool fp_record(proc_entry *e, const tw__process *p)
{
    size_t sn = service_len(p), total = sizeof sn + (sn == SIZE_MAX ? 0 : sn) + sizeof p->n_tags;
    for (size_t i = 0; i < p->n_tags && total <= PROC_ENTRY_MAX; i++) {
        const tw__tag *t = &p->tags[i];
        total += sizeof(fp_tag) + (t->key ? t->key_len : 0) + (fp_has_bytes(t) ? t->len : 0);
    }
    if (total > PROC_ENTRY_MAX)
        return false;
    tw__buf_reset(&e->mem);
    if (!tw__buf_append(&e->mem, &sn, sizeof sn) ||
        (sn != SIZE_MAX && !tw__buf_append(&e->mem, p->service_name, sn)) ||
        !tw__buf_append(&e->mem, &p->n_tags, sizeof p->n_tags))
        return false;
    for (size_t i = 0; i < p->n_tags; i++) {
        const tw__tag *t = &p->tags[i];
        fp_tag h = fp_header(t);
        if (!tw__buf_append(&e->mem, &h, sizeof h) ||
            (t->key && !tw__buf_append(&e->mem, t->key, t->key_len)) ||
            (fp_has_bytes(t) && !tw__buf_append(&e->mem, fp_bytes(t), t->len)))
            return false;
    }
    e->fp_len = e->mem.len;
    return true;
}

/* Whether @p's content is the one @e's fingerprint recorded. Reads no
 * byte of @p beyond its lengths, nor of the fingerprint beyond fp_len.
 * (Every span of a cached process comes here: the common tag, a string, is
 * taken without fp_header's switch.) */
static bool fp_same(const proc_entry *e, const tw__process *p)
{
    const uint8_t *f = e->mem.data, *end = f + e->fp_len;
    size_t sn = service_len(p), n_tags = p->n_tags, recorded;
    if ((size_t)(end - f) < sizeof sn + sizeof n_tags)
        return false;
    memcpy(&recorded, f, sizeof recorded);
    if (recorded != sn)
        return false;
    f += sizeof sn;
    if (sn != SIZE_MAX) {
        if ((size_t)(end - f) < sn + sizeof n_tags || !same_bytes(f, p->service_name, sn))
            return false;
        f += sn;
    }
    memcpy(&recorded, f, sizeof recorded);
    if (recorded != n_tags)
        return false;
    f += sizeof n_tags;
    for (size_t i = 0; i < n_tags; i++) {
        const tw__tag *t = &p->tags[i];
        fp_tag h;
        if ((size_t)(end - f) < sizeof h)
            return false;
        memcpy(&h, f, sizeof h);
        f += sizeof h;
        size_t key_len = t->key ? t->key_len : 0, value_len = 0;
        if (t->type == TW_VALUE_STRING && t->key) {
            if (h.key_len != t->key_len || h.type != TW_VALUE_STRING || h.value != t->len)
                return false;
            value_len = t->len;
        } else {
            fp_tag now = fp_header(t);
            if (memcmp(&h, &now, sizeof h) != 0)
                return false;
            value_len = fp_has_bytes(t) ? t->len : 0;
        }
        if ((size_t)(end - f) < key_len || (size_t)(end - f) - key_len < value_len ||
            !same_bytes(f, t->key, key_len) || !same_bytes(f + key_len, fp_bytes(t), value_len))
            return false;
        f += key_len + value_len;
    }
    return f == end;
}

/* @p's entry in @cache, ready to use (is_ready) or to record into (not
 * is_ready: its fingerprint recorded); NULL when there is no cache or @p is
 * too big to keep. */
static proc_entry *proc_lookup(tw__zipkin_process_cache *cache, const tw__process *p)
{
    if (!cache || !p)
        return NULL;
    /* (Fibonacci hashing: the addresses of a run's processes differ in
     * few bits, and a plain fold of them left a third of 20 processes in
     * slots already taken.) */
    size_t h = (size_t)(((uint64_t)(uintptr_t)p * UINT64_C(0x9e3779b97f4a7c15)) >> 58);
    proc_entry *e = NULL;
    for (size_t way = 0; way < 2; way++) {
        proc_entry *w = &cache->e[h ^ way];
        if (w->p == p && w->is_ready &&
            ((cache->batch && w->checked == cache->batch) || fp_same(w, p))) {
            w->checked = cache->batch;
            return w;
        }
        /* The victim of a miss: @p's own stale entry, else an empty one,
         * else the one compared less recently. */
        if (!e || (e->p != p && (w->p == p || !w->p || (e->p && w->checked < e->checked))))
            e = w;
    }
    e->p = NULL;
    e->is_ready = false;
    if (!fp_record(e, p))
        return NULL;
    e->p = p;
    e->checked = cache->batch;
    return e;
}

/* Appends @len bytes at @text to @e's recording (a cached part); false
 * (the entry is then left unready) past PROC_ENTRY_MAX or on allocation failure. */
static bool proc_record(proc_entry *e, const uint8_t *text, size_t len)
{
    return e->mem.len + len <= 2 * PROC_ENTRY_MAX && tw__buf_append(&e->mem, text, len);
}

/* ---- output ------------------------------------------------------------------------------- */

/* Writes @len bytes of @text as a JSON string at @o, which has room for it
 * (tw__json_room), as tw__json_write_text does: the plain run (nearly
 * every text) scanned and copied inline, without a call; a text with a byte
 * to escape is written again from its start by tw__json_write_text. */
static inline __attribute__((always_inline)) uint8_t *write_text(uint8_t *o, const char *text,
                                                                 size_t len)
{
    *o = '"';
    if (tw__json_run_copy((const unsigned char *)text, len, o + 1) < len)
        return tw__json_write_text(o, text, len);
    o[len + 1] = '"';
    return o + len + 2;
}

/* Appends; the common case (room left: encode() reserves ahead) inline,
 * always: the literals' lengths are constants, and their copies then
 * become a few stores instead of a call to memcpy. */
static inline __attribute__((always_inline)) bool put(tw__buf *out, const char *s, size_t len)
{
    if (out->cap - out->len < len)
        return tw__buf_append(out, s, len);
    memcpy(out->data + out->len, s, len);
    out->len += len;
    return true;
}

#define PUT_LIT(out, lit) put((out), (lit), sizeof(lit) - 1)

/* Writes @name (",\"localEndpoint\":" or the remote one, @name_len bytes)
 * and the endpoint's object in one reserved write. */
static bool put_endpoint(tw__buf *out, const char *name, size_t name_len, const endpoint *ep)
{
    size_t text_len = 0;
    for (size_t i = 0; i < ep->n; i++)
        text_len += ep->m[i].key == EP_PORT ? 0 : ep->m[i].len;
    /* Each text's worst case fits in tw__json_room's for their sum (and its
     * quotes in the extra); then the names, the port's 32 bytes, braces. */
    if (text_len > SIZE_MAX / 8 || !tw__json_room(out, text_len, name_len + 96))
        return false;
    uint8_t *o = out->data + out->len;
    memcpy(o, name, name_len);
    o += name_len;
    for (size_t i = 0; i < ep->n; i++) {
        const ep_member *m = &ep->m[i];
        *o++ = i ? ',' : '{';
        memcpy(o, ep_names[m->key].text, 16); /* (the room has 96 bytes more) */
        o += ep_names[m->key].len;
        o = m->key == EP_PORT ? tw__json_write_int(o, m->port) : write_text(o, m->text, m->len);
    }
    *o++ = '}';
    out->len = (size_t)(o - out->data);
    return true;
}

/* A JSON string of the text of a typed value (Zipkin tags are strings). */
static bool put_value(tw__buf *out, const tw__tag *t, tw__buf *text)
{
    if (t->type == TW_VALUE_STRING)
        return tw__json_append_text(out, t->v.str, t->len);
    if (t->type == TW_VALUE_INT64) /* decimal digits need no escaping */
        return tw__json_put_quoted_int(out, t->v.i64);
    /* tw__value_text's text of a bool or a double, without the scratch
     * buffer (whose first use per span was a malloc). */
    if (t->type == TW_VALUE_BOOL)
        return t->v.boolean ? PUT_LIT(out, "\"true\"") : PUT_LIT(out, "\"false\"");
    if (t->type == TW_VALUE_DOUBLE) {
        char num[40];
        size_t n = tw__double_text(t->v.dbl, num, sizeof num);
        return tw__json_append_text(out, num, n);
    }
    tw__buf_reset(text);
    return tw__value_text(t, text) &&
           tw__json_append_text(out, (const char *)text->data, text->len);
}

/* The annotation value of a log (zipkin_v2_json.h); an empty text means none. */
static bool annotation_text(const tw__log *log, tw__buf *text)
{
    tw__buf_reset(text);
    const tw__tag *event = NULL;
    for (size_t f = 0; f < log->n_fields && !event; f++) {
        if (tw__tag_key_is(&log->fields[f], "event") && log->fields[f].type == TW_VALUE_STRING)
            event = &log->fields[f];
    }
    if (event && !tw__buf_append(text, event->v.str, event->len))
        return false;
    for (size_t f = 0; f < log->n_fields; f++) {
        const tw__tag *field = &log->fields[f];
        if (field == event)
            continue;
        if ((text->len > 0 && !tw__buf_append(text, " ", 1)) ||
            !tw__buf_append(text, field->key, field->key_len) || !tw__buf_append(text, "=", 1) ||
            !tw__value_text(field, text))
            return false;
    }
    return true;
}

/* A Zipkin kind's name, padded to 8 bytes (copied as one word), and its length. */
struct kind_text {
    tw__span_kind kind;
    char text[8];
    size_t len;
};

/* The kind of the last `span.kind` tag as tw__span_kind_of reads it (its
 * value matched case-insensitively), or NULL when Zipkin has none for it;
 * when there is one, sets is_mapped for every `span.kind` tag (the value
 * that maps is not repeated as a tag). One pass over the keys, by their
 * length first, which also tells whether any key is a remoteEndpoint one
 * (*has_peer: "peer." and at least 9 bytes). */
static inline __attribute__((always_inline)) const struct kind_text *
kind_of(const tw__span_data *s, bool *is_mapped, bool *has_peer)
{
    static const struct kind_text kinds[] = {
        {TW__KIND_CLIENT, "CLIENT\0", 6},
        {TW__KIND_SERVER, "SERVER\0", 6},
        {TW__KIND_PRODUCER, {'P', 'R', 'O', 'D', 'U', 'C', 'E', 'R'}, 8},
        {TW__KIND_CONSUMER, {'C', 'O', 'N', 'S', 'U', 'M', 'E', 'R'}, 8},
    };
    size_t last = SIZE_MAX, n_found = 0;
    bool is_peer = false;
    for (size_t i = 0; i < s->n_tags; i++) {
        const tw__tag *t = &s->tags[i];
        if (t->key_len < 9 || !t->key)
            continue;
        if (t->key_len == 9 && memcmp(t->key, "span.kind", 9) == 0) {
            last = i;
            n_found++;
        }
        is_peer = is_peer || (t->key[0] == 'p' && memcmp(t->key, "peer.", 5) == 0);
    }
    *has_peer = is_peer;
    if (last == SIZE_MAX)
        return NULL;
    const char *value = tw__tag_str(&s->tags[last]);
    if (!value)
        return NULL;
    /* strcasecmp, as tw__span_kind_of: only with the names of the first letter. */
    const struct kind_text *kind = NULL;
    switch (value[0] | 0x20) {
    case 'c':
        kind = strcasecmp(value, "client") == 0     ? &kinds[0]
               : strcasecmp(value, "consumer") == 0 ? &kinds[3]
                                                    : NULL;
        break;
    case 's':
        kind = strcasecmp(value, "server") == 0 ? &kinds[1] : NULL;
        break;
    case 'p':
        kind = strcasecmp(value, "producer") == 0 ? &kinds[2] : NULL;
        break;
    default: /* "internal" and any other value: no Zipkin kind */
        break;
    }
    if (!kind)
        return NULL;
    if (n_found == 1) {
        is_mapped[last] = true;
    } else {
        for (size_t i = 0; i <= last; i++)
            is_mapped[i] = is_mapped[i] || tw__tag_key_is(&s->tags[i], "span.kind");
    }
    return kind;
}

/* ---- the tags object -------------------------------------------------------------------- */

typedef enum { TAGS_WRITTEN, TAGS_GENERAL, TAGS_FAILED } tags_path;

/* The process tags that went to localEndpoint (SIZE_MAX: none) are left out of the tags. */
#define N_LOCAL 3

static bool is_local_used(const size_t *local_used, size_t i)
{
    return i == local_used[0] || i == local_used[1] || i == local_used[2];
}

/* Whether @key is bytes 0x01..0x7f only: valid UTF-8 without a NUL, so the
 * key Jansson keeps is the key itself. Eight bytes at a time: a byte with
 * its high bit set, or a zero byte (which borrows from 0x01 and sets it),
 * shows in the high bits of (w | (w - 0x01..01)). */
static bool is_plain_key(const char *key, size_t len)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, key + i, 8);
        if ((w | (w - ones)) & highs)
            return false;
    }
    for (; i < len; i++) {
        if ((unsigned char)key[i] - 1u >= 0x7fu)
            return false;
    }
    return true;
}

/* Whether no two of @tags share a raw key (tw__last_by_key's notion): then
 * each is its own winner. Those from @n_head on are known to differ from
 * each other (a span's winners): only the first @n_head are compared with
 * all the others. key_sign rules most pairs out without a compare. */
static bool keys_are_distinct(const tw__tag *const *tags, size_t n_head, size_t n)
{
    uint64_t seen = 0;
    for (size_t i = 0; i < n_head; i++) {
        uint64_t sign = key_sign(tags[i]->key, tags[i]->key_len);
        for (size_t j = 0; (seen & sign) && j < i; j++) {
            if (tags[j]->key_len == tags[i]->key_len &&
                memcmp(tags[j]->key, tags[i]->key, tags[i]->key_len) == 0)
                return false;
        }
        seen |= sign;
    }
    for (size_t i = n_head; i < n; i++) {
        uint64_t sign = key_sign(tags[i]->key, tags[i]->key_len);
        for (size_t j = 0; (seen & sign) && j < n_head; j++) {
            if (tags[j]->key_len == tags[i]->key_len &&
                memcmp(tags[j]->key, tags[i]->key, tags[i]->key_len) == 0)
                return false;
        }
    }
    return true;
}

/* The winners of the span's tags (tw__last_by_key): all of them when no key
 * repeats, the common case, found without its quadratic scan or table. */
static bool find_winners(const tw__span_data *s, bool *is_winner)
{
    const tw__tag *tags[64];
    if (s->n_tags > 64)
        return tw__last_by_key(s->tags, s->n_tags, is_winner);
    for (size_t i = 0; i < s->n_tags; i++)
        tags[i] = &s->tags[i];
    if (!keys_are_distinct(tags, s->n_tags, s->n_tags))
        return tw__last_by_key(s->tags, s->n_tags, is_winner);
    memset(is_winner, 1, s->n_tags * sizeof *is_winner);
    return true;
}

/* The members of the tags object, in order, one per key. */
static tags_path put_members(tw__buf *out, const member *m, size_t n, tw__buf *text)
{
    size_t written = 0;
    for (size_t i = 0; i < n; i++) {
        if (m[i].is_deleted)
            continue;
        bool is_first = written++ == 0;
        bool ok = put(out, is_first ? ",\"tags\":{" : ",", is_first ? 9 : 1) &&
                  tw__json_append_text(out, m[i].key, m[i].key_len) && PUT_LIT(out, ":");
        if (ok) {
            if (m[i].mode == VALUE_TRUE)
                ok = PUT_LIT(out, "\"true\"");
            else if (m[i].mode == VALUE_MESSAGE)
                ok = tw__json_append_text(out, m[i].tag->v.str, m[i].tag->len);
            else
                ok = put_value(out, m[i].tag, text);
        }
        if (!ok)
            return TAGS_FAILED;
    }
    return written && !PUT_LIT(out, "}") ? TAGS_FAILED : TAGS_WRITTEN;
}

/* The text length write_value needs room for (tw__json_room): a string's,
 * else 40, more than any number's text. */
static inline size_t value_room(const tw__tag *t)
{
    return t->type == TW_VALUE_STRING ? t->len : 40;
}

/* Writes what put_value appends at @o, which has room for value_room(@t);
 * returns its end, or NULL for a binary value (its text needs the scratch
 * buffer: put_value writes it). */
static __attribute__((noinline)) uint8_t *write_double(uint8_t *o, double value)
{
    char num[40];
    size_t n = tw__double_text(value, num, sizeof num);
    return write_text(o, num, n);
}

static inline __attribute__((always_inline)) uint8_t *write_value(uint8_t *o, const tw__tag *t)
{
    switch (t->type) {
    case TW_VALUE_STRING:
        return write_text(o, t->v.str, t->len);
    case TW_VALUE_INT64: /* decimal digits need no escaping */
        *o++ = '"';
        o = tw__json_write_int(o, t->v.i64);
        *o++ = '"';
        return o;
    case TW_VALUE_BOOL:
        if (t->v.boolean) {
            memcpy(o, "\"true\"", 6);
            return o + 6;
        }
        memcpy(o, "\"false\"", 7);
        return o + 7;
    case TW_VALUE_DOUBLE: /* (out of line: rare, and its text's buffer) */
        return write_double(o, t->v.dbl);
    case TW_VALUE_BINARY:
        break;
    }
    return NULL;
}

/* One bit of 256 for a key, from its length and its first, middle and last
 * bytes: put_tags_plain's filter of the keys it has seen, in which most
 * keys of a span find their bit clear and need no comparison. */
static inline unsigned key_bit(const char *key, size_t len)
{
    uint32_t x = (uint32_t)len;
    if (len)
        x ^= (uint32_t)(unsigned char)key[0] << 8 | (uint32_t)(unsigned char)key[len >> 1] << 16 |
             (uint32_t)(unsigned char)key[len - 1] << 24;
    return (x * 0x9e3779b1u) >> 24;
}

/* The tags object when none of tag_map's rules applies (most spans): every
 * key plain (is_plain_key), no two alike, and no span `error` tag. Then the
 * object is the process's tags and the span's winners in order, as they are.
 * Written in one pass that checks those conditions as it goes: on the first
 * that fails, what it wrote is taken back and it returns TAGS_GENERAL. The
 * keys compared are those of the members and of every span winner (the
 * mapped ones too), which lets encode() assume distinct span keys and check
 * them here (a process tag with the key of a mapped span tag then takes
 * the general way, which writes the same object). The suite
 * test_zipkin_text compares both ways with the reference encoder. */
/* The keys put_tags_plain has seen: a filter of 256 bits (key_bit), and
 * the tags themselves for the exact comparison when a key's bit is set. */
typedef struct {
    uint64_t bloom[4];
    size_t n;
    const tw__tag *tags[64];
} key_set;

/* Adds @t's key to @ks; false when an equal key is there already or @ks is full. */
static inline __attribute__((always_inline)) bool key_set_add(key_set *ks, const tw__tag *t)
{
    size_t len = t->key_len;
    unsigned bit = key_bit(t->key, len);
    uint64_t *word = &ks->bloom[bit >> 6], flag = (uint64_t)1 << (bit & 63);
    if (*word & flag) {
        for (size_t j = 0; j < ks->n; j++) {
            if (ks->tags[j]->key_len == len && memcmp(ks->tags[j]->key, t->key, len) == 0)
                return false;
        }
    }
    if (ks->n == sizeof ks->tags / sizeof ks->tags[0])
        return false;
    *word |= flag;
    ks->tags[ks->n++] = t;
    return true;
}

/* Writes ,"key":value (the first time ,"tags":{"key":value) at *@o, where
 * put_tags_plain writes; grows @out when needed. TAGS_GENERAL for a key
 * the plain way cannot write (a NUL or a byte above 0x7f). */
static inline __attribute__((always_inline)) tags_path
put_member(tw__buf *out, uint8_t **at, const tw__tag *t, bool *is_first, tw__buf *text)
{
    uint8_t *o = *at;
    size_t key_len = t->key_len, value_len = value_room(t);
    /* As tw__json_room: the worst case of both texts, the punctuation. */
    if (key_len > SIZE_MAX / 16 || value_len > SIZE_MAX / 16)
        return TAGS_FAILED;
    size_t need = (key_len + value_len) * 6 + 16;
    if ((size_t)(out->data + out->cap - o) < need) {
        out->len = (size_t)(o - out->data);
        if (!tw__buf_grow(out, need))
            return TAGS_FAILED;
        o = out->data + out->len;
    }
    if (*is_first) {
        memcpy(o, ",\"tags\":{", 9);
        o += 9;
        *is_first = false;
    } else {
        *o++ = ',';
    }
    *o = '"';
    if (tw__json_run_copy((const unsigned char *)t->key, key_len, o + 1) < key_len) {
        /* Bytes to escape: fine in 0x01-0x7f (Jansson keeps such a key as it is). */
        if (!is_plain_key(t->key, key_len))
            return TAGS_GENERAL;
        o = tw__json_write_text(o, t->key, key_len);
    } else {
        o[key_len + 1] = '"';
        o += key_len + 2;
    }
    *o++ = ':';
    uint8_t *end = write_value(o, t);
    if (!end) {
        out->len = (size_t)(o - out->data);
        if (!put_value(out, t, text))
            return TAGS_FAILED;
        end = out->data + out->len;
    }
    *at = end;
    return TAGS_WRITTEN;
}

static inline __attribute__((always_inline)) tags_path
put_tags_plain(tw__buf *out, const tw__span_data *s, const tw__process *p, proc_entry *pe,
               const size_t *local_used, const bool *is_winner, const bool *is_mapped,
               tw__buf *text)
{
    key_set keys;
    size_t start = out->len;
    uint8_t *o;
    bool is_first = true, is_process_done = true;
    tags_path path = TAGS_WRITTEN;
    if (pe && pe->is_ready) {
        /* The process's members and keys as its first span left them. */
        if (!pe->has_plain_tags)
            return TAGS_GENERAL;
        size_t head = pe->fp_len + pe->ep_len, len = pe->mem.len - head;
        if (len && !put(out, (const char *)pe->mem.data + head, len))
            return TAGS_FAILED;
        memcpy(keys.bloom, pe->bloom, sizeof keys.bloom);
        keys.n = pe->n_keys;
        for (size_t j = 0; j < keys.n; j++)
            keys.tags[j] = &p->tags[pe->key_index[j]];
        o = out->data + out->len;
        is_first = len == 0;
    } else {
        memset(keys.bloom, 0, sizeof keys.bloom);
        keys.n = 0;
        o = out->data + start;
        is_process_done = false;
        for (size_t i = 0; p && i < p->n_tags; i++) {
            const tw__tag *t = &p->tags[i];
            if (is_local_used(local_used, i))
                continue;
            if (!key_set_add(&keys, t)) {
                path = TAGS_GENERAL;
                goto done;
            }
            if ((path = put_member(out, &o, t, &is_first, text)) != TAGS_WRITTEN)
                goto done;
        }
        is_process_done = true;
        if (pe && pe->p) {
            /* What every later span of the process reuses. */
            size_t len = (size_t)(o - out->data) - start;
            pe->mem.len = pe->fp_len + pe->ep_len;
            if (proc_record(pe, out->data + start, len)) {
                memcpy(pe->bloom, keys.bloom, sizeof keys.bloom);
                pe->n_keys = keys.n;
                for (size_t j = 0; j < keys.n; j++)
                    pe->key_index[j] = (uint8_t)(keys.tags[j] - p->tags);
                pe->has_plain_tags = true;
                pe->is_ready = true;
            } else {
                pe->p = NULL;
            }
        }
    }
    for (size_t i = 0; i < s->n_tags; i++) {
        const tw__tag *t = &s->tags[i];
        if (!is_winner[i])
            continue;
        if (!key_set_add(&keys, t)) {
            path = TAGS_GENERAL;
            goto done;
        }
        if (is_mapped[i])
            continue;
        if (t->key_len == 5 && memcmp(t->key, "error", 5) == 0) {
            path = TAGS_GENERAL;
            goto done;
        }
        if ((path = put_member(out, &o, t, &is_first, text)) != TAGS_WRITTEN)
            goto done;
    }
    out->len = (size_t)(o - out->data);
    return !is_first && !PUT_LIT(out, "}") ? TAGS_FAILED : TAGS_WRITTEN;
done:
    if (path == TAGS_GENERAL && !is_process_done && pe && pe->p) {
        /* A process tag the plain way cannot write (a key not plain or
         * repeated, more than key_set holds): @p's alone, so every span of
         * the process takes the general way. */
        pe->mem.len = pe->fp_len + pe->ep_len;
        pe->has_plain_tags = false;
        pe->is_ready = true;
    }
    if (path == TAGS_GENERAL)
        out->len = start;
    return path;
}

/* The tags object by tag_map's rules (the reference's tags): repeated keys,
 * keys Jansson repairs or cuts, the error rule. */
static tags_path put_tags_general(tw__buf *out, const tw__span_data *s, const tw__process *p,
                                  const size_t *local_used, const bool *is_winner,
                                  const bool *is_mapped, tag_map *tags, tw__buf *text)
{
    bool uses_description = false;
    for (size_t i = 0; p && i < p->n_tags; i++) {
        const tw__tag *t = &p->tags[i];
        if (is_local_used(local_used, i))
            continue;
        map_set(tags, t->key, t->key_len, t, VALUE_TAG);
    }
    for (size_t i = 0; i < s->n_tags; i++) {
        const tw__tag *t = &s->tags[i];
        if (!is_winner[i] || is_mapped[i])
            continue;
        if (!tw__tag_key_is(t, "error")) {
            map_set(tags, t->key, t->key_len, t, VALUE_TAG);
            continue;
        }
        int truth = tw__error_truth(t);
        if (truth < 0) {
            map_del(tags, "error");
            continue;
        }
        const tw__tag *message = truth > 0 ? tw__error_message(s) : NULL;
        if (truth > 0 && !message) {
            const tw__tag *d = tw__span_data_find_tag(s, "otel.status_description");
            if (d && d->type == TW_VALUE_STRING) {
                message = d;
                uses_description = true;
            }
        }
        if (message)
            map_set(tags, t->key, t->key_len, message, VALUE_MESSAGE);
        else if (truth > 0)
            map_set(tags, t->key, t->key_len, NULL, VALUE_TRUE);
        else
            map_set(tags, t->key, t->key_len, t, VALUE_TAG);
    }
    if (uses_description)
        map_del(tags, "otel.status_description");
    return tags->failed ? TAGS_FAILED : put_members(out, tags->m, tags->n, text);
}

typedef enum { SPAN_WRITTEN, SPAN_FAILED, SPAN_AGAIN } span_path;

/* The span; @text is scratch, @winners and @is_mapped hold n_tags flags
 * (is_mapped zeroed), @tags an empty map. With @is_hopeful (at most 64
 * tags), the span's keys are taken to be distinct (every tag its key's
 * winner: nearly every span), which put_tags_plain checks at the end
 * without the cost of find_winners up front; SPAN_AGAIN when that or any
 * other condition of the plain tags fails (the caller then takes back what
 * was written and encodes the span again without @is_hopeful, the general
 * way). */
static inline __attribute__((always_inline)) span_path
encode(const tw__span_data *s, const tw__process *p, proc_entry *pe, tw__buf *out, tw__buf *text,
       bool *winners, bool *is_mapped, tag_map *tags_map, bool is_hopeful)
{
    /* Every tag its key's winner (is_hopeful: at most 64 tags). */
#define TW_8_TRUE true, true, true, true, true, true, true, true
    static const bool all_winners[64] = {TW_8_TRUE, TW_8_TRUE, TW_8_TRUE, TW_8_TRUE,
                                         TW_8_TRUE, TW_8_TRUE, TW_8_TRUE, TW_8_TRUE};
#undef TW_8_TRUE
    const bool *is_winner = is_hopeful ? all_winners : winners;
    /* Room for a typical span, so that put() rarely has to grow. */
    if (out->cap - out->len < 2048 &&
        !tw__buf_reserve(out, out->len + (out->cap > 2048 ? out->cap : 2048)))
        return SPAN_FAILED;
    if (!is_hopeful && !find_winners(s, winners))
        return SPAN_FAILED;

    /* From traceId to kind: at most 124 bytes, within the room reserved
     * above, written with plain stores. */
    uint8_t *o = out->data + out->len;
    memcpy(o, "{\"traceId\":\"", 12);
    o += 12;
    if (s->trace_id_high) {
        tw__json_hex64(o, s->trace_id_high);
        o += 16;
    }
    tw__json_hex64(o, s->trace_id_low);
    o += 16;
    if (s->parent_id && s->parent_id != s->span_id) {
        memcpy(o, "\",\"parentId\":\"", 14);
        tw__json_hex64(o + 14, s->parent_id);
        o += 30;
    }
    memcpy(o, "\",\"id\":\"", 8);
    tw__json_hex64(o + 8, s->span_id);
    o += 24;
    *o++ = '"';

    bool has_peer;
    const struct kind_text *kind = kind_of(s, is_mapped, &has_peer);
    if (kind) {
        memcpy(o, ",\"kind\":\"", 9);
        memcpy(o + 9, kind->text, 8); /* (padded to 8 bytes: the length below counts) */
        o += 9 + kind->len;
        *o++ = '"';
    }
    out->len = (size_t)(o - out->data);
    /* The name up to its first NUL (operation_len, else measured). */
    const char *op = s->operation;
    if (op && *op) {
        size_t op_len = s->operation_len < UINT32_MAX ? s->operation_len : strlen(op);
        if (!tw__json_room(out, op_len, 8))
            return SPAN_FAILED;
        o = out->data + out->len;
        memcpy(o, ",\"name\":", 8);
        o = write_text(o + 8, op, op_len);
        out->len = (size_t)(o - out->data);
    }
    /* timestamp and duration: at most 2 * (13 + 32) bytes with
     * tw__json_write_int's room. */
    if (out->cap - out->len < 96 && !tw__buf_grow(out, 96))
        return SPAN_FAILED;
    o = out->data + out->len;
    int64_t duration = -1; /* none */
    if (s->start_us > 0) {
        memcpy(o, ",\"timestamp\":", 13);
        o = tw__json_write_int(o + 13, s->start_us);
        if (!s->is_duration_unknown)
            duration = s->duration_us > 0 ? s->duration_us : 1;
    } else if (s->duration_us > 0 && !s->is_duration_unknown) {
        duration = s->duration_us;
    }
    if (duration >= 0) {
        memcpy(o, ",\"duration\":", 12);
        o = tw__json_write_int(o + 12, duration);
    }
    out->len = (size_t)(o - out->data);
    if ((s->flags & TW__FLAG_DEBUG) && !PUT_LIT(out, ",\"debug\":true"))
        return SPAN_FAILED;
    /* Zipkin's model clears `shared` on a CLIENT span only. */
    if (s->shared && !(kind && kind->kind == TW__KIND_CLIENT) && !PUT_LIT(out, ",\"shared\":true"))
        return SPAN_FAILED;

    /* localEndpoint (the reference encoder's local_endpoint, tests/unit/wire/oracle_zipkin_v2.c).
     */
    enum { LOCAL_IP, LOCAL_IPV6, LOCAL_PORT };
    size_t local_used[N_LOCAL] = {SIZE_MAX, SIZE_MAX, SIZE_MAX};
    if (pe && pe->is_ready) {
        /* The process's endpoint as rendered for its first span. */
        const uint8_t *ep = pe->mem.data + pe->fp_len;
        if (pe->ep_len && !put(out, (const char *)ep, pe->ep_len))
            return SPAN_FAILED;
        memcpy(local_used, pe->local_used, sizeof local_used);
    } else if (p) {
        size_t ep_start = out->len;
        endpoint local;
        local.n = 0; /* (not an initializer: zeroing four address buffers cost more) */
        if (p->service_name && *p->service_name)
            ep_text(&local, EP_SERVICE_NAME, p->service_name, strlen(p->service_name));
        /* The last tag of each key, found in one pass, by length first:
         * most keys are neither 2 nor 4 bytes long. */
        size_t last[N_LOCAL] = {SIZE_MAX, SIZE_MAX, SIZE_MAX};
        for (size_t i = 0; i < p->n_tags; i++) {
            const tw__tag *t = &p->tags[i];
            if (!t->key)
                continue;
            if (t->key_len == 2 && memcmp(t->key, "ip", 2) == 0)
                last[LOCAL_IP] = i;
            else if (t->key_len == 4 && memcmp(t->key, "ipv6", 4) == 0)
                last[LOCAL_IPV6] = i;
            else if (t->key_len == 4 && memcmp(t->key, "port", 4) == 0)
                last[LOCAL_PORT] = i;
        }
        for (int k = 0; k < N_LOCAL; k++) {
            if (last[k] == SIZE_MAX)
                continue;
            const tw__tag *t = &p->tags[last[k]];
            if (k == LOCAL_PORT ? ep_port(&local, t) : ep_address(&local, t))
                local_used[k] = last[k];
        }
        if (local.n && !put_endpoint(out, ",\"localEndpoint\":", 17, &local))
            return SPAN_FAILED;
        if (pe) {
            /* (A failed recording leaves the entry unready: rendered next time.) */
            pe->mem.len = pe->fp_len;
            memcpy(pe->local_used, local_used, sizeof local_used);
            pe->ep_len = out->len - ep_start;
            if (!proc_record(pe, out->data + ep_start, pe->ep_len))
                pe->p = NULL;
        }
    }

    /* remoteEndpoint (the reference's remote_endpoint). */
    endpoint remote;
    remote.n = 0;
    for (size_t i = 0; has_peer && i < s->n_tags; i++) {
        const tw__tag *t = &s->tags[i];
        if (!is_winner[i] || t->key_len < 5 || memcmp(t->key, "peer.", 5) != 0)
            continue;
        bool is_used = false;
        if (tw__tag_key_is(t, "peer.service")) {
            is_used = t->type == TW_VALUE_STRING && t->len > 0;
            if (is_used)
                ep_text(&remote, EP_SERVICE_NAME, t->v.str, t->len);
        } else if (tw__tag_key_is(t, "peer.ipv4")) {
            /* IPv4 only: ep_address would take IPv6 text too. */
            is_used = t->type == TW_VALUE_INT64    ? ep_address(&remote, t)
                      : t->type == TW_VALUE_STRING ? ep_ipv4_text(&remote, t)
                                                   : false;
        } else if (tw__tag_key_is(t, "peer.ipv6")) {
            struct in6_addr v6;
            is_used = ((t->type == TW_VALUE_BINARY && t->len == 16) ||
                       (t->type == TW_VALUE_STRING && inet_pton(AF_INET6, t->v.str, &v6) == 1)) &&
                      ep_address(&remote, t);
        } else if (tw__tag_key_is(t, "peer.port")) {
            is_used = ep_port(&remote, t);
        }
        is_mapped[i] = is_used;
    }
    if (remote.n && !put_endpoint(out, ",\"remoteEndpoint\":", 18, &remote))
        return SPAN_FAILED;

    /* annotations (the reference's add_annotations). */
    bool has_annotations = false;
    for (size_t i = 0; i < s->n_logs; i++) {
        const tw__log *log = &s->logs[i];
        /* The common log, a lone string `event` field, is its own text:
         * no copy into the scratch buffer. */
        const char *value;
        size_t value_len;
        if (log->n_fields == 1 && log->fields[0].type == TW_VALUE_STRING &&
            tw__tag_key_is(&log->fields[0], "event")) {
            value = log->fields[0].v.str;
            value_len = log->fields[0].len;
        } else {
            if (!annotation_text(log, text))
                return SPAN_FAILED;
            value = (const char *)text->data;
            value_len = text->len;
        }
        if (value_len == 0)
            continue;
        /* In one reserved write: 29 + 32 + 9 bytes and the value, its "}" in the extra. */
        if (!tw__json_room(out, value_len, 72))
            return SPAN_FAILED;
        uint8_t *w = out->data + out->len;
        if (has_annotations) {
            memcpy(w, ",{\"timestamp\":", 14);
            w += 14;
        } else {
            memcpy(w, ",\"annotations\":[{\"timestamp\":", 29);
            w += 29;
        }
        w = tw__json_write_int(w, log->timestamp_us);
        memcpy(w, ",\"value\":", 9);
        w = write_text(w + 9, value, value_len);
        *w++ = '}';
        out->len = (size_t)(w - out->data);
        has_annotations = true;
    }
    if (has_annotations && !PUT_LIT(out, "]"))
        return SPAN_FAILED;

    /* tags: the process's, then the span's winners, the error rule applied. */
    tags_path path = put_tags_plain(out, s, p, pe, local_used, is_winner, is_mapped, text);
    if (path == TAGS_GENERAL && is_hopeful)
        return SPAN_AGAIN;
    if (path == TAGS_GENERAL)
        path = put_tags_general(out, s, p, local_used, is_winner, is_mapped, tags_map, text);
    return path == TAGS_WRITTEN && PUT_LIT(out, "}") ? SPAN_WRITTEN : SPAN_FAILED;
}

/* encode() twice over: without a cache (the SDK's reporter: its cache
 * branches compiled out, which keeps it at its old cost) and with one
 * (`convert`). */
static __attribute__((noinline)) span_path
encode_uncached(const tw__span_data *s, const tw__process *p, tw__buf *out, tw__buf *text,
                bool *winners, bool *is_mapped, tag_map *tags_map, bool is_hopeful)
{
    return encode(s, p, NULL, out, text, winners, is_mapped, tags_map, is_hopeful);
}

static __attribute__((noinline)) span_path
encode_cached(const tw__span_data *s, const tw__process *p, proc_entry *pe, tw__buf *out,
              tw__buf *text, bool *winners, bool *is_mapped, tag_map *tags_map, bool is_hopeful)
{
    return encode(s, p, pe, out, text, winners, is_mapped, tags_map, is_hopeful);
}

static inline span_path encode_with(const tw__span_data *s, const tw__process *p, proc_entry *pe,
                                    tw__buf *out, tw__buf *text, bool *winners, bool *is_mapped,
                                    tag_map *tags_map, bool is_hopeful)
{
    return pe ? encode_cached(s, p, pe, out, text, winners, is_mapped, tags_map, is_hopeful)
              : encode_uncached(s, p, out, text, winners, is_mapped, tags_map, is_hopeful);
}

/* The one span, with @pe (NULL: no cache entry). */
static inline __attribute__((always_inline)) bool
encode_span(const tw__span_data *s, const tw__process *p, tw__buf *out, proc_entry *pe)
{
    size_t before = out->len;
    bool small[2][64];
    bool *is_winner = small[0], *is_mapped = small[1];
    if (s->n_tags > 64) {
        is_winner = malloc(s->n_tags * sizeof(bool));
        is_mapped = malloc(s->n_tags * sizeof(bool));
    }
    tw__buf text;
    tw__buf_init(&text);
    tag_map tags;
    map_init(&tags);
    bool ok = is_winner && is_mapped;
    if (ok) {
        memset(is_mapped, 0, s->n_tags * sizeof(bool));
        /* More than 64 tags never take the plain way (put_tags_plain's key_set). */
        span_path path = s->n_tags <= 64
                             ? encode_with(s, p, pe, out, &text, is_winner, is_mapped, &tags, true)
                             : SPAN_AGAIN;
        if (path == SPAN_AGAIN) {
            out->len = before;
            memset(is_mapped, 0, s->n_tags * sizeof(bool));
            path = encode_with(s, p, pe, out, &text, is_winner, is_mapped, &tags, false);
        }
        ok = path == SPAN_WRITTEN;
    }
    map_free(&tags);
    if (text.data) /* (most spans never use it) */
        tw__buf_free(&text);
    if (is_winner != small[0]) {
        free(is_winner);
        free(is_mapped);
    }
    if (!ok)
        out->len = before;
    return ok;
}

bool tw__zipkin_encode_span(const tw__span_data *s, const tw__process *p, tw__buf *out)
{
    return s && out && encode_span(s, p, out, NULL);
}

bool tw__zipkin_encode_span_cached(const tw__span_data *s, const tw__process *p, tw__buf *out,
                                   tw__zipkin_process_cache *cache)
{
    return s && out && encode_span(s, p, out, proc_lookup(cache, p));
}

bool tw__zipkin_encode_spans(tw__span_data *const *spans, size_t n, const tw__process *process,
                             tw__buf *out)
{
    if (!out || (n && !spans))
        return false;
    size_t old_len = out->len;
    bool ok = tw__buf_put_byte(out, '[');
    for (size_t i = 0; ok && i < n; i++)
        ok = (i == 0 || tw__buf_put_byte(out, ',')) &&
             tw__zipkin_encode_span(spans[i], process, out);
    ok = ok && tw__buf_put_byte(out, ']');
    if (!ok)
        out->len = old_len;
    return ok;
}
