/* watch_path — see watch_path.h. */
#include "watch_path.h"

#include <stdlib.h>
#include <string.h>

/* See watch_path.h: dotfiles and editors' scratch files. */
bool watch_ignored_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || name[0] == '.') {
        return true; /* dotfiles: .git, .#lock (emacs), .name.swp (vim) */
    }
    if (name[n - 1] == '~') {
        return true; /* backups: vim, emacs, gedit */
    }
    if (strcmp(name, "4913") == 0) {
        return true; /* vim's probe for a writable directory */
    }
    if (name[0] == '#' && n > 1 && name[n - 1] == '#') {
        return true; /* emacs auto-save */
    }
    static const char *const suffixes[] = {
        ".swp", ".swx", ".swo", "___jb_tmp___", "___jb_old___",
    };
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        size_t s = strlen(suffixes[i]);
        if (n >= s && strcmp(name + n - s, suffixes[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* See watch_path.h. */
char *watch_join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + lb + 2);
    if (s == NULL) {
        return NULL;
    }
    if (la > 0) {
        memcpy(s, a, la);
        s[la++] = '/';
    }
    memcpy(s + la, b, lb + 1);
    return s;
}
