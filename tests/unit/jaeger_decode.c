/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/jaeger_decode.c: see jaeger_decode.h.
 */
#include "jaeger_decode.h"

#include <string.h>

#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/protocol/thrift_compact_protocol.h>
#include <thrift/c_glib/transport/thrift_memory_buffer.h>

/* Thrift's c_glib generator (0.17, and master as of 2026) writes struct
 * finalizers that never chain up to GObject's, and ThriftMemoryBuffer's has
 * the same bug, so each object destroyed here would leak the qdata block
 * that g_object_unref allocates (32 bytes). tw_test_patch_thrift_finalizers() makes
 * the classes used by the tests chain up, as wire/jaeger/jaeger_thrift.c does for its own
 * buffer, so that ASan's leak check stays exact for our code. The same
 * guard applies: chain up only if qdata was not cleared, i.e. only if the
 * original finalize really stopped short. */
typedef struct patched_finalize {
    GType type;
    void (*original)(GObject *obj);
    void (*parent)(GObject *obj);
} patched_finalize;

#define N_PATCHED_MAX 16
static patched_finalize patched[N_PATCHED_MAX];
static size_t n_patched;

/* Runs for an instance of a patched type or of a subclass chaining up to
 * one, so the nearest patched ancestor is the class being finalized. */
static void finalize_and_chain_up(GObject *obj)
{
    for (GType type = G_OBJECT_TYPE(obj); type; type = g_type_parent(type)) {
        for (size_t i = 0; i < n_patched; i++) {
            if (patched[i].type == type) {
                patched[i].original(obj);
                if (obj->qdata)
                    patched[i].parent(obj);
                return;
            }
        }
    }
}

static bool make_finalize_chain_up(GType type)
{
    /* The reference is kept: a class patched once must stay patched. */
    GObjectClass *cls = g_type_class_ref(type);
    if (cls->finalize == finalize_and_chain_up)
        return true;
    if (n_patched == N_PATCHED_MAX)
        return false;
    GObjectClass *parent = g_type_class_peek_parent(cls);
    patched[n_patched++] = (patched_finalize){type, cls->finalize, parent->finalize};
    cls->finalize = finalize_and_chain_up;
    return true;
}

bool tw_test_patch_thrift_finalizers(void)
{
    const GType types[] = {THRIFT_TYPE_MEMORY_BUFFER,
                           TWIRE_JAEGER_TYPE_TAG,
                           TWIRE_JAEGER_TYPE_LOG,
                           TWIRE_JAEGER_TYPE_SPAN_REF,
                           TWIRE_JAEGER_TYPE_SPAN,
                           TWIRE_JAEGER_TYPE_PROCESS,
                           TWIRE_JAEGER_TYPE_CLIENT_STATS,
                           TWIRE_JAEGER_TYPE_BATCH,
                           TWIRE_JAEGER_TYPE_AGENT_EMIT_BATCH_ARGS};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        if (!make_finalize_chain_up(types[i]))
            return false;
    }
    return true;
}

static TwireJaegerBatch *decode(GType protocol_type, const uint8_t *data, size_t len)
{
    static bool is_patched;
    if (!is_patched)
        is_patched = tw_test_patch_thrift_finalizers();
    ThriftMemoryBuffer *mb =
        g_object_new(THRIFT_TYPE_MEMORY_BUFFER, "buf_size", (guint32)len, NULL);
    GError *error = NULL;
    thrift_transport_write(THRIFT_TRANSPORT(mb), (gpointer)data, (guint32)len, &error);
    ThriftProtocol *proto = g_object_new(protocol_type, "transport", mb, NULL);
    gchar *name = NULL;
    ThriftMessageType type;
    gint32 seqid;
    TwireJaegerBatch *batch = NULL;
    if (!error && thrift_protocol_read_message_begin(proto, &name, &type, &seqid, &error) >= 0 &&
        strcmp(name, "emitBatch") == 0 && type == T_ONEWAY) {
        TwireJaegerAgentEmitBatchArgs *args =
            g_object_new(TWIRE_JAEGER_TYPE_AGENT_EMIT_BATCH_ARGS, NULL);
        if (thrift_struct_read(THRIFT_STRUCT(args), proto, &error) >= 0 && args->batch)
            batch = g_object_ref(args->batch);
        g_object_unref(args);
    }
    if (error)
        g_error_free(error);
    g_free(name);
    g_object_unref(proto);
    g_object_unref(mb);
    return batch;
}

TwireJaegerBatch *tw_test_decode_emit_batch(const uint8_t *data, size_t len)
{
    return decode(THRIFT_TYPE_COMPACT_PROTOCOL, data, len);
}

TwireJaegerBatch *tw_test_decode_emit_batch_binary(const uint8_t *data, size_t len)
{
    return decode(THRIFT_TYPE_BINARY_PROTOCOL, data, len);
}
