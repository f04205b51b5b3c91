#include "library.h"

#include <microhttpd.h>
#include <string.h>

/* See library.h. */
bool library_message_is(const char *fmt, const char *prefix)
{
    return strncmp(fmt, prefix, strlen(prefix)) == 0;
}

/* See library.h. */
bool library_close_message_is(const char *fmt, va_list ap, const char *prefix)
{
    if (strcmp(fmt, "%s\n") != 0) {
        return false;
    }
    va_list copy;
    va_copy(copy, ap);
    const char *reason = va_arg(copy, const char *);
    va_end(copy);
    return reason && library_message_is(reason, prefix);
}

/* See library.h. */
bool library_is_verified(const char *version)
{
    return version && strcmp(version, LIBRARY_VERIFIED) == 0;
}

/* See library.h. */
bool library_check(FILE *err)
{
    const char *version = MHD_get_version();
    if (library_is_verified(version)) {
        return true;
    }
    fprintf(err,
            "folio: warning: libmicrohttpd %s is linked; folio relies on behaviours verified on %s "
            "only (src/serve/library.h): run its tests (test_library) before trusting it\n",
            version ? version : "(unknown)", LIBRARY_VERIFIED);
    return false;
}
