/* io: blocking writes that finish what they start.
 *
 * write(2) may take fewer bytes than asked (a pipe, a signal); every caller
 * that must hand over all its bytes uses this one loop. Thread-safe.
 */
#ifndef FOLIO_IO_H
#define FOLIO_IO_H

#include <stdbool.h>
#include <stddef.h>

/* Writes all len bytes of data to fd, retrying on EINTR and short writes;
 * false when fd refuses them for good (errno says why). */
bool io_write_all(int fd, const void *data, size_t len);

#endif
