"""What preview says on its terminal, and what folio's own pages may tell it.

At start, `folio check`'s errors (ten, then a count) and summary come before
the first request; after a save, one line for what it broke and one for what
it fixed. /__folio/session hands a page its secret; /__folio/report takes a
browser's error or a follow-mode place only from folio's own pages (Origin,
Sec-Fetch-Site, the secret), bounded in size and rate, and never prints or
passes on a byte as sent."""
import http.client
import json
import os
import re
import shutil
import tempfile
import time
import unittest
import urllib.parse

from folio import SLOWDOWN, EventStream, Server, main, write

PAGE = ("<!doctype html><html lang=en><head><meta charset=utf-8><title>t</title></head>\n<body>\n"
        "<h1 id=top>t</h1>\n%s\n</body></html>\n")


def wait_stderr(server, pattern, timeout=3):
    """The first match of pattern in folio's stderr, once it came (None if not in time)."""
    deadline = time.monotonic() + timeout * SLOWDOWN
    while time.monotonic() < deadline:
        m = re.search(pattern, server.stderr_text)
        if m:
            return m
        time.sleep(0.02)
    return None


class Article(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="folio-report-")
        self.root = os.path.join(self.tmp, "article")
        for d in ("www", "fragments", "assets"):
            os.makedirs(os.path.join(self.root, d))
        write(os.path.join(self.root, "assets", "here.png"), b"\x89PNG\r\n\x1a\n")
        self.page('<img src="assets/here.png" alt=here>')

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def page(self, body):
        write(os.path.join(self.root, "www", "index.html"), PAGE % body)


class StartAndSaves(Article):
    def test_a_broken_reference_is_said_before_the_first_request(self):
        self.page('<img src="assets/missing.png" alt=gone>')
        with Server(self.root) as s:
            # Right after the banner (its first line, which scripts read for the port).
            m = wait_stderr(s, r"\nfolio check: 1 error,")
            self.assertIsNotNone(m, s.stderr_text)
            after = s.stderr_text.split(s.banner)[1]
            self.assertRegex(after, r'^folio: check: www/index\.html:4:\d+: error: img src "assets/missing\.png"')
            self.assertEqual(s.log_lines, [])

    def test_a_clean_article_says_its_summary(self):
        with Server(self.root) as s:
            self.assertIsNotNone(wait_stderr(s, "folio check: 0 errors,"), s.stderr_text)
            self.assertNotIn("error:", s.stderr_text)

    def test_start_lists_ten_errors_and_counts_the_rest(self):
        self.page("\n".join('<img src="assets/gone-%02d.png" alt=x>' % i for i in range(15)))
        with Server(self.root) as s:
            self.assertIsNotNone(wait_stderr(s, "folio check: 15 errors"), s.stderr_text)
            self.assertEqual(len(re.findall(r"folio: check: www/index\.html:\d+:\d+: error:", s.stderr_text)), 10)
            self.assertIn("folio: check: and 5 more errors (folio check lists them all)", s.stderr_text)
            self.assertIn("folio check: 15 errors,", s.stderr_text)

    def test_a_save_says_what_it_fixed_and_what_it_broke(self):
        self.page('<img src="assets/missing.png" alt=gone>')
        with Server(self.root) as s:
            self.page('<img src="assets/here.png" alt=here>')
            m = wait_stderr(s, r"folio: check: this save fixed 1: www/index\.html: img src \"assets/missing\.png\"[^\n]*\n")
            self.assertIsNotNone(m, s.stderr_text)
            self.assertNotIn("this save broke", s.stderr_text)
            self.page('<img src="assets/other.png" alt=x>\n<a href="#nowhere">x</a>')
            m = wait_stderr(s, r"folio: check: this save broke 2: www/index\.html: [^\n]*other\.png[^\n]*nowhere")
            self.assertIsNotNone(m, s.stderr_text)
            self.assertEqual(s.stderr_text.count("this save fixed"), 1)

    def test_the_article_bytes_are_escaped_on_the_terminal(self):
        with Server(self.root) as s:
            self.page('<img src="assets/\x1b[2Jgone.png" alt=x>')
            m = wait_stderr(s, r"this save broke 1: [^\n]*\\x1B\[2Jgone")
            self.assertIsNotNone(m, s.stderr_text)
            self.assertNotIn("\x1b", s.stderr_text)


