/* qr — a URL as a QR code that a phone's camera reads off the terminal.
 *
 * Preview prints one under its network URL when stderr is a terminal
 * (main.c's banner), so opening the article on a phone is a scan, not
 * typing an address. The code is libqrencode's (Debian's libqrencode-dev);
 * a build without it (meson -Dqrencode=disabled) prints none.
 *
 * Pure and thread-safe: no I/O, the result is the caller's to free.
 */
#ifndef FOLIO_QR_H
#define FOLIO_QR_H

#include <stdbool.h>

/* Margin of light modules around the code, each side. */
#define QR_QUIET_ZONE 2

/* True when this build can draw codes (it was built with libqrencode). */
bool qr_available(void);

/* @text as a QR code for a terminal, malloc'd: each line is two rows of
 * modules drawn with the half blocks ▀ ▄ █ and spaces, black on white
 * (ANSI SGR 30;47, reset at each line's end, so a dark or a light theme
 * shows the same code), indented by two spaces, the quiet zone included.
 * NULL when it cannot be encoded (too long, out of memory, no libqrencode). */
char *qr_terminal(const char *text);

#endif
