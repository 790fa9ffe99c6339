/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/pb_read.h: reading protobuf input that may be hostile
 * (internal; the decoders of OTLP protobuf and Zipkin proto3).
 *
 * protobuf-c's unpack trusts its input in two ways that matter for a tool
 * reading files and network bodies: it allocates whatever the counts and
 * lengths of the input call for, and it recurses once per nested message,
 * without limit. It also says nothing about why it failed. So every
 * message goes through three steps here:
 *
 *   tw__pb_next_field   the wire format field by field (tags, varints,
 *                       lengths inside their buffer), for the decoders'
 *                       outer loops that split a request into spans;
 *   tw__pb_check        one pass over a message against its generated
 *                       descriptor: every known field's wire type is the
 *                       one its type needs, lengths stay inside their
 *                       message, varints end within 10 bytes, messages nest
 *                       at most @max_depth deep. The first problem is
 *                       reported with the field path and byte offset
 *                       ("attributes[2].value: byte 1250: length 900 runs
 *                       past the end of its message");
 *   tw__pb_unpack       the check, then protobuf_c_message_unpack() into a
 *                       tw__pb_arena: a bump allocator whose byte budget for
 *                       this message is TW__PB_BUDGET(len) (64 bytes per
 *                       input byte plus 1 MiB, at most 512 MiB). Over the
 *                       budget, protobuf-c sees an allocation failure and
 *                       unpack fails with that reason.
 *
 * Amplification: the worst protobuf-c allocates per input byte is about
 * 24 bytes (an empty repeated message: two bytes of input, a pointer and a
 * struct), so honest data never meets the budget.
 *
 * Locking: none; an arena belongs to one decoder.
 */
#ifndef TW_WIRE_CORE_PB_READ_H
#define TW_WIRE_CORE_PB_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

/* ---- the wire format -------------------------------------------------------------------- */

typedef struct tw__pb_field {
    uint32_t number;
    uint8_t wire_type;   /* TW__PB_VARINT, _I64, _LEN, _I32 (wire/core/pb_write.h) */
    uint64_t value;      /* VARINT, I64, I32 */
    const uint8_t *data; /* LEN: the payload */
    size_t len;
    size_t offset; /* of the field's tag in the buffer */
} tw__pb_field;

typedef enum tw__pb_next {
    TW__PB_NEXT_FIELD = 0,
    TW__PB_NEXT_END, /* *pos == len */
    TW__PB_NEXT_BAD  /* *why says what; *pos is where it starts */
} tw__pb_next;

/* The general cases of the two readers below (pb_read.c). */
tw__pb_next tw__pb_next_field_slow(const uint8_t *data, size_t len, size_t *pos, tw__pb_field *f,
                                   const char **why);
bool tw__pb_read_varint_slow(const uint8_t *data, size_t len, size_t *pos, uint64_t *v);

/* Reads a varint at *pos (at most 10 bytes, within len). */
static inline bool tw__pb_read_varint(const uint8_t *data, size_t len, size_t *pos, uint64_t *v)
{
    if (*pos < len && data[*pos] < 0x80) {
        *v = data[(*pos)++];
        return true;
    }
    return tw__pb_read_varint_slow(data, len, pos, v);
}

/* Reads the field at *pos of data[0..len) and moves *pos past it. The
 * common cases are inline: a one-byte tag with a one-byte length or value
 * (most fields of a span), and the end (every loop over a message's fields
 * meets it once: a call per attribute and per value). */
static inline tw__pb_next tw__pb_next_field(const uint8_t *data, size_t len, size_t *pos,
                                            tw__pb_field *f, const char **why)
{
    size_t p = *pos;
    if (p >= len)
        return TW__PB_NEXT_END;
    if (len - p >= 2 && data[p] < 0x80 && data[p] >= 8 && data[p + 1] < 0x80) {
        uint8_t tag = data[p];
        f->number = tag >> 3;
        f->wire_type = tag & 7;
        f->offset = p;
        if (f->wire_type == 2 && data[p + 1] <= len - p - 2) {
            f->len = data[p + 1];
            f->data = data + p + 2;
            f->value = 0;
            *pos = p + 2 + f->len;
            return TW__PB_NEXT_FIELD;
        }
        if (f->wire_type == 0) {
            f->value = data[p + 1];
            f->data = NULL;
            f->len = 0;
            *pos = p + 2;
            return TW__PB_NEXT_FIELD;
        }
    }
    if (len - p >= 9 && (data[p] & 7) == 1 && data[p] < 0x80 && data[p] >= 8) {
        /* A fixed64 (times): little-endian. */
        f->number = data[p] >> 3;
        f->wire_type = 1;
        f->offset = p;
        f->value = 0;
        for (int i = 7; i >= 0; i--)
            f->value = f->value << 8 | data[p + 1 + i];
        f->data = NULL;
        f->len = 0;
        *pos = p + 9;
        return TW__PB_NEXT_FIELD;
    }
    return tw__pb_next_field_slow(data, len, pos, f, why);
}

/* ---- checking a message against its descriptor ------------------------------------------- */

/* The deepest nesting tw__pb_check follows (its stack of open messages). */
#define TW__PB_CHECK_MAX_DEPTH 160

/* Checks data[0..len) as a message of @desc (see the top): @max_depth
 * (at most TW__PB_CHECK_MAX_DEPTH) levels of messages below the top one.
 * @base_offset is added to the byte offsets in @why. *n_nul_strings
 * (nullable) counts string fields holding a NUL byte: protobuf-c's C
 * strings end there, so decoders say that the text was cut. */
bool tw__pb_check(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len,
                  unsigned max_depth, uint64_t base_offset, char *why, size_t why_size,
                  size_t *n_nul_strings);

/* ---- unpacking into an arena -------------------------------------------------------------- */

#define TW__PB_BUDGET_MAX ((size_t)512 << 20)
/* The memory a message of @len bytes may take once unpacked. */
#define TW__PB_BUDGET(len)                                                                         \
    ((len) > (TW__PB_BUDGET_MAX - ((size_t)1 << 20)) / 64 ? TW__PB_BUDGET_MAX                      \
                                                          : (len)*64 + ((size_t)1 << 20))

typedef struct tw__pb_arena_block tw__pb_arena_block;

typedef struct tw__pb_arena {
    ProtobufCAllocator allocator; /* what protobuf-c allocates with */
    tw__pb_arena_block *blocks;   /* newest first */
    size_t used_bytes;            /* handed out since the last reset */
    size_t budget_bytes;          /* used_bytes may not pass it */
    bool is_over_budget;
    bool is_nomem; /* malloc failed */
} tw__pb_arena;

void tw__pb_arena_init(tw__pb_arena *a);
/* Forgets every message unpacked into @a (they are invalid after it); keeps
 * one block for reuse. */
void tw__pb_arena_reset(tw__pb_arena *a);
void tw__pb_arena_free(tw__pb_arena *a);

/* Checks (max depth @max_depth) and unpacks data[0..len) as a message of
 * @desc into @a. NULL with the reason in @why (is_nomem set when the
 * system, not the budget, ran out of memory). @n_nul_strings as in
 * tw__pb_check. */
ProtobufCMessage *tw__pb_unpack(const ProtobufCMessageDescriptor *desc, tw__pb_arena *a,
                                const uint8_t *data, size_t len, unsigned max_depth,
                                uint64_t base_offset, char *why, size_t why_size, bool *is_nomem,
                                size_t *n_nul_strings);

#endif /* TW_WIRE_CORE_PB_READ_H */
