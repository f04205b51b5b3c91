/*
 * html — inject a snippet (the live-reload <script>) into an HTML document.
 *
 * Pure functions: no I/O, no globals, safe to call from any thread.
 * Owns nothing; html_inject() returns a fresh malloc'd buffer the caller frees.
 */
#ifndef FOLIO_HTML_H
#define FOLIO_HTML_H

#include <stddef.h>

/*
 * Where html_inject() will put the snippet: the offset of the first "</head"
 * end tag (case-insensitive, followed by '>', '/' or whitespace) outside
 * comments and <script>/<style> raw text; else of the first "</body"; else
 * @len (the end).
 */
size_t html_inject_offset(const char *html, size_t len);

/*
 * Returns a malloc'd copy of @html (@len bytes, need not be NUL-terminated)
 * with the NUL-terminated @snippet inserted at html_inject_offset().
 * The result is NUL-terminated; its length without the NUL goes to *out_len.
 * Returns NULL only when memory runs out. @html may be NULL when @len is 0.
 */
char *html_inject(const char *html, size_t len, const char *snippet,
                  size_t *out_len);

#endif
