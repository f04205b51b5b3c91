"""A connection's real progress in the access log: a response cut by the
client or by the end of --grace logs the body bytes the kernel took, and is
marked incomplete; one that completes logs its exact size, unmarked."""
import json
import os
import re
import signal
import socket
import tempfile
import shutil
import time
import unittest

from folio import EventStream, Server, main, make_article, preloaded, write

BIG = 20_000_000
MID = 65_000  # under PROGRESS_MARK_MIN
LINE = re.compile(r'"(\S+) (\S+) (\S+)" (\d{3}|-) (\d+)( incomplete)?$')


def socket_buffers(client):
    """The most a cut response can have in flight beyond what the client
    read: the server's largest send buffer plus the client's receive buffer."""
    with open("/proc/sys/net/ipv4/tcp_wmem") as f:
        wmem_max = int(f.read().split()[2])
    return wmem_max + client.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)


def head_and_body(sock, want_body):
    """Reads the header block and then at least want_body body bytes (or to
    the end); returns (header block, body bytes read)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    got = len(body)
    while got < want_body:
        b = sock.recv(1 << 20)
        if not b:
            break
        got += len(b)
    return head, got


def parsed(line):
    m = LINE.search(line.rstrip("\n"))
    assert m, line
    return m.group(2), int(m.group(5)), bool(m.group(6))


class Fixture(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="folio-progress-")
        self.root = make_article(os.path.join(self.tmp, "article"))
        write(os.path.join(self.root, "www", "big.bin"), os.urandom(BIG))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


class HeaderDerivation(Fixture):
    """progress_head_length must be exactly the header block libmicrohttpd
    writes: under the test hook every response's bytes come from the kernel
    (total - mark - header), so a derivation off by one byte shows here."""

    def test_every_kind_of_response_logs_its_exact_size_from_the_kernel(self):
        requests = [
            b"GET /big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n",
            b"GET /big.bin HTTP/1.0\r\n\r\n",
            b"GET /big.bin HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
            b"GET /big.bin HTTP/1.1\r\nHost: localhost\r\nRange: bytes=5-99\r\n\r\n",
            b"GET /nope HTTP/1.1\r\nHost: localhost\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: gzip\r\n\r\n",
        ]
        with Server(self.root, env={"FOLIO_TEST_MEASURE_BYTES": "1"}) as srv:
            sizes = []
            for req in requests:
                with socket.create_connection(("127.0.0.1", srv.port)) as s:
                    s.sendall(req)
                    head, body = head_and_body(s, 0)
                    length = int(re.search(rb"(?im)^content-length: *(\d+)", head).group(1))
                    # the whole body before closing, so every byte left
                    while body < length:
                        b = s.recv(1 << 20)
                        if not b:
                            break
                        body += len(b)
                    sizes.append(length)
            # a kept-alive connection's second response: the mark path
            with socket.create_connection(("127.0.0.1", srv.port)) as s:
                for _ in range(2):
                    s.sendall(b"GET /big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n")
                    head_and_body(s, BIG)
                    sizes.append(BIG)
            lines = srv.wait_log(len(sizes))
        logged = [parsed(line)[1:] for line in lines]
        self.assertEqual(logged, [(n, False) for n in sizes])

    def test_a_kept_alive_connection_counts_every_kind_of_response_before_the_next(self):
        # Each mark is the running total of the responses before it: one
        # header block derived a byte off shows in every line after it.
        with Server(self.root, env={"FOLIO_TEST_MEASURE_BYTES": "1"}) as srv:
            first = srv.get("/style.css")
            etag = first.headers["ETag"]
            srv.wait_log(1)  # its line first: lines of two connections may come in either order
            asks = [
                ("GET", "/style.css", ""),
                ("HEAD", "/style.css", ""),
                ("GET", "/style.css", f"If-None-Match: {etag}\r\n"),
                ("GET", "/nope", ""),
                ("GET", "/sub", ""),
                ("GET", "/style.css", "Range: bytes=0-9\r\n"),
                ("GET", "/", "Accept-Encoding: gzip\r\n"),
                ("GET", "/__folio/health", ""),
                ("GET", "/big.bin", "Range: bytes=0-99999\r\n"),
                ("OPTIONS", "/", ""),  # answered on the first call: libmicrohttpd closes after it
            ]
            sizes = []
            with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
                for method, target, extra in asks:
                    s.sendall(f"{method} {target} HTTP/1.1\r\nHost: localhost\r\n{extra}\r\n".encode())
                    status, length = read_response(s, method)
                    sizes.append(0 if method == "HEAD" or status in (204, 304) else length)
            lines = srv.wait_log(1 + len(asks))[1:]
        statuses = [int(line.split('" ')[1].split()[0]) for line in lines]
        self.assertEqual(statuses, [200, 200, 304, 404, 301, 206, 200, 200, 206, 204])
        self.assertEqual([parsed(line)[1:] for line in lines], [(n, False) for n in sizes])


def read_response(sock, method):
    """Reads one whole response of a request made with method; returns
    (status, its Content-Length or 0)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split()[1])
    m = re.search(rb"(?im)^content-length: *(\d+)", head)
    length = int(m.group(1)) if m else 0
    want = 0 if method == "HEAD" or status in (204, 304) else length
    got = len(body)
    while got < want:
        b = sock.recv(1 << 20)
        assert b, "the connection closed mid-body"
        got += len(b)
    assert got == want, (got, want)
    return status, length


