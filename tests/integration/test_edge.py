"""The edge, over raw sockets: what folio accepts of a request (RFC 9112,
nginx where it is right), and that nothing a client, a rebuild or a stalled
pipe does can wedge it. Each class is one item of issue 7."""
import http.client
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest

from folio import (FOLIO, SLOWDOWN, WRAPPER, ArticleTestCase, EventStream, Server, cpu_ticks, die_with_parent,
                   main, make_article, preloaded, status_of, write)
from hostile_load import body_lorises, readers, rewriter


def request(target=b"/tiny.css", method=b"GET", headers=b"Host: localhost\r\n", version=b"HTTP/1.1", body=b""):
    return (method + b" " + target + b" " + version + b"\r\n" + headers +
            b"Connection: close\r\n\r\n" + body)


def responses(raw):
    """The status of every response in raw (a pipelined answer; no fixture
    body holds a status line)."""
    return [int(code) for code in re.findall(rb"HTTP/1\.1 (\d{3}) ", raw)]


def until_close(port, data, timeout=10):
    """Sends data and returns every byte that came back until the server
    closed; fails when it did not close within timeout (a hang, not a
    measure: nothing should come near it)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        return read_until_close(s)


def read_until_close(s):
    """Every byte s receives until the server closes it; fails at s's timeout."""
    chunks = []
    while True:
        try:
            b = s.recv(65536)
        except ConnectionResetError:
            break
        except socket.timeout:
            raise AssertionError("not closed; got %r" % b"".join(chunks)[:300])
        if not b:
            break
        chunks.append(b)
    return b"".join(chunks)


def library_version(server):
    """The libmicrohttpd server is linked with, as its health check says."""
    return json.loads(server.get("/__folio/health").body)["libmicrohttpd"]


def header(raw, name):
    head = raw.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    for line in head.split("\r\n")[1:]:
        k, _, v = line.partition(":")
        if k.strip().lower() == name.lower():
            return v.strip()
    return None


class RequestLine(ArticleTestCase):
    """RFC 9112 3: the request line, and the target above all."""

    def status(self, data):
        return status_of(self.server.raw(data, timeout=3))

    def test_absolute_form_is_accepted_and_its_authority_replaces_host(self):
        resp = self.server.raw(request(b"http://localhost/tiny.css"))
        self.assertEqual(status_of(resp), 200, resp[:200])
        self.assertTrue(resp.endswith(self.file("www/tiny.css")))
        # The Host header of an absolute form is ignored (3.2.2), not checked.
        self.assertEqual(self.status(request(b"http://localhost:8000/tiny.css", headers=b"Host: x/y\r\n")), 200)
        self.assertEqual(self.status(request(b"HTTPS://[::1]:8443/")), 200)
        # An empty path is "/" (RFC 9112 3.2.2, RFC 9110 4.2.3; issue 19).
        home = self.server.raw(request(b"/?args")).split(b"\r\n\r\n", 1)[1]
        for target in (b"http://localhost?args", b"http://localhost:%d?args" % self.server.port,
                       b"http://localhost:%d?args#frag" % self.server.port):
            resp = self.server.raw(request(target))
            self.assertEqual(status_of(resp), 200, (target, resp[:200]))
            self.assertEqual(resp.split(b"\r\n\r\n", 1)[1], home, target)
        self.assertEqual(self.status(request(b"http://u:p@localhost/tiny.css")), 400)
        self.assertEqual(self.status(request(b"ftp://localhost/tiny.css")), 400)
        self.assertEqual(self.status(request(b"http://bad host/tiny.css")), 400)
        self.assertTrue(self.server.wait_log_line('"GET http://localhost/tiny.css HTTP/1.1" 200'),
                        self.server.log_lines[-3:])

    def test_a_fragment_is_dropped_as_nginx_and_lighttpd_drop_it(self):
        # A client should never send one (RFC 9112 3.2); one that does means
        # the address before it. The log keeps the target as it came.
        css = self.file("www/tiny.css")
        for target in (b"/tiny.css#frag", b"/tiny.css?v=2#f/../../etc?x", b"http://localhost/tiny.css#top"):
            resp = self.server.raw(request(target))
            self.assertEqual(status_of(resp), 200, (target, resp[:200]))
            self.assertEqual(resp.split(b"\r\n\r\n", 1)[1], css, target)
        self.assertEqual(self.status(request(b"/nope.css#tiny.css")), 404)
        self.assertEqual(self.status(request(b"#frag")), 400)
        self.assertTrue(self.server.wait_log_line('"GET /tiny.css?v=2#f/../../etc?x HTTP/1.1" 200'),
                        self.server.log_lines[-5:])

    def test_a_nul_in_the_target_is_400_never_the_prefix(self):
        for target in (b"/tiny.css\x00.junk", b"/..\x00", b"/\x00", b"/tiny.css\x00"):
            resp = self.server.raw(request(target))
            self.assertEqual(status_of(resp), 400, (target, resp[:100]))
            self.assertNotIn(self.file("www/tiny.css"), resp.split(b"\r\n\r\n", 1)[-1])

    def test_spaces_and_controls_in_the_target_are_400(self):
        for target in (b"/ti ny.css", b"/\x02", b"/a\tb", b"/\x7f", b"/tiny.css#a b", b"/\x1b[31m"):
            self.assertEqual(self.status(request(target)), 400, target)
        self.assertEqual(self.status(b"GET /tiny.css  HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"), 400)

    def test_methods(self):
        self.assertEqual(self.status(request(method=b"FOO")), 501)           # RFC 9110 9.1
        self.assertEqual(self.status(request(method=b"BREW")), 501)
        self.assertEqual(self.status(request(method=b"POST")), 405)
        self.assertEqual(self.status(request(method=b"get")), 501)           # methods are case-sensitive
        self.assertEqual(self.status(request(method=b"G\x01T")), 400)       # not a token
        self.assertEqual(self.status(request(method=b"CONNECT")), 400)      # CONNECT needs host:port
        self.assertEqual(self.status(request(b"example.com:443", method=b"CONNECT")), 501)
        self.assertEqual(self.status(request(b"example.com:443")), 400)     # authority form is CONNECT's
        self.assertEqual(self.status(request(b"*", method=b"OPTIONS")), 204)
        self.assertEqual(self.status(request(b"*")), 400)                   # "*" is OPTIONS' only
        self.assertTrue(self.server.alive())


