/* qr — see qr.h. */
#include "qr.h"

#include "build_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/io.h"

#if FOLIO_HAVE_QRENCODE
#include <qrencode.h>

bool qr_available(void)
{
    return true;
}

/* Whether module (x, y) of @code is dark; the quiet zone and beyond are light. */
static bool qr_dark(const QRcode *code, int x, int y)
{
    return x >= 0 && y >= 0 && x < code->width && y < code->width &&
           (code->data[(size_t)y * (size_t)code->width + (size_t)x] & 1);
}

char *qr_terminal(const char *text)
{
    /* Level L: the smallest code (a LAN URL fits version 2, 25 modules), and a
     * terminal is no crumpled label: nothing hides part of it. */
    QRcode *code = QRcode_encodeString(text, 0, QR_ECLEVEL_L, QR_MODE_8, 1);
    if (code == NULL) {
        return NULL;
    }
    struct io_text drawing;
    FILE *out = io_text_open(&drawing);
    if (out == NULL) {
        QRcode_free(code);
        return NULL;
    }
    const int lo = -QR_QUIET_ZONE, hi = code->width + QR_QUIET_ZONE;
    /* Two rows of modules per line: the upper half block is the upper row. */
    for (int y = lo; y < hi; y += 2) {
        fputs("  \x1b[30;47m", out);
        for (int x = lo; x < hi; x++) {
            bool up = qr_dark(code, x, y), down = y + 1 < hi && qr_dark(code, x, y + 1);
            fputs(up && down ? "\u2588" : up ? "\u2580" : down ? "\u2584" : " ", out);
        }
        fputs("\x1b[0m\n", out);
    }
    QRcode_free(code);
    return io_text_close(&drawing, out);
}

#else

bool qr_available(void)
{
    return false;
}

char *qr_terminal(const char *text)
{
    (void)text; /* built without libqrencode: no code to draw */
    return NULL;
}

#endif
