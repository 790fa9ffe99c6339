/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracewire/tracewire.h: the whole public API of libtracewire.
 *
 *     #include <tracewire/tracewire.h>
 *     cc app.c $(pkg-config --cflags --libs tracewire)
 *
 * See docs/API.md for the conventions (ownership, errors, thread safety).
 */
#ifndef TRACEWIRE_TRACEWIRE_H
#define TRACEWIRE_TRACEWIRE_H

#include "tracewire/common.h"
#include "tracewire/config.h"
#include "tracewire/context.h"
#include "tracewire/handler.h"
#include "tracewire/propagation.h"
#include "tracewire/reporter.h"
#include "tracewire/sampler.h"
#include "tracewire/scope.h"
#include "tracewire/span.h"
#include "tracewire/tags.h"
#include "tracewire/tracer.h"
#include "tracewire/version.h"

#endif /* TRACEWIRE_TRACEWIRE_H */