class Reports(Article):
    def session(self, s, **headers):
        conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=5)
        conn.request("GET", "/__folio/session", headers=headers)
        r = conn.getresponse()
        body = r.read()
        conn.close()
        return r.status, body, r

    def key(self, s):
        status, body, _ = self.session(s, **{"Sec-Fetch-Site": "same-origin"})
        self.assertEqual(status, 200, body)
        return json.loads(body)["key"]

    def report(self, s, fields, key=None, conn=None, **headers):
        own = conn is None
        conn = conn or http.client.HTTPConnection("127.0.0.1", s.port, timeout=5)
        h = {"X-Folio-Report": urllib.parse.urlencode(fields)}
        if key is not None:
            h["X-Folio-Key"] = key
        h.update({k.replace("_", "-"): v for k, v in headers.items()})
        conn.request("GET", "/__folio/report", headers=h)
        r = conn.getresponse()
        r.read()
        if own:
            conn.close()
        return r.status

    def fault(self, message, **more):
        fields = {"kind": "error", "message": message, "source": "fragments/chart.html", "line": 12,
                  "column": 5, "device": "HeadlessChrome 120, 390 px"}
        fields.update(more)
        return fields

    def test_the_session_says_the_secret_to_our_pages_only(self):
        with Server(self.root) as s:
            status, body, r = self.session(s, **{"Sec-Fetch-Site": "same-origin"})
            self.assertEqual(status, 200)
            self.assertEqual(r.getheader("Cache-Control"), "no-store")
            self.assertTrue(r.getheader("Content-Type").startswith("application/json"))
            data = json.loads(body)
            self.assertRegex(data["key"], r"^[0-9a-f]{32}$")
            self.assertFalse(data["follow"])
            self.assertEqual(data["faults"], [])
            self.assertTrue(data["check"]["full"])
            self.assertEqual(self.session(s)[0], 200)  # a LAN page over plain HTTP sends neither field
            self.assertEqual(self.session(s, Origin="http://127.0.0.1:%d" % s.port)[0], 200)
            self.assertEqual(self.session(s, **{"Sec-Fetch-Site": "cross-site"})[0], 403)
            self.assertEqual(self.session(s, **{"Sec-Fetch-Site": "same-site"})[0], 403)
            self.assertEqual(self.session(s, Origin="http://evil.example")[0], 403)
            self.assertEqual(self.session(s, Origin="null")[0], 403)

    def test_follow_is_said_in_the_session(self):
        with Server(self.root, "--follow") as s:
            self.assertTrue(json.loads(self.session(s)[1])["follow"])

    def test_a_fault_is_one_line_with_where_and_on_what(self):
        with Server(self.root) as s:
            self.assertEqual(self.report(s, self.fault("TypeError: x is undefined"), self.key(s)), 204)
            m = wait_stderr(s, r"folio: browser: Uncaught TypeError: x is undefined "
                               r"\(fragments/chart\.html:12:5; HeadlessChrome 120, 390 px\)\n", timeout=1)
            self.assertIsNotNone(m, s.stderr_text)
            # Taken, it leaves no access-log line; a refused one does.
            self.assertEqual(self.report(s, self.fault("refused")), 403)
            self.assertIsNotNone(s.wait_log_line('/__folio/report HTTP/1.1" 403'))
            self.assertFalse([l for l in s.log_lines if '/__folio/report HTTP/1.1" 204' in l], s.log_lines)

    def test_another_origin_or_no_secret_is_refused_and_changes_nothing(self):
        with Server(self.root) as s:
            key = self.key(s)
            events = EventStream(s.port)
            self.assertEqual(events.next_event()[0], "hello")
            refused = [
                self.report(s, self.fault("no key")),
                self.report(s, self.fault("wrong key"), "0" * 32),
                self.report(s, self.fault("evil origin"), key, Origin="http://evil.example"),
                self.report(s, self.fault("cross site"), key, Sec_Fetch_Site="cross-site"),
                self.report(s, {"kind": "place", "from": "evil", "place": "P|0|1"}, key, Origin="http://evil.example"),
            ]
            self.assertEqual(refused, [403] * 5)
            self.assertEqual(self.report(s, self.fault("the marker"), key), 204)
            self.assertIsNotNone(wait_stderr(s, "the marker"))
            self.assertNotIn("folio: browser: Uncaught no key", s.stderr_text)
            for word in ("no key", "wrong key", "evil origin", "cross site"):
                self.assertNotIn(word, s.stderr_text)
            kinds = [e[0] for e in events.events_within(0.5)]
            self.assertEqual(kinds, ["fault"], kinds)  # the marker's, and no follow
            events.close()
            status, body, _ = self.session(s)
            self.assertEqual([f["message"] for f in json.loads(body)["faults"]], ["the marker"])

    def test_control_bytes_are_escaped_on_the_terminal_and_in_the_event(self):
        with Server(self.root) as s:
            events = EventStream(s.port)
            events.next_event()
            self.assertEqual(self.report(s, self.fault("boom\x1b]0;owned\x07\r\nfolio: forged"), self.key(s)), 204)
            m = wait_stderr(s, r"Uncaught boom\\x1B\]0;owned\\x07\\x0D\\x0Afolio: forged \(")
            self.assertIsNotNone(m, s.stderr_text)
            self.assertNotIn("\x1b", s.stderr_text)
            self.assertNotIn("\nfolio: forged", s.stderr_text)
            kind, data = events.next_event()[:2]
            self.assertEqual(kind, "fault")
            self.assertEqual(json.loads(data)["message"], "boom\\x1B]0;owned\\x07\\x0D\\x0Afolio: forged")

    def test_a_megabyte_message_is_cut_not_stored(self):
        with Server(self.root) as s:  # the head's limit: libmicrohttpd refuses it whole
            key = self.key(s)
            self.assertEqual(self.report(s, self.fault("A" * (1 << 20)), key), 431)
            self.assertEqual(json.loads(self.session(s)[1])["faults"], [])
        with Server(self.root, "--header-limit", "8M") as s:  # a head that big let in: folio cuts it
            key = self.key(s)
            self.assertEqual(self.report(s, self.fault("B" * (1 << 20)), key), 204)
            m = wait_stderr(s, r"Uncaught (B+)\.\.\. \(")
            self.assertIsNotNone(m, s.stderr_text[:300])
            self.assertLess(len(m.group(1)), 1024)
            stored = json.loads(self.session(s)[1])["faults"][0]["message"]
            self.assertLess(len(stored), 1024)
            self.assertTrue(stored.endswith("..."))

    def test_repeats_are_one_line_with_a_count(self):
        with Server(self.root) as s:
            key = self.key(s)
            self.assertEqual(self.report(s, self.fault("again"), key), 204)
            self.assertEqual(self.report(s, self.fault("again", count=999), key), 204)
            m = wait_stderr(s, r"folio: browser: the same again, 1000 times in all: Uncaught again "
                               r"\(fragments/chart\.html:12:5", timeout=2)
            self.assertIsNotNone(m, s.stderr_text)
            self.assertEqual(s.stderr_text.count("Uncaught again"), 2)

    def test_a_connection_past_its_rate_is_refused(self):
        with Server(self.root) as s:
            key = self.key(s)
            conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=5)
            statuses = [self.report(s, self.fault("flood"), key, conn=conn) for _ in range(400)]
            conn.close()
            self.assertIn(429, statuses)
            self.assertGreaterEqual(statuses.count(204), 240)  # the burst
            self.assertLess(statuses.count(204), 400)

    def test_distinct_faults_kept_are_bounded(self):
        with Server(self.root) as s:
            key = self.key(s)
            conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=5)
            for i in range(105):
                self.assertEqual(self.report(s, self.fault("distinct %03d" % i), key, conn=conn), 204)
            conn.close()
            self.assertIsNotNone(wait_stderr(s, "more than 100 distinct errors; the rest are not said"))
            self.assertIn("distinct 099", s.stderr_text)
            self.assertNotIn("distinct 100", s.stderr_text)
            self.assertEqual(len(json.loads(self.session(s)[1])["faults"]), 100)

    def test_a_place_is_passed_on_and_a_bad_one_is_not(self):
        with Server(self.root) as s:
            key = self.key(s)
            events = EventStream(s.port)
            events.next_event()
            place = "P|0.2500|2:fragment-chart/0/3:my%20id"
            self.assertEqual(self.report(s, {"kind": "place", "from": "tab1", "place": place}, key), 204)
            self.assertEqual(events.next_event()[:2], ("follow", "tab1 " + place))
            for bad in ({"kind": "place", "from": "tab1", "place": "P|0|1\ndata: x"},
                        {"kind": "place", "from": "tab 1", "place": "P|0|1"},
                        {"kind": "place", "from": "tab1", "place": "P|0|" + "1/" * 1000},
                        {"kind": "place", "from": "tab1"}, {"kind": "nothing"}, {}):
                self.assertEqual(self.report(s, bad, key), 400, bad)
            self.assertEqual(events.events_within(0.3), [])
            events.close()

    def test_production_has_no_reports(self):
        with Server(self.root, "--production") as s:
            self.assertEqual(self.session(s)[0], 404)
            self.assertEqual(self.report(s, self.fault("x")), 404)
            self.assertNotIn("folio check:", s.stderr_text)


if __name__ == "__main__":
    main()
