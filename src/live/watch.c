/* watch — see watch.h. The parts: the window (watch_window.c), the root
 * tracker (watch_roots.c), the backends (watch_inotify.c, watch_poll.c),
 * which report through the core they are handed (watch_core.h). This file
 * only wires them and runs the chosen backend's turns on one thread. */
#include "watch.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "watch_core.h"
#include "watch_inotify.h"
#include "watch_poll.h"

struct watch {
    struct watch_core core;
    enum watch_mode mode;      /* WATCH_INOTIFY or WATCH_POLL once created */
    struct watch_inotify *ino; /* the backend, by mode */
    struct watch_poll *poll;
    int stopfd;
    bool threaded;             /* false: stepped by watch_step() */
    pthread_t thread;
};

/* Frees what watch_create() made, whichever step it got to. */
static void watch_free(struct watch *w)
{
    if (w->stopfd >= 0) {
        close(w->stopfd);
    }
    watch_inotify_destroy(w->ino);
    watch_poll_destroy(w->poll);
    watch_roots_finish(&w->core.roots);
    watch_missed_finish(&w->core.missed);
    watch_window_finish(&w->core.window);
    free(w);
}

/* --watch auto, the kernel's watch limit hit by any walk, the first one
 * included: inotify is given up for polling, which has no such limit,
 * rather than missing changes (said with the sysctl that would keep
 * inotify, even if an earlier miss was said). The window keeps what
 * inotify noted; the poll's first walk is the new baseline. False (errno
 * set) when polling cannot be had either. */
static bool watch_poll_instead(struct watch *w)
{
    w->core.missed.said = false;
    watch_missed_say(&w->core.missed, WATCH_MISSED_POLLING);
    watch_inotify_destroy(w->ino); /* its watches go with its descriptor */
    w->ino = NULL;
    struct watch_roots *roots = &w->core.roots;
    roots->ifd = -1; /* as when polling from the start: no tree, no watches */
    roots->in_tree = NULL;
    roots->tree = NULL;
    for (size_t r = 0; r < roots->n; r++) {
        roots->items[r].wd = -1;
        roots->items[r].parents[0].wd = roots->items[r].parents[1].wd = -1;
    }
    atomic_store(&w->core.count, 0);
    w->mode = WATCH_POLL;
    w->poll = watch_poll_create(&w->core);
    return w->poll != NULL;
}

/* One turn of the chosen backend; the milliseconds until it is due again
 * (-1: never, no backend left). With --watch auto, the watch limit met
 * after start-up (a folder made since, or other programs took the user's
 * watches) polls instead, as at start-up: the folders refused would
 * otherwise never be heard. */
static int watch_turn(struct watch *w)
{
    if (w->mode == WATCH_INOTIFY) {
        int timeout = watch_inotify_turn(w->ino);
        if (!w->core.auto_mode || w->core.missed.limit == 0) {
            return timeout;
        }
        if (!watch_poll_instead(w)) {
            fprintf(stderr, "folio: watch: cannot poll either: %s; live reload hears no more changes\n",
                    strerror(errno));
        }
    }
    return w->poll != NULL ? watch_poll_turn(w->poll) : -1;
}

/* Starts the backend @w->mode asks for (auto: polling when inotify cannot
 * be had at all, or not for every folder, rather than not watching). The
 * limit met by the first walk polls here, not on the first turn: the
 * poll's baseline is then taken before anything is served. */
static bool watch_start_backend(struct watch *w)
{
    if (w->mode == WATCH_INOTIFY) {
        w->ino = watch_inotify_create(&w->core);
        if (w->ino == NULL) {
            if (!w->core.auto_mode) {
                return false;
            }
            w->mode = WATCH_POLL;
        } else if (w->core.auto_mode && w->core.missed.limit > 0 && !watch_poll_instead(w)) {
            return false;
        }
    }
    if (w->mode == WATCH_POLL && w->poll == NULL) {
        w->poll = watch_poll_create(&w->core);
        if (w->poll == NULL) {
            return false;
        }
    }
    /* Nothing happened yet: what the initial walk set is not a change. */
    w->core.window.overflow = false;
    w->core.window.first_ms = w->core.window.last_ms = 0;
    return true;
}

/* The watcher thread: a turn, then a wait for events, the next deadline or
 * the stop, until stopped. */
static void *watch_thread(void *arg)
{
    struct watch *w = arg;
    for (;;) {
        int timeout = watch_turn(w);
        struct pollfd pfd[2] = {
            {.fd = w->stopfd, .events = POLLIN},
            {.fd = w->ino != NULL ? watch_inotify_fd(w->ino) : -1, .events = POLLIN},
        };
        int r = poll(pfd, 2, timeout);
        if (r < 0) {
            if (errno == EINTR) {
                continue;
            }
            fprintf(stderr, "folio: watch: poll: %s\n", strerror(errno));
            break;
        }
        if (pfd[0].revents) {
            break;
        }
    }
    return NULL;
}

/* See watch.h. */
struct watch *watch_create(const char *const *paths, size_t n, const struct watch_options *opt,
                           watch_fn fn, watch_swap_fn swapped, void *ctx)
{
    struct watch *w = calloc(1, sizeof *w);
    if (w == NULL) {
        return NULL;
    }
    w->stopfd = -1;
    w->core.fn = fn;
    w->core.ctx = ctx;
    w->core.auto_mode = opt == NULL || opt->mode == WATCH_AUTO;
    w->mode = opt != NULL && opt->mode == WATCH_POLL ? WATCH_POLL : WATCH_INOTIFY;
    unsigned debounce = opt && opt->debounce_ms ? opt->debounce_ms : WATCH_DEBOUNCE_DEFAULT_MS;
    watch_window_init(&w->core.window, debounce, opt ? opt->clock : NULL);
    w->core.poll_ms = opt && opt->poll_interval_ms ? opt->poll_interval_ms : WATCH_POLL_DEFAULT_MS;
    atomic_init(&w->core.count, 0);
    bool roots = watch_roots_init(&w->core.roots, paths, n, &w->core.window, swapped, ctx);
    w->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (!roots || w->stopfd < 0 || !watch_start_backend(w)) {
        goto error;
    }
    w->threaded = opt == NULL || !opt->stepped;
    int err = w->threaded ? pthread_create(&w->thread, NULL, watch_thread, w) : 0;
    if (err != 0) {
        errno = err;
        goto error;
    }
    return w;

error:;
    int saved = errno;
    watch_free(w);
    errno = saved;
    return NULL;
}

/* See watch.h. */
int watch_step(struct watch *w)
{
    return watch_turn(w);
}

/* See watch.h. */
size_t watch_count(const struct watch *w)
{
    return w ? atomic_load(&((struct watch *)w)->core.count) : 0;
}

/* See watch.h. */
void watch_destroy(struct watch *w)
{
    if (w == NULL) {
        return;
    }
    if (w->threaded) {
        uint64_t one = 1;
        ssize_t r = write(w->stopfd, &one, sizeof one);
        (void)r; /* an eventfd write of 1 cannot fail short of overflowing it */
        pthread_join(w->thread, NULL);
    }
    watch_free(w);
}
