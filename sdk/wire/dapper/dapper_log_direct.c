/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/dapper/dapper_log_direct.c: the direct decoder of Dapper log lines,
 * the first one tw__dapper_log_decode() tries. It reads the line shape the
 * SDK's encoder writes (dapper_log.c: compact, the members in the
 * encoder's order, tags as {"key","type","value"}) straight from the
 * input with wire/core/json_direct.h: each `"key":` is one literal
 * compare, ids and integers are parsed in place, and each string is
 * copied once, into the record's arena. The token scanner of the fast
 * decoder (dapper_log_fast.c) cost about 125 instructions per token and
 * copied every string twice.
 *
 * Contract (dapper_log_int.h): it accepts only lines it reads exactly as
 * the fast decoder and the Jansson decoder do, and then builds the record
 * with the same model builders called in the same order with the same
 * values (so records are equal field by field, arena layout included). On
 * any deviation (an unknown, missing or reordered key, whitespace, a
 * number or escape json_direct.h does not take, more log fields or
 * annotations than it keeps on the stack, an empty tag key) it declines
 * with nothing set and nothing leaked, and the line goes to the fast
 * decoder. tests/unit/wire/test_dapper_fast.c and
 * tests/fuzz/fuzz_dapper_fast.c check that all three decoders agree.
 *
 * The process memo (tw__dapper_memo, the reader's): every line of a log
 * repeats its whole process object, and decoding it (service, host, ip and
 * a handful of tags, each copied into the process's arena) cost about
 * 1,500 instructions a span. The memo keeps the text of the last processes
 * decoded (from "process": to the line's end, so a hit also proves the line
 * ends as it did) with the process decoded from it; a line whose text there
 * is byte for byte one of them takes that process instead of decoding it
 * again. Sound because what this decoder makes of those bytes depends on
 * them alone (no warning, no truncation, no state), and every entry was
 * made by this decoder from exactly its bytes. Each entry carries a stamp
 * no other content ever carries (a global counter), so a consumer can know
 * a process it saw before without comparing it (bridge/procs.c).
 *
 * Memory: bounded stack state (escaped strings unescape into a 4 KiB stack
 * buffer; a line that needs more is declined); the memo holds at most
 * MEMO_SETS * MEMO_WAYS texts of up to MEMO_MAX_BYTES with their processes.
 * Locking: none (stamps come from tw__wire_new_stamp: readers on several threads).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h> /* strcasecmp */

#include "wire/dapper/dapper_log.h"
#include "wire/dapper/dapper_log_int.h"
#include "wire/core/base64.h"
#include "wire/core/input.h"
#include "wire/core/json_direct.h"

/* Per log and per record: more are declined (the fast decoder reads them). */
#define MAX_FIELDS 32
#define MAX_ANNOTATIONS 8
#define SCRATCH_BYTES 4096

/* The process memo: 2-way sets, picked by a hash of the text's ends. 64
 * entries hold the processes of a log written by a few dozen hosts (the
 * lines of one trace interleave them); a text longer than MEMO_MAX_BYTES
 * is decoded every time. */
#define MEMO_SETS 32 /* a power of two */
#define MEMO_WAYS 2
#define MEMO_MAX_BYTES 1024

typedef struct memo_entry {
    size_t len; /* 0: unused */
    uint64_t hash;
    uint64_t stamp;
    tw__process *process; /* owned; never changed while the entry holds it */
    char text[MEMO_MAX_BYTES];
} memo_entry;

struct tw__dapper_memo {
    memo_entry sets[MEMO_SETS][MEMO_WAYS];
    unsigned char older[MEMO_SETS]; /* the way a miss replaces */
    tw__process *spare;             /* owned: a miss decodes into it */
};

typedef struct {
    tw__jd c;
    tw__jd_scratch sc;
    tw__span_data *span;
    tw__process *process;
    tw__dapper_memo *memo;  /* NULL: no memo */
    const tw__process *got; /* with a memo: the process the line gave */
    uint64_t stamp;         /* its stamp, 0 when it is the spare */
    size_t kind_tag;        /* the last span tag keyed "span.kind"; SIZE_MAX: none */
} reader;

#define LIT(r, lit) TW__JD_LIT(&(r)->c, lit)

static inline __attribute__((always_inline)) bool string(reader *r, const char **s, size_t *len)
{
    return tw__jd_string(&r->c, &r->sc, s, len);
}

/* true or false. */
static bool boolean(reader *r, bool *out)
{
    if (LIT(r, "true")) {
        *out = true;
        return true;
    }
    *out = false;
    return LIT(r, "false");
}

/* A tag or log field, its strings in the line (or the scratch buffer). */
typedef struct {
    const char *key;
    size_t key_len;
    tw_value value;
    uint8_t *bin; /* a binary value's bytes: the caller frees them */
} decoded_tag;

/* {"key":K,"type":T,"value":V} in the encoder's order (dapper_log.c
 * decode_tag's rules), from just after its `{"key":"` to just before its
 * `}`: the lists read `},{"key":"` between two tags and `}]` after the
 * last as one literal each (TAG_FIRST, TAG_NEXT, TAG_END), a compare
 * where three took one each. An empty key is declined, as the fast decoder
 * does. */
#define TAG_FIRST "{\"key\":\""
#define TAG_NEXT "},{\"key\":\""
#define TAG_END "}]"
/* Inlined in its three lists: a call per tag cost about 20 instructions. */
static inline __attribute__((always_inline)) bool tag(reader *r, decoded_tag *t)
{
    t->bin = NULL;
    if (!string(r, &t->key, &t->key_len) || !t->key_len)
        return false;
    tw_value *v = &t->value;
    memset(v, 0, sizeof(*v));
    const char *s;
    size_t len;
    /* One compare per tag: the type's first byte (after `,"type":"`, 9
     * bytes) picks the literal of both. */
    switch (r->c.e - r->c.p > 9 ? r->c.p[9] : 0) {
    case 's':
        if (!LIT(r, ",\"type\":\"string\",\"value\":\"") || !string(r, &s, &len))
            return false;
        v->type = TW_VALUE_STRING;
        v->as.str = s;
        v->len = len;
        break;
    case 'i':
        if (!LIT(r, ",\"type\":\"int64\",\"value\":"))
            return false;
        v->type = TW_VALUE_INT64;
        if (tw__jd_byte(&r->c, '"')) {
            /* The closing quote (or the scratch NUL) ends the digits for
             * tw__dapper_int64_text's strspn and strtoll. */
            if (!string(r, &s, &len) || !tw__dapper_int64_text(s, len, &v->as.i64))
                return false;
        } else if (!tw__jd_int64(&r->c, &v->as.i64)) {
            return false;
        }
        break;
    case 'b':
        if (LIT(r, ",\"type\":\"bool\",\"value\":")) {
            v->type = TW_VALUE_BOOL;
            if (!boolean(r, &v->as.boolean))
                return false;
        } else {
            bool is_nomem = false;
            if (!LIT(r, ",\"type\":\"binary\",\"value\":\"") || !string(r, &s, &len) ||
                !tw__base64_decode(s, len, true, &t->bin, &v->len, &is_nomem))
                return false;
            v->type = TW_VALUE_BINARY;
            v->as.bin = t->bin;
        }
        break;
    case 'f':
        if (!LIT(r, ",\"type\":\"float64\",\"value\":"))
            return false;
        v->type = TW_VALUE_DOUBLE;
        if (tw__jd_byte(&r->c, '"')) {
            if (!string(r, &s, &len))
                return false;
            if (len == 3 && memcmp(s, "NaN", 3) == 0)
                tw__dapper_float64_text("NaN", &v->as.dbl);
            else if (len == 8 && memcmp(s, "Infinity", 8) == 0)
                tw__dapper_float64_text("Infinity", &v->as.dbl);
            else if (len == 9 && memcmp(s, "-Infinity", 9) == 0)
                tw__dapper_float64_text("-Infinity", &v->as.dbl);
            else
                return false;
        } else if (!tw__jd_number(&r->c, &v->as.dbl)) {
            return false;
        }
        break;
    default:
        return false;
    }
    return true;
}

static bool span_tags(reader *r)
{
    if (LIT(r, "]"))
        return true;
    if (!LIT(r, TAG_FIRST))
        return false;
    tw__span_data *s = r->span;
    do {
        /* The fast decoder's order: the slot, then the tag, then its copy. */
        tw__tag *slot = tw__span_data_push_tag(s);
        decoded_tag t; /* not zeroed: tag() sets what is read (16 stores a tag) */
        t.bin = NULL;
        bool was_truncated = false;
        bool ok =
            slot && tag(r, &t) &&
            tw__tag_set_n(&s->arena, slot, t.key, t.key_len, &t.value, SIZE_MAX, &was_truncated);
        if (t.bin) /* binary values only: free(NULL) is a call per tag */
            free(t.bin);
        if (!ok)
            return false;
        /* What tw__span_kind_of would look for later, known now. */
        if (t.key_len == 9 && tw__jd_same(t.key, "span.kind", 9))
            r->kind_tag = s->n_tags;
        s->n_tags++;
    } while (LIT(r, TAG_NEXT));
    return LIT(r, TAG_END);
}

static void free_bins(decoded_tag *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(t[i].bin);
}

/* One log: its fields are read first, since the fast decoder sizes the
 * log's field array (tw__span_data_push_log) before it copies them. */
static bool log_entry(reader *r)
{
    decoded_tag fields[MAX_FIELDS];
    size_t n = 0;
    int64_t ts;
    if (!LIT(r, "{\"ts_us\":") || !tw__jd_int64(&r->c, &ts) || !LIT(r, ",\"fields\":["))
        return false;
    bool ok = true;
    if (!LIT(r, "]")) {
        ok = LIT(r, TAG_FIRST);
        while (ok) {
            ok = n < MAX_FIELDS && tag(r, &fields[n]);
            if (n < MAX_FIELDS)
                n++; /* its bin (NULL or owned) is freed below */
            if (!ok || !LIT(r, TAG_NEXT))
                break;
        }
        ok = ok && LIT(r, TAG_END);
    }
    ok = ok && LIT(r, "}");
    tw__span_data *s = r->span;
    tw__log *log = ok ? tw__span_data_push_log(s, n) : NULL;
    ok = log != NULL;
    if (ok)
        log->timestamp_us = ts;
    for (size_t k = 0; ok && k < n; k++) {
        bool was_truncated = false;
        ok = tw__tag_set_n(&s->arena, &log->fields[k], fields[k].key, fields[k].key_len,
                           &fields[k].value, SIZE_MAX, &was_truncated);
        log->n_fields += ok;
    }
    free_bins(fields, n);
    if (ok)
        s->n_logs++;
    return ok;
}

static bool logs(reader *r)
{
    if (LIT(r, "]"))
        return true;
    do {
        if (!log_entry(r))
            return false;
    } while (LIT(r, ","));
    return LIT(r, "]");
}

typedef struct {
    int64_t ts;
    const char *value;
    size_t len;
} annotation;

typedef struct {
    annotation a[MAX_ANNOTATIONS];
    size_t n;
} annotations;

/* Read where they stand (before the tags) but applied after the logs, in
 * the fast decoder's order. */
static bool read_annotations(reader *r, annotations *out)
{
    if (LIT(r, "]"))
        return true;
    do {
        annotation *a = &out->a[out->n];
        if (out->n == MAX_ANNOTATIONS || !LIT(r, "{\"ts_us\":") || !tw__jd_int64(&r->c, &a->ts) ||
            !LIT(r, ",\"value\":\"") || !string(r, &a->value, &a->len) || !LIT(r, "}"))
            return false;
        out->n++;
    } while (LIT(r, ","));
    return LIT(r, "]");
}

/* What tw__dapper_kind_of_annotation computes on a C string: the kind
 * whose begin or end annotation (cs cr, sr ss, ms ws, wr mr: dapper_log.c's
 * tables) @s is. */
static tw__span_kind kind_of_annotation(const char *s, size_t len)
{
    if (len != 2)
        return TW__KIND_NONE;
    for (int k = TW__KIND_CLIENT; k <= TW__KIND_CONSUMER; k++) {
        const char *b = tw__dapper_kind_begin[k], *e = tw__dapper_kind_end[k];
        if ((s[0] == b[0] && s[1] == b[1]) || (s[0] == e[0] && s[1] == e[1]))
            return (tw__span_kind)k;
    }
    return TW__KIND_NONE;
}

/* What tw__dapper_kind_from_name computes on a C string. */
static tw__span_kind kind_from_name(const char *s, size_t len)
{
    /* tw__dapper_kind_names has two names of 6 bytes (client, server) and
     * two of 8 (producer, consumer): compares of a constant length. */
    int k = len == 6 ? TW__KIND_CLIENT : len == 8 ? TW__KIND_PRODUCER : TW__KIND_NONE;
    if (k == TW__KIND_NONE)
        return TW__KIND_NONE;
    for (int last = k + 1; k <= last; k++) {
        const char *name = tw__dapper_kind_names[k];
        if (len == 6 ? tw__jd_same(s, name, 6) : tw__jd_same(s, name, 8))
            return (tw__span_kind)k;
    }
    return TW__KIND_NONE;
}

/* tw__span_kind_of on the span's tags, the last span.kind tag known from
 * reading them (r->kind_tag): the same strcasecmp on its value (the
 * locale's), skipped for names of another length (strcasecmp maps byte to
 * byte, and the direct decoder's strings hold no NUL). */
static tw__span_kind kind_tagged(const reader *r)
{
    static const struct {
        const char *name;
        size_t len;
        tw__span_kind kind;
    } names[] = {{"client", 6, TW__KIND_CLIENT},
                 {"server", 6, TW__KIND_SERVER},
                 {"producer", 8, TW__KIND_PRODUCER},
                 {"consumer", 8, TW__KIND_CONSUMER},
                 {"internal", 8, TW__KIND_INTERNAL}};
    const tw__tag *t = &r->span->tags[r->kind_tag];
    if (t->type != TW_VALUE_STRING)
        return TW__KIND_NONE;
    /* The same bytes are equal under strcasecmp in any locale, and no other
     * name (all distinct lower-case ASCII words) is: the encoder's
     * lower-case value needs no strcasecmp. */
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        if (t->len == names[k].len && tw__jd_same(t->v.str, names[k].name, names[k].len))
            return names[k].kind;
    }
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        if (t->len == names[k].len && strcasecmp(t->v.str, names[k].name) == 0)
            return names[k].kind;
    }
    return TW__KIND_NONE;
}

