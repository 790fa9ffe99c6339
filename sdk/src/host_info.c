/* SPDX-License-Identifier: Apache-2.0 */
/*
 * host_info.c: what a tracer says about its process: host name, the first
 * non-loopback IPv4 address (Jaeger's `ip` process tag), and a random
 * client-uuid. Read once per tracer at creation; no shared state.
 */
#include "internal.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ids.h"

bool tw__host_name(char *buf, size_t size);
bool tw__host_ipv4(char *buf, size_t size);
void tw__uuid4(char out[37]);

bool tw__host_name(char *buf, size_t size)
{
    if (gethostname(buf, size) != 0)
        return false;
    buf[size - 1] = '\0';
    return buf[0] != '\0';
}

bool tw__host_ipv4(char *buf, size_t size)
{
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) != 0)
        return false;
    bool found = false;
    for (struct ifaddrs *i = ifs; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
            continue;
        const struct sockaddr_in *sin = (const struct sockaddr_in *)(const void *)i->ifa_addr;
        if ((ntohl(sin->sin_addr.s_addr) >> 24) == 127)
            continue; /* loopback */
        found = inet_ntop(AF_INET, &sin->sin_addr, buf, (socklen_t)size) != NULL;
    }
    freeifaddrs(ifs);
    return found;
}

/* RFC 4122 version 4 UUID from the CSPRNG, lower-case. */
void tw__uuid4(char out[37])
{
    unsigned char b[16];
    tw__random_bytes(b, sizeof b);
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}
