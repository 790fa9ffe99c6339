/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/pb_read.c: the wire-format reader, the descriptor-driven check
 * and the budgeted arena of pb_read.h, in front of protobuf-c's unpack.
 *
 * The check keeps its own stack of open messages (at most max_depth), so a
 * hostile nesting costs a bounded loop, never recursion; protobuf-c only
 * sees messages that passed it. Memory: the arena's blocks (the first
 * 64 KiB kept between messages). Locking: none.
 */
#include "wire/core/pb_read.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracewire/common.h"   /* TW_PRINTF */
#include "wire/core/pb_write.h" /* wire type numbers */

/* ---- the wire format ---------------------------------------------------------------------- */

bool tw__pb_read_varint_slow(const uint8_t *data, size_t len, size_t *pos, uint64_t *v)
{
    uint64_t value = 0;
    size_t p = *pos;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (p >= len)
            return false;
        uint8_t byte = data[p++];
        if (shift == 63 && byte > 1)
            return false; /* a tenth byte may only hold the top bit */
        value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *pos = p;
            *v = value;
            return true;
        }
    }
    return false;
}

tw__pb_next tw__pb_next_field_slow(const uint8_t *data, size_t len, size_t *pos, tw__pb_field *f,
                                   const char **why)
{
    if (*pos >= len)
        return TW__PB_NEXT_END;
    size_t p = *pos;
    if (len - p >= 3 && (data[p] & 7) == TW__PB_LEN && data[p] < 0x80 && data[p] >= 8 &&
        data[p + 1] >= 0x80 && data[p + 2] < 0x80) {
        /* A one-byte tag with a two-byte length (128 to 16383 bytes: every
         * span in its ScopeSpans), first: the general case below read it
         * in two more calls. Not inline: pb_read.h's inline cases stay
         * small enough for the compiler to inline. */
        size_t n = (size_t)(data[p + 1] & 0x7f) | (size_t)data[p + 2] << 7;
        if (n <= len - p - 3) {
            f->number = data[p] >> 3;
            f->wire_type = TW__PB_LEN;
            f->offset = p;
            f->value = 0;
            f->len = n;
            f->data = data + p + 3;
            *pos = p + 3 + n;
            return TW__PB_NEXT_FIELD;
        }
    }
    uint64_t tag;
    f->offset = p;
    if (!tw__pb_read_varint(data, len, &p, &tag)) {
        *why = "a field tag is cut short or longer than 10 bytes";
        return TW__PB_NEXT_BAD;
    }
    f->number = (uint32_t)(tag >> 3);
    f->wire_type = (uint8_t)(tag & 7);
    f->data = NULL;
    f->len = 0;
    f->value = 0;
    if (tag >> 3 == 0 || tag >> 3 > 536870911u) {
        *why = "a field number is 0 or above 2^29-1";
        return TW__PB_NEXT_BAD;
    }
    switch (f->wire_type) {
    case TW__PB_VARINT:
        if (!tw__pb_read_varint(data, len, &p, &f->value)) {
            *why = "a varint is cut short or longer than 10 bytes";
            return TW__PB_NEXT_BAD;
        }
        break;
    case TW__PB_I64:
    case TW__PB_I32: {
        size_t n = f->wire_type == TW__PB_I64 ? 8 : 4;
        if (len - p < n) {
            *why = "a fixed-size value is cut short";
            return TW__PB_NEXT_BAD;
        }
        for (size_t i = 0; i < n; i++)
            f->value |= (uint64_t)data[p + i] << (8 * i);
        p += n;
        break;
    }
    case TW__PB_LEN: {
        uint64_t n;
        if (!tw__pb_read_varint(data, len, &p, &n)) {
            *why = "a length is cut short or longer than 10 bytes";
            return TW__PB_NEXT_BAD;
        }
        if (n > len - p) {
            *why = "a length runs past the end of its message";
            return TW__PB_NEXT_BAD;
        }
        f->data = data + p;
        f->len = (size_t)n;
        p += (size_t)n;
        break;
    }
    default:
        *why = "a field has wire type 3, 4, 6 or 7 (groups or not protobuf)";
        return TW__PB_NEXT_BAD;
    }
    *pos = p;
    return TW__PB_NEXT_FIELD;
}

/* ---- the check ------------------------------------------------------------------------------ */

#define MAX_COUNTED_FIELDS 16 /* repeated-index counting per message (OTLP's Span has 16) */

typedef struct frame {
    const ProtobufCMessageDescriptor *desc;
    size_t pos, end;                       /* the message is data[.. end); pos: next field */
    const ProtobufCFieldDescriptor *field; /* the parent's field holding it (NULL: root) */
    uint32_t index;                        /* its repeated index in the parent */
    uint32_t counts[MAX_COUNTED_FIELDS];   /* occurrences of each field seen so far */
} frame;