/* tw__dapper_settle_kind, with the span.kind tag known (kind_tagged). */
static bool settle_kind(reader *r, tw__span_kind member, tw__span_kind from_annotations)
{
    tw__span_kind kind;
    if (!tw__dapper_merge_kind(member, from_annotations, &kind))
        return false;
    if (kind == TW__KIND_NONE)
        return true;
    if (r->kind_tag != SIZE_MAX)
        return kind_tagged(r) == kind;
    return tw__dapper_add_kind_tag(r->span, kind);
}

static bool apply_annotations(reader *r, const annotations *an, tw__span_kind *kind)
{
    *kind = TW__KIND_NONE;
    tw__span_data *s = r->span;
    for (size_t i = 0; i < an->n; i++) {
        const annotation *a = &an->a[i];
        tw__span_kind k = kind_of_annotation(a->value, a->len);
        if (k != TW__KIND_NONE) {
            if (*kind != TW__KIND_NONE && *kind != k)
                return false;
            *kind = k;
            continue;
        }
        tw__log *log = tw__span_data_push_log(s, 1);
        if (!log)
            return false;
        log->timestamp_us = a->ts;
        tw_value v = {.type = TW_VALUE_STRING, .as.str = a->value, .len = a->len};
        bool was_truncated = false;
        if (!tw__tag_set_n(&s->arena, &log->fields[0], "event", 5, &v, SIZE_MAX, &was_truncated))
            return false;
        log->n_fields = 1;
        s->n_logs++;
    }
    return true;
}