class CutByClient(Fixture):
    def test_a_client_that_leaves_mid_body_logs_what_the_kernel_took(self):
        with Server(self.root) as srv:
            s = socket.create_connection(("127.0.0.1", srv.port))
            s.sendall(b"GET /big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n")
            _, got = head_and_body(s, 3_000_000)
            slack = socket_buffers(s)
            s.close()
            line = srv.wait_log(1)[0]
            # and a complete one after it: exact, unmarked
            full = srv.get("/big.bin")
            lines = srv.wait_log(2)
        target, logged, incomplete = parsed(line)
        self.assertTrue(incomplete, line)
        self.assertGreaterEqual(logged, got)
        self.assertLessEqual(logged, got + slack)
        self.assertLess(logged, BIG)
        self.assertEqual(len(full.body), BIG)
        self.assertEqual(parsed(lines[1])[1:], (BIG, False))

    def test_a_small_body_cut_on_a_later_response_logs_what_the_kernel_took(self):
        # Below PROGRESS_MARK_MIN, on a kept-alive connection's second
        # response: the mark is the running total, no syscall (once 0 bytes).
        # The send buffer a slow real network leaves (on loopback the kernel
        # would take the whole body at once) and a small window: part of the
        # body waits in folio when the client leaves.
        write(os.path.join(self.root, "www", "mid.bin"), os.urandom(MID))
        with Server(self.root, env=preloaded("FOLIO_SNDBUF_SHIM", sndbuf=4096)) as srv:
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect(("127.0.0.1", srv.port))
            s.sendall(b"GET /style.css HTTP/1.1\r\nHost: localhost\r\n\r\n")
            read_response(s, "GET")
            s.sendall(b"GET /mid.bin HTTP/1.1\r\nHost: localhost\r\n\r\n")
            _, got = head_and_body(s, 2048)
            slack = socket_buffers(s)
            s.close()
            lines = srv.wait_log(2)
        target, logged, incomplete = parsed(lines[1])
        self.assertEqual((target, incomplete), ("/mid.bin", True), lines[1])
        self.assertGreaterEqual(logged, got)
        self.assertLessEqual(logged, min(got + slack, MID - 1))

    def test_json_says_complete_false_for_a_cut_and_true_otherwise(self):
        with Server(self.root, "--log-format", "json") as srv:
            s = socket.create_connection(("127.0.0.1", srv.port))
            s.sendall(b"GET /big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n")
            _, got = head_and_body(s, 1_000_000)
            s.close()
            srv.wait_log(1)
            srv.get("/")
            lines = [json.loads(x) for x in srv.wait_log(2)]
        self.assertFalse(lines[0]["complete"])
        self.assertGreaterEqual(lines[0]["bytes"], got)
        self.assertTrue(lines[1]["complete"])


