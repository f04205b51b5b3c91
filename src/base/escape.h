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
 * JSON has its own rule, one for every JSON folio writes (the access log's,
 * `folio check --json`, the live panel's events): a JSON text is UTF-8 and
 * its reader unescapes, so well-formed UTF-8 stays, '"' and '\' and the C0
 * controls and DEL are escaped (RFC 8259 7), and a byte that is no UTF-8
 * becomes U+FFFD: never a byte read as Latin-1, never a text that is no
 * JSON.
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

/* The longest stand-in escape_json_step writes, NUL aside. */
#define ESCAPE_JSON_STEP_MAX 6

/* One step of the JSON rule over s (at a byte that is not its NUL): writes
 * into out (NUL-terminated) what stands for the character at s, returns its
 * length, and sets *taken to the bytes of s it stands for (1 to 4). */
size_t escape_json_step(const char *s, char out[ESCAPE_JSON_STEP_MAX + 1], size_t *taken);

/* Writes s to out as a JSON string by the JSON rule, quotes included. */
void escape_json_fputs(const char *s, FILE *out);

#endif