/* The kind member (@name NULL when absent) settled with the annotations
 * and the span.kind tag as the fast decoder does. */
static bool reconcile_kind(reader *r, const char *name, size_t name_len,
                           tw__span_kind from_annotations)
{
    tw__span_kind kind = TW__KIND_NONE;
    if (name) {
        kind = kind_from_name(name, name_len);
        if (kind == TW__KIND_NONE)
            return false;
    }
    return settle_kind(r, kind, from_annotations);
}

static bool refs(reader *r)
{
    if (LIT(r, "]"))
        return true;
    do {
        tw__ref_type type;
        if (LIT(r, "{\"type\":\"child_of\",\"trace_id\":\""))
            type = TW__REF_CHILD_OF;
        else if (LIT(r, "{\"type\":\"follows_from\",\"trace_id\":\""))
            type = TW__REF_FOLLOWS_FROM;
        else
            return false;
        uint64_t th, tl, sh, sl;
        if (!tw__jd_hex_id(&r->c, 32, &th, &tl) || !LIT(r, ",\"span_id\":\"") ||
            !tw__jd_hex_id(&r->c, 16, &sh, &sl) || !LIT(r, "}") ||
            !tw__span_data_add_ref(r->span, type, th, tl, sl))
            return false;
    } while (LIT(r, ","));
    return LIT(r, "]");
}

