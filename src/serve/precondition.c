#include "precondition.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "request.h"

/* Walks an entity-tag list ("*" or 1#entity-tag). weak_ok selects the weak
 * comparison used by If-None-Match; If-Match and If-Range compare strongly. */
static bool etag_list_matches(const char *list, const char *etag, bool weak_ok)
{
    const char *p = request_skip_ows(list);
    if (*p == '*' && *request_skip_ows(p + 1) == '\0') {
        return true;
    }
    size_t etag_len = strlen(etag);
    while (*p) {
        if (*p == ',') { /* an empty list element, which a recipient accepts (RFC 9110 5.6.1) */
            p = request_skip_ows(p + 1);
            continue;
        }
        bool weak = false;
        if (p[0] == 'W' && p[1] == '/') {
            weak = true;
            p += 2;
        }
        if (*p != '"') {
            return false; /* malformed: stop comparing rather than guess */
        }
        const char *end = strchr(p + 1, '"');
        if (!end) {
            return false;
        }
        size_t len = (size_t)(end - p + 1);
        if ((weak_ok || !weak) && len == etag_len && memcmp(p, etag, len) == 0) {
            return true;
        }
        p = request_skip_ows(end + 1);
        if (*p == ',') {
            p = request_skip_ows(p + 1);
        } else if (*p) {
            return false;
        }
    }
    return false;
}

time_t precondition_last_modified(const struct precondition_times *t, time_t now)
{
    return t->modified < now ? t->modified : now;
}

/* Whether the file has changed since date (see precondition_evaluate). */
static bool modified_since(const struct precondition_times *t, time_t date, time_t now)
{
    if (t->modified > now) { /* its Last-Modified is a stand-in: the change time decides */
        return t->changed > date;
    }
    return t->modified > date || (t->modified != date && t->changed > date);
}

enum precondition_result precondition_evaluate(const struct precondition_headers *h, const char *etag,
                                               const struct precondition_times *t, time_t now)
{
    time_t date;
    if (h->if_match) {
        if (!etag_list_matches(h->if_match, etag, false)) {
            return PRECONDITION_FAILED;
        }
    } else if (h->if_unmodified_since && precondition_date_parse(h->if_unmodified_since, &date) &&
               modified_since(t, date, now)) {
        return PRECONDITION_FAILED;
    }
    if (h->if_none_match) {
        return etag_list_matches(h->if_none_match, etag, true) ? PRECONDITION_NOT_MODIFIED
                                                               : PRECONDITION_PASS;
    }
    if (h->if_modified_since && precondition_date_parse(h->if_modified_since, &date) && date <= now &&
        !modified_since(t, date, now)) {
        return PRECONDITION_NOT_MODIFIED;
    }
    return PRECONDITION_PASS;
}

bool precondition_if_range(const char *if_range, const char *etag, const struct precondition_times *t,
                           time_t now)
{
    if (!if_range) {
        return true;
    }
    const char *p = request_skip_ows(if_range);
    if (*p == '"' || (p[0] == 'W' && p[1] == '/')) {
        return etag_list_matches(p, etag, false) && !strchr(p, ',');
    }
    time_t date;
    return t->modified <= now && precondition_date_parse(p, &date) && date == t->modified;
}

static int month_index(const char *name)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    for (int i = 0; i < 12; i++) {
        if (strncmp(name, months + 3 * i, 3) == 0) {
            return i;
        }
    }
    return -1;
}

bool precondition_date_parse(const char *text, time_t *out)
{
    struct tm tm = {0};
    char month[4] = "", zone[4] = "";
    int consumed = 0;
    const char *comma = strchr(text, ',');
    if (comma && comma - text == 3) {
        /* IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT */
        if (sscanf(comma + 1, " %2d %3s %4d %2d:%2d:%2d %3s%n", &tm.tm_mday, month, &tm.tm_year,
                   &tm.tm_hour, &tm.tm_min, &tm.tm_sec, zone, &consumed) != 7) {
            return false;
        }
        comma += 1;
    } else if (comma) {
        /* RFC 850: Sunday, 06-Nov-94 08:49:37 GMT */
        if (sscanf(comma + 1, " %2d-%3s-%2d %2d:%2d:%2d %3s%n", &tm.tm_mday, month, &tm.tm_year,
                   &tm.tm_hour, &tm.tm_min, &tm.tm_sec, zone, &consumed) != 7) {
            return false;
        }
        comma += 1;
        if (tm.tm_year < 0) {
            return false;
        }
        /* RFC 9110 5.6.7: a two-digit year more than 50 years ahead is in the past. */
        tm.tm_year += tm.tm_year < 70 ? 2000 : 1900;
    } else {
        /* asctime: Sun Nov  6 08:49:37 1994 */
        char weekday[4];
        if (sscanf(text, "%3s %3s %2d %2d:%2d:%2d %4d%n", weekday, month, &tm.tm_mday, &tm.tm_hour,
                   &tm.tm_min, &tm.tm_sec, &tm.tm_year, &consumed) != 7) {
            return false;
        }
        comma = text;
        strcpy(zone, "GMT");
    }
    if (strcmp(zone, "GMT") != 0 || *request_skip_ows(comma + consumed) != '\0') {
        return false;
    }
    tm.tm_mon = month_index(month);
    tm.tm_year -= 1900;
    /* %d reads a sign too: "-1:49:37" must not become 07:49:37. */
    if (tm.tm_mon < 0 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour < 0 || tm.tm_hour > 23 ||
        tm.tm_min < 0 || tm.tm_min > 59 || tm.tm_sec < 0 || tm.tm_sec > 60 || tm.tm_year < 0) {
        return false;
    }
    /* timegm moves 31 Feb to 3 Mar; a day the month lacks is no date. */
    struct tm day = tm;
    day.tm_sec = 0;
    timegm(&day);
    if (day.tm_mday != tm.tm_mday) {
        return false;
    }
    *out = timegm(&tm);
    return *out != (time_t)-1;
}

void precondition_date_format(time_t t, char buf[30])
{
    struct tm tm;
    if (t < 0 || !gmtime_r(&t, &tm) || tm.tm_year > 9999 - 1900) {
        t = 0;
        gmtime_r(&t, &tm);
    }
    size_t n = strftime(buf, 30, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    assert(n == 29); /* IMF-fixdate is fixed-width: the clamp keeps the year to four digits */
    (void)n;
}
