/* fuzz_precondition: conditional headers and HTTP dates.
 *
 * Input: up to five header values, one per line, in this order: If-Match,
 * If-None-Match, If-Modified-Since, If-Unmodified-Since, If-Range (an empty
 * or missing line is an absent header). The first 8 bytes also pick a time
 * for the date round trip. Invariants:
 *  - precondition_date_format of any time in [0, 253402300799] (to 9999-12-31) is 29
 *    characters and precondition_date_parse gives the same time back;
 *  - a header that parses as a date in that range formats and parses back to
 *    the same time, and names that very time: its day, month, year, hour,
 *    minute and second are the calendar fields of the result (no negative
 *    field, no 31 February silently moved into March); a leap second (:60)
 *    is the one exception;
 *  - precondition_evaluate never answers 412 when If-Match is the etag
 *    itself (RFC 9110 13.2.2: only If-Match and If-Unmodified-Since fail);
 *  - If-Range holding the etag, or the formatted last-modified time, allows
 *    the range; an If-Range that is a date allows it only when it equals
 *    last-modified;
 *  - everything is deterministic and never crashes.
 */
#include "fuzz.h"

#include "serve/precondition.h"

#define MAX_TIME 253402300799LL /* 9999-12-31T23:59:59Z */

static const char etag[] = "\"5f-1a2b3c\"";
static const time_t last_modified = 784111777; /* Sun, 06 Nov 1994 08:49:37 GMT */
static const struct precondition_times times = {last_modified, last_modified};
static const time_t now = last_modified + 86400;

static void check_round_trip(time_t t)
{
    char buf[30];
    memset(buf, 'x', sizeof(buf));
    precondition_date_format(t, buf);
    fuzz_check(memchr(buf, '\0', sizeof(buf)) != NULL && strlen(buf) == 29,
               "a formatted date is 29 characters");
    time_t back = -1;
    fuzz_check(precondition_date_parse(buf, &back), "a formatted date parses");
    fuzz_check(back == t, "a formatted date parses to the same time");
}

static int month_of(const char *name)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    for (int i = 0; i < 12; i++) {
        if (strncmp(name, months + 3 * i, 3) == 0) {
            return i;
        }
    }
    return -1;
}

/* Reads the fields of an HTTP-date that precondition_date_parse accepted (by the
 * same three shapes and field widths: this checks what the fields mean, not
 * how strictly they are spelled) and checks that t is exactly that time. */
static void check_fields(const char *text, time_t t)
{
    int day = 0, year = 0, hour = 0, min = 0, sec = 0;
    char mon[4] = "";
    const char *comma = strchr(text, ',');
    int got;
    if (comma && comma - text == 3) {
        got = sscanf(comma + 1, " %2d %3s %4d %2d:%2d:%2d", &day, mon, &year, &hour, &min, &sec);
    } else if (comma) {
        got = sscanf(comma + 1, " %2d-%3s-%2d %2d:%2d:%2d", &day, mon, &year, &hour, &min, &sec);
        fuzz_check(year >= 0, "an accepted date has no negative field");
        year += year < 70 ? 2000 : 1900;
    } else {
        got = sscanf(text, "%*3s %3s %2d %2d:%2d:%2d %4d", mon, &day, &hour, &min, &sec, &year);
    }
    fuzz_check(got == 6, "an accepted date has six fields");
    fuzz_check(day >= 0 && hour >= 0 && min >= 0 && sec >= 0 && year >= 0,
               "an accepted date has no negative field");
    if (sec == 60) {
        return; /* a leap second is the next second to time_t */
    }
    struct tm tm;
    fuzz_check(gmtime_r(&t, &tm) != NULL, "an accepted date is a representable time");
    fuzz_check(tm.tm_mday == day && tm.tm_mon == month_of(mon) && tm.tm_year + 1900 == year &&
                   tm.tm_hour == hour && tm.tm_min == min && tm.tm_sec == sec,
               "an accepted date is exactly the time it names");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t bits = 0;
    for (size_t i = 0; i < size && i < 8; i++) {
        bits = bits << 8 | data[i];
    }
    check_round_trip((time_t)(bits % (uint64_t)(MAX_TIME + 1)));

    char *text = fuzz_cstring(data, size);
    const char *field[5] = {NULL};
    char *p = text;
    for (int i = 0; i < 5 && p != NULL; i++) {
        char *nl = strchr(p, '\n');
        if (nl != NULL) {
            *nl = '\0';
        }
        field[i] = *p ? p : NULL;
        p = nl != NULL ? nl + 1 : NULL;
    }

    for (int i = 0; i < 5; i++) {
        time_t t = -1, t2 = -1;
        if (field[i] == NULL) {
            continue;
        }
        bool ok = precondition_date_parse(field[i], &t);
        fuzz_check(precondition_date_parse(field[i], &t2) == ok && (!ok || t == t2), "date parse is deterministic");
        if (ok) {
            check_fields(field[i], t);
        }
        if (ok && t >= 0 && t <= MAX_TIME) {
            check_round_trip(t);
        }
    }

    struct precondition_headers h = {field[0], field[1], field[2], field[3]};
    enum precondition_result r = precondition_evaluate(&h, etag, &times, now);
    fuzz_check(r == PRECONDITION_PASS || r == PRECONDITION_NOT_MODIFIED || r == PRECONDITION_FAILED,
               "a known result");
    fuzz_check(precondition_evaluate(&h, etag, &times, now) == r, "deterministic");
    if (h.if_match == NULL && h.if_unmodified_since == NULL) {
        fuzz_check(r != PRECONDITION_FAILED, "412 needs If-Match or If-Unmodified-Since");
    }
    if (h.if_none_match == NULL && h.if_modified_since == NULL) {
        fuzz_check(r != PRECONDITION_NOT_MODIFIED, "304 needs If-None-Match or If-Modified-Since");
    }
    h.if_match = etag;
    fuzz_check(precondition_evaluate(&h, etag, &times, now) != PRECONDITION_FAILED,
               "If-Match with the etag itself never fails");

    const char *if_range = field[4];
    bool allowed = precondition_if_range(if_range, etag, &times, now);
    fuzz_check(precondition_if_range(if_range, etag, &times, now) == allowed, "deterministic");
    fuzz_check(precondition_if_range(NULL, etag, &times, now), "no If-Range allows the range");
    fuzz_check(precondition_if_range(etag, etag, &times, now), "the etag allows the range");
    char lm[30];
    precondition_date_format(last_modified, lm);
    fuzz_check(precondition_if_range(lm, etag, &times, now), "last-modified allows the range");
    time_t t;
    const char *q = if_range != NULL ? if_range + strspn(if_range, " \t") : NULL;
    if (q != NULL && precondition_date_parse(q, &t)) {
        if (*q != '"' && strncmp(q, "W/", 2) != 0) {
            fuzz_check(allowed == (t == last_modified), "a date If-Range allows exactly last-modified");
        }
    }
    if (allowed && if_range != NULL) {
        fuzz_check(strchr(if_range, ',') == NULL || precondition_date_parse(q, &t),
                   "an etag list never allows a range");
    }
    free(text);
    return 0;
}