class EventStreamBytes(Fixture):
    def test_an_event_stream_logs_the_bytes_it_sent(self):
        # Its chunks with their framing, as nginx's $body_bytes_sent counts a chunked
        # body: the hello, then an edit's event (it logged 0 before).
        with Server(self.root) as srv:
            stream = EventStream(srv.port)
            try:
                self.assertEqual(stream.next_event()[0], "hello")
                write(os.path.join(self.root, "www", "style.css"), "body { color: teal }\n")
                kinds = []
                while "css" not in kinds:
                    event = stream.next_event(5)
                    self.assertIsNotNone(event, kinds)
                    kinds.append(event[0])
                wire = stream.wire
                slack = socket_buffers(stream.sock)
            finally:
                stream.close()
            line = [l for l in srv.wait_log(1) if "/__folio/events" in l][0]
        target, logged, incomplete = parsed(line)
        self.assertEqual(target, "/__folio/events")
        self.assertGreaterEqual(logged, wire)
        self.assertLessEqual(logged, wire + slack)


class CutAtGrace(Fixture):
    def test_a_slow_download_cut_at_the_end_of_grace_logs_its_bytes_incomplete(self):
        srv = Server(self.root, "--grace", "1")
        with srv:
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
            s.connect(("127.0.0.1", srv.port))
            s.sendall(b"GET /big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n")
            _, got = head_and_body(s, 500_000)
            slack = socket_buffers(s)
            self.assertEqual(srv.stop(signal.SIGTERM), 0)
            s.settimeout(5)
            try:  # what was still in flight to us when the grace ended
                while True:
                    b = s.recv(1 << 20)
                    if not b:
                        break
                    got += len(b)
            except OSError:
                pass
            s.close()
        line = srv.log_lines[0]
        _, logged, incomplete = parsed(line)
        self.assertTrue(incomplete, line)
        self.assertGreaterEqual(logged, got - slack)  # the client drained part of the buffers after the cut
        self.assertLessEqual(logged, got + slack)
        self.assertGreater(logged, 0)
        self.assertLess(logged, BIG)


def read_at(sock, rate, seconds):
    """Reads from sock at about rate bytes/s for seconds (paced by the clock,
    as a slow client is); returns (bytes read, whether the server ended it)."""
    got, start = 0, time.monotonic()
    sock.settimeout(0.5)
    while time.monotonic() - start < seconds:
        allowed = int(rate * (time.monotonic() - start)) - got
        if allowed <= 0:
            time.sleep(0.05)
            continue
        try:
            b = sock.recv(min(allowed, 65536))
        except socket.timeout:
            continue
        except ConnectionResetError:
            return got, True
        if not b:
            return got, True
        got += len(b)
    return got, False


def slow_client(port, rcvbuf=None):
    """A client that reads slowly with its receive buffer left to the kernel:
    both buffers fill (the server's grows to megabytes) and the server's
    socket turns writable only after a third of it drains, which at a slow
    rate takes longer than --timeout."""
    s = socket.socket()
    if rcvbuf:  # what the kernel acknowledges for a client that does not read
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n")
    return s


