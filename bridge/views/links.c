/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/views/links.c: service dependency links as Zipkin's dependency
 * linker computes them (zipkin2.internal.DependencyLinker over the tree of
 * zipkin2.internal.SpanNode), for `tracewire deps` (views.h, twv_links;
 * every rule is in docs/views.md, "tracewire deps").
 *
 * The tree is Zipkin's, not the display tree of trace.c: the root is the
 * first span without a parent in Zipkin's order (lowest span id, a CLIENT
 * before others), and every span whose parent is missing, and every other
 * parentless span, hangs under that root (or under a synthetic root when
 * there is none). A span still marked shared (its client was not in the
 * trace) has no parent. A child names a still-shared span as parent only
 * when their local endpoints are equal (Zipkin's SharedKey). Spans not
 * reachable from the root (a cycle of parents) are not linked. Service
 * names are compared and reported in lower case, as Zipkin's Endpoint keeps
 * them; an empty name is no name.
 *
 * The assembler gave each shared server span its own id under its client
 * (Jaeger ids, assemble.h); Zipkin keeps the client's id and the client's
 * parent id on it. One rule looks at ids (the client's error counts on the
 * link of a server whose parent id is that client), so a span whose id is one
 * of the assembler's derived ids for its parent is read as the shared half it
 * was (see was_shared).
 *
 * Cost: O(n) per trace plus the ancestor walks; scratch arrays reused.
 * Links: an open-addressing table on (parent, child); at most max_rows
 * links, further calls are counted in `dropped`. Locking: none.
 */
#include "views/views.h"

#include <stdlib.h>
#include <string.h>

void twv_links_init(twv_links *l, size_t max_rows)
{
    memset(l, 0, sizeof *l);
    l->max_rows = max_rows ? max_rows : SIZE_MAX / 4;
}

void twv_links_free(twv_links *l)
{
    for (size_t i = 0; i < l->n_rows; i++) {
        free(l->rows[i].parent);
        free(l->rows[i].child);
    }
    free(l->rows);
    free(l->table);
    free(l->zparent);
    free(l->n_kids);
    free(l->first_kid);
    free(l->kids);
    free(l->next_same);
    free(l->stack);
    free(l->reached);
    free(l->names);
    free(l->remote);
    free(l->lower);
    memset(l, 0, sizeof *l);
}

/* ---- the link table ------------------------------------------------------------------------ */

static uint64_t hash_pair(const char *a, const char *b)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)a; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    h = (h ^ 0xffu) * 0x100000001b3ull;
    for (const unsigned char *p = (const unsigned char *)b; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

static size_t slot_of(const twv_links *l, const char *parent, const char *child)
{
    for (size_t i = (size_t)hash_pair(parent, child) & l->table_mask;;
         i = (i + 1) & l->table_mask) {
        uint32_t k = l->table[i];
        if (k == TWV_NONE)
            return i;
        if (strcmp(l->rows[k].parent, parent) == 0 && strcmp(l->rows[k].child, child) == 0)
            return i;
    }
}

static bool rehash(twv_links *l, size_t size)
{
    uint32_t *table = malloc(size * sizeof *table);
    if (!table)
        return false;
    memset(table, 0xff, size * sizeof *table);
    free(l->table);
    l->table = table;
    l->table_mask = size - 1;
    for (uint32_t k = 0; k < l->n_rows; k++)
        l->table[slot_of(l, l->rows[k].parent, l->rows[k].child)] = k;
    return true;
}

static bool add_link(twv_links *l, const char *parent, const char *child, bool is_error)
{
    if (!l->table && !rehash(l, 64))
        return false;
    size_t slot = slot_of(l, parent, child);
    if (l->table[slot] == TWV_NONE) {
        if (l->n_rows >= l->max_rows) {
            l->dropped++;
            return true;
        }
        if (l->n_rows == l->cap_rows) {
            size_t cap = l->cap_rows ? 2 * l->cap_rows : 32;
            twv_link *grown = realloc(l->rows, cap * sizeof *grown);
            if (!grown)
                return false;
            l->rows = grown;
            l->cap_rows = cap;
        }
        twv_link *r = &l->rows[l->n_rows];
        r->parent = strdup(parent);
        r->child = strdup(child);
        r->calls = r->errors = 0;
        if (!r->parent || !r->child) {
            free(r->parent);
            free(r->child);
            return false;
        }
        l->table[slot] = (uint32_t)l->n_rows++;
        if (2 * l->n_rows > l->table_mask + 1 && !rehash(l, 2 * (l->table_mask + 1)))
            return false;
        slot = slot_of(l, parent, child);
    }
    twv_link *r = &l->rows[l->table[slot]];
    r->calls++;
    r->errors += is_error;
    return true;
}

static int by_names(const void *a, const void *b)
{
    const twv_link *x = a, *y = b;
    int c = strcmp(x->parent, y->parent);
    return c ? c : strcmp(x->child, y->child);
}

void twv_links_sort(twv_links *l)
{
    if (l->n_rows > 1)
        qsort(l->rows, l->n_rows, sizeof *l->rows, by_names);
    if (l->table)
        rehash(l, l->table_mask + 1); /* indexes changed; a failure leaves the old table */
}

/* ---- names --------------------------------------------------------------------------------- */

static bool has_upper(const char *s)
{
    for (; *s; s++) {
        if (*s >= 'A' && *s <= 'Z')
            return true;
    }
    return false;
}

static const char *remote_name(const tw__span_data *d)
{
    const tw__tag *t = twv_find_tag(d, "peer.service");
    return t && t->type == TW_VALUE_STRING && t->len > 0 ? t->v.str : NULL;
}

/* Fills l->names and l->remote: the lower-case local and remote service of
 * every span (NULL: none). Names already in lower case are borrowed from
 * the records; the others are copied into l->lower. */
static bool lower_names(twv_links *l, const twv_trace *t)
{
    size_t need = 0;
    for (size_t i = 0; i < t->n_spans; i++) {
        const char *local = t->spans[i].service, *remote = remote_name(t->spans[i].d);
        if (*local && has_upper(local))
            need += strlen(local) + 1;
        if (remote && has_upper(remote))
            need += strlen(remote) + 1;
    }
    if (need > l->lower_cap) {
        char *grown = realloc(l->lower, need);
        if (!grown)
            return false;
        l->lower = grown;
        l->lower_cap = need;
    }
    size_t used = 0;
    for (size_t i = 0; i < t->n_spans; i++) {
        const char *names[2] = {t->spans[i].service, remote_name(t->spans[i].d)};
        for (int w = 0; w < 2; w++) {
            const char *s = names[w], *out = NULL;
            if (s && *s && has_upper(s)) {
                char *copy = l->lower + used;
                size_t k = 0;
                for (; s[k]; k++)
                    copy[k] = (char)(s[k] >= 'A' && s[k] <= 'Z' ? s[k] + 32 : s[k]);
                copy[k] = '\0';
                used += k + 1;
                out = copy;
            } else if (s && *s) {
                out = s;
            }
            (w == 0 ? l->names : l->remote)[i] = out;
        }
    }
    return true;
}

/* ---- endpoints and shared halves ----------------------------------------------------------- */

static const tw__tag *proc_tag(const tw__process *p, const char *key)
{
    size_t len = strlen(key);
    for (size_t i = 0; p && i < p->n_tags; i++) {
        if (p->tags[i].key_len == len && memcmp(p->tags[i].key, key, len) == 0)
            return &p->tags[i];
    }
    return NULL;
}

static bool tag_equal(const tw__tag *a, const tw__tag *b)
{
    if (!a || !b)
        return a == b;
    if (a->type != b->type)
        return false;
    if (a->type == TW_VALUE_INT64)
        return a->v.i64 == b->v.i64;
    if (a->type == TW_VALUE_STRING)
        return a->len == b->len && memcmp(a->v.str, b->v.str, a->len) == 0;
    return false;
}

/* Zipkin's Endpoint equality: service name, ipv4, ipv6 and port. */
static bool same_endpoint(const twv_span *a, const twv_span *b)
{
    if (a->proc == b->proc)
        return true;
    return strcmp(a->service, b->service) == 0 &&
           tag_equal(proc_tag(a->proc, "ip"), proc_tag(b->proc, "ip")) &&
           tag_equal(proc_tag(a->proc, "ipv6"), proc_tag(b->proc, "ipv6")) &&
           tag_equal(proc_tag(a->proc, "port"), proc_tag(b->proc, "port"));
}

/* True when @s is the server half the assembler re-identified under its
 * client @client: its id is one of the first outputs of splitmix64 seeded
 * with the client's id (the derivation assemble.h documents; later outputs
 * are taken only when an earlier one was used, e.g. by a second server
 * sharing the same client id). */
static bool was_shared(const twv_span *s, const twv_span *client)
{
    if (s->kind == TWV_KIND_CLIENT || client->kind != TWV_KIND_CLIENT ||
        s->d->parent_id != client->d->span_id)
        return false;
    uint64_t state = client->d->span_id;
    for (int i = 0; i < 16; i++) {
        state += 0x9e3779b97f4a7c15ull;
        uint64_t z = state;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        if (z == s->d->span_id)
            return true;
    }
    return false;
}

/* ---- the tree ------------------------------------------------------------------------------ */

static bool reserve(twv_links *l, size_t n)
{
    if (n <= l->cap)
        return true;
    size_t cap = l->cap ? l->cap : 64;
    while (cap < n)
        cap *= 2;
    uint32_t **arrays[] = {&l->zparent, &l->n_kids,    &l->first_kid,
                           &l->kids,    &l->next_same, &l->stack};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        uint32_t *grown = realloc(*arrays[i], cap * sizeof *grown);
        if (!grown)
            return false;
        *arrays[i] = grown;
    }
    uint8_t *reached = realloc(l->reached, cap);
    const char **names = reached ? realloc(l->names, cap * sizeof *names) : NULL;
    const char **remote = names ? realloc(l->remote, cap * sizeof *remote) : NULL;
    if (reached)
        l->reached = reached;
    if (names)
        l->names = names;
    if (!remote)
        return false;
    l->remote = remote;
    l->cap = cap;
    return true;
}