class UnreadableRequestLines(ArticleTestCase):
    """A request line libmicrohttpd 0.9.75 cannot read (no space, or a space
    first) is a 400, as nginx answers, never a silent close; and only then:
    a connection it ends for any other reason gets no stray bytes."""
    server_args = ("--log-format", "json", "--timeout", "2", "--header-timeout", "30")

    def test_a_whitespace_or_garbage_line_is_400(self):
        for data in (b"   \r\n", b"GARBAGE\r\n", b"\t\r\n", b" GET /tiny.css HTTP/1.1\r\nHost: localhost\r\n\r\n",
                     b"\r\n\r\n   \r\n", b"GARBAGE\r\nGET /tiny.css HTTP/1.1\r\nHost: localhost\r\n\r\n"):
            resp = self.server.raw(data, timeout=3)
            self.assertEqual(responses(resp), [400], (data, resp[:200]))
            self.assertEqual(header(resp, "Connection"), "close")
            self.assertEqual(int(header(resp, "Content-Length")), len(resp.split(b"\r\n\r\n", 1)[1]))
        # On a server of its own: the lines of the requests above come when their
        # connections close, so on the shared one they may still be on their way.
        with Server(self.root, *self.server_args) as alone:
            alone.raw(b"   \r\n", timeout=3)
            record = json.loads(alone.wait_log(1)[0])
        self.assertEqual((record["status"], record["method"]), (400, ""), record)
        self.assertGreater(record["bytes"], 0)

    def test_after_a_response_on_a_kept_connection(self):
        kept = b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\n\r\n"
        self.assertEqual(responses(self.server.raw(kept + b"   \r\n", timeout=3)), [200, 400])
        self.assertEqual(responses(self.server.raw(kept + kept + b"X\r\n", timeout=3)), [200, 200, 400])

    def test_a_connection_that_was_ending_anyway_gets_nothing_more(self):
        for first in (b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
                      b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive, Close\r\n\r\n",
                      b"GET /tiny.css HTTP/1.0\r\n\r\n",
                      b"GET /tiny.css HTTP/1.1\r\nHost: a b\r\n\r\n",                     # our 400
                      b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\nContent-Length: 9999999\r\n\r\n",  # 413
                      b"POST /tiny.css HTTP/1.1\r\nHost: localhost\r\n\r\n",                      # 405
                      # Every Connection line counts, as libmicrohttpd reads them (issue 19, 6).
                      b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n",
                      b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\nConnection: te\r\nConnection: close\r\n\r\n",
                      b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\nConnection:\r\nConnection: close\r\n\r\n"):
            resp = self.server.raw(first + b"   \r\n", timeout=3)
            self.assertEqual(len(responses(resp)), 1, (first, resp[:300]))

    def test_an_idle_connection_is_closed_silently(self):
        """The idle timeout (2 s here) closes without a word, before a
        request and after one, as nginx's keepalive_timeout does."""
        for data in (b"", b"\r\n", b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\n\r\n"):
            start = time.monotonic()
            resp = self.server.raw(data, timeout=10)
            self.assertGreater(time.monotonic() - start, 1.5, data)  # the timeout ended it
            self.assertEqual(len(responses(resp)), 1 if data.startswith(b"GET") else 0, (data, resp[:300]))
            self.assertNotIn(b" 400 ", resp)

    def test_refusals_of_libmicrohttpd_get_no_second_answer(self):
        """Lines it answers itself (414, 505) among many clients at once:
        each connection gets exactly its one response, and the log one line
        per request (their refusals are told to folio per thread, not per
        connection; a close that might be one is never answered again)."""
        import threading
        long_line = b"GET /" + b"a" * 40000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n"
        kinds = [(long_line, [414]), (request(version=b"HTTP/9.9"), [505]),
                 (b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\n\r\n" * 3 + request(), [200] * 4)]
        wrong = []

        def client(i):
            data, expect = kinds[i % 3]
            got = responses(self.server.raw(data, timeout=5))
            if got != expect:
                wrong.append((expect, got))

        before = len(self.server.log_lines)
        for _ in range(3):
            threads = [threading.Thread(target=client, args=(i,)) for i in range(60)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        self.assertEqual(wrong, [])
        lines = self.server.wait_log(before + 3 * 120)[before:]
        statuses = [json.loads(line)["status"] for line in lines]
        self.assertEqual(len(statuses), 3 * 120, statuses)
        self.assertEqual(statuses.count(200), 3 * 80)
        self.assertEqual(statuses.count(414) + statuses.count(505), 3 * 40)  # which is which: per thread

    def test_a_client_that_leaves_gets_nothing(self):
        with socket.create_connection(("127.0.0.1", self.server.port), timeout=5) as s:
            s.sendall(b"\r\n")
            s.shutdown(socket.SHUT_WR)  # its FIN: libmicrohttpd closes for that
            self.assertEqual(s.recv(1024), b"")
        self.assertTrue(self.server.alive())


class NulRequestLine(ArticleTestCase):
    """A request line of NUL bytes: 400 at once and a log line, as nginx
    (libmicrohttpd 0.9.75 skips it as an empty line and waits; issue 19, 10).
    The one slot is held by an event stream, so the line is there when the
    connection is accepted: folio looks at what arrived with it."""
    server_args = ("--log-format", "json", "--connection-limit", "1", "--threads", "1",
                   "--timeout", "30", "--header-timeout", "30")

    def test_answered_at_once_and_logged(self):
        for data in (b"\x00" * 16 + b"\r\n", b"\r\n\x00\x00\r\nGET /tiny.css HTTP/1.1\r\nHost: localhost\r\n\r\n"):
            stream = EventStream(self.server.port)
            with socket.create_connection(("127.0.0.1", self.server.port), timeout=10) as s:
                s.sendall(data)  # queued behind the stream, in the listen backlog
                before = len(self.server.log_lines)
                stream.close()
                resp = read_until_close(s)
            self.assertEqual(responses(resp), [400], (data, resp[:200]))
            records = [json.loads(line) for line in self.server.wait_log(before + 2)[before:]]
            self.assertIn(400, [r["status"] for r in records], records)


class Host(ArticleTestCase):
    """RFC 9112 3.2: a server MUST answer 400 to a missing, repeated or invalid Host. (The
    preview answers the names below as it is told to: see PreviewHosts.)"""
    server_args = ("--allowed-hosts", "example.com,xn--bcher-kva.example")

    def status(self, host_lines):
        return status_of(self.server.raw(request(headers=host_lines), timeout=3))

    def test_valid_hosts(self):
        for host in (b"localhost", b"localhost:8000", b"127.0.0.1", b"[::1]:80", b"example.com  ",
                     b"xn--bcher-kva.example"):
            self.assertEqual(self.status(b"Host: " + host + b"\r\n"), 200, host)

    def test_invalid_hosts_are_400(self):
        for host in (b"example.com/\\:552", b"localhost\x02", b"h:1.2", b"localhost:9000:80",
                     b"[::1", b"::1]", b"[::1]x", b"h:65536", b"a b", b"user@h", b""):
            self.assertEqual(self.status(b"Host: " + host + b"\r\n"), 400, host)

    def test_two_hosts_are_400(self):
        self.assertEqual(self.status(b"Host: localhost\r\nHost: localhost\r\n"), 400)
        self.assertEqual(self.status(b"Host: localhost\r\nhost: b\r\n"), 400)
        self.assertEqual(self.status(b""), 400)  # HTTP/1.1 without one


class Fields(ArticleTestCase):
    """RFC 9112 5 and 6: field names, framing, and a body nobody asked for."""

    def test_field_names_that_are_not_tokens_are_400(self):
        for line in (b":foo: 1", b"foo\x02: 1", b"a b: 1", b"X-Ok: 1\r\n:foo: 1", b"X-Ok: 1\r\n:",
                     b"X: a\x00b"):
            resp = self.server.raw(request(headers=b"Host: localhost\r\n" + line + b"\r\n"))
            self.assertEqual(responses(resp), [400], (line, resp[:300]))

    def test_disagreeing_content_lengths_get_one_400_and_a_close(self):
        smuggled = b"GET /missing HTTP/1.1\r\nHost: localhost\r\n\r\n"
        data = (b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nContent-Length: 29\r\n\r\n"
                + smuggled)
        resp = self.server.raw(data)
        self.assertEqual(responses(resp), [400], resp[:300])
        self.assertEqual(header(resp, "Connection"), "close")
        # A list, a length with chunked, and two that agree: one field of one
        # number or none, as nginx (RFC 9112 6.3 lets a server refuse a repeated
        # length): the library frames by the first field alone, a proxy in front
        # maybe by the last, on every version folio runs on.
        for lengths in (b"Content-Length: 5, 6\r\n", b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
                        b"Content-Length: 5, 5\r\n", b"Content-Length: 5\r\nContent-Length: 5\r\n"):
            resp = self.server.raw(request(headers=b"Host: localhost\r\n" + lengths, body=b"hello") + smuggled)
            self.assertEqual(responses(resp), [400], lengths)
            self.assertEqual(header(resp, "Connection"), "close")

    def log_synced(self, target):
        """The log's length once target's line is in it, so that a line the
        previous test's last request logs late is not counted as ours."""
        self.server.raw(request(target.encode()))
        deadline = time.monotonic() + 5 * SLOWDOWN
        while not any(target in line for line in self.server.log_lines) and time.monotonic() < deadline:
            time.sleep(0.02)
        return len(self.server.log_lines)

    def test_a_length_libmicrohttpd_cannot_read_gets_one_400_and_a_close(self):
        """libmicrohttpd 0.9.75 answers these itself and then sends its
        header block a second time (issue 19, 7): folio answers once, as
        nginx, and the connection is closed after it."""
        smuggled = b"GET /missing HTTP/1.1\r\nHost: localhost\r\n\r\n"
        for i, value in enumerate((b"-1", b"abc", b"3, 3", b"1" + b"0" * 23, b"5, 6", b"+5", b"0x10")):
            before = self.log_synced("/tiny.css?sync=%d" % i)
            resp = until_close(self.server.port, request(headers=b"Host: localhost\r\nContent-Length: " + value + b"\r\n")
                               + smuggled)
            self.assertEqual(responses(resp), [400], (value, resp[:400]))
            self.assertEqual(resp.count(b"\r\n\r\n"), 1, (value, resp[:400]))
            self.assertEqual(header(resp, "Connection"), "close")
            body = resp.split(b"\r\n\r\n", 1)[1]
            self.assertEqual(int(header(resp, "Content-Length")), len(body), value)
            lines = self.server.wait_log(before + 1)[before:]
            self.assertEqual(len(lines), 1, (value, lines))
            self.assertRegex(lines[0], r'" 400 %d\b' % len(body), value)
        self.assertTrue(self.server.alive())

    def test_a_bare_cr_in_a_value_and_chunked_twice_are_400(self):
        """RFC 9110 5.5 and RFC 9112 6.1, as nginx (issue 19, 12)."""
        for lines in (b"X-A: a\rb\r\n", b"User-Agent: x\r\rGET /missing HTTP/1.1\r\n",
                      b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n"):
            body = b"0\r\n\r\n" if b"chunked" in lines else b""
            resp = until_close(self.server.port, request(headers=b"Host: localhost\r\n" + lines, body=body))
            self.assertEqual(responses(resp), [400], (lines, resp[:300]))

    def test_chunked_not_the_last_coding_is_400_and_what_is_not_framed_is_refused(self):
        # RFC 9112 6.3: the length cannot be told (was 501); a value libmicrohttpd does not
        # frame as chunked ("chunked," or, on 0.9.75, which keeps the space, "chunked ")
        # is refused, never read as unframed. (1.0 drops the space, as RFC 9110 5.5 does.)
        spaced = 501 if library_version(self.server) == "0.9.75" else 200
        for te, status in ((b"chunked, gzip", 400), (b"chunked, chunked", 400), (b"gzip, chunked", 501),
                           (b"chunked ", spaced), (b"chunked,", 501), (b"CHUNKED", 200)):
            data = request(headers=b"Host: localhost\r\nTransfer-Encoding: " + te + b"\r\nConnection: close\r\n",
                           body=b"0\r\n\r\nGET /missing HTTP/1.1\r\nHost: localhost\r\n\r\n")
            self.assertEqual(responses(until_close(self.server.port, data)), [status], te)

    def test_a_body_on_get_is_read_and_the_response_sent(self):
        resp = self.server.raw(request(headers=b"Host: localhost\r\nContent-Length: 5\r\n", body=b"hello"))
        self.assertEqual(status_of(resp), 200, resp[:200])
        self.assertTrue(resp.endswith(self.file("www/tiny.css")))
        # ... and the next request on the connection is one, not the body.
        keep = (b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nhello"
                b"GET /missing HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        self.assertEqual(responses(self.server.raw(keep)), [200, 404])
        chunked = (b"HEAD /tiny.css HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n"
                   b"Connection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        self.assertEqual(responses(self.server.raw(chunked)), [200])

    def test_a_big_body_on_get_is_413(self):
        data = request(headers=b"Host: localhost\r\nContent-Length: 10000000\r\n")
        self.assertEqual(status_of(self.server.raw(data)), 413)
        self.assertEqual(status_of(self.server.raw(request(headers=b"Host: localhost\r\nTransfer-Encoding: gzip\r\n"))), 501)
        self.assertTrue(self.server.alive())

    def test_a_big_chunked_body_on_get_is_413_once_read(self):
        chunk = b"4000\r\n" + b"x" * 0x4000 + b"\r\n"
        for count, expect in ((3, [200, 404]), (5, [413, 404])):  # 48 KiB, then 80 KiB past 64
            data = (b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n" +
                    chunk * count + b"0\r\n\r\n" + request(b"/missing"))
            # The body read to its end, the connection goes on to the next request.
            self.assertEqual(responses(self.server.raw(data)), expect, count)

    def test_a_304_carries_no_content_length_0(self):
        # RFC 9110 8.6: none (as nginx), or the length the 200 had where the
        # library writes one from every response's size (0.9.75); never 0.
        sized = library_version(self.server) == "0.9.75"
        for extra in (b"", b"Accept-Encoding: gzip\r\n"):
            ok = self.server.raw(request(b"/style.css", headers=b"Host: localhost\r\n" + extra))
            etag = header(ok, "ETag").encode()
            conditional = b"GET /style.css HTTP/1.1\r\nHost: localhost\r\n" + extra + b"If-None-Match: " + etag + b"\r\n\r\n"
            resp = self.server.raw(request(b"/style.css", headers=b"Host: localhost\r\n" + extra +
                                           b"If-None-Match: " + etag + b"\r\n"))
            self.assertEqual(status_of(resp), 304)
            self.assertEqual(header(resp, "Content-Length"), header(ok, "Content-Length") if sized else None)
            self.assertNotEqual(header(ok, "Content-Length"), "0")
            # a kept-alive client (wrk, a pipelining one) reads the next response after it
            both = self.server.raw(conditional + request(b"/tiny.css"))
            self.assertEqual(responses(both), [304, 200], both[:400])
            self.assertTrue(both.endswith(self.file("www/tiny.css")))
            self.assertTrue(resp.endswith(b"\r\n\r\n"), resp[-40:])
            # RFC 9110 15.4.5: with an ETag, no other metadata (issue 19; nginx, lighttpd).
            self.assertEqual(header(resp, "ETag"), etag.decode())
            self.assertIsNone(header(resp, "Last-Modified"))
            self.assertIsNotNone(header(ok, "Last-Modified"))


class TrustedProxyLog(ArticleTestCase):
    """--trust-proxy: the common log's first field is never empty (issue 19, 12)."""
    server_args = ("--trust-proxy",)

    def test_an_empty_forwarded_for_logs_the_peer(self):
        # and one that is no address (as nginx's realip ignores it): never a forged field
        for value in (b"", b" ", b"203.0.113.9, ", b"203.0.113.9,", b"999.1.1.1", b'"evil":', b"7" * 6000):
            before = len(self.server.log_lines)
            resp = self.server.raw(request(headers=b"Host: localhost\r\nX-Forwarded-For: " + value + b"\r\n"))
            self.assertEqual(status_of(resp), 200)
            line = self.server.wait_log(before + 1)[before]
            self.assertTrue(line.startswith("127.0.0.1 - - ["), (value, line))
        before = len(self.server.log_lines)
        self.server.raw(request(headers=b"Host: localhost\r\nX-Forwarded-For: 198.51.100.7, 203.0.113.9\r\n"))
        self.assertTrue(self.server.wait_log(before + 1)[before].startswith("203.0.113.9 - - ["))
        before = len(self.server.log_lines)
        self.server.raw(request(headers=b"Host: localhost\r\nX-Forwarded-For: 10.0.0.1, 2001:db8::7\r\n"))
        self.assertTrue(self.server.wait_log(before + 1)[before].startswith("2001:db8::7 - - ["))


class Redirects(ArticleTestCase):
    """A folder redirect's Location is a valid relative reference; "//" runs
    are one address."""

    @classmethod
    def build_root(cls, tmp):
        root = make_article(os.path.join(tmp, "article"))
        for name in ("dir sp", "a?b", "c#d", "100%", "a:b", "line\nbreak"):
            write(os.path.join(root, "www", name, "index.html"), "<p>%r</p>\n" % name)
        return root

    def location(self, target):
        resp = self.server.raw(request(target))
        self.assertEqual(status_of(resp), 301, (target, resp[:200]))
        return header(resp, "Location")

    def test_folder_location_is_encoded_again(self):
        self.assertEqual(self.location(b"/dir%20sp"), "dir%20sp/")
        self.assertEqual(self.location(b"/a%3Fb"), "a%3Fb/")
        self.assertEqual(self.location(b"/c%23d"), "c%23d/")
        self.assertEqual(self.location(b"/100%25"), "100%25/")
        self.assertEqual(self.location(b"/a:b"), "./a:b/")
        self.assertEqual(self.location(b"/line%0Abreak"), "line%0Abreak/")
        self.assertEqual(self.location(b"/dir%20sp?x=1"), "dir%20sp/?x=1")
        # Following each one lands on the folder's page.
        for target in (b"/dir%20sp/", b"/a%3Fb/", b"/c%23d/", b"/100%25/", b"/a:b/", b"/line%0Abreak/"):
            self.assertEqual(status_of(self.server.raw(request(target))), 200, target)

    def test_repeated_slashes_are_one_address(self):
        self.assertEqual(self.location(b"//tiny.css"), "../tiny.css")
        self.assertEqual(self.location(b"/sub//index.html?q"), "../../sub/index.html?q")
        many = b"/" * 2500 + b"sub/"
        loc = self.location(many)
        self.assertEqual(loc, "../" * 2500 + "sub/")
        # A page that is missing is a 404 whose client script is whole.
        resp = self.server.raw(request(b"/" * 2500 + b"missing.html",
                                       headers=b"Host: localhost\r\nSec-Fetch-Dest: document\r\n"))
        self.assertEqual(status_of(resp), 404)
        self.assertIn(b'__folio/reload.js" defer></script>', resp)
        self.assertLess(len(resp), 4096)
        # Dot segments (no browser sends them) climb as the path served does.
        resp = self.server.raw(request(b"/./././sub/./", headers=b"Host: localhost\r\nSec-Fetch-Dest: document\r\n"))
        self.assertEqual(status_of(resp), 200)
        self.assertIn(b'<script src="../__folio/reload.js" defer></script>', resp)
        # No cached variant per spelling: the cache does not grow with it.
        before = self.server.get("/__folio/health").body
        for n in range(2, 40):
            self.server.raw(request(b"/" * n + b"missing.html", headers=b"Host: localhost\r\nSec-Fetch-Dest: document\r\n"))
        self.assertEqual(before.split(b'"cache_bytes":')[1].split(b",")[0],
                         self.server.get("/__folio/health").body.split(b'"cache_bytes":')[1].split(b",")[0])


class Workers(unittest.TestCase):
    """Connections opened in a burst are spread over the worker threads.
    libmicrohttpd 0.9.75's workers each accept from the listening socket, ten
    a turn, so a burst went to the one that woke first and stayed there for
    its keep-alive life (32 from wrk: 93 % of the CPU on one of two workers);
    folio accepts in one thread and hands them out in turn (acceptor.h)."""

    def connections_per_worker(self, pid):
        """For each epoll set of pid (one a worker), how many sockets it holds."""
        sockets = {fd for fd in os.listdir("/proc/%d/fd" % pid)
                   if os.readlink("/proc/%d/fd/%s" % (pid, fd)).startswith("socket:")}
        counts = []
        for fd in os.listdir("/proc/%d/fd" % pid):
            if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == "anon_inode:[eventpoll]":
                with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                    counts.append(sum(1 for m in re.finditer(r"^tfd:\s+(\d+)", f.read(), re.M)
                                      if m.group(1) in sockets))
        return counts

    def test_a_burst_of_connections_is_spread_over_the_workers(self):
        tmp = tempfile.mkdtemp(prefix="folio-edge-")
        try:
            root = make_article(os.path.join(tmp, "article"))
            with Server(root, "--production", "--quiet", "--threads", "4") as srv:
                clients = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(32)]
                try:
                    for c in clients:
                        c.sendall(b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\n\r\n")
                    for c in clients:  # every one answered, so every one is in a worker's set
                        self.assertTrue(c.recv(1024).startswith(b"HTTP/1.1 200 OK"))
                    counts = sorted(self.connections_per_worker(srv.proc.pid))[-4:]  # the 4 workers
                    self.assertGreaterEqual(sum(counts), 28, counts)  # under ASan one may be between sets
                    self.assertGreaterEqual(min(counts), 6, counts)  # before: [1, 1, 2, 32]
                finally:
                    for c in clients:
                        c.close()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_a_connection_the_library_cannot_start_gives_its_slot_back(self):
        """libmicrohttpd closes a handed socket whose pool it cannot allocate
        without notifying it: with two slots and four such failures, folio
        still serves (before, both slots stayed taken: it never accepted
        again)."""
        tmp = tempfile.mkdtemp(prefix="folio-edge-")
        try:
            root = make_article(os.path.join(tmp, "article"))
            # --header-limit 12345: the pool is malloc(12352), a size nothing else asks for.
            env = preloaded("FOLIO_FAILING_MALLOC_SHIM", fail_malloc_size=12352, fail_malloc_times=4)
            with Server(root, "--production", "--quiet", "--threads", "1", "--connection-limit", "2",
                        "--header-limit", "12345", env=env) as srv:
                for _ in range(4):
                    with socket.create_connection(("127.0.0.1", srv.port), timeout=10 * SLOWDOWN) as s:
                        s.sendall(b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\n\r\n")
                        self.assertEqual(read_until_close(s), b"")  # closed unanswered: no pool
                self.assertEqual(srv.get("/tiny.css").status, 200)
                said = "folio: a connection was closed before its first request: no memory for its buffers"
                self.assertEqual(srv.stderr_text.count(said), 1, srv.stderr_text)  # once a minute
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_out_of_descriptors_the_accept_waits_and_recovers(self):
        """EMFILE on accept: said once, the connections wait in the backlog
        (no busy loop), and are served once descriptors are free again."""
        tmp = tempfile.mkdtemp(prefix="folio-edge-")
        try:
            root = make_article(os.path.join(tmp, "article"))
            with Server(root, "--production", "--quiet", "--threads", "2") as srv:
                self.assertEqual(srv.get("/tiny.css").status, 200)
                fds = len(os.listdir("/proc/%d/fd" % srv.proc.pid))
                hard = resource.prlimit(srv.proc.pid, resource.RLIMIT_NOFILE)[1]
                resource.prlimit(srv.proc.pid, resource.RLIMIT_NOFILE, (fds + 4, hard))
                clients = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(12)]
                deadline = time.monotonic() + 5 * SLOWDOWN
                while "Too many open files" not in srv.stderr_text and time.monotonic() < deadline:
                    time.sleep(0.05)
                self.assertIn("folio: accept: Too many open files", srv.stderr_text)
                ticks = cpu_ticks(srv.proc.pid)
                time.sleep(0.5)
                self.assertLess(cpu_ticks(srv.proc.pid) - ticks, 10)  # waiting, not spinning
                for c in clients:
                    c.close()
                resource.prlimit(srv.proc.pid, resource.RLIMIT_NOFILE, (fds + 64, hard))
                self.assertEqual(srv.get("/tiny.css").status, 200)
                self.assertEqual(srv.stderr_text.count("folio: accept:"), 1, srv.stderr_text)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class StalledLog(unittest.TestCase):
    """A stdout whose reader stops reading (a FIFO nobody drains) must not
    stop serving: health answers, every request gets its answer, SIGTERM
    exits, and what was dropped is said."""

    def test_a_fifo_nobody_reads(self):
        tmp = tempfile.mkdtemp(prefix="folio-edge-")
        try:
            root = make_article(os.path.join(tmp, "article"))
            fifo = os.path.join(tmp, "log.fifo")
            os.mkfifo(fifo)
            # Read and write end in one: folio's open does not wait, and the
            # pipe stays open while nothing reads it after the banner.
            reader = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
            writer = os.open(fifo, os.O_WRONLY)
            proc = subprocess.Popen(
                [*WRAPPER, FOLIO, "--root", root, "--host", "127.0.0.1", "--port", "0"],
                stdout=writer, stderr=subprocess.PIPE, cwd=root, preexec_fn=die_with_parent)
            os.close(writer)
            banner = proc.stderr.readline()  # the access log's pipe holds the log alone
            port = int(banner.decode().rsplit(":", 1)[1].strip().strip("/"))
            # 4 KB targets: a few hundred lines fill the 64 KB pipe and the
            # 1 MB queue behind it many times over.
            long = b"/" + b"x" * 4000
            answered = 0
            for _ in range(6):
                with socket.create_connection(("127.0.0.1", port), timeout=5 * SLOWDOWN) as s:
                    s.sendall((b"GET " + long + b" HTTP/1.1\r\nHost: localhost\r\n\r\n") * 99 +
                              b"GET " + long + b" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                    data = b""
                    while True:
                        chunk = s.recv(1 << 16)
                        if not chunk:
                            break
                        data += chunk
                    answered += data.count(b"HTTP/1.1 404 ")
            self.assertEqual(answered, 600)
            with socket.create_connection(("127.0.0.1", port), timeout=5 * SLOWDOWN) as s:
                s.sendall(b"GET /__folio/health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                self.assertTrue(s.recv(100).startswith(b"HTTP/1.1 200"))
            proc.send_signal(signal.SIGTERM)
            self.assertEqual(proc.wait(10 * SLOWDOWN), 0)
            self.assertIn(b"lines dropped", proc.stderr.read())
            os.close(reader)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class StalledStderr(unittest.TestCase):
    """Requests whose file cannot be opened (out of descriptors) are each a
    503, but their stderr line is said once a minute: with a stderr nobody
    reads, a line each filled the pipe after some 1,500 and every worker
    blocked on it, for good."""

    def test_a_flood_of_failing_opens_with_a_stderr_nobody_reads(self):
        tmp = tempfile.mkdtemp(prefix="folio-edge-")
        reader, writer = os.pipe()
        try:
            root = make_article(os.path.join(tmp, "article"))
            write(os.path.join(root, "www", "big.bin"), b"b" * 100_000)
            proc = subprocess.Popen([*WRAPPER, FOLIO, "--root", root, "--host", "127.0.0.1", "--port", "0",
                                     "--production", "--quiet", "--threads", "1"],
                                    stdout=subprocess.DEVNULL, stderr=writer, cwd=root, preexec_fn=die_with_parent)
            os.close(writer)
            banner = b""
            while not banner.endswith(b"\n"):
                banner += os.read(reader, 1)
            port = int(banner.decode().rsplit(":", 1)[1].strip().strip("/"))
            clients = [socket.create_connection(("127.0.0.1", port), timeout=10 * SLOWDOWN) for _ in range(4)]
            for c in clients:  # each accepted (an accept past the limit would wait) and kept alive
                c.sendall(b"GET /__folio/health HTTP/1.1\r\nHost: localhost\r\n\r\n")
                data = b""
                while not data.endswith(b"}\n"):
                    data += c.recv(4096)
            fds = len(os.listdir("/proc/%d/fd" % proc.pid))
            hard = resource.prlimit(proc.pid, resource.RLIMIT_NOFILE)[1]
            resource.prlimit(proc.pid, resource.RLIMIT_NOFILE, (fds, hard))  # no open can succeed
            ask = b"GET /big.bin HTTP/1.1\r\nHost: localhost\r\nRange: bytes=0-9\r\n\r\n"  # opens the file each time
            for i in range(3000):
                c = clients[i % len(clients)]
                c.sendall(ask)
                data = b""
                while b"\r\n\r\n" not in data or not data.endswith(b"</html>\n"):
                    chunk = c.recv(4096)
                    self.assertTrue(chunk, "no answer to request %d" % i)
                    data += chunk
                self.assertEqual(status_of(data), 503, data[:200])
            for c in clients:
                c.close()
            resource.prlimit(proc.pid, resource.RLIMIT_NOFILE, (fds + 64, hard))
            with socket.create_connection(("127.0.0.1", port), timeout=5 * SLOWDOWN) as s:
                s.sendall(ask.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"))
                self.assertEqual(status_of(s.recv(4096)), 206)
            os.set_blocking(reader, False)
            said = os.read(reader, 1 << 20).decode()
            self.assertEqual(said.count("Too many open files"), 1, said)
            proc.send_signal(signal.SIGTERM)
            self.assertEqual(proc.wait(10 * SLOWDOWN), 0)
        finally:
            os.close(reader)
            shutil.rmtree(tmp, ignore_errors=True)


class AccessLogBatches(ArticleTestCase):
    """The access log's writer lets lines gather for a moment and writes them
    together (log.c): a write and a wake per line cost 7-12 us a request."""

    def test_lines_leave_together_and_soon(self):
        def writes():  # write(2) calls of the whole process; sendmsg is not one
            with open("/proc/%d/io" % self.server.proc.pid) as f:
                return int(next(line for line in f if line.startswith("syscw")).split()[1])

        def client():
            conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=5 * SLOWDOWN)
            for _ in range(100):
                self.server.request("GET", "/missing", conn=conn)
            conn.close()

        before, lines = writes(), len(self.server.log_lines)
        threads = [threading.Thread(target=client) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(len(self.server.wait_log(lines + 800)), lines + 800)
        self.assertLess(writes() - before, 800 / 4)  # before: 678 writes for these 800 lines
        # And a line alone is not held back: out within the window, not at exit.
        start = time.monotonic()
        self.server.get("/missing-alone")
        self.assertIn("/missing-alone", self.server.wait_log(lines + 801)[-1])
        self.assertLess(time.monotonic() - start, 1.0 * SLOWDOWN)


class RefusedRequestsAreLogged(ArticleTestCase):
    """Every request that got an answer has its line, with the status that
    went out; one that got none says "-"."""
    server_args = ("--log-format", "json", "--timeout", "3", "--header-timeout", "1")

    def line_for(self, data, expect):
        before = len(self.server.log_lines)
        self.server.raw(data, timeout=3)
        lines = self.server.wait_log(before + 1, timeout=5 * SLOWDOWN)[before:]
        self.assertEqual(len(lines), 1, (data[:60], lines))
        record = json.loads(lines[0])
        self.assertEqual(record["status"], expect, (data[:60], lines[0]))
        return record

    def test_statuses_libmicrohttpd_sent(self):
        self.line_for(b"GET /" + b"a" * 40000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n", 414)
        self.line_for(request(headers=b"Host: localhost\r\nX-Big: " + b"x" * 40000 + b"\r\n"), 431)
        self.line_for(request(version=b"HTTP/9.9"), 505)
        self.line_for(request(headers=b"Host t\r\n"), 400)

    def test_a_head_near_the_limit_gets_a_200_or_a_431_never_silence(self):
        # Just under the heads libmicrohttpd refuses with 431 is a band whose
        # head leaves no room for the response's header block: the library
        # closes without a word there, and folio answers 431 in its place.
        statuses, ours = [], 0
        before = len(self.server.log_lines)
        for size in range(7800, 8800, 20):
            fields = b"".join(b"X-F%04d: %s\r\n" % (i, b"v" * 54) for i in range((size - 200) // 64))
            head = b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n" + fields
            head += b"X-Z: " + b"z" * (size - len(head) - 9) + b"\r\n\r\n"
            answer = self.server.raw(head, timeout=3)
            statuses.append(status_of(answer) if answer else None)
            if answer and status_of(answer) == 431 and b"nosniff" in answer:  # ours, not the library's
                self.assertIn(b"<title>431 Request Header Fields Too Large</title>", answer)
                ours += 1
        self.assertGreater(ours, 0)  # the band where folio answers in the library's place was met
        self.assertNotIn(None, statuses)
        self.assertEqual(set(statuses), {200, 431})
        self.assertEqual(statuses, sorted(statuses))  # served, then refused: one line between them
        lines = self.server.wait_log(before + len(statuses), timeout=5 * SLOWDOWN)[before:]
        self.assertEqual(sorted(json.loads(line)["status"] for line in lines), statuses)

    def test_a_request_that_got_no_answer_is_a_dash(self):
        record = self.line_for(b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\n", None)  # then silence
        self.assertEqual(record["uri"], "/tiny.css")

    def test_a_request_line_cut_by_the_deadline_is_a_dash(self):
        record = self.line_for(b"GET /tiny.css HTT", None)  # never a whole line
        self.assertEqual(record["uri"], "")

    def test_user_agents_stay_utf8(self):
        record = self.line_for(request(headers="Host: localhost\r\nUser-Agent: Café 🙂\r\n".encode()
                                       + b"Referer: http://x/\xff\r\n"), 200)
        self.assertEqual(record["user_agent"], "Café 🙂")
        self.assertEqual(record["referer"], "http://x/\ufffd")


class SwappedFolders(unittest.TestCase):
    """A route folder deleted and built again, moved away, or swapped by a
    symlink is re-opened by its path (one line on stderr says so), at once
    on a miss and within a second otherwise."""
    args = ("--production",)

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="folio-edge-")
        self.root = make_article(os.path.join(self.tmp, "article"))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def www(self, *parts):
        return os.path.join(self.root, "www", *parts)

    def until(self, server, path, expect, timeout=5):
        deadline = time.monotonic() + timeout * SLOWDOWN
        while True:
            r = server.get(path)
            if (r.status, r.body) == expect or (expect[1] is None and r.status == expect[0]):
                return
            if time.monotonic() > deadline:
                self.fail("%s: %s %r, not %r" % (path, r.status, r.body[:60], expect))
            time.sleep(0.05)

    def test_deleted_and_built_again(self):
        with Server(self.root, *self.args) as server:
            self.assertEqual(server.get("/tiny.css").status, 200)
            shutil.rmtree(self.www())
            write(self.www("new.txt"), "built again\n")
            self.until(server, "/new.txt", (200, b"built again\n"))  # a miss, then re-opened
            self.until(server, "/tiny.css", (404, None))
        self.assertIn("re-opened", server.stderr_text)

    def test_moved_away(self):
        with Server(self.root, *self.args) as server:
            self.assertEqual(server.get("/tiny.css").status, 200)
            os.rename(self.www(), os.path.join(self.root, "www-old"))
            self.until(server, "/tiny.css", (404, None))   # never served from where it went
            self.assertEqual(server.get("/").status, 404)
            os.rename(os.path.join(self.root, "www-old"), self.www())
            self.until(server, "/tiny.css", (200, b"p{}\n"))
        self.assertIn("is gone", server.stderr_text)
        self.assertIn("is back", server.stderr_text)

    def test_swapped_by_symlink(self):
        for name in ("v1", "v2"):
            write(os.path.join(self.root, name, "page.txt"), name + "\n")
        shutil.rmtree(self.www())
        os.symlink("v1", self.www())
        with Server(self.root, *self.args) as server:
            self.assertEqual(server.get("/page.txt").body, b"v1\n")
            link = os.path.join(self.root, "www.new")
            os.symlink("v2", link)
            os.replace(link, self.www())  # ln -sfn, atomically
            self.until(server, "/page.txt", (200, b"v2\n"))  # a hit: the once-a-second look
        self.assertEqual(server.stderr_text.count("re-opened"), 1, server.stderr_text)


class SwappedFoldersInPreview(SwappedFolders):
    args = ()


class Slowloris(ArticleTestCase):
    """More slow connections than the limit, from several addresses, each
    sending a header line every few tenths of a second (the idle timeout
    never fires):
    the header deadline ends them, and a normal client is served again
    within it."""
    server_args = ("--header-timeout", "2", "--timeout", "30", "--connection-limit", "24",
                   "--per-ip-limit", "8", "--threads", "2")

    def test_normal_clients_are_served_within_the_deadline(self):
        hogs = []
        for host in ("127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"):
            for _ in range(8):
                s = socket.socket()
                s.bind((host, 0))
                s.settimeout(2)
                try:
                    s.connect(("127.0.0.1", self.server.port))
                    s.sendall(b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\n")
                    hogs.append(s)
                except OSError:
                    s.close()
        start = time.monotonic()
        served_at = None
        try:
            while time.monotonic() - start < 6 * SLOWDOWN:
                for s in list(hogs):           # a line each turn, for 3 deadlines
                    try:
                        s.sendall(b"X-Slow: 1\r\n")
                    except OSError:
                        hogs.remove(s)
                if served_at is None:
                    try:
                        if self.server.raw(request(), timeout=0.4).startswith(b"HTTP/1.1 200"):
                            served_at = time.monotonic() - start
                    except OSError:
                        pass
                time.sleep(0.1)
        finally:
            for s in hogs:
                s.close()
        self.assertIsNotNone(served_at, "no normal client was served while the slowloris ran")
        self.assertLess(served_at, 2 + 2.5 * SLOWDOWN)  # the deadline, and a tick or two
        self.assertTrue(self.server.alive(patience=2))

    def test_a_body_that_never_ends_is_ended_by_the_deadline(self):
        """A chunked body on GET is read to its end (see Fields), but the
        header deadline still runs: one that streams on for ever is cut."""
        with socket.create_connection(("127.0.0.1", self.server.port), timeout=2) as s:
            s.sendall(b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n")
            start, ended = time.monotonic(), False
            while not ended and time.monotonic() - start < 8 * SLOWDOWN:
                try:
                    s.sendall(b"400\r\n" + b"x" * 0x400 + b"\r\n")
                    ended = s.recv(1, socket.MSG_DONTWAIT) == b""
                except BlockingIOError:
                    pass
                except OSError:
                    ended = True
                time.sleep(0.05)
        self.assertTrue(ended, "a never-ending body held its connection")
        self.assertLess(time.monotonic() - start, 2 + 2.5 * SLOWDOWN)


class SlowlorisAtTheCap(ArticleTestCase):
    """More slow heads than the connection cap, each within the per-address
    limit and far from the header deadline: a client that sends its request
    at once is still served, for the oldest waiting head is closed to make
    room for it (issue 19)."""
    server_args = ("--header-timeout", "60", "--timeout", "60", "--connection-limit", "20",
                   "--per-ip-limit", "8", "--threads", "2", "--log-format", "json")

    def test_a_normal_client_is_served_at_once(self):
        hogs = []
        try:
            for i in range(25):
                s = socket.socket()
                s.bind(("127.0.0.%d" % (2 + i % 4), 0))
                s.settimeout(5)
                s.connect(("127.0.0.1", self.server.port))
                s.sendall(b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\n")  # and never the rest
                hogs.append(s)
            for _ in range(3):
                resp = until_close(self.server.port, request(), timeout=10)
                self.assertEqual(status_of(resp), 200, resp[:200])
            # The per-address limit still holds: of nine connections from one address, kept
            # alive (each holds its slot while the others ask), eight are served; the one
            # over the limit is answered 503, or closed unanswered if the cap made room by it
            # (it is the first to go).
            over = [socket.create_connection(("127.0.0.1", self.server.port), timeout=10,
                                             source_address=("127.0.0.6", 0)) for _ in range(9)]
            try:
                for s in over:
                    s.sendall(b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\n\r\n")
                statuses = []
                for s in over:
                    try:
                        statuses.append(status_of(s.recv(1024)))
                    except ConnectionResetError:
                        statuses.append(None)
                refused = [status for status in statuses if status != 200]
                self.assertEqual(len(refused), 1, statuses)
                self.assertIn(refused[0], (503, None), statuses)
            finally:
                for s in over:
                    s.close()
        finally:
            for s in hogs:
                s.close()
        self.assertTrue(self.server.alive(patience=2))


class BodyLorisAtTheCap(ArticleTestCase):
    """A complete head that announces a body (Content-Length: 100, or chunked) and sends
    none is a slowloris too: folio reads no body, so at the connection cap the one whose
    request has been arriving longest, head or body, is closed for a client that sends
    its request at once (issue 36, 1). It held every reader out for --header-timeout."""
    server_args = ("--header-timeout", "30", "--timeout", "30", "--connection-limit", "24",
                   "--per-ip-limit", "8", "--threads", "2")

    def test_a_normal_client_is_served_at_once(self):
        hogs = []
        try:
            for i in range(24):
                s = socket.socket()
                s.bind(("127.0.0.%d" % (2 + i % 4), 0))
                s.settimeout(5)
                s.connect(("127.0.0.1", self.server.port))
                body = b"Content-Length: 100\r\n" if i % 2 else b"Transfer-Encoding: chunked\r\n"
                s.sendall(b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\n" + body + b"\r\n")
                hogs.append(s)
                # Its head read whole and handed over (100 Continue) before the next comes, so
                # none is still "arriving" as a head: the cap is full of bodies awaited.
                self.assertTrue(s.recv(64).startswith(b"HTTP/1.1 100 "))
            for _ in range(3):
                start = time.monotonic()
                resp = until_close(self.server.port, request(), timeout=10)
                self.assertEqual(status_of(resp), 200, resp[:200])
                self.assertLess(time.monotonic() - start, 2 * SLOWDOWN, "a reader waited for a body loris")
            # A body that does come is still read, and the request answered.
            with socket.create_connection(("127.0.0.1", self.server.port), timeout=10) as s:
                s.sendall(request(headers=b"Host: localhost\r\nContent-Length: 5\r\n", body=b"hello"))
                self.assertEqual(status_of(s.recv(65536)), 200)
        finally:
            for s in hogs:
                s.close()
        self.assertTrue(self.server.alive(patience=2))


class HostileMix(unittest.TestCase):
    """Issue 36's two attacks below the connection layer at once, for ten seconds:
    reconnecting body lorises (a complete head announcing a body that never comes) holding
    the connection cap, and a writer rewriting files in place (truncate, then write) while
    they are sent by sendfile, whole and by Range. Readers asking all along get every
    request answered, none silent past a second (SLOWDOWN's under a sanitizer); the file
    nobody rewrites comes whole."""

    def test_lorises_and_a_rewriter_at_once_for_ten_seconds(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = make_article(os.path.join(tmp, "article"))
            paths = [os.path.join(root, "assets", "forty.bin"), os.path.join(root, "assets", "big.bin")]
            write(paths[0], os.urandom(40 << 10))  # sent by sendfile
            write(paths[1], os.urandom(1 << 20))   # and ranges of it
            with Server(root, "--connection-limit", "24", "--per-ip-limit", "8", "--threads", "2",
                        "--header-timeout", "30", "--timeout", "30", "--quiet",
                        env=preloaded("FOLIO_SNDBUF_SHIM", sndbuf=4096)) as srv:  # a body stays in its file
                until = time.monotonic() + 10
                loris = body_lorises(srv.port, until, ["127.0.0.%d" % i for i in range(2, 6)], keep=32)
                writer = rewriter(paths, until)
                results = readers(srv.port, until, [
                    request(), request(b"/assets/forty.bin"),
                    request(b"/assets/big.bin", headers=b"Host: localhost\r\nRange: bytes=100000-140000\r\n"),
                    request(b"/assets/big.bin", headers=b"Host: localhost\r\nRange: bytes=500000-\r\n"),
                ], threads=4, silence=SLOWDOWN)
                loris.join(30)
                writer.join(30)
                self.assertTrue(srv.alive())
        self.assertGreater(len(results), 20, "too few requests for ten seconds")
        for req, status, got, length, longest, ended_by in results:
            line = req.split(b"\r\n")[0]
            # A file found empty is 200 of nothing, a range past its end 416: answers all.
            self.assertIn(status, (200, 206, 416), line)
            self.assertLess(longest, 1.0 * SLOWDOWN, "%s: silent %.2f s, then %s (of %d bytes, %s)" %
                            (line, longest, ended_by, got, length))
            self.assertLessEqual(got, length if length is not None else got, line)
            if b"tiny.css" in line:
                self.assertEqual(got, length, line)  # whole: nobody rewrites it


class SlowResponse(ArticleTestCase):
    """A response read a few bytes at a time: ended once it falls below
    --send-rate, though every read keeps the idle timeout away."""
    server_args = ("--header-timeout", "2", "--timeout", "30", "--send-rate", "4M")

    @classmethod
    def build_root(cls, tmp):
        root = make_article(os.path.join(tmp, "article"))
        # Bigger than what the kernel buffers on loopback (tcp_wmem: 4 MB),
        # so folio itself is still sending when the deadline comes.
        write(os.path.join(root, "assets", "data", "big.bin"), os.urandom(16 << 20))
        return root

    def test_a_response_read_slowly_is_ended(self):
        # 16 MB at no less than 4 MB/s: about 6 s allowed. The client reads
        # 100 bytes every 0.2 s through a tiny window, which keeps the idle
        # timeout (30 s) from ever firing; past the deadline it drains what
        # is left as fast as it can: a cut connection ends within what the
        # kernel had buffered, a live one delivers the whole file.
        size = os.path.getsize(os.path.join(self.root, "assets", "data", "big.bin"))
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.settimeout(2)
            s.connect(("127.0.0.1", self.server.port))
            s.sendall(request(b"/assets/data/big.bin"))
            got, start, ended = 0, time.monotonic(), False
            try:
                # Ended meanwhile (SLOWDOWN stretches this past the deadline): a
                # reset lands below, a close leaves the loop.
                while not ended and time.monotonic() - start < 9 * SLOWDOWN:
                    chunk = s.recv(100)
                    ended = not chunk
                    got += len(chunk)
                    time.sleep(0.2)
                while not ended:
                    chunk = s.recv(1 << 16)
                    if not chunk:
                        ended = True
                        break
                    got += len(chunk)
            except ConnectionResetError:
                ended = True
            except socket.timeout:
                pass
        self.assertTrue(ended, "a response read at 500 B/s was never ended")
        self.assertLess(got, size // 2)


class EventStreamCap(ArticleTestCase):
    """A flood of /__folio/events cannot take every connection: past the cap,
    503 with Retry-After."""
    server_args = ("--event-stream-limit", "3")

    def test_past_the_cap_is_503(self):
        from folio import EventStream
        streams = [EventStream(self.server.port) for _ in range(3)]
        try:
            self.assertEqual([e.status for e in streams], [200, 200, 200])
            extra = self.server.raw(b"GET /__folio/events HTTP/1.1\r\nHost: localhost\r\n"
                                    b"Connection: close\r\n\r\n", timeout=3)
            self.assertEqual(status_of(extra), 503, extra[:200])
            self.assertEqual(header(extra, "Retry-After"), "2")
            self.assertTrue(self.server.alive())
            streams.pop().close()
            # The hub counts a closed stream out when it next writes to it.
            write(os.path.join(self.root, "www", "tiny.css"), "p{color:red}\n")
            deadline = time.monotonic() + 5 * SLOWDOWN
            n = 0
            while True:  # the hub counts the closed one out on its next writes
                n += 1
                write(os.path.join(self.root, "www", "tiny.css"), "p{color:red}/*%d*/\n" % n)
                again = EventStream(self.server.port)
                if again.status == 200:
                    streams.append(again)
                    break
                again.close()
                self.assertLess(time.monotonic(), deadline, "a freed slot was never reused")
                time.sleep(0.1)
        finally:
            for e in streams:
                e.close()


class Openat2(ArticleTestCase):
    """Older valgrind knows no openat2 (Debian 12's 3.19; Debian 13's 3.24 does),
    and folio falls back to its component walk there; so the builds that run
    without a wrapper, the ASan+UBSan one above all, must be seen to take the
    openat2 path: a symlink inside the folder is served only by openat2 (the
    walk follows none), and start-up says which. Under a wrapper, either
    path, as long as folio does what it says."""

    def test_the_path_taken_is_the_expected_one(self):
        r = self.server.get("/alias.css")
        walked = "openat2 is unavailable" in self.server.stderr_text
        if not WRAPPER:
            self.assertFalse(walked, self.server.stderr_text)
        if walked:  # the walk: it follows no symlink
            self.assertEqual(r.status, 404)
        else:
            self.assertEqual((r.status, r.body), (200, self.file("www/style.css")))
        # ... and what openat2 refuses is refused on either path.
        for path in (b"/sub/escape.txt", b"/absolute.txt", b"/evil-dir/page.html"):
            self.assertEqual(status_of(self.server.raw(request(path))), 404, path)


if __name__ == "__main__":
    main()
