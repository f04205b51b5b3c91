"""Hostile input over raw sockets: traversal in every encoding, links out of
the folders, dotfiles, malformed requests, oversized headers, slow clients.
Whatever comes in, nothing outside the article is served and the server
keeps answering."""
import contextlib
import os
import re
import socket
import time

from folio import SECRET, SLOWDOWN, ArticleTestCase, Server, main, status_of


def get(path, extra=b""):
    return b"GET " + path + b" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n" + extra + b"\r\n"


def count_served(server, n, timeout=5):
    """Opens n connections at once, then asks for a file on each; returns how
    many were answered (the others were refused, or wait unaccepted)."""
    socks = [socket.create_connection(("127.0.0.1", server.port), timeout=timeout * SLOWDOWN)
             for _ in range(n)]
    served = 0
    try:
        time.sleep(0.3 * SLOWDOWN)
        for s in socks:
            try:
                s.sendall(b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\n\r\n")
                served += s.recv(100).startswith(b"HTTP/1.1 200")
            except OSError:
                pass
    finally:
        for s in socks:
            s.close()
    return served


class Traversal(ArticleTestCase):
    attempts = [
        b"/../secret.txt",
        b"/../../../../../../etc/passwd",
        b"/%2e%2e/secret.txt",
        b"/%2E%2E/%2e%2E/secret.txt",
        b"/.%2e/secret.txt",
        b"/%2e./secret.txt",
        b"/assets/../../secret.txt",
        b"/assets/%2e%2e/%2e%2e/secret.txt",
        b"/fragments/..%2f..%2fsecret.txt",
        b"/..%2fsecret.txt",
        b"/..%5csecret.txt",
        b"/..\\secret.txt",
        b"/%252e%252e/secret.txt",
        b"/%c0%ae%c0%ae/secret.txt",
        b"/%e0%80%ae%e0%80%ae/secret.txt",
        b"/....//secret.txt",
        b"/./../secret.txt",
        b"//../secret.txt",
        b"/assets/./../../www-evil/page.html",
        b"/../www-evil/page.html",
        b"/evil-dir/page.html",          # symlinked folder pointing out
        b"/sub/escape.txt",              # relative symlink out
        b"/absolute.txt",                # absolute symlink out
        b"/%2fsecret.txt",
        b"http://localhost/../secret.txt",
        b"/secret.txt%00.html",
        b"/.env",
        b"/.git/config",
        b"/%2egit/config",
        b"/.hidden/page.html",
        b"/sub/../.env",
        b"/assets/../.env",
    ]

    def test_nothing_outside_is_served(self):
        for path in self.attempts:
            resp = self.server.raw(get(path))
            status = status_of(resp)
            self.assertNotIn(SECRET, resp, path)
            self.assertIn(status, (400, 404), (path, resp[:200]))
        self.assertTrue(self.server.alive())

    def test_expected_statuses(self):
        for path, status in ((b"/%2e%2e/secret.txt", 404), (b"/..%2fsecret.txt", 400),
                             (b"/secret.txt%00.html", 400), (b"/.env", 404),
                             (b"/evil-dir/page.html", 404), (b"/%zz", 400), (b"/%4", 400)):
            self.assertEqual(status_of(self.server.raw(get(path))), status, path)

    def test_links_inside_work(self):
        r = self.server.get("/alias.css")
        if "openat2 is unavailable" in self.server.stderr_text:
            # valgrind (and old kernels) lack openat2: the fallback walk follows no link.
            self.assertEqual(r.status, 404)
            return
        self.assertEqual(r.status, 200)
        self.assertEqual(r.body, self.file("www/style.css"))

    def test_clamped_dot_segments_stay_inside(self):
        # Like a browser: ".." above the root stays at the root.
        self.assertEqual(self.server.get("/../style.css").body, self.file("www/style.css"))
        self.assertEqual(self.server.get("/assets/../style.css").body, self.file("www/style.css"))

    def test_fifo_is_not_served_and_does_not_block(self):
        start = time.monotonic()
        self.assertEqual(self.server.get("/pipe.html").status, 404)
        self.assertLess(time.monotonic() - start, 3 * SLOWDOWN)


class Malformed(ArticleTestCase):
    requests = [
        b"GARBAGE\r\n\r\n",
        b"GET\r\n\r\n",
        b"GET /\r\n\r\n",
        b"GET / HTTP/9.9\r\nHost: localhost\r\n\r\n",
        b"GET / HTTP/1.1\r\n\r\n",                      # HTTP/1.1 without Host
        b"GET / HTTP/1.1\r\nHost t\r\n\r\n",             # header without a colon
        b"GET / HTTP/1.1\r\nHost: localhost\r\n folded: x\r\n\r\n",
        b"\x00\x01\x02\x03\xff\xfe\r\n\r\n",
        b"GET /\x00 HTTP/1.1\r\nHost: localhost\r\n\r\n",
        b"GET " + b"/a" * 40000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: " + b"x" * 100000 + b"\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: localhost\r\n" + b"X-Many: y\r\n" * 5000 + b"\r\n",
        b"GET / HTTP/1.1\r\nHost: localhost\r\nContent-Length: -5\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 99999999999999999999\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nhello",
        b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nRange: bytes=" + b"0-1," * 5000 + b"\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nAccept-Encoding: " + b"gzip;q=0.5," * 2000 + b"\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nIf-None-Match: " + b'"a",' * 3000 + b"\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nIf-Modified-Since: Sun, 99 Foo 99999 99:99:99 GMT\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nRange: bytes=18446744073709551615-18446744073709551616\r\n\r\n",
    ]

    def test_every_bad_request_gets_an_answer_or_a_close(self):
        for data in self.requests:
            resp = self.server.raw(data, timeout=2)
            status = status_of(resp)
            # A clear status, or (for bytes that are not HTTP at all) a close.
            self.assertTrue(status is None or 200 <= status < 600, (data[:60], resp[:100]))
            if resp:
                self.assertTrue(resp.startswith(b"HTTP/1."), (data[:60], resp[:100]))
            self.assertTrue(self.server.alive(), data[:60])

    def test_specific_answers(self):
        self.assertEqual(status_of(self.server.raw(self.requests[4])), 400)  # no Host
        big = status_of(self.server.raw(self.requests[10]))
        self.assertIn(big, (413, 431))
        long_url = status_of(self.server.raw(self.requests[9]))
        self.assertIn(long_url, (414, 431, 413))
        self.assertEqual(status_of(self.server.raw(self.requests[15])), 405)

    def test_pipelined_requests(self):
        data = (b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\n\r\n"
                b"GET /missing HTTP/1.1\r\nHost: localhost\r\n\r\n"
                b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        resp = self.server.raw(data)
        self.assertEqual(resp.count(b"HTTP/1.1 200 OK"), 2)
        self.assertEqual(resp.count(b"HTTP/1.1 404 Not Found"), 1)


class SlowClients(ArticleTestCase):
    server_args = ("--timeout", "2", "--per-ip-limit", "8")

    def test_idle_connection_is_closed(self):
        with socket.create_connection(("127.0.0.1", self.server.port), timeout=10) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n")  # never finishes its headers
            start = time.monotonic()
            data = s.recv(100)
            waited = time.monotonic() - start
        self.assertEqual(data, b"")
        self.assertLess(waited, 6 * SLOWDOWN)
        self.assertGreater(waited, 1)

    def test_slowloris_does_not_starve_others(self):
        hogs = []
        try:
            for _ in range(5):
                s = socket.create_connection(("127.0.0.1", self.server.port), timeout=5)
                s.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
                hogs.append(s)
            start = time.monotonic()
            self.assertTrue(self.server.alive(patience=2 * SLOWDOWN))
            self.assertLess(time.monotonic() - start, 1.5 * SLOWDOWN)
        finally:
            for s in hogs:
                s.close()

    def test_per_ip_limit(self):
        # Nine connections at once from one address: eight are served, the one
        # over the limit (whichever started last) is answered 503.
        served = count_served(self.server, 9)
        self.assertEqual(served, 8)
        self.assertTrue(self.server.wait_log_line('" 503 '), self.server.log_lines[-3:])
        self.assertTrue(self.server.alive())


def connect_from(server, source):
    """A connection to server from source (any 127.0.0.0/8 address: Linux routes them to lo)."""
    s = socket.socket()
    s.settimeout(5 * SLOWDOWN)
    s.bind((source, 0))
    s.connect(("127.0.0.1", server.port))
    return s


@contextlib.contextmanager
def served_from(test, server, source, n):
    """n connections to server from source, each asked once and answered 200 (test's
    assertion); they are closed when the block ends."""
    socks = []
    try:
        for _ in range(n):
            socks.append(connect_from(server, source))
        for s in socks:
            test.assertIn(b" 200 ", ask(s).split(b"\r\n")[0])
        yield socks
    finally:
        for s in socks:
            s.close()


def ask(s, target=b"/tiny.css"):
    """Sends one kept-alive request on s; returns the response's head (bytes), its body read
    by its Content-Length. A close or reset instead of a response fails the test that asked."""
    s.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: localhost\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        b = s.recv(65536)
        if not b:
            raise AssertionError("closed unanswered after %r" % data)
        data += b
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?im)^content-length: *(\d+)", head).group(1))
    while len(body) < length:
        b = s.recv(65536)
        if not b:
            raise AssertionError("closed in the body of %r" % head)
        body += b
    return head


class PerAddressLimit(ArticleTestCase):
    """--per-ip-limit counts each address's live connections itself: one over it gets
    503 with Retry-After and Connection: close on its first request, then the close (as
    nginx's limit_conn answers; libmicrohttpd's own limit closed it unanswered, a reset),
    and a connection closed frees its slot at once (libmicrohttpd's counted it until its
    worker had cleaned it up: a client that reconnected at once was refused below its
    limit). Each test its own source address: a limit is per address."""
    server_args = ("--per-ip-limit", "4", "--threads", "2")
    limit = 4

    def test_one_over_the_limit_is_answered_503_and_closed(self):
        with served_from(self, self.server, "127.0.0.20", self.limit) as held:
            with connect_from(self.server, "127.0.0.20") as over:
                over.sendall(b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\n\r\n")
                resp = read_to_close(over)  # a ConnectionResetError fails here
            head = resp.partition(b"\r\n\r\n")[0].lower()
            self.assertEqual(status_of(resp), 503, resp[:300])
            self.assertIn(b"\r\nconnection: close", head)
            self.assertRegex(head, rb"\r\nretry-after: \d+")
            line = self.server.wait_log_line('" 503 ')  # refused, logged as refusals are
            self.assertIsNotNone(line, self.server.log_lines[-3:])
            self.assertTrue(line.startswith("127.0.0.20 "), line)
            # another address is not this one's limit
            with connect_from(self.server, "127.0.0.21") as other:
                self.assertIn(b" 200 ", ask(other).split(b"\r\n")[0])
            # the held ones are still served, kept alive
            for s in held:
                self.assertIn(b" 200 ", ask(s).split(b"\r\n")[0])

    def test_closed_connections_free_their_slots_at_once(self):
        # Open the limit's worth, each served; close them; open as many again at once:
        # all served, round after round (none waits for the server to clean up).
        for _ in range(25):
            with served_from(self, self.server, "127.0.0.22", self.limit):
                pass
        self.assertFalse([line for line in self.server.log_lines if line.startswith("127.0.0.22 ") and
                          '" 200 ' not in line])


def read_to_close(s):
    """Every byte s receives until the peer's FIN (a reset raises)."""
    chunks = []
    while True:
        b = s.recv(65536)
        if not b:
            return b"".join(chunks)
        chunks.append(b)


class NoPerAddressLimit(ArticleTestCase):
    """--per-ip-limit 0: no limit on one address, only the connection limit."""
    server_args = ("--per-ip-limit", "0", "--connection-limit", "64", "--threads", "2")

    def test_one_address_may_hold_many(self):
        with served_from(self, self.server, "127.0.0.23", 40):
            pass


class ConnectionLimit(ArticleTestCase):
    server_args = ("--threads", "1", "--connection-limit", "3", "--per-ip-limit", "0")

    def test_total_connections_are_capped(self):
        served = count_served(self.server, 5, timeout=2)
        self.assertGreaterEqual(served, 1)
        self.assertLessEqual(served, 3)
        self.assertTrue(self.server.alive(patience=3 * SLOWDOWN))



def fetch(server, target, host):
    """The status and body of GET target under Host host (raw: any name), to the close."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=5 * SLOWDOWN) as s:
        s.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
    return status_of(data), data.partition(b"\r\n\r\n")[2]


class PreviewHosts(ArticleTestCase):
    """DNS rebinding (issue 36, 8): a page of another site makes a browser resolve its own
    name to 127.0.0.1 and then reads the preview, same-origin. A preview answers IP address
    literals, localhost and *.localhost and the names of --allowed-hosts; any other name gets
    403, a page and a stderr line that say how to allow it."""
    server_args = ("--allowed-hosts", "box.local,.example.org")

    def test_its_own_names_are_answered(self):
        port = str(self.server.port).encode()
        for host in (b"localhost", b"localhost:" + port, b"a.localhost", b"127.0.0.1:" + port, b"[::1]",
                     b"192.168.1.20:8000", b"box.local", b"example.org", b"a.example.org:" + port):
            self.assertEqual(fetch(self.server, b"/style.css", host)[0], 200, host)

    def test_another_name_is_403_with_how_to_allow_it(self):
        for target in (b"/", b"/style.css", b"/__folio/events", b"/__folio/health", b"/__folio/reload.js"):
            status, body = fetch(self.server, target, b"rebind.attacker.example:" + str(self.server.port).encode())
            self.assertEqual(status, 403, target)
            self.assertIn(b"<code>--allowed-hosts rebind.attacker.example</code>", body)
            self.assertNotIn(self.file("www/style.css")[:40], body)
        deadline = time.monotonic() + 5 * SLOWDOWN  # stderr is read on its own thread
        while "refused a request for the host" not in self.server.stderr_text and time.monotonic() < deadline:
            time.sleep(0.02)
        said = [l for l in self.server.stderr_text.splitlines() if "refused a request for the host" in l]
        self.assertEqual(len(said), 1, self.server.stderr_text)  # one a minute, not one a request
        self.assertIn("--allowed-hosts rebind.attacker.example", said[0])
        # An absolute form names the host instead of Host (RFC 9112 3.2.2).
        raw = self.server.raw(b"GET http://rebind.attacker.example/ HTTP/1.1\r\nHost: localhost\r\n"
                              b"Connection: close\r\n\r\n")
        self.assertEqual(status_of(raw), 403)

    def test_production_answers_any_name(self):
        with Server(self.root, "--production") as s:
            self.assertEqual(fetch(s, b"/style.css", b"rebind.attacker.example")[0], 200)


if __name__ == "__main__":
    main()