/* Zipkin's sort order for picking the root: span id, then a CLIENT first. */
static bool before(const twv_span *a, uint32_t ia, const twv_span *b, uint32_t ib)
{
    if (a->d->span_id != b->d->span_id)
        return a->d->span_id < b->d->span_id;
    bool ca = a->kind == TWV_KIND_CLIENT, cb = b->kind == TWV_KIND_CLIENT;
    if (ca != cb)
        return ca;
    return ia < ib;
}

/* The parent of span @k in Zipkin's tree: an index, or TWV_NONE when the span
 * has no usable parent (root candidates and orphans). Non-shared spans are
 * found by id (a later one replaces an earlier, as in Zipkin's map);
 * still-shared spans by id and endpoint. */
static uint32_t zipkin_parent(const twv_links *l, const twv_trace *t, uint32_t k)
{
    const twv_span *s = &t->spans[k];
    const tw__span_data *d = s->d;
    if (d->shared || d->parent_id == 0 || d->parent_id == d->span_id)
        return TWV_NONE;
    uint32_t plain = TWV_NONE, shared = TWV_NONE;
    for (uint32_t i = twv_trace_find(t, d->parent_id); i != TWV_NONE; i = l->next_same[i]) {
        const twv_span *p = &t->spans[i];
        if (i == k)
            continue;
        if (p->d->shared) {
            if (shared == TWV_NONE && same_endpoint(p, s))
                shared = i;
        } else {
            plain = i;
        }
    }
    return shared != TWV_NONE ? shared : plain;
}

