/* small_sndbuf: an LD_PRELOAD shim that gives every socket one process
 * accepts a fixed, small send buffer, as a slow real network leaves a
 * server's: on loopback the kernel sizes a new connection's buffer from
 * its 64 KiB segments, so a body under 64 KiB always fits whole and no
 * client can cut it.
 *
 *   FOLIO_SHIM_SNDBUF=N   SO_SNDBUF N on each accepted socket (the kernel
 *       doubles it, and stops tuning it).
 *
 * Unset (or not a number): accept and accept4 go to the kernel unchanged.
 * The real calls are made with syscall(2), so no libdl and no recursion.
 * Test code only; never installed. */
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Sets the shim's send buffer on fd, when one is asked for; returns fd. */
static int sized(int fd)
{
    const char *v = getenv("FOLIO_SHIM_SNDBUF");
    char *end;
    long n = v ? strtol(v, &end, 10) : 0;
    if (fd >= 0 && v && *end == '\0' && n > 0) {
        int size = (int)n;
        (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
    }
    return fd;
}

/* glibc declares both with its transparent union of address types. */
int accept4(int fd, __SOCKADDR_ARG addr, socklen_t *restrict len, int flags)
{
    return sized((int)syscall(SYS_accept4, fd, addr.__sockaddr__, len, flags));
}

int accept(int fd, __SOCKADDR_ARG addr, socklen_t *restrict len)
{
    return sized((int)syscall(SYS_accept4, fd, addr.__sockaddr__, len, 0));
}