/* A process tag key as the C string tw__process_add_tag takes. */
#define MAX_PROCESS_KEY 128

static bool add_process_tag(reader *r, const decoded_tag *t)
{
    char key[MAX_PROCESS_KEY];
    if (t->key_len >= sizeof key)
        return false;
    memcpy(key, t->key, t->key_len);
    key[t->key_len] = '\0';
    return tw__process_add_tag(r->process, key, &t->value);
}

/* The hostname or ip tag from "host" or "ip", unless a tag has that key
 * (@is_tagged: tw__process_find_tag's answer, known from the keys read). */
static bool add_process_str_tag(reader *r, const char *key, bool is_tagged, const char *value,
                                size_t len)
{
    if (!value || is_tagged)
        return true;
    tw_value v = {.type = TW_VALUE_STRING, .as.str = value, .len = len};
    return tw__process_add_tag(r->process, key, &v);
}

static bool key_is(const decoded_tag *t, const char *key, size_t len)
{
    return t->key_len == len && memcmp(t->key, key, len) == 0;
}

/* {"service":S[,"host":H][,"ip":I][,"tags":[...]]} and the record's end. */
static bool decode_process(reader *r)
{
    const char *service, *host = NULL, *ip = NULL;
    size_t service_len, host_len = 0, ip_len = 0;
    if (!LIT(r, "{\"service\":\"") || !string(r, &service, &service_len) ||
        (LIT(r, ",\"host\":\"") && !string(r, &host, &host_len)) ||
        (LIT(r, ",\"ip\":\"") && !string(r, &ip, &ip_len)))
        return false;
    /* tw__process_set_service, without the strlen: the service has no NUL. */
    char *copy = tw__arena_strndup(&r->process->arena, service, service_len);
    if (!copy)
        return false;
    r->process->service_name = copy;
    bool has_hostname = false, has_ip = false;
    if (LIT(r, ",\"tags\":[") && !LIT(r, "]")) {
        if (!LIT(r, TAG_FIRST))
            return false;
        do {
            decoded_tag t;
            bool ok = tag(r, &t) && add_process_tag(r, &t);
            if (t.bin)
                free(t.bin);
            if (!ok)
                return false;
            has_hostname = has_hostname || key_is(&t, "hostname", 8);
            has_ip = has_ip || key_is(&t, "ip", 2);
        } while (LIT(r, TAG_NEXT));
        if (!LIT(r, TAG_END))
            return false;
    }
    return LIT(r, "}}") && r->c.p == r->c.e &&
           add_process_str_tag(r, "hostname", has_hostname, host, host_len) &&
           add_process_str_tag(r, "ip", has_ip, ip, ip_len);
}

