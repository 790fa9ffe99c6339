/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/convert_util.c: the output helpers the writers of `tracewire
 * convert` share (bridge/convert.h): writing a document's bytes and
 * flushing them, with write errors turned into TW_E_IO naming the system's
 * reason. The parsing rules the readers share are the wire layer's
 * (sdk/wire/core/hex.h, time.h, the model's builders). No state.
 */
#include "convert.h"

#include <errno.h>
#include <string.h>

tw_status twb_write_out(FILE *out, const void *data, size_t len, tw_error **err)
{
    if (len && fwrite(data, 1, len, out) != len) {
        tw__set_error(err, TW_E_IO, "write error: %s", strerror(errno));
        return TW_E_IO;
    }
    return TW_OK;
}

tw_status twb_flush_out(FILE *out, tw_error **err)
{
    if (fflush(out) != 0 || ferror(out)) {
        tw__set_error(err, TW_E_IO, "write error: %s", strerror(errno));
        return TW_E_IO;
    }
    return TW_OK;
}