/* The wire type a field of @type takes when not packed. */
static uint8_t wire_type_of(ProtobufCType type)
{
    switch (type) {
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return TW__PB_I64;
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
        return TW__PB_I32;
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_BYTES:
    case PROTOBUF_C_TYPE_MESSAGE:
        return TW__PB_LEN;
    default:
        return TW__PB_VARINT;
    }
}

/* Writes "path: byte N: reason" (path from the frames below @top). */
static void check_fail(char *why, size_t why_size, const frame *stack, size_t top,
                       const ProtobufCFieldDescriptor *field, uint64_t offset, const char *fmt, ...)
    TW_PRINTF(7, 8);
static void check_fail(char *why, size_t why_size, const frame *stack, size_t top,
                       const ProtobufCFieldDescriptor *field, uint64_t offset, const char *fmt, ...)
{
    size_t n = 0;
    why[0] = '\0';
    for (size_t i = 1; i <= top && n < why_size; i++) {
        const frame *f = &stack[i];
        if (top > 12 && i == 5) {
            /* A deep path: its first and last levels say enough. */
            int w = snprintf(why + n, why_size - n, ".(%zu more levels)", top - 9);
            n += w > 0 ? (size_t)w : 0;
            i = top - 4;
            continue;
        }
        int w = f->field->label == PROTOBUF_C_LABEL_REPEATED
                    ? snprintf(why + n, why_size - n, "%s%s[%u]", n ? "." : "", f->field->name,
                               (unsigned)f->index)
                    : snprintf(why + n, why_size - n, "%s%s", n ? "." : "", f->field->name);
        n += w > 0 ? (size_t)w : 0;
    }
    if (field && n < why_size) {
        int w = snprintf(why + n, why_size - n, "%s%s", n ? "." : "", field->name);
        n += w > 0 ? (size_t)w : 0;
    }
    if (n < why_size) {
        int w = snprintf(why + n, why_size - n, "%sbyte %llu: ", n ? ": " : "",
                         (unsigned long long)offset);
        n += w > 0 ? (size_t)w : 0;
    }
    if (n < why_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why + n, why_size - n, fmt, ap);
        va_end(ap);
    }
}

