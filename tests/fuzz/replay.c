/* replay: runs a fuzz target over saved inputs, without libFuzzer.
 *
 * Usage: fuzz-replay-<name> PATH...  where each PATH is a file or a
 * directory of files (not recursive; dotfiles are skipped). Prints how many
 * inputs ran; fails when none did, so a missing corpus cannot pass quietly.
 * When an invariant aborts, the input that broke it is named on stderr.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

static char current[4096];

static void on_abort(int sig)
{
    static const char msg[] = "fuzz-replay: failing input: ";
    (void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
    (void)!write(STDERR_FILENO, current, strlen(current));
    (void)!write(STDERR_FILENO, "\n", 1);
    signal(sig, SIG_DFL);
    raise(sig);
}

static bool run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "fuzz-replay: %s: %s\n", path, strerror(errno));
        return false;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t n;
    while (buf != NULL && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            uint8_t *grown = realloc(buf, cap *= 2);
            if (grown == NULL) {
                free(buf);
            }
            buf = grown;
        }
    }
    bool failed = ferror(f);
    fclose(f);
    if (buf == NULL || failed) {
        fprintf(stderr, "fuzz-replay: %s: %s\n", path, failed ? "read error" : "out of memory");
        free(buf);
        return false;
    }
    snprintf(current, sizeof(current), "%s", path);
    /* Like libFuzzer, hand over exactly len bytes: a copy of that size lets
     * ASan and valgrind see a read past the end. */
    uint8_t *exact = malloc(len ? len : 1);
    if (exact == NULL) {
        free(buf);
        return false;
    }
    memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return true;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every file of a directory in name order; returns how many, or -1. */
static long run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        fprintf(stderr, "fuzz-replay: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t count = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') {
            continue;
        }
        if (count == cap) {
            char **grown = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*names));
            if (grown == NULL) {
                abort();
            }
            names = grown;
        }
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        names[count] = malloc(n);
        if (names[count] == NULL) {
            abort();
        }
        snprintf(names[count++], n, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(names, count, sizeof(*names), compare_names);
    long ran = 0;
    for (size_t i = 0; i < count; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            if (!run_file(names[i])) {
                ran = -1;
            } else if (ran >= 0) {
                ran++;
            }
        }
        free(names[i]);
    }
    free(names);
    return ran;
}

int main(int argc, char **argv)
{
    signal(SIGABRT, on_abort);
    long total = 0;
    int status = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "fuzz-replay: %s: %s\n", argv[i], strerror(errno));
            status = 1;
            continue;
        }
        long ran = S_ISDIR(st.st_mode) ? run_dir(argv[i]) : (run_file(argv[i]) ? 1 : -1);
        if (ran < 0) {
            status = 1;
        } else {
            total += ran;
        }
    }
    printf("fuzz-replay: %s: %ld inputs ran\n", argc > 0 ? argv[0] : "?", total);
    if (total == 0) {
        fprintf(stderr, "fuzz-replay: no inputs (give a corpus directory)\n");
        return 1;
    }
    return status;
}
