/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/buf.c: tw__buf (wire/core/buf.h), the growable byte buffer that
 * the wire encoders fill and the senders hand to their transports (UDP
 * datagrams, HTTP bodies, files).
 *
 * A buffer is owned by one thread at a time, normally the reporter thread,
 * and is reused across batches: reset keeps the memory, so the steady state
 * of a sender allocates nothing. Growth uses malloc/realloc rather than
 * g_malloc, because the size comes from the spans being reported and the
 * reporter must survive an allocation failure (it drops the batch and counts
 * it) instead of aborting the application.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/core/buf.h"

/* First allocation: a typical span encodes to 100-300 bytes, so this serves
 * a few spans before the first doubling. */
#define TW__BUF_MIN_CAP 256u

void tw__buf_init(tw__buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void tw__buf_reset(tw__buf *b)
{
    b->len = 0;
}

void tw__buf_free(tw__buf *b)
{
    if (!b)
        return;
    free(b->data);
    tw__buf_init(b);
}

bool tw__buf_grow(tw__buf *b, size_t extra)
{
    if (extra > SIZE_MAX - b->len)
        return false;
    size_t need = b->len + extra;
    if (need <= b->cap)
        return true;
    /* Doubling keeps appends amortised O(1); a huge single append gets
     * exactly what it needs rather than overflowing the doubling. */
    size_t cap = b->cap ? b->cap : TW__BUF_MIN_CAP;
    while (cap < need && cap <= SIZE_MAX / 2)
        cap *= 2;
    if (cap < need)
        cap = need;
    uint8_t *grown = realloc(b->data, cap);
    if (!grown)
        return false;
    b->data = grown;
    b->cap = cap;
    return true;
}

bool tw__buf_append(tw__buf *b, const void *data, size_t len)
{
    if (len == 0)
        return true;
    if (!tw__buf_grow(b, len))
        return false;
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return true;
}

bool tw__buf_reserve(tw__buf *b, size_t cap)
{
    if (cap <= b->cap)
        return true;
    uint8_t *grown = realloc(b->data, cap);
    if (!grown)
        return false;
    b->data = grown;
    b->cap = cap;
    return true;
}