class SendRateFloor(Fixture):
    """--send-rate is measured by bytes the client acknowledges per --timeout
    window, not by writes: a reader above the floor outlives --timeout."""

    def test_a_reader_above_the_floor_outlives_the_idle_timeout(self):
        with Server(self.root, "--timeout", "3") as srv:
            with slow_client(srv.port) as s:
                got, ended = read_at(s, 32 * 1024, 10)
        self.assertFalse(ended, "cut after %d bytes" % got)
        self.assertGreater(got, 200_000)

    def test_a_reader_below_the_floor_is_cut_within_a_bounded_time(self):
        with Server(self.root, "--timeout", "3", "--send-rate", "100K") as srv:
            # acknowledged means taken by the client's kernel: a small
            # receive buffer keeps that close to what it reads
            with slow_client(srv.port, rcvbuf=16384) as s:
                start = time.monotonic()
                got, ended = read_at(s, 8 * 1024, 20)
                took = time.monotonic() - start
            lines = srv.wait_log(1)
        self.assertTrue(ended)
        self.assertLess(took, 3 * 3 + 2)
        self.assertTrue(parsed(lines[0])[2], lines[0])  # logged incomplete

    def test_an_event_stream_is_never_cut(self):
        with Server(self.root, "--timeout", "3", "--send-rate", "100K") as srv:
            stream = EventStream(srv.port)
            try:
                self.assertFalse(stream.wait_closed(7))
            finally:
                stream.close()


def drain(sock, limit):
    """Reads sock to its end (limit seconds at most); returns (bytes read,
    seconds until the end came, or None when it did not)."""
    got, start = 0, time.monotonic()
    sock.settimeout(0.2)
    while time.monotonic() - start < limit:
        try:
            b = sock.recv(1 << 20)
        except socket.timeout:
            continue
        except ConnectionResetError:
            return got, time.monotonic() - start
        if not b:
            return got, time.monotonic() - start
        got += len(b)
    return got, None