static const twv_span *first_remote_ancestor(const twv_links *l, const twv_trace *t, uint32_t k)
{
    for (uint32_t a = l->zparent[k]; a != TWV_NONE; a = l->zparent[a]) {
        if (t->spans[a].kind != TWV_KIND_NONE)
            return &t->spans[a];
    }
    return NULL;
}

/* Zipkin's rules for one span of the tree (DependencyLinker.putTrace). */
static bool link_span(twv_links *l, const twv_trace *t, uint32_t k, uint32_t root)
{
    const twv_span *s = &t->spans[k];
    twv_kind kind = (twv_kind)s->kind;
    if (kind == TWV_KIND_CLIENT && l->n_kids[k] > 0)
        return true; /* the server's side of the call is preferred */
    const char *service = l->names[k], *remote = l->remote[k];
    if (kind == TWV_KIND_NONE) {
        if (!service || !remote)
            return true; /* a local span */
        kind = TWV_KIND_CLIENT;
    }
    const char *parent, *child;
    if (kind == TWV_KIND_SERVER || kind == TWV_KIND_CONSUMER) {
        child = service;
        parent = remote;
        if (k == root && !parent)
            return true; /* the root's caller is unknown */
    } else {
        parent = service;
        child = remote;
    }
    bool is_error = s->is_error;
    if (kind == TWV_KIND_PRODUCER || kind == TWV_KIND_CONSUMER)
        return !(parent && child) || add_link(l, parent, child, is_error);
    const twv_span *ra = first_remote_ancestor(l, t, k);
    const char *ra_name = ra ? l->names[ra - t->spans] : NULL;
    if (ra_name) {
        /* A client whose service differs from its remote ancestor's: the link
         * to it was never recorded (a remote name on a client annotation). */
        if (kind == TWV_KIND_CLIENT && service && strcmp(ra_name, service) != 0 &&
            !add_link(l, ra_name, service, false))
            return false;
        if (kind == TWV_KIND_SERVER || !parent)
            parent = ra_name;
        /* An RPC split between a client and a server span: the client's error
         * counts for the link when the server's (Zipkin) parent id is the
         * client's id. A shared half carries its client's parent id. */
        uint64_t zipkin_parent_id = s->d->parent_id;
        if (s->parent != TWV_NONE && was_shared(s, &t->spans[s->parent]))
            zipkin_parent_id = t->spans[s->parent].d->parent_id;
        if (!is_error && ra->kind == TWV_KIND_CLIENT && zipkin_parent_id != 0 &&
            zipkin_parent_id == ra->d->span_id)
            is_error = ra->is_error;
    }
    return !(parent && child) || add_link(l, parent, child, is_error);
}

