/* inotify_limit: an LD_PRELOAD shim that gives one process the kernel's two
 * inotify limits without writing /proc/sys (read-only in a container), so the
 * watch-limit tests run the code path folio takes on a real machine, anywhere.
 *
 *   FOLIO_SHIM_MAX_INOTIFY_WATCHES=N    as fs.inotify.max_user_watches: once N
 *       watches are held, inotify_add_watch on a new inode fails with ENOSPC.
 *   FOLIO_SHIM_MAX_INOTIFY_INSTANCES=N  as fs.inotify.max_user_instances: after
 *       N instances, inotify_init and inotify_init1 fail with EMFILE.
 *   FOLIO_SHIM_INOTIFY_FULL_WHEN=PATH   while PATH exists, no new inode can be
 *       watched (ENOSPC): the user's watches taken meanwhile by other programs
 *       (an editor, a file indexer), so the limit is reached after start-up.
 *
 * Unset (or not a number): no limit, the call goes to the kernel unchanged.
 * Like the kernel, a watch is one (instance, inode): adding an inode already
 * watched on that instance returns its descriptor and takes no new one; a
 * watch is given back by inotify_rm_watch (a deleted folder's IN_IGNORED and
 * a closed instance are not counted back: the tests delete nothing watched).
 * The real calls are made with syscall(2), so no libdl and no recursion.
 * Thread-safe: one mutex around the table. Test code only; never installed. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SHIM_MAX_WATCHES 4096

struct shim_watch {
    int ifd;
    int wd;
    dev_t dev;
    ino_t ino;
};

static pthread_mutex_t shim_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shim_watch shim_watches[SHIM_MAX_WATCHES];
static size_t shim_nwatches;
static long shim_ninstances;

/* The limit an environment variable sets, or -1 for none. */
static long shim_limit(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v) {
        return -1;
    }
    char *end;
    long n = strtol(v, &end, 10);
    return *end == '\0' && n >= 0 ? n : -1;
}

static int shim_init(int flags, int use_init1)
{
    long limit = shim_limit("FOLIO_SHIM_MAX_INOTIFY_INSTANCES");
    pthread_mutex_lock(&shim_lock);
    if (limit >= 0 && shim_ninstances >= limit) {
        pthread_mutex_unlock(&shim_lock);
        errno = EMFILE;
        return -1;
    }
#ifdef SYS_inotify_init
    long fd = use_init1 ? syscall(SYS_inotify_init1, flags) : syscall(SYS_inotify_init);
#else
    (void)use_init1;
    long fd = syscall(SYS_inotify_init1, flags);
#endif
    if (fd >= 0) {
        shim_ninstances++;
    }
    pthread_mutex_unlock(&shim_lock);
    return (int)fd;
}

int inotify_init(void)
{
    return shim_init(0, 0);
}

int inotify_init1(int flags)
{
    return shim_init(flags, 1);
}

int inotify_add_watch(int fd, const char *pathname, uint32_t mask)
{
    long limit = shim_limit("FOLIO_SHIM_MAX_INOTIFY_WATCHES");
    const char *full_when = getenv("FOLIO_SHIM_INOTIFY_FULL_WHEN");
    int flagged = full_when && *full_when; /* then watches are counted from the first */
    if (limit < 0 && !flagged) {
        return (int)syscall(SYS_inotify_add_watch, fd, pathname, mask);
    }
    int full = flagged && access(full_when, F_OK) == 0;
    struct stat st;
    int flags = mask & IN_DONT_FOLLOW ? AT_SYMLINK_NOFOLLOW : 0;
    if (fstatat(AT_FDCWD, pathname, &st, flags) != 0) {
        /* The kernel's own error (ENOENT, ENOTDIR, EACCES, ...). */
        return (int)syscall(SYS_inotify_add_watch, fd, pathname, mask);
    }
    pthread_mutex_lock(&shim_lock);
    int known = 0;
    for (size_t i = 0; i < shim_nwatches; i++) {
        if (shim_watches[i].ifd == fd && shim_watches[i].dev == st.st_dev && shim_watches[i].ino == st.st_ino) {
            known = 1;
            break;
        }
    }
    if (!known && (full || (limit >= 0 && (long)shim_nwatches >= limit) ||
                   shim_nwatches == SHIM_MAX_WATCHES)) {
        pthread_mutex_unlock(&shim_lock);
        errno = ENOSPC;
        return -1;
    }
    long wd = syscall(SYS_inotify_add_watch, fd, pathname, mask);
    int err = errno;
    if (wd >= 0 && !known) {
        shim_watches[shim_nwatches++] = (struct shim_watch){fd, (int)wd, st.st_dev, st.st_ino};
    }
    pthread_mutex_unlock(&shim_lock);
    errno = err;
    return (int)wd;
}

int inotify_rm_watch(int fd, int wd)
{
    long r = syscall(SYS_inotify_rm_watch, fd, wd);
    int err = errno;
    pthread_mutex_lock(&shim_lock);
    for (size_t i = 0; i < shim_nwatches; i++) {
        if (shim_watches[i].ifd == fd && shim_watches[i].wd == wd) {
            shim_watches[i] = shim_watches[--shim_nwatches];
            break;
        }
    }
    pthread_mutex_unlock(&shim_lock);
    errno = err;
    return (int)r;
}