class TruncatedWhileSent(Fixture):
    """A file truncated while it is sent (issue 19, 8) can never be sent
    whole: libmicrohttpd 0.9.75's sendfile meets the new end, sends nothing
    and waits for a writability that never comes, so the connection sat
    silent until the send-rate floor's window ended it (one to two
    --timeout). nginx closes at once ("file was truncated"); so must folio,
    within a tick of its deadline watcher, and log the response incomplete
    with the bytes the kernel took."""

    def cut_short(self, request, new_size, *args):
        """Requests big.bin, reads 1 MB of it, truncates it to new_size and
        reads on to the end; returns (header block, bytes read, seconds from
        the truncation to the end, the log line)."""
        path = os.path.join(self.root, "www", "big.bin")
        with Server(self.root, "--timeout", "3", *args) as srv:
            with socket.socket() as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
                s.connect(("127.0.0.1", srv.port))
                s.sendall(request)
                head, got = head_and_body(s, 1_000_000)
                os.truncate(path, new_size)
                more, took = drain(s, 10)
            line = srv.wait_log(1)[0]
        return head, got + more, took, line

    def assert_cut_at_once(self, head, got, took, line, length):
        self.assertIsNotNone(took, "the connection did not end within 10 s")
        self.assertLess(took, 1.5, "ended %.2f s after the truncation (--timeout 3)" % took)
        self.assertLess(got, length)
        _, logged, incomplete = parsed(line)
        self.assertTrue(incomplete, line)
        # the close is graceful: what the kernel took is what came
        self.assertEqual(logged, got, line)

    def test_a_whole_file_cut_short_under_what_was_sent_ends_at_once(self):
        head, got, took, line = self.cut_short(b"GET /big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n", 1_000_000)
        self.assertIn(b" 200 ", head.split(b"\r\n")[0])
        self.assert_cut_at_once(head, got, took, line, BIG)

    def test_a_file_cut_short_past_what_was_sent_ends_at_once(self):
        # the end is still ahead of the send: the body cannot be whole either
        head, got, took, line = self.cut_short(b"GET /big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n", BIG - 1_000_000)
        self.assert_cut_at_once(head, got, took, line, BIG)

    def test_a_range_cut_short_ends_at_once(self):
        head, got, took, line = self.cut_short(
            b"GET /big.bin HTTP/1.1\r\nHost: localhost\r\nRange: bytes=1000-\r\n\r\n", 500_000)
        self.assertIn(b" 206 ", head.split(b"\r\n")[0])
        self.assert_cut_at_once(head, got, took, line, BIG - 1000)

    def small_cut_short(self, name, size, request, production):
        """A body under 64 KiB sent by sendfile (a 16-128 KiB file, or a range of a bigger
        one: files up to 16 KiB are sent from memory), its file cut to nothing once the
        header block came: a send buffer of 4 KiB (the shim) and a receive buffer as small
        keep the rest of the body in the file. Returns (header block, bytes, seconds from
        the cut to the end or None)."""
        path = os.path.join(self.root, "assets", name)
        write(path, os.urandom(size))  # a PNG-like body: never compressed
        args = ("--timeout", "10", "--production") if production else ("--timeout", "10")
        with Server(self.root, *args, env=preloaded("FOLIO_SNDBUF_SHIM", sndbuf=4096)) as srv:
            with socket.socket() as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                s.connect(("127.0.0.1", srv.port))
                s.sendall(request)
                data = b""
                while b"\r\n\r\n" not in data:
                    data += s.recv(1024)
                head, _, body = data.partition(b"\r\n\r\n")
                with open(path, "r+b") as f:  # rewritten in place: cut, then not yet written
                    f.truncate(0)
                more, took = drain(s, 10)
        return head, len(body) + more, took

    def test_a_small_sendfile_body_cut_short_ends_at_once(self):
        for production in (False, True):  # the long way, and a ready response
            head, got, took = self.small_cut_short("forty.bin", 40 << 10,
                                                   b"GET /assets/forty.bin HTTP/1.1\r\nHost: localhost\r\n\r\n", production)
            self.assertIn(b" 200 ", head.split(b"\r\n")[0])
            self.assertIsNotNone(took, "silent until --timeout (production: %s)" % production)
            self.assertLess(took, 1.5, "ended %.2f s after the cut (--timeout 10)" % took)
            self.assertLess(got, 40 << 10)

    def test_a_small_range_cut_short_ends_at_once(self):
        head, got, took = self.small_cut_short("range.bin", 1 << 20, b"GET /assets/range.bin HTTP/1.1\r\n"
                                               b"Host: localhost\r\nRange: bytes=100000-140000\r\n\r\n", False)
        self.assertIn(b" 206 ", head.split(b"\r\n")[0])
        self.assertIsNotNone(took, "silent until --timeout")
        self.assertLess(took, 1.5, "ended %.2f s after the cut (--timeout 10)" % took)
        self.assertLess(got, 40001)

    def test_a_file_cut_after_its_response_ends_nothing(self):
        # The watch ends with the response: a kept-alive connection that idles while the
        # file is edited is not cut, and its next request is answered.
        path = os.path.join(self.root, "assets", "forty.bin")
        write(path, os.urandom(40 << 10))
        with Server(self.root, "--timeout", "10") as srv:
            with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
                s.sendall(b"GET /assets/forty.bin HTTP/1.1\r\nHost: localhost\r\n\r\n")
                head, got = head_and_body(s, 40 << 10)
                self.assertEqual(got, 40 << 10)
                with open(path, "r+b") as f:
                    f.truncate(10)
                time.sleep(0.6)  # two ticks of the watcher see the file
                s.sendall(b"GET /assets/forty.bin HTTP/1.1\r\nHost: localhost\r\n\r\n")
                head, got = head_and_body(s, 10)
                self.assertIn(b" 200 ", head.split(b"\r\n")[0])
                self.assertEqual(got, 10)

    def test_a_file_that_grows_while_sent_is_sent_whole(self):
        # only a file shorter than the response needs ends it
        path = os.path.join(self.root, "www", "big.bin")
        with Server(self.root, "--timeout", "3") as srv:
            with socket.socket() as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
                s.connect(("127.0.0.1", srv.port))
                s.sendall(b"GET /big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n")
                _, got = head_and_body(s, 1_000_000)
                with open(path, "ab") as f:
                    f.write(b"more")
                time.sleep(0.6)  # two ticks of the watcher see the file
                s.settimeout(10)
                while got < BIG:
                    b = s.recv(1 << 20)
                    if not b:
                        break
                    got += len(b)
            line = srv.wait_log(1)[0]
        self.assertEqual(got, BIG)
        self.assertEqual(parsed(line)[1:], (BIG, False))


if __name__ == "__main__":
    main()
