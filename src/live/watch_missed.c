/* watch_missed — see watch_missed.h. */
#include "watch_missed.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "watch_path.h"

/* See watch_missed.h. */
void watch_missed_note(struct watch_missed *m, const char *root, const char *rel, int err)
{
    m->limit += err == ENOSPC;
    if (m->n++ == 0) {
        m->first = rel[0] ? watch_join(root, rel) : strdup(root);
        m->err = err;
    }
}

/* See watch_missed.h. */
const char *watch_missed_why(int err)
{
    switch (err) {
    case ENOSPC:
        return "the inotify watch limit was reached (fs.inotify.max_user_watches)";
    case EMFILE:
        return "out of file descriptors (RLIMIT_NOFILE, `ulimit -n`)";
    case ENFILE:
        return "the system is out of file descriptors (fs.file-max)";
    case EACCES:
        return "permission denied";
    default:
        return strerror(err);
    }
}

/* See watch_missed.h. */
bool watch_missed_say(struct watch_missed *m, enum watch_missed_then then)
{
    if (m->n == 0 || m->said) {
        return false;
    }
    m->said = true;
    static const char *const thens[] = {
        [WATCH_MISSED_POLLING] = "watching by polling instead (--watch poll)",
        [WATCH_MISSED_AUTO] = "live reload misses changes there (or use --watch poll)",
        [WATCH_MISSED_MISSES] = "live reload misses changes there",
    };
    const char *sysctl = m->limit == 0 ? ""
                         : then == WATCH_MISSED_POLLING
                             ? "; to keep inotify: `sudo sysctl fs.inotify.max_user_watches=524288`"
                             : "; raise the limit: `sudo sysctl fs.inotify.max_user_watches=524288`";
    const char *why = watch_missed_why(m->err); /* the first one's reason */
    char first[ESCAPE_PATH_SIZE]; /* a folder's name is the article's bytes */
    escape_text(m->first ? m->first : "(unnamed)", first, sizeof(first));
    fprintf(stderr, "folio: %zu folder%s not watched, the first %s: %s; %s%s\n", m->n,
            m->n == 1 ? "" : "s", first, why, thens[then], sysctl);
    return true;
}

/* See watch_missed.h. */
void watch_missed_finish(struct watch_missed *m)
{
    free(m->first);
    m->first = NULL;
}
