/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/error.h: how the wire layer reports a failure to its caller:
 * a tw_error (tracewire/common.h) with a status and a printf-formatted
 * message. The definition is the library's (sdk/src/error.c); the wire
 * layer, the SDK and the `tracewire` command all declare it from here, so
 * the command needs no SDK private header for it.
 *
 * Locking: none; @err belongs to the caller.
 */
#ifndef TW_WIRE_CORE_ERROR_H
#define TW_WIRE_CORE_ERROR_H

#include "tracewire/common.h"

/* Sets *@err (when @err is not NULL and *@err is NULL) to a new error with
 * @status and the formatted message; an error already set is kept. The
 * message also goes to the library's logger (warning level; debug for
 * TW_E_NOT_FOUND). */
void tw__set_error(tw_error **err, tw_status status, const char *fmt, ...) TW_PRINTF(3, 4);

#endif /* TW_WIRE_CORE_ERROR_H */
