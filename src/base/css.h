/* css — the references in a stylesheet: url() and @import, as a browser's
 * CSS tokenizer finds them (CSS Syntax 3, 4.3), enough for folio: comments
 * and plain strings hold none; "myurl(" is not "url(".
 *
 * Used by rewrite.c (the proxy prefix) and check.c (broken references), for
 * stylesheets, <style> elements and style attributes alike. Pure, no
 * allocation, thread-safe; offsets point into the caller's buffer.
 */
#ifndef FOLIO_CSS_H
#define FOLIO_CSS_H

#include <stdbool.h>
#include <stddef.h>

struct css_ref {
    size_t url, url_len; /* the reference, inside its quotes if it has them,
                            without the blanks around an unquoted url() */
    bool import;         /* @import "x" (an @import url(x) is a url()) */
};

/* The next reference of @css[0, len) from *pos (0 to start) into *r, *pos
 * advanced past it; false when there are no more. */
bool css_next_ref(const char *css, size_t len, size_t *pos, struct css_ref *r);

#endif
