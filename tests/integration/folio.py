"""Shared pieces of the integration tests: a fixture article, the real folio
binary on a free port, and HTTP spoken over real sockets. Standard library
only (CI reaches no PyPI)."""
import gzip
import ctypes
import http.client
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

FOLIO = os.path.abspath(os.environ.get("FOLIO_BIN") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "src", "folio"))

# Set by the "leakcheck" test setup: run folio under valgrind, whose
# --error-exitcode turns a leak or a bad read into a failed exit status.
WRAPPER = os.environ.get("FOLIO_WRAPPER", "").split()
# How much slower folio runs here, for the few bounded waits and the timings
# a test asserts: valgrind's factor, or a sanitizer's (meson says which build
# this is: FOLIO_SANITIZE, b_sanitize's value).
SANITIZE = os.environ.get("FOLIO_SANITIZE", "none")
SLOWDOWN = 10 if WRAPPER else 5 if "thread" in SANITIZE else 3 if SANITIZE not in ("", "none") else 1

SECRET = b"TOP-SECRET-OUTSIDE-THE-ARTICLE"


def need(program, package):
    """Stops a suite at once, with one line naming the Debian package, when a
    program it runs is missing (else: a FileNotFoundError deep in a test)."""
    found = os.access(program, os.X_OK) if os.path.isabs(program) else shutil.which(program)
    if not found:
        sys.exit("%s: %s is missing: install the Debian package %s (`bash .ci/setup --tests` does)"
                 % (os.path.basename(sys.argv[0]), program, package))
    return program if os.path.isabs(program) else found


def write(path, data, mtime=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    if mtime is not None:
        os.utime(path, (mtime, mtime))


def plotting_fragment(size):
    """HTML like the real article's largest fragment: a plot with thousands of
    points, which gzip shrinks several times."""
    parts = ['<div class="plot"><svg viewBox="0 0 1000 400" role="img" aria-label="loss">']
    i, total = 0, 0
    while total < size:
        parts.append('<circle cx="%d.%02d" cy="%d.%d" r="1.5" data-step="%d"></circle>'
                     % (i % 1000, i % 97, (i * 7919) % 400, i % 10, i))
        total += len(parts[-1])
        i += 1
    parts.append("</svg></div>\n")
    return "".join(parts)


def make_article(root, with_404=True):
    """The shapes the real article has: fragments up to MBs, images referenced
    three ways, iframes, audio whose name has spaces and commas, .bib, big SVG,
    plus everything a server must refuse (dotfiles, links out, fifos)."""
    w = lambda rel, data, **kw: write(os.path.join(root, rel), data, **kw)
    w("www/index.html",
      "<!doctype html>\n<html lang=en><head><meta charset=utf-8><title>Article</title>"
      "<link rel=stylesheet href=style.css></head>\n<body>\n"
      + '<img src="/assets/images/a.png" alt=a><img src="assets/images/a.png" alt=b>'
      '<img src="../assets/images/a.png" alt=c>\n'
      '<div id="fragment-plot"></div><iframe src="assets/data/frame.html"></iframe>\n'
      '<audio controls src="assets/audio/read%20aloud%2C%20intro.wav"></audio>\n'
      + "<p>The pipeline bubble is (p - 1) / (m + p - 1).</p>\n" * 6000  # ~300 KB, as the real one
      + "</body></html>\n")
    w("www/style.css", "body { font: 18px/1.6 serif; color: #222; }\n" * 100)
    w("www/tiny.css", "p{}\n")
    w("www/app.js", "document.title = 'x';\n" * 100)
    w("www/module.mjs", "export const x = 1;\n" * 100)
    w("www/sub/index.html", "<!doctype html><title>sub</title><p>sub page</p>\n")
    w("www/empty-dir/.keep", "")
    w("www/empty.txt", "")
    w("www/notes", "just some words without an extension\n" * 50)
    w("www/.env", SECRET)
    w("www/.git/config", SECRET)
    w("www/.hidden/page.html", SECRET)
    if with_404:
        w("www/404.html", "<!doctype html><title>Lost</title><link rel=stylesheet href=/style.css>"
          "<h1>This page wandered off</h1>\n")
    w("fragments/plot.html", plotting_fragment(2_300_000))
    w("fragments/refs.html", '<img src="/assets/images/a.png" alt=x><img src="../assets/images/a.png" alt=y>'
      '<img src="assets/images/a.png" alt=z>\n')
    w("www/refs.css", "h1 { background: url(/assets/images/a.png); }\n"
      "h2 { background: url('../assets/images/a.png'); }\nh3 { background: url(images/x.png); }\n")
    w("fragments/small.html", "<h2>Memory</h2><p>16 bytes per parameter with Adam.</p>\n" * 40)
    w("assets/images/a.png", bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de"
        "0000000c4944415408d763f8cfc000000301010018dd8db00000000049454e44ae426082"))
    w("assets/images/big.svg", '<svg xmlns="http://www.w3.org/2000/svg">'
      + '<path d="M0 0 L10 10"/>' * 45000 + "</svg>\n")
    w("assets/data/frame.html", "<!doctype html><title>frame</title><p>inside an iframe</p>\n")
    w("assets/data/table.csv", "step,loss\n" + "".join("%d,%f\n" % (i, 1 / (i + 1)) for i in range(2000)))
    w("assets/references.bib", "@article{ring, title={Ring attention}, year={2023}}\n" * 30)
    w("assets/audio/read aloud, intro.wav", b"RIFF" + bytes(range(256)) * 400)
    w("assets/data/noise.txt", __import__("random").Random(7).randbytes(20000))  # text type, incompressible
    w("assets/data/blob.unknownext", b"\x8f\x9e\xad\x17" * 512)  # no magic libmagic knows
    # A sidecar, fresh: used as is for gzip clients.
    old = time.time() - 100
    w("assets/data/pre.json", '{"values": [' + ",".join(str(i) for i in range(3000)) + "]}\n", mtime=old)
    w("assets/data/pre.json.gz", gzip.compress(b'{"sidecar": true}\n'), mtime=old + 10)
    # A sidecar older than its file: ignored.
    w("assets/data/stale.json", '{"fresh": [' + ",".join(str(i) for i in range(3000)) + "]}\n", mtime=old + 10)
    w("assets/data/stale.json.gz", gzip.compress(b'{"stale": true}\n'), mtime=old)
    # Outside the folders, and ways to point at it.
    w("secret.txt", SECRET)
    w("www-evil/page.html", SECRET)
    os.symlink("../../secret.txt", os.path.join(root, "www/sub/escape.txt"))
    os.symlink(os.path.join(root, "secret.txt"), os.path.join(root, "www/absolute.txt"))
    os.symlink("../www-evil", os.path.join(root, "www/evil-dir"))
    os.symlink("style.css", os.path.join(root, "www/alias.css"))
    os.mkfifo(os.path.join(root, "www/pipe.html"))
    return root