/* Which entries the @n bytes at @p may be in: their length and their first
 * and last 64 bytes (a few words where hashing all of them cost as much as
 * the comparison that follows; texts alike there only share a set). */
static uint64_t memo_hash(const char *p, size_t n)
{
    uint64_t h = n * 0x9e3779b97f4a7c15ull;
    if (n < 8) {
        for (size_t i = 0; i < n; i++)
            h = (h ^ (unsigned char)p[i]) * 0x9e3779b97f4a7c15ull;
        return h;
    }
    size_t words = n / 8 < 8 ? n / 8 : 8;
    for (size_t i = 0; i < words; i++) {
        uint64_t a, b;
        memcpy(&a, p + 8 * i, 8);
        memcpy(&b, p + n - 8 - 8 * i, 8);
        h = (h ^ a) * 0x9e3779b97f4a7c15ull;
        h = (h ^ b ^ (h >> 31)) * 0xff51afd7ed558ccdull;
    }
    return h ^ (h >> 29);
}

static size_t memo_set(uint64_t hash)
{
    return (size_t)(hash >> 58) & (MEMO_SETS - 1);
}

/* The process member and the record's end: from the memo when its text is
 * one the memo holds, else decoded (into the memo's spare, remembered when
 * the text is short enough). */
static bool process(reader *r)
{
    if (!LIT(r, ",\"process\":"))
        return false;
    tw__dapper_memo *m = r->memo;
    if (!m)
        return decode_process(r);
    const char *text = r->c.p;
    size_t n = (size_t)(r->c.e - text);
    uint64_t hash = 0;
    memo_entry *set = NULL;
    /* Not an empty rest: it would match an unused entry (length and hash 0)
     * and hand out its process for a line cut after "process":. */
    if (n && n <= MEMO_MAX_BYTES) {
        hash = memo_hash(text, n);
        set = m->sets[memo_set(hash)];
        for (int w = 0; w < MEMO_WAYS; w++) {
            memo_entry *x = &set[w];
            if (x->len == n && x->hash == hash && memcmp(x->text, text, n) == 0) {
                m->older[memo_set(hash)] = (unsigned char)(1 - w);
                r->got = x->process;
                r->stamp = x->stamp;
                r->c.p = r->c.e;
                return true;
            }
        }
    }
    /* A miss: the spare may hold a process a previous call handed out. */
    tw__process_reset(m->spare);
    r->process = m->spare;
    if (!decode_process(r))
        return false;
    r->got = m->spare;
    r->stamp = 0;
    if (set) {
        int w = m->older[memo_set(hash)];
        memo_entry *x = &set[w];
        tw__process *old = x->process;
        x->process = m->spare;
        m->spare = old; /* reset when it is decoded into next */
        x->len = n;
        x->hash = hash;
        memcpy(x->text, text, n);
        x->stamp = tw__wire_new_stamp();
        m->older[memo_set(hash)] = (unsigned char)(1 - w);
        r->stamp = x->stamp;
    }
    return true;
}

