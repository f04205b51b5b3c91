/* io: blocking writes that finish what they start, and strings written
 * with stdio.
 *
 * write(2) may take fewer bytes than asked (a pipe, a signal); every caller
 * that must hand over all its bytes uses this one loop. A JSON event or a
 * report is written with fprintf and escape_json_fputs into an io_text
 * (open_memstream's stream and buffer kept together), closed into the whole
 * string or, out of memory, nothing. Thread-safe.
 */
#ifndef FOLIO_IO_H
#define FOLIO_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Writes all len bytes of data to fd, retrying on EINTR and short writes;
 * false when fd refuses them for good (errno says why). */
bool io_write_all(int fd, const void *data, size_t len);

/* A string being written through a stream; see io_text_open. */
struct io_text {
    char *buf;
    size_t len;
};

/* A stream whose bytes become t's string (io_text_close); NULL when out of
 * memory. */
FILE *io_text_open(struct io_text *t);

/* Closes out (io_text_open's for t) and returns what was written to it, a
 * string the caller frees; NULL when writing ran out of memory. */
char *io_text_close(struct io_text *t, FILE *out);

#endif