bool twv_links_add_trace(twv_links *l, const twv_trace *t)
{
    size_t n = t->n_spans;
    if (n == 0)
        return true;
    if (!reserve(l, n) || !lower_names(l, t)) {
        l->is_nomem = true;
        return false;
    }
    /* Chains of spans sharing an id (rare after assembly). */
    for (uint32_t k = 0; k < n; k++) {
        l->next_same[k] = TWV_NONE;
        l->n_kids[k] = 0;
        l->reached[k] = 0;
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t first = twv_trace_find(t, t->spans[k].d->span_id);
        if (first == k || first == TWV_NONE)
            continue;
        uint32_t tail = first;
        while (l->next_same[tail] != TWV_NONE)
            tail = l->next_same[tail];
        l->next_same[tail] = k;
    }
    /* The root: the first parentless, non-shared span in Zipkin's order. */
    uint32_t root = TWV_NONE;
    for (uint32_t k = 0; k < n; k++) {
        l->zparent[k] = zipkin_parent(l, t, k);
        const tw__span_data *d = t->spans[k].d;
        bool is_candidate = !d->shared && (d->parent_id == 0 || d->parent_id == d->span_id);
        if (is_candidate && (root == TWV_NONE || before(&t->spans[k], k, &t->spans[root], root)))
            root = k;
    }
    /* Spans whose parent is missing, and other parentless ones, hang under
     * the root (headless traces); children lists for the walk. */
    for (uint32_t k = 0; k < n; k++) {
        if (k != root && l->zparent[k] == TWV_NONE)
            l->zparent[k] = root;
        if (l->zparent[k] != TWV_NONE)
            l->n_kids[l->zparent[k]]++;
    }
    uint32_t off = 0;
    for (uint32_t k = 0; k < n; k++) {
        l->first_kid[k] = off;
        off += l->n_kids[k];
        l->n_kids[k] = 0;
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t p = l->zparent[k];
        if (p != TWV_NONE)
            l->kids[l->first_kid[p] + l->n_kids[p]++] = k;
    }
    /* Every span reachable from the root (or, without one, from the
     * top-level spans under Zipkin's synthetic root); cycles stay unreached,
     * as in Zipkin. The order of the walk does not change the counts. */
    size_t top = 0;
    for (uint32_t k = 0; k < n; k++) {
        if (root != TWV_NONE ? k == root : l->zparent[k] == TWV_NONE) {
            l->reached[k] = 1;
            l->stack[top++] = k;
        }
    }
    while (top > 0) {
        uint32_t k = l->stack[--top];
        for (uint32_t i = 0; i < l->n_kids[k]; i++) {
            uint32_t c = l->kids[l->first_kid[k] + i];
            if (!l->reached[c]) {
                l->reached[c] = 1;
                l->stack[top++] = c;
            }
        }
        if (!link_span(l, t, k, root)) {
            l->is_nomem = true;
            return false;
        }
    }
    return true;
}