/* dapper_log_fast.c decode_record(), on the encoder's member order:
 * v trace_id span_id [parent_id] name [kind] start_us end_us [flags]
 * [shared] [duration_unknown] [annotations] [tags] [logs] [refs] process. */
static bool decode_record(reader *r)
{
    tw__span_data *s = r->span;
    uint64_t unused_high;
    if (!LIT(r, "{\"v\":1,\"trace_id\":\"") ||
        !tw__jd_hex_id(&r->c, 32, &s->trace_id_high, &s->trace_id_low) ||
        !LIT(r, ",\"span_id\":\"") || !tw__jd_hex_id(&r->c, 16, &unused_high, &s->span_id) ||
        (LIT(r, ",\"parent_id\":\"") && !tw__jd_hex_id(&r->c, 16, &unused_high, &s->parent_id)))
        return false;
    if ((!s->trace_id_high && !s->trace_id_low) || !s->span_id || s->parent_id == s->span_id)
        return false;
    const char *name, *kind = NULL;
    size_t name_len, kind_len = 0;
    if (!LIT(r, ",\"name\":\"") || !string(r, &name, &name_len) ||
        !tw__span_data_set_operation(s, name, name_len) ||
        (LIT(r, ",\"kind\":\"") && !string(r, &kind, &kind_len)))
        return false;
    int64_t start_us, end_us;
    if (!LIT(r, ",\"start_us\":") || !tw__jd_int64(&r->c, &start_us) || !LIT(r, ",\"end_us\":") ||
        !tw__jd_int64(&r->c, &end_us) || start_us < 0 || end_us < start_us)
        return false;
    s->start_us = start_us;
    s->duration_us = end_us - start_us;
    s->flags = TW__FLAG_SAMPLED;
    if (LIT(r, ",\"flags\":")) {
        int64_t v;
        if (!tw__jd_int64(&r->c, &v) || v < 0 || v > (int64_t)UINT32_MAX)
            return false;
        s->flags = (uint32_t)v;
    }
    if ((LIT(r, ",\"shared\":") && !boolean(r, &s->shared)) ||
        (LIT(r, ",\"duration_unknown\":") && !boolean(r, &s->is_duration_unknown)))
        return false;
    annotations an; /* not zeroed: read_annotations fills a[0..n) */
    an.n = 0;
    tw__span_kind annotated;
    return (!LIT(r, ",\"annotations\":[") || read_annotations(r, &an)) &&
           (!LIT(r, ",\"tags\":[") || span_tags(r)) && (!LIT(r, ",\"logs\":[") || logs(r)) &&
           apply_annotations(r, &an, &annotated) && reconcile_kind(r, kind, kind_len, annotated) &&
           (!LIT(r, ",\"refs\":[") || refs(r)) && process(r);
}

