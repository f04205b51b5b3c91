/* health_probe — see health_probe.h. */
#include "health_probe.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "health.h"

/* An IPv4-mapped IPv6 address (a v4 client of a socket bound to ::) as the
 * IPv4 one it is: the client's own socket is listed in /proc/net/tcp. */
static void unmap(struct sockaddr_storage *ss)
{
    const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)(const void *)ss;
    if (ss->ss_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr)) {
        return;
    }
    struct sockaddr_in v4 = {.sin_family = AF_INET, .sin_port = v6->sin6_port};
    memcpy(&v4.sin_addr, &v6->sin6_addr.s6_addr[12], 4);
    memcpy(ss, &v4, sizeof(v4));
}

static bool is_loopback(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET) {
        return (ntohl(((const struct sockaddr_in *)(const void *)ss)->sin_addr.s_addr) >> 24) == 127;
    }
    return ss->ss_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)(const void *)ss)->sin6_addr);
}

/* An address as /proc/net/tcp{,6} prints it: each 32-bit word of the
 * address as the kernel holds it, in hex, then ":" and the port. */
static void proc_form(const struct sockaddr_storage *ss, char *out, size_t size)
{
    uint32_t words[4];
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)(const void *)ss;
        memcpy(words, &v4->sin_addr, 4);
        snprintf(out, size, "%08X:%04X", words[0], ntohs(v4->sin_port));
    } else {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)(const void *)ss;
        memcpy(words, &v6->sin6_addr, 16);
        snprintf(out, size, "%08X%08X%08X%08X:%04X", words[0], words[1], words[2], words[3],
                 ntohs(v6->sin6_port));
    }
}

/* Whether the socket connected from peer to self is owned by our user. */
static bool peer_is_ours(const struct sockaddr_storage *peer, const struct sockaddr_storage *self)
{
    char want_local[64], want_remote[64], line[512], local[64], remote[64];
    proc_form(peer, want_local, sizeof(want_local));
    proc_form(self, want_remote, sizeof(want_remote));
    FILE *f = fopen(peer->ss_family == AF_INET ? "/proc/self/net/tcp" : "/proc/self/net/tcp6", "r");
    bool ours = false;
    while (f && !ours && fgets(line, sizeof(line), f)) {
        unsigned uid;
        /* "  0: 0100007F:D2A4 0100007F:1F40 01 00000000:00000000 00:00000000 00000000  1000 ..." */
        if (sscanf(line, " %*d: %63s %63s %*x %*s %*s %*s %u", local, remote, &uid) == 3 &&
            strcmp(local, want_local) == 0 && strcmp(remote, want_remote) == 0) {
            ours = uid == (unsigned)geteuid();
            break;
        }
    }
    if (f) {
        fclose(f);
    }
    return ours;
}

/* See health_probe.h. */
bool health_probe_is_own(struct MHD_Connection *conn)
{
    const char *agent = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_USER_AGENT);
    if (!agent || strcmp(agent, HEALTH_USER_AGENT) != 0 ||
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Forwarded-For")) {
        return false;
    }
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct sockaddr_storage peer, self;
    socklen_t peer_len = sizeof(peer), self_len = sizeof(self);
    if (!info || getpeername(info->connect_fd, (struct sockaddr *)&peer, &peer_len) != 0 ||
        getsockname(info->connect_fd, (struct sockaddr *)&self, &self_len) != 0) {
        return false;
    }
    unmap(&peer);
    unmap(&self);
    return is_loopback(&peer) && peer.ss_family == self.ss_family && peer_is_ours(&peer, &self);
}
