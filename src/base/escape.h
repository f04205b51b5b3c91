/* escape — the one rule for a line folio prints from bytes it did not write:
 * an article's file names, references and ids, a client's request, a config
 * value. Such a byte must neither drive the terminal (ESC and CSI sequences
 * erase lines and move the cursor; OSC sets the title or the clipboard),
 * nor break or reorder the line (CR, LF, the bidirectional overrides), so
 * every byte of
 *   - a C0 control, DEL or a C1 control (U+0080..U+009F),
 *   - a bidirectional or line-separating format character (U+061C,
 *     U+200E/F, U+2028/9, U+202A..U+202E, U+2066..U+2069),
 *   - a sequence that is no well-formed UTF-8 (RFC 3629)
 * is written \xHH; printable ASCII and the rest of well-formed UTF-8 stay as
 * they are. The access log's text formats, the config errors, `folio check`'s
 * text report and the watcher's and server's messages all use it.
 *
 * Pure; safe from any thread.
 */
#ifndef FOLIO_ESCAPE_H
#define FOLIO_ESCAPE_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

/* Room for a path escaped whole (each byte at most four). */
#define ESCAPE_PATH_SIZE (4 * PATH_MAX + 8)

/* The length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong
 * form, no surrogate, nothing past U+10FFFF), or 0 when p starts none. */
size_t escape_utf8_length(const unsigned char *p);

/* How many bytes at p (NUL-terminated) are written as they are: 1 to 4, or
 * 0 when the byte at p is written \xHH. */
size_t escape_keep(const unsigned char *p);

/* Writes s into out (size at least 8), NUL-terminated, by the rule; "..."
 * ends what does not fit. Returns the length written. */
size_t escape_text(const char *s, char *out, size_t size);

/* Writes s to out by the rule. */
void escape_fputs(const char *s, FILE *out);

#endif