bool tw__pb_check(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len,
                  unsigned max_depth, uint64_t base_offset, char *why, size_t why_size,
                  size_t *n_nul_strings)
{
    frame stack[TW__PB_CHECK_MAX_DEPTH + 1];
    if (max_depth > TW__PB_CHECK_MAX_DEPTH)
        max_depth = TW__PB_CHECK_MAX_DEPTH;
    size_t top = 0;
    memset(&stack[0], 0, sizeof stack[0]);
    stack[0].desc = desc;
    stack[0].end = len;
    while (true) {
        frame *fr = &stack[top];
        if (fr->pos == fr->end) {
            if (top == 0)
                return true;
            top--;
            stack[top].pos = fr->end;
            continue;
        }
        tw__pb_field f;
        const char *reason;
        size_t pos = fr->pos;
        if (tw__pb_next_field(data, fr->end, &pos, &f, &reason) != TW__PB_NEXT_FIELD) {
            check_fail(why, why_size, stack, top, NULL, base_offset + fr->pos, "%s", reason);
            return false;
        }
        const ProtobufCFieldDescriptor *fd =
            protobuf_c_message_descriptor_get_field(fr->desc, f.number);
        fr->pos = pos;
        if (!fd)
            continue; /* unknown fields are skipped, as protobuf says */
        uint8_t want = wire_type_of(fd->type);
        bool is_packed = fd->label == PROTOBUF_C_LABEL_REPEATED && want != TW__PB_LEN &&
                         f.wire_type == TW__PB_LEN;
        if (f.wire_type != want && !is_packed) {
            check_fail(why, why_size, stack, top, fd, base_offset + f.offset,
                       "wire type %u where the field's type needs %u", (unsigned)f.wire_type,
                       (unsigned)want);
            return false;
        }
        size_t index = (size_t)(fd - fr->desc->fields);
        uint32_t seen = index < MAX_COUNTED_FIELDS ? fr->counts[index]++ : 0;
        if (is_packed) {
            /* Packed scalars: the payload must be whole values. */
            size_t p = 0;
            uint64_t v;
            size_t size = want == TW__PB_I64 ? 8 : want == TW__PB_I32 ? 4 : 0;
            if (size ? f.len % size != 0 : false) {
                check_fail(why, why_size, stack, top, fd, base_offset + f.offset,
                           "a packed list's length is not a whole number of values");
                return false;
            }
            while (!size && p < f.len) {
                if (!tw__pb_read_varint(f.data, f.len, &p, &v)) {
                    check_fail(why, why_size, stack, top, fd, base_offset + f.offset,
                               "a packed varint is cut short");
                    return false;
                }
            }
            continue;
        }
        if (fd->type == PROTOBUF_C_TYPE_STRING && n_nul_strings && memchr(f.data, 0, f.len))
            (*n_nul_strings)++;
        if (fd->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        if (top + 1 > max_depth) {
            check_fail(why, why_size, stack, top, fd, base_offset + f.offset,
                       "messages nested deeper than %u levels", max_depth);
            return false;
        }
        frame *child = &stack[++top];
        memset(child, 0, sizeof *child);
        child->desc = fd->descriptor;
        child->pos = (size_t)(f.data - data);
        child->end = child->pos + f.len;
        child->field = fd;
        child->index = seen;
    }
}

/* ---- the arena ------------------------------------------------------------------------------ */

struct tw__pb_arena_block {
    tw__pb_arena_block *next;
    size_t size, used;
    max_align_t data[];
};

#define FIRST_BLOCK_BYTES ((size_t)64 << 10)
#define MAX_BLOCK_BYTES ((size_t)4 << 20)

static void *arena_alloc(void *arg, size_t size)
{
    tw__pb_arena *a = arg;
    size_t need = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    if (need < size || size > a->budget_bytes || a->used_bytes > a->budget_bytes - size) {
        a->is_over_budget = true;
        return NULL;
    }
    tw__pb_arena_block *b = a->blocks;
    if (!b || b->size - b->used < need) {
        size_t bytes = b ? b->size * 2 : FIRST_BLOCK_BYTES;
        if (bytes > MAX_BLOCK_BYTES)
            bytes = MAX_BLOCK_BYTES;
        if (bytes < need)
            bytes = need;
        tw__pb_arena_block *fresh = malloc(sizeof *fresh + bytes);
        if (!fresh) {
            a->is_nomem = true;
            return NULL;
        }
        fresh->next = b;
        fresh->size = bytes;
        fresh->used = 0;
        a->blocks = b = fresh;
    }
    void *p = (uint8_t *)b->data + b->used;
    b->used += need;
    a->used_bytes += size;
    return p;
}

static void arena_free(void *arg, void *p)
{
    (void)arg;
    (void)p; /* everything goes at the next reset */
}

void tw__pb_arena_init(tw__pb_arena *a)
{
    memset(a, 0, sizeof *a);
    a->allocator.alloc = arena_alloc;
    a->allocator.free = arena_free;
    a->allocator.allocator_data = a;
}

void tw__pb_arena_reset(tw__pb_arena *a)
{
    /* Keep the oldest block (the first, smallest) for the next message. */
    tw__pb_arena_block *b = a->blocks;
    while (b && b->next) {
        tw__pb_arena_block *next = b->next;
        free(b);
        b = next;
    }
    a->blocks = b;
    if (b)
        b->used = 0;
    a->used_bytes = 0;
    a->budget_bytes = 0;
    a->is_over_budget = false;
    a->is_nomem = false;
}

void tw__pb_arena_free(tw__pb_arena *a)
{
    tw__pb_arena_reset(a);
    free(a->blocks);
    a->blocks = NULL;
}

ProtobufCMessage *tw__pb_unpack(const ProtobufCMessageDescriptor *desc, tw__pb_arena *a,
                                const uint8_t *data, size_t len, unsigned max_depth,
                                uint64_t base_offset, char *why, size_t why_size, bool *is_nomem,
                                size_t *n_nul_strings)
{
    *is_nomem = false;
    if (!tw__pb_check(desc, data, len, max_depth, base_offset, why, why_size, n_nul_strings))
        return NULL;
    size_t budget = TW__PB_BUDGET(len);
    a->budget_bytes = a->used_bytes > SIZE_MAX - budget ? SIZE_MAX : a->used_bytes + budget;
    a->is_over_budget = false;
    a->is_nomem = false;
    ProtobufCMessage *m = protobuf_c_message_unpack(desc, &a->allocator, len, data);
    if (m)
        return m;
    if (a->is_over_budget)
        snprintf(why, why_size,
                 "decoding would take more than %zu bytes of memory (64 per byte "
                 "of input + 1 MiB)",
                 budget);
    else if (a->is_nomem)
        *is_nomem = true, snprintf(why, why_size, "out of memory");
    else
        snprintf(why, why_size, "protobuf-c could not unpack it");
    return NULL;
}
