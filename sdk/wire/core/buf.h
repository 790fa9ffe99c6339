/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/buf.h: tw__buf, the growable byte buffer every wire encoder
 * writes into and every sender hands to its transport (UDP datagrams, HTTP
 * bodies, files).
 *
 * A zeroed struct is a valid empty buffer. Memory comes from malloc, not
 * g_malloc: sizes come from the spans being encoded, and an encoder must
 * survive an allocation failure (its caller drops and counts the batch)
 * instead of aborting the application. Reset keeps the memory, so a
 * sender's steady state allocates nothing.
 *
 * Ownership: the buffer owns `data`. Locking: none; one thread at a time.
 */
#ifndef TW_WIRE_CORE_BUF_H
#define TW_WIRE_CORE_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct tw__buf {
    uint8_t *data;
    size_t len;
    size_t cap;
} tw__buf;

void tw__buf_init(tw__buf *b);
void tw__buf_reset(tw__buf *b); /* len = 0, keeps memory */
/* Frees the memory and leaves an empty buffer; NULL is a no-op. */
void tw__buf_free(tw__buf *b);
/* Returns false on allocation failure, leaving @b unchanged. */
bool tw__buf_append(tw__buf *b, const void *data, size_t len);
/* Grows the capacity to at least @cap bytes; false (unchanged) on failure. */
bool tw__buf_reserve(tw__buf *b, size_t cap);
/* Makes room for @extra more bytes (amortised doubling); false on failure. */
bool tw__buf_grow(tw__buf *b, size_t extra);

/* tw__buf_append with the common case (room left) inline: the encoders
 * write a field at a time, and most writes fit. */
static inline bool tw__buf_put(tw__buf *b, const void *data, size_t len)
{
    if (b->cap - b->len < len)
        return tw__buf_append(b, data, len);
    if (len) /* memcpy with a NULL source is undefined even for 0 bytes */
        memcpy(b->data + b->len, data, len);
    b->len += len;
    return true;
}

static inline bool tw__buf_put_byte(tw__buf *b, uint8_t byte)
{
    if (b->len == b->cap && !tw__buf_grow(b, 1))
        return false;
    b->data[b->len++] = byte;
    return true;
}

/* Appends a string literal (without its NUL). */
#define TW__BUF_LIT(b, lit) tw__buf_put((b), (lit), sizeof(lit) - 1)

#endif /* TW_WIRE_CORE_BUF_H */
