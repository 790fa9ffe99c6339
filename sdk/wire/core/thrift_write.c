/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/thrift_write.c: the one Thrift writer, binary and compact
 * protocols (wire/core/thrift.h, where its hot functions are inline). It
 * appends fields straight to a tw__buf.
 *
 * Why not c_glib's protocol objects on the hot path: encoding one span of
 * the standard benchmark through ThriftCompactProtocol cost about 17,400
 * instructions (callgrind, tests/bench/bench_encode.c), most of it GObject
 * type checks (96 g_type_check_instance_cast per span), per-call vtable
 * dispatch and a GQueue link per struct; the same bytes written here cost a
 * small fraction of that. The bytes are c_glib's: the differential test
 * (tests/unit/wire/test_thrift_write.c) and fuzz target
 * (tests/fuzz/fuzz_thrift_write.c) encode the same messages with c_glib's
 * generated structs and protocols and compare.
 *
 * No locks; a writer belongs to one thread.
 */
#include "wire/core/thrift.h"

#include <string.h>

void tw__thrift_writer_init(tw__thrift_writer *w, tw__thrift_protocol proto, tw__buf *out)
{
    w->out = out;
    w->proto = proto;
    w->failed = false;
    w->depth = 0;
    w->last_id[0] = 0;
}

void tw__thrift_field_double(tw__thrift_writer *w, int16_t id, double v)
{
    if (!tw__thrift_room(w, 4 + 8))
        return;
    tw__thrift__header(w, TW__T_DOUBLE, 7, id);
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    if (w->proto == TW__THRIFT_BINARY) {
        tw__thrift__be(w, bits, 8);
        return;
    }
    /* The compact protocol writes doubles little-endian. */
    uint8_t *p = w->out->data + w->out->len;
    for (size_t i = 0; i < 8; i++)
        p[i] = (uint8_t)(bits >> (8 * i));
    w->out->len += 8;
}

void tw__thrift_message_begin(tw__thrift_writer *w, const char *name, int type, int32_t seq_id)
{
    size_t name_len = strlen(name);
    if (!tw__thrift_room(w, 8))
        return;
    if (w->proto == TW__THRIFT_BINARY) {
        tw__thrift__be(w, 0x80010000u | (uint32_t)(type & 0xff), 4);
        tw__thrift_write_bytes(w, name, name_len);
        if (tw__thrift_room(w, 4))
            tw__thrift__be(w, (uint32_t)seq_id, 4);
        return;
    }
    tw__thrift__byte(w, 0x82);
    tw__thrift__byte(w, (uint8_t)(1 | (type & 0x07) << 5));
    tw__thrift__varint(w, (uint32_t)seq_id);
    tw__thrift_write_bytes(w, name, name_len);
}

void tw__thrift_write_raw(tw__thrift_writer *w, const void *data, size_t len)
{
    if (!w->failed && !tw__buf_put(w->out, data, len))
        w->failed = true;
}