def preloaded(shim_variable, **settings):
    """The environment that preloads the shim whose path meson puts in
    shim_variable (tests/shim/), with FOLIO_SHIM_<NAME>=value settings."""
    shim = os.environ.get(shim_variable, "")
    assert os.path.isfile(shim), "%s=%r: run from meson" % (shim_variable, shim)
    env = {"FOLIO_SHIM_" + k.upper(): str(v) for k, v in settings.items()}
    env["LD_PRELOAD"] = " ".join(p for p in (shim, os.environ.get("LD_PRELOAD", "")) if p)
    # An ASan build wants its runtime first in the list; the shim comes first here.
    asan = os.environ.get("ASAN_OPTIONS", "")
    env["ASAN_OPTIONS"] = (asan + ":" if asan else "") + "verify_asan_link_order=0"
    return env


def cpu_ticks(pid):
    """utime + stime of every thread of pid, in clock ticks."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def die_with_parent():
    """In the child before exec: SIGTERM when the test process dies, even by
    SIGKILL, so no folio outlives its test (PR_SET_PDEATHSIG = 1)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


class Server:
    """folio on 127.0.0.1 and a free port, against root. Use as a context
    manager; the exit status is checked on the way out."""

    def __init__(self, root, *args, env=None, expect_exit=0):
        self.root, self.args, self.expect_exit = root, list(args), expect_exit
        self.env = dict(os.environ, **(env or {}))
        self.log_lines, self.stderr_text = [], ""

    def __enter__(self):
        self.proc = subprocess.Popen(
            [*WRAPPER, FOLIO, "--root", self.root, "--host", "127.0.0.1", "--port", "0", *self.args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env, cwd=self.root,
            preexec_fn=die_with_parent)
        # The banner is folio's stderr line with the URL (stdout is the access
        # log's alone); lines before it (notes) stay in stderr_text.
        deadline = time.monotonic() + (60 if WRAPPER else 10 * SLOWDOWN)
        line, before = "", ""
        while time.monotonic() < deadline and "http://127.0.0.1:" not in line:
            before += line
            line = self._stderr_line(deadline)
            if line is None:
                break
        if not line or "http://127.0.0.1:" not in line:
            self.proc.kill()
            raise RuntimeError("folio did not start: %r %r" % (before + (line or ""), self.proc.stderr.read().decode()))
        self.stderr_text = before + line
        self.banner = line
        self.port = int(line.rsplit(":", 1)[1].strip().strip("/"))
        self.url = "http://127.0.0.1:%d/" % self.port
        self._reader = threading.Thread(target=self._read_log, daemon=True)
        self._reader.start()
        self._err_reader = threading.Thread(target=self._read_err, daemon=True)
        self._err_reader.start()
        return self

    def _stderr_line(self, deadline):
        """One line of folio's stderr, read a byte at a time (nothing is read
        past it), or None at its end or the deadline."""
        got = b""
        while time.monotonic() < deadline and not got.endswith(b"\n"):
            r, _, _ = select.select([self.proc.stderr], [], [], 0.2)
            if r:
                b = os.read(self.proc.stderr.fileno(), 1)
                if not b:
                    return got.decode() or None
                got += b
        return got.decode() if got else None

    def _read_log(self):
        for raw in self.proc.stdout:
            self.log_lines.append(raw.decode("utf-8", "replace"))

    def _read_err(self):
        for raw in self.proc.stderr:
            self.stderr_text += raw.decode("utf-8", "replace")

    def wait_log(self, count, timeout=5):
        deadline = time.monotonic() + timeout
        while len(self.log_lines) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.log_lines

    def wait_log_line(self, text, timeout=5):
        """The first access-log line holding text, once one came (None if none
        did within timeout): for a server whose log other tests write too."""
        deadline = time.monotonic() + timeout * SLOWDOWN
        while time.monotonic() < deadline:
            found = next((line for line in self.log_lines if text in line), None)
            if found:
                return found
            time.sleep(0.02)
        return None

    def stop(self, sig=signal.SIGTERM, timeout=15):
        """Signals folio and waits timeout seconds (SLOWDOWN times) for its exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout * SLOWDOWN)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError("folio did not stop within %ss of %s" % (timeout * SLOWDOWN, sig))
        self._reader.join(2)
        self._err_reader.join(2)
        return code

    def __exit__(self, *exc):
        code = self.stop()
        if exc[0] is None and code != self.expect_exit:
            raise AssertionError("folio exited %s; stderr: %s" % (code, self.stderr_text))

    # HTTP over http.client: one connection per call unless one is passed.
    def request(self, method, path, headers=None, conn=None):
        own = conn is None
        conn = conn or http.client.HTTPConnection("127.0.0.1", self.port, timeout=10 * SLOWDOWN)
        conn.request(method, path, headers=headers or {})
        resp = conn.getresponse()
        body = resp.read()
        resp.body = body
        if own:
            conn.close()
        return resp

    def get(self, path, **headers):
        return self.request("GET", path, {k.replace("_", "-"): v for k, v in headers.items()})

    def raw(self, data, timeout=5, read_all=True):
        """Sends bytes as they are; returns what came back until the peer
        closed or timeout passed."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as s:
            s.sendall(data)
            chunks = []
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                try:
                    b = s.recv(65536)
                except (socket.timeout, ConnectionResetError):
                    break
                if not b:
                    break
                chunks.append(b)
                if not read_all and b"\r\n\r\n" in b"".join(chunks):
                    break
            return b"".join(chunks)

    def alive(self, patience=0):
        """True when the server answers its health check, trying for up to
        patience seconds (closed connections take a moment to be counted out)."""
        deadline = time.monotonic() + patience
        while True:
            try:
                return self.get("/__folio/health").status == 200
            except OSError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.1)