/* Both entry points: the record of @line, or NULL when the line is not one
 * this decoder takes (nothing is left behind then). Without @memo the
 * process is decoded into @process (initialised here, cleared on failure);
 * with it, *got and *stamp say which process the line gave. */
static inline __attribute__((always_inline)) tw__span_data *
decode_line(const char *line, size_t len, tw__process *process, tw__dapper_memo *memo,
            const tw__process **got, uint64_t *stamp)
{
    /* Not the encoder's line: no record is started. */
    if (len < 2 || line[0] != '{' || line[1] != '"')
        return NULL;
    char scratch[SCRATCH_BYTES]; /* unescaped strings; all copied out before the return */
    reader r = {.c = {line, line + len},
                .sc = {scratch, 0, sizeof scratch},
                .kind_tag = SIZE_MAX,
                .span = tw__span_data_new(),
                .process = process,
                .memo = memo};
    if (!r.span)
        return NULL;
    if (process)
        tw__process_init(process);
    if (!decode_record(&r)) {
        tw__span_data_unref(r.span);
        if (process)
            tw__process_clear(process);
        return NULL;
    }
    *got = r.got;
    *stamp = r.stamp;
    return r.span;
}

bool tw__dapper_log_decode_direct(const char *line, size_t len, tw__span_data **span_out,
                                  tw__process *process_out)
{
    const tw__process *unused_got;
    uint64_t unused_stamp;
    tw__span_data *s = decode_line(line, len, process_out, NULL, &unused_got, &unused_stamp);
    if (!s)
        return false;
    *span_out = s;
    return true;
}

tw__dapper_memo *tw__dapper_memo_new(void)
{
    tw__dapper_memo *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    /* Every entry owns a process from the start: a miss swaps, never allocates. */
    for (size_t i = 0; i <= MEMO_SETS * MEMO_WAYS; i++) {
        tw__process *p = malloc(sizeof *p);
        if (!p) {
            tw__dapper_memo_free(m);
            return NULL;
        }
        tw__process_init(p);
        if (i == MEMO_SETS * MEMO_WAYS)
            m->spare = p;
        else
            m->sets[i / MEMO_WAYS][i % MEMO_WAYS].process = p;
    }
    return m;
}

void tw__dapper_memo_free(tw__dapper_memo *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < MEMO_SETS * MEMO_WAYS; i++) {
        tw__process *p = m->sets[i / MEMO_WAYS][i % MEMO_WAYS].process;
        if (p) {
            tw__process_clear(p);
            free(p);
        }
    }
    if (m->spare) {
        tw__process_clear(m->spare);
        free(m->spare);
    }
    free(m);
}

bool tw__dapper_log_decode_direct_memo(const char *line, size_t len, tw__dapper_memo *memo,
                                       tw__span_data **span_out, const tw__process **process_out,
                                       uint64_t *stamp_out)
{
    tw__span_data *s = decode_line(line, len, NULL, memo, process_out, stamp_out);
    if (!s)
        return false;
    *span_out = s;
    return true;
}
