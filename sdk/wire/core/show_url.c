/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sdk/wire/core/show_url.c: tw__show_url and tw__url_parses (redact.h), the
 * one place that decides whether a value a user gave as a URL may be shown
 * at all: the library's configuration messages, `tracewire convert --send`
 * and the agent's destinations use it. Apart from redact.c because it asks
 * libcurl's URL parser (redact.c stays free of libcurl for its fuzz target).
 */
#include "wire/core/redact.h"

#include <curl/curl.h>
#include <stdio.h>

bool tw__url_parses(const char *s)
{
    CURLU *u = curl_url();
    bool ok = u && curl_url_set(u, CURLUPART_URL, s, CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK;
    curl_url_cleanup(u);
    return ok;
}

void tw__show_url(const char *url, char *out, size_t size)
{
    if (tw__url_parses(url))
        tw__redact_url(url, out, size);
    else
        snprintf(out, size, "%s", TW__URL_NOT_SHOWN);
}