class EventStream:
    """An event stream read on a raw socket, as a browser's EventSource reads
    it: headers, the de-chunked body, events. path may carry a proxy prefix."""

    def __init__(self, port, extra_headers=b"", timeout=5.0, path="/__folio/events"):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          b"Accept: text/event-stream\r\n" + extra_headers + b"\r\n")
        self.raw = b""
        self.body = b""
        self.ended = False   # saw the last chunk
        self.eof = False     # the peer closed
        self.in_body = False
        self.wire = 0
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in self.raw:
            if not self._recv(deadline):
                raise AssertionError("no response headers: %r" % self.raw)
        head, self.raw = self.raw.split(b"\r\n\r\n", 1)
        self.in_body = True
        self.wire = len(self.raw)  # body bytes as they came, chunk framing included
        lines = head.decode("latin-1").split("\r\n")
        self.status_line = lines[0]
        self.status = int(lines[0].split()[1])
        self.headers = {}
        for line in lines[1:]:
            k, v = line.split(":", 1)
            self.headers.setdefault(k.strip().lower(), []).append(v.strip())
        self.chunked = "chunked" in (self.header("transfer-encoding") or "").lower()
        self._dechunk()

    def header(self, name):
        v = self.headers.get(name.lower())
        return v[0] if v and len(v) == 1 else v

    def _recv(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0 or self.eof:
            return False
        self.sock.settimeout(left)
        try:
            b = self.sock.recv(65536)
        except socket.timeout:
            return False
        except ConnectionResetError:
            b = b""
        if not b:
            self.eof = True
            return False
        self.raw += b
        self.wire += len(b) if self.in_body else 0
        self._dechunk()
        return True

    def _dechunk(self):
        if self.in_body and not self.chunked:
            self.body, self.raw = self.body + self.raw, b""
            return
        while self.in_body and not self.ended:
            i = self.raw.find(b"\r\n")
            if i < 0:
                return
            size = int(self.raw[:i].split(b";")[0], 16)
            if size == 0:
                if self.raw[i + 2:i + 4] == b"\r\n":
                    self.ended = True
                    self.raw = self.raw[i + 4:]
                return
            if len(self.raw) < i + 2 + size + 2:
                return
            self.body += self.raw[i + 2:i + 2 + size]
            assert self.raw[i + 2 + size:i + 4 + size] == b"\r\n", "bad chunk framing"
            self.raw = self.raw[i + 4 + size:]

    def _pop(self):
        """The next complete event as (type, data, fields) or None; skips comments."""
        while b"\n\n" in self.body:
            block, self.body = self.body.split(b"\n\n", 1)
            typ, data, fields = "message", [], {}
            for line in block.decode().split("\n"):
                if line.startswith(":"):
                    continue
                k, _, v = line.partition(":")
                v = v[1:] if v.startswith(" ") else v
                fields[k] = v
                if k == "event":
                    typ = v
                elif k == "data":
                    data.append(v)
            if data:
                return typ, "\n".join(data), fields
        return None

    def next_event(self, timeout=3.0):
        deadline = time.monotonic() + timeout
        while True:
            ev = self._pop()
            if ev is not None:
                return ev
            if not self._recv(deadline):
                return None

    def events_within(self, seconds):
        out = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            ev = self.next_event(max(0.0, deadline - time.monotonic()))
            if ev is None:
                break
            out.append(ev[:2])
        return out

    def wait_closed(self, timeout):
        deadline = time.monotonic() + timeout
        while not self.eof and self._recv(deadline):
            pass
        return self.eof

    def close(self):
        self.sock.close()


def status_of(raw_response):
    line = raw_response.split(b"\r\n", 1)[0]
    parts = line.split(b" ")
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None


class ArticleTestCase(unittest.TestCase):
    """A fixture article in a temp folder and folio serving it, shared by a
    test class. Subclasses set server_args, or build another fixture."""
    server_args = ()
    with_404 = True

    @classmethod
    def build_root(cls, tmp):
        return make_article(os.path.join(tmp, "article"), with_404=cls.with_404)

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="folio-it-")
        cls.root = cls.build_root(cls.tmp)
        cls.server = Server(cls.root, *cls.server_args).__enter__()

    @classmethod
    def tearDownClass(cls):
        try:
            cls.server.__exit__(None, None, None)
        finally:
            shutil.rmtree(cls.tmp, ignore_errors=True)

    def file(self, rel):
        with open(os.path.join(self.root, rel), "rb") as f:
            return f.read()


def main():
    """Runs the module's tests (or only the classes named as arguments); ends
    with the plain 'N passed, N failed' line."""
    module = sys.modules["__main__"]
    loader = unittest.defaultTestLoader
    if len(sys.argv) > 1:
        suite = unittest.TestSuite(loader.loadTestsFromTestCase(getattr(module, name))
                                   for name in sys.argv[1:])
    else:
        suite = loader.loadTestsFromModule(module)
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    failed = len(result.failures) + len(result.errors)
    print("%d passed, %d failed" % (result.testsRun - failed, failed))
    sys.exit(0 if result.wasSuccessful() else 1)
