"""folio behind a real nginx, configured by the shipped site file
config/nginx/folio.conf: at the site root (variant A) and under /article/
(variant B). nginx runs in the foreground from a temp folder (config, logs,
temp paths, pid all inside it), listening on 127.0.0.1 only, and is always
stopped. Checks: the page and its gzip, HEAD, fragments and assets by every
reference form, ranges, 304s, 404s, redirects (nginx's and folio's relative
ones), the live-reload stream (an event crosses nginx within EVENT_WAIT: no
buffering), client addresses in the access log with and without
--trust-proxy, X-Forwarded-Prefix rewriting (and that a client cannot set the
prefix itself), and every reference of the real article under /article/.
Last, config/kubernetes/ingress.yaml rendered as ingress-nginx routes it
(IngressRendered): the article at the root, /__folio refused to readers.
Standard library only; every wait is bounded."""
import gzip
import html.parser
import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from folio import ArticleTestCase, EventStream, Server, SLOWDOWN, main, make_article, need, write  # noqa: E402

SOURCE_ROOT = os.path.abspath(os.environ.get("FOLIO_SOURCE_ROOT") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SITE = os.path.join(SOURCE_ROOT, "config", "nginx", "folio.conf")
NGINX = need(shutil.which("nginx") or "/usr/sbin/nginx", "nginx-light")
PREFIX = "/article"
EVENT_WAIT = 1.0 * SLOWDOWN   # a save must cross nginx within this: nothing buffers it
HELLO_WAIT = 5.0 * SLOWDOWN
AUDIO = "/assets/audio/read%20aloud%2C%20intro.wav"
CLIENT_ADDR = "127.0.0.3"     # a loopback source address nginx sees; folio sees nginx (127.0.0.1)
SPOOF = "203.0.113.9"         # what a client claims in X-Forwarded-For


def _die_with_parent():
    """In the child: if this test process dies (a meson timeout's SIGKILL
    included), the nginx master gets SIGTERM instead of living on."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Nginx:
    """nginx -p TMP in the foreground with the shipped site file, its upstream
    pointed at folio's port and its two `listen 80;` at free ports (variant A
    first, variant B second). Logs and temp paths stay inside TMP, so it runs
    as root or not."""

    def __init__(self, upstream_port, site=None, listens=2):
        self.upstream_port = upstream_port
        self.site, self.listens = site, listens   # site: the text of another site file
        self.proc = None

    def __enter__(self):
        self.tmp = tempfile.mkdtemp(prefix="folio-nginx-")
        try:
            for attempt in range(3):   # a free port can be taken between probe and bind
                if self._start():
                    return self
            raise RuntimeError("nginx did not start:\n" + self.errors())
        except BaseException:
            self.stop()
            raise

    def _start(self):
        if self.site is None:
            with open(SITE) as f:
                site = f.read()
        else:
            site = self.site
        upstream = "server 127.0.0.1:8000;"
        assert site.count(upstream) == 1, "the site file should have one upstream server 127.0.0.1:8000"
        listens = re.findall(r"(?m)^\s*listen 80;", site)
        assert len(listens) == self.listens, "the site file should have %d servers on `listen 80;`" % self.listens
        self.ports = [free_port() for _ in listens]
        self.root_port, self.prefix_port = self.ports[0], self.ports[-1]
        ports = iter(self.ports)
        site = site.replace(upstream, "server 127.0.0.1:%d;" % self.upstream_port)
        site = re.sub(r"(?m)^(\s*)listen 80;",
                      lambda m: "%slisten 127.0.0.1:%d;" % (m.group(1), next(ports)), site)
        t = self.tmp
        with open(os.path.join(t, "folio.conf"), "w") as f:
            f.write(site)
        with open(os.path.join(t, "nginx.conf"), "w") as f:
            f.write(
                ("user root;\n" if os.geteuid() == 0 else "")
                + "worker_processes 1;\nevents { worker_connections 512; }\nhttp {\n"
                "    access_log %(t)s/access.log;\n"
                "    client_body_temp_path %(t)s/client_body;\n"
                "    proxy_temp_path %(t)s/proxy;\n"
                "    fastcgi_temp_path %(t)s/fastcgi;\n"
                "    uwsgi_temp_path %(t)s/uwsgi;\n"
                "    scgi_temp_path %(t)s/scgi;\n"
                "    # As Debian's stock nginx.conf: gzip on (for text/html only).\n"
                "    gzip on;\n"
                "    include %(t)s/folio.conf;\n"
                "}\n" % {"t": t})
        self.error_log = os.path.join(t, "error.log")
        self.proc = subprocess.Popen(
            [NGINX, "-p", t + "/", "-c", os.path.join(t, "nginx.conf"), "-e", self.error_log,
             "-g", "daemon off; pid %s/nginx.pid; error_log %s info;" % (t, self.error_log)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=_die_with_parent)
        deadline = time.monotonic() + 10 * SLOWDOWN
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.stderr = self.proc.stderr.read().decode("utf-8", "replace")
                self.proc = None
                if "Address already in use" in self.stderr + self.errors():
                    return False
                raise RuntimeError("nginx exited: %s\n%s" % (self.stderr, self.errors()))
            if all(self._listening(p) for p in self.ports):
                return True
            time.sleep(0.05)
        raise RuntimeError("nginx did not listen within 10 s:\n" + self.errors())

    @staticmethod
    def _listening(port):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return False

    def errors(self):
        try:
            with open(self.error_log, errors="replace") as f:
                return "".join(l for l in f if "[info]" not in l and "[notice]" not in l)[-4000:]
        except OSError:
            return ""

    def stop(self):
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)   # fast shutdown: open streams are cut
                try:
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(5)
            self.proc.stderr.close()
            self.proc = None
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __exit__(self, *exc):
        self.stop()


# ---- references in HTML and CSS --------------------------------------------------------------

URL_ATTRS = {"src", "href", "srcset", "poster", "data", "action", "formaction", "xlink:href"}
CSS_URL = re.compile(r"""url\(\s*(['"]?)([^'")\s]+)\1\s*\)|@import\s+(['"])([^'"]+)\3""")


def css_refs(text):
    return [m.group(2) or m.group(4) for m in CSS_URL.finditer(text)]


def srcset_refs(value):
    return [c.strip().split()[0] for c in value.split(",") if c.strip()]


class Refs(html.parser.HTMLParser):
    """Every URL an HTML document references: (tag, attribute, value)."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.refs, self._in_style = [], False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self._in_style = tag == "style"
        for name, value in attrs:
            if value is None:
                continue
            if name == "srcset":
                self.refs += [(tag, name, v) for v in srcset_refs(value)]
            elif name in URL_ATTRS:
                self.refs.append((tag, name, value))
            elif name == "style":
                self.refs += [(tag, "style", v) for v in css_refs(value)]

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.refs += [("style", "url()", v) for v in css_refs(data)]


def is_local(ref):
    """A reference to this server: not another scheme, not another host, not
    only a fragment."""
    p = urllib.parse.urlsplit(ref)
    return not p.scheme and not p.netloc and not ref.startswith("#") and bool(p.path)


# ---- the fixture -----------------------------------------------------------------------------

REFS_PAGE = """<!doctype html><html lang=en><head><meta charset=utf-8><title>refs</title>
<link rel=icon href="/assets/images/a.png">
<link rel=stylesheet href="refs.css">
<style>.hero { background: url(/assets/images/a.png) } .b { background: url("../assets/images/a.png") }</style>
<script src="/assets/data/app.js"></script>
</head><body>
<img id=abs src="/assets/images/a.png" alt=a>
<img id=up src="../assets/images/a.png" alt=b>
<img id=rel src="assets/images/a.png" alt=c>
<img id=set src="assets/images/a.png" srcset="/assets/images/a.png 1x, ../assets/images/a.png 2x" alt=d>
<picture><source srcset="/assets/images/big.svg" type="image/svg+xml"><img src="/assets/images/a.png" alt=e></picture>
<video poster="/assets/images/a.png"></video>
<audio controls src="/assets/audio/read%20aloud%2C%20intro.wav"></audio>
<iframe src="/assets/data/frame.html"></iframe>
<object data="/assets/images/big.svg"></object>
<div style="background-image: url('/assets/images/a.png')">styled</div>
<form action="/assets/data/frame.html"><button formaction="../assets/data/frame.html">go</button></form>
<svg><a xlink:href="/assets/data/table.csv"><text>csv</text></a></svg>
<a href="/assets/references.bib">bib</a> <a href="../fragments/small.html">frag</a>
<a id=same href="#abs">here</a> <a id=ext href="https://example.org/assets/x.png">out</a>
<img id=proto src="//cdn.example.org/assets/x.png" alt=f>
<img id=datauri src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt=g>
</body></html>
"""

REFS_CSS = """@import "/assets/data/imported.css";
@import url(../assets/data/imported2.css);
.a { background: url(/assets/images/a.png); }
.b { background: url('../assets/images/a.png'); }
.c { background: url("assets/images/a.png"); }
.d { background: url(data:image/gif;base64,R0lGODlhAQABAAAAACw=); }
"""


def build_fixture(root):
    make_article(root)
    w = lambda rel, data: write(os.path.join(root, rel), data)
    w("www/refs.html", REFS_PAGE)
    w("www/refs.css", REFS_CSS)
    w("assets/data/app.js", "window.appLoaded = true;\n")
    w("assets/data/imported.css", "p { margin: 0 }\n")
    w("assets/data/imported2.css", "p { padding: 0 }\n")
    w("fragments/refs.html", '<figure><img src="/assets/images/a.png" alt=x>'
      '<img src="assets/images/a.png" alt=y><img src="../assets/images/a.png" alt=z>'
      '<span style="background: url(/assets/images/a.png)">s</span></figure>\n')
    w("www/live.css", "h1 { color: red }\n")
    w("fragments/live.html", "<p>live v0</p>\n")
    return root


class ProxyTestCase(ArticleTestCase):
    """folio (server_args) behind nginx; requests go to nginx's variant A
    (prefix "") or B (prefix "/article")."""
    prefix = ""
    trusted_prefix = False   # folio is told the prefix by X-Forwarded-Prefix (or --base-path)

    @classmethod
    def build_root(cls, tmp):
        return build_fixture(os.path.join(tmp, "article"))

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        try:
            cls.nginx = Nginx(cls.server.port).__enter__()
        except BaseException:
            super().tearDownClass()
            raise
        cls.port = cls.nginx.prefix_port if cls.prefix else cls.nginx.root_port

    @classmethod
    def tearDownClass(cls):
        try:
            cls.nginx.stop()
        finally:
            super().tearDownClass()

    # Through nginx: the path is below the prefix.
    def proxied(self, path, method="GET", headers=None, source=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10,
                                          source_address=(source, 0) if source else None)
        try:
            conn.request(method, self.prefix + path, headers=headers or {})
            r = conn.getresponse()
            r.body = r.read()
            return r
        finally:
            conn.close()

    def direct(self, path, headers=None):
        h = dict(headers or {})
        if self.prefix and self.trusted_prefix and "--trust-proxy" in self.server_args:
            h["X-Forwarded-Prefix"] = self.prefix
        return self.server.request("GET", path, h)

    def page_url(self, path="/"):
        return "http://127.0.0.1:%d%s%s" % (self.port, self.prefix, path)

    def fetch_url(self, url, headers=None):
        """GET an absolute URL on nginx (what a browser would do with a resolved reference)."""
        p = urllib.parse.urlsplit(url)
        self.assertEqual((p.hostname, p.port), ("127.0.0.1", self.port), url)
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request("GET", p.path + ("?" + p.query if p.query else ""), headers=headers or {})
            r = conn.getresponse()
            r.body = r.read()
            return r
        finally:
            conn.close()

    def assertInPrefix(self, url, ref):
        path = urllib.parse.urlsplit(url).path
        self.assertTrue(path.startswith(self.prefix + "/"),
                        "%r resolves to %s, outside %s/" % (ref, path, self.prefix))


class Through:
    """What must hold through nginx at the root and under the prefix alike."""

    def test_page(self):
        r = self.proxied("/")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.getheader("Content-Type"), "text/html; charset=utf-8")
        self.assertEqual(r.getheader("X-Content-Type-Options"), "nosniff")
        self.assertIsNone(r.getheader("Content-Encoding"))
        self.assertIn(b"pipeline bubble", r.body)
        self.assertEqual(r.body, self.direct("/").body, "nginx changed the page's bytes")
        head = self.proxied("/", "HEAD")
        self.assertEqual(head.status, 200)
        self.assertEqual(head.body, b"")
        self.assertEqual(head.getheader("ETag"), r.getheader("ETag"))

    def test_gzip_passes_through(self):
        for path in ("/", "/style.css", "/fragments/plot.html"):
            plain = self.proxied(path)
            z = self.proxied(path, headers={"Accept-Encoding": "gzip"})
            self.assertEqual(z.status, 200, path)
            self.assertEqual(z.getheader("Content-Encoding"), "gzip", path)
            self.assertIn("Accept-Encoding", z.getheader("Vary") or "", path)
            self.assertEqual(gzip.decompress(z.body), plain.body, path)
            self.assertEqual(plain.body, self.direct(path).body, path)
            self.assertLess(len(z.body), len(plain.body), path)

    def test_fragments_and_assets(self):
        cases = {
            "/fragments/small.html": ("text/html; charset=utf-8", "fragments/small.html"),
            "/fragments/plot.html": ("text/html; charset=utf-8", "fragments/plot.html"),
            "/style.css": ("text/css; charset=utf-8", "www/style.css"),
            "/assets/images/a.png": ("image/png", "assets/images/a.png"),
            "/assets/images/big.svg": ("image/svg+xml", "assets/images/big.svg"),
            "/assets/data/table.csv": ("text/csv; charset=utf-8", "assets/data/table.csv"),
            "/assets/references.bib": ("text/x-bibtex; charset=utf-8", "assets/references.bib"),
            # HTML outside fragments/ may get the live-reload client: compared with folio direct.
            "/assets/data/frame.html": ("text/html; charset=utf-8", None),
            AUDIO: (None, "assets/audio/read aloud, intro.wav"),
        }
        for path, (ctype, rel) in cases.items():
            r = self.proxied(path)
            self.assertEqual(r.status, 200, path)
            if ctype:
                self.assertEqual(r.getheader("Content-Type"), ctype, path)
            self.assertEqual(r.body, self.file(rel) if rel else self.direct(path).body, path)

    def test_three_reference_forms(self):
        """The fixture page's <img> as /assets/.., assets/.. and ../assets/..:
        resolved against the page's URL, each is the image, inside the prefix."""
        page = self.proxied("/")
        imgs = [v for tag, attr, v in Refs(page.body.decode()).refs if tag == "img"]
        self.assertEqual(len(imgs), 3, imgs)
        for ref in imgs:
            url = urllib.parse.urljoin(self.page_url("/"), ref)
            self.assertInPrefix(url, ref)
            r = self.fetch_url(url)
            self.assertEqual((r.status, r.body), (200, self.file("assets/images/a.png")), ref)
        # The fragment loader's relative fetch, and the iframe.
        for ref in ("fragments/small.html", "assets/data/frame.html"):
            r = self.fetch_url(urllib.parse.urljoin(self.page_url("/"), ref))
            self.assertEqual((r.status, r.body), (200, self.direct("/" + ref).body), ref)

    def test_range(self):
        whole = self.file("assets/audio/read aloud, intro.wav")
        for spec, start, end in (("bytes=100-1123", 100, 1123), ("bytes=-10", len(whole) - 10, len(whole) - 1),
                                 ("bytes=0-0", 0, 0)):
            r = self.proxied(AUDIO, headers={"Range": spec})
            self.assertEqual(r.status, 206, spec)
            self.assertEqual(r.getheader("Content-Range"), "bytes %d-%d/%d" % (start, end, len(whole)), spec)
            self.assertEqual(r.body, whole[start:end + 1], spec)
        r = self.proxied(AUDIO, headers={"Range": "bytes=%d-" % (len(whole) + 5)})
        self.assertEqual(r.status, 416)
        self.assertEqual(r.getheader("Content-Range"), "bytes */%d" % len(whole))

    def test_revalidation_304(self):
        for path, headers in (("/style.css", {}), ("/assets/images/a.png", {}),
                              ("/", {}), ("/style.css", {"Accept-Encoding": "gzip"})):
            first = self.proxied(path, headers=headers)
            etag = first.getheader("ETag")
            self.assertTrue(etag and etag.startswith('"'), (path, etag))
            again = self.proxied(path, headers=dict(headers, **{"If-None-Match": etag}))
            self.assertEqual(again.status, 304, path)
            self.assertEqual(again.body, b"")
            self.assertEqual(again.getheader("ETag"), etag, path)
            since = self.proxied(path, headers=dict(headers, **{
                "If-Modified-Since": first.getheader("Last-Modified")}))
            self.assertEqual(since.status, 304, path)

    def test_missing_fragment_is_404(self):
        r = self.proxied("/fragments/nope.html")
        self.assertEqual(r.status, 404)
        self.assertNotIn(b"pipeline bubble", r.body)
        self.assertIn(b"wandered off", r.body)
        self.assertIn("no-store", r.getheader("Cache-Control") or "")

    def test_folder_redirect_stays_relative(self):
        r = self.proxied("/sub")
        self.assertEqual(r.status, 301)
        loc = r.getheader("Location")
        self.assertEqual(loc, "sub/", "folio's redirect should stay relative through nginx")
        target = urllib.parse.urljoin(self.page_url("/sub"), loc)
        self.assertEqual(urllib.parse.urlsplit(target).path, self.prefix + "/sub/")
        r = self.fetch_url(target)
        self.assertEqual(r.status, 200)
        self.assertIn(b"sub page", r.body)

    def test_event_stream_through_nginx(self):
        s = EventStream(self.port, b"Accept-Encoding: gzip, deflate\r\nCache-Control: no-cache\r\n",
                        path=self.prefix + "/__folio/events")
        try:
            self.assertEqual(s.status, 200)
            self.assertEqual(s.header("content-type").split(";")[0], "text/event-stream")
            self.assertIn("no-cache", s.header("cache-control"))
            self.assertNotIn("content-encoding", s.headers)
            self.assertNotIn("content-length", s.headers)
            first = s.next_event(HELLO_WAIT)
            self.assertIsNotNone(first, "no event at all within %ss: %r" % (HELLO_WAIT, s.body))
            self.assertEqual(first[0], "hello", first)
            for rel, data, typ in (("www/live.css", "h1 { color: blue }\n", "css"),
                                   ("fragments/live.html", "<p>live v1</p>\n", "fragment"),
                                   ("www/live.css", "h1 { color: green }\n", "css")):
                time.sleep(0.3)   # apart from the previous save's coalescing window
                t0 = time.monotonic()
                write(os.path.join(self.root, rel), data)
                ev = s.next_event(EVENT_WAIT)
                took = time.monotonic() - t0
                self.assertIsNotNone(ev, "no %s event through nginx within %ss of saving %s "
                                     "(buffered?): %r" % (typ, EVENT_WAIT, rel, s.body))
                self.assertEqual(ev[0], typ, ev)
                sys.stderr.write("  %s event through nginx %.0f ms after the save\n" % (typ, took * 1000))
        finally:
            s.close()

    def log_line_for(self, marker, before):
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            lines = [l for l in self.server.log_lines[before:] if marker in l]
            if lines:
                return lines[0]
            time.sleep(0.02)
        self.fail("no access-log line for %s in %r" % (marker, self.server.log_lines[before:]))

    def logged_address(self):
        """Requests through nginx from CLIENT_ADDR claiming SPOOF in X-Forwarded-For:
        the address folio logs."""
        before = len(self.server.log_lines)
        marker = "/fragments/small.html"
        r = self.proxied(marker, headers={"X-Forwarded-For": SPOOF}, source=CLIENT_ADDR)
        self.assertEqual(r.status, 200)
        line = self.log_line_for(marker, before)
        self.assertNotIn(SPOOF, line, "a client-sent X-Forwarded-For was logged as the client: " + line)
        return line.split(" ", 1)[0], line


# ---- A. at the site root ---------------------------------------------------------------------

class AtRoot(Through, ProxyTestCase):
    """Variant A, folio without --trust-proxy: it logs the proxy's address."""

    def test_log_shows_the_proxy(self):
        addr, line = self.logged_address()
        self.assertEqual(addr, "127.0.0.1", line)


class AtRootTrusted(ProxyTestCase):
    """Variant A, folio with --trust-proxy: the client's address from
    X-Forwarded-For, and no prefix a client could set itself."""
    server_args = ("--trust-proxy",)

    def test_log_shows_the_client_nginx_saw(self):
        addr, line = Through.logged_address(self)
        self.assertEqual(addr, CLIENT_ADDR, line)

    log_line_for = Through.log_line_for

    def test_client_cannot_set_a_prefix(self):
        plain = self.proxied("/")
        evil = self.proxied("/", headers={"X-Forwarded-Prefix": "/evil"})
        self.assertEqual(evil.status, 200)
        self.assertNotIn(b"/evil", evil.body)
        self.assertEqual(evil.body, plain.body)
        css = self.proxied("/refs.css", headers={"X-Forwarded-Prefix": "/evil"})
        self.assertNotIn(b"/evil", css.body)


# ---- B. under /article/ ----------------------------------------------------------------------

class UnderPrefix(Through, ProxyTestCase):
    """Variant B, folio with --trust-proxy: nginx tells it the prefix."""
    prefix = PREFIX
    trusted_prefix = True
    server_args = ("--trust-proxy",)

    def test_bare_prefix_redirects(self):
        for path, want in (("", "/article/"), ("?x=1", "/article/?x=1")):
            r = self.proxied(path)
            self.assertEqual(r.status, 301, path)
            loc = r.getheader("Location")
            self.assertEqual(urllib.parse.urljoin(self.page_url(path), loc), self.page_url("/")
                             + want[len("/article/"):], loc)
            self.assertFalse(loc.startswith("http"), "an absolute Location names nginx's own "
                             "port and scheme, wrong behind another proxy: " + loc)

    def test_outside_the_prefix_is_not_folio(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        conn.request("GET", "/assets/images/a.png")
        r = conn.getresponse()
        r.read()
        conn.close()
        self.assertEqual(r.status, 404)

    def test_log_shows_the_client_nginx_saw(self):
        addr, line = self.logged_address()
        self.assertEqual(addr, CLIENT_ADDR, line)

    def test_client_prefix_is_replaced_by_nginx(self):
        r = self.proxied("/", headers={"X-Forwarded-Prefix": "/evil"})
        self.assertNotIn(b"/evil", r.body)
        self.assertEqual(r.body, self.proxied("/").body)

    # Prefix rewriting: what the files say as /assets/x, the prefixed page says as /article/assets/x.
    def test_page_is_rewritten(self):
        body = self.proxied("/").body.decode()
        self.assertIn('src="/article/assets/images/a.png"', body)
        self.assertNotIn('"/assets/', body)
        self.assertIn('src="assets/images/a.png"', body, "a relative reference inside the root was changed")
        self.assertIn('src="assets/data/frame.html"', body)
        self.assertIn("href=style.css", body)

    def test_fragment_is_rewritten(self):
        r = self.proxied("/fragments/refs.html")
        self.assertEqual(r.status, 200)
        body = r.body.decode()
        self.assertIn('src="/article/assets/images/a.png"', body)
        self.assertNotIn('"/assets/', body)
        self.assertIn('src="assets/images/a.png"', body)
        # A fragment is injected into the page: its references resolve against the page's URL.
        failures = []
        for tag, attr, ref in Refs(body).refs:
            url = urllib.parse.urljoin(self.page_url("/"), ref)
            path = urllib.parse.urlsplit(url).path
            if not path.startswith(PREFIX + "/"):
                failures.append("<%s %s=%r>, injected into %s/, resolves to %s" % (tag, attr, ref, PREFIX, path))
            elif self.fetch_url(url).status != 200:
                failures.append("<%s %s=%r> -> %s: not 200" % (tag, attr, ref, path))
        self.assertEqual(failures, [], "\n".join(failures))
        z = self.proxied("/fragments/refs.html", headers={"Accept-Encoding": "gzip"})
        if z.getheader("Content-Encoding") == "gzip":
            self.assertEqual(gzip.decompress(z.body), r.body)

    def test_every_reference_of_the_refs_page_resolves(self):
        body = self.proxied("/refs.html").body.decode()
        refs = Refs(body).refs
        self.assertGreater(len(refs), 20)
        failures = []
        for tag, attr, ref in refs:
            if not is_local(ref):
                continue
            url = urllib.parse.urljoin(self.page_url("/refs.html"), ref)
            path = urllib.parse.urlsplit(url).path
            if not path.startswith(PREFIX + "/"):
                failures.append("<%s %s=%r> resolves to %s, outside %s/" % (tag, attr, ref, path, PREFIX))
                continue
            r = self.fetch_url(url)
            if r.status != 200:
                failures.append("<%s %s=%r> -> %s: %d" % (tag, attr, ref, path, r.status))
        self.assertEqual(failures, [], "\n".join(failures))
        # What must be left alone.
        for kept in ('href="#abs"', 'href="https://example.org/assets/x.png"',
                     'src="//cdn.example.org/assets/x.png"', 'src="data:image/gif;base64,',
                     'href="refs.css"', 'id=rel src="assets/images/a.png"'):
            self.assertIn(kept.replace("id=rel ", ""), body, kept)

    def test_css_is_rewritten(self):
        r = self.proxied("/refs.css")
        self.assertEqual(r.status, 200)
        body = r.body.decode()
        self.assertIn("/article/assets/images/a.png", body)
        self.assertIn('"assets/images/a.png"', body, "a relative url() inside the root was changed")
        self.assertIn("data:image/gif;base64,", body)
        failures = []
        for ref in css_refs(body):
            if not is_local(ref) or ref.startswith("data:"):
                continue
            url = urllib.parse.urljoin(self.page_url("/refs.css"), ref)
            path = urllib.parse.urlsplit(url).path
            if not path.startswith(PREFIX + "/"):
                failures.append("url(%r) resolves to %s, outside %s/" % (ref, path, PREFIX))
            elif self.fetch_url(url).status != 200:
                failures.append("url(%r) -> %s: not 200" % (ref, path))
        self.assertEqual(failures, [], "\n".join(failures))


class UnderPrefixBasePath(ProxyTestCase):
    """Variant B with folio told the prefix by --base-path (no --trust-proxy)."""
    prefix = PREFIX
    server_args = ("--base-path", PREFIX)

    test_page_is_rewritten = UnderPrefix.test_page_is_rewritten
    test_fragment_is_rewritten = UnderPrefix.test_fragment_is_rewritten
    test_css_is_rewritten = UnderPrefix.test_css_is_rewritten
    test_log_shows_the_proxy = AtRoot.test_log_shows_the_proxy
    logged_address = Through.logged_address
    log_line_for = Through.log_line_for


class RealArticleUnderPrefix(ProxyTestCase):
    """The repo's own article under /article/: every <img>, <link>, <script>,
    <iframe>, <audio>/<video>/<source>, <object> and local <a> reference in the
    page and in every fragment (references in a fragment resolve against the
    page it is injected into) answers 200 inside the prefix."""
    prefix = PREFIX
    server_args = ("--trust-proxy", "--no-live-reload")

    @classmethod
    def build_root(cls, tmp):
        return SOURCE_ROOT

    def test_every_reference_resolves(self):
        page = self.proxied("/")
        self.assertEqual(page.status, 200)
        text = page.body.decode()
        docs = [("/", text)]
        names = re.findall(r'id="fragment-([\w-]+)"', text)
        self.assertGreater(len(names), 0, "no fragment containers in the article")
        for name in names:
            r = self.proxied("/fragments/%s.html" % name)
            self.assertEqual(r.status, 200, name)
            docs.append(("/fragments/%s.html" % name, r.body.decode()))
        failures, checked, seen = [], 0, {}
        for doc, body in docs:
            for tag, attr, ref in Refs(body).refs:
                if tag not in ("img", "link", "script", "iframe", "audio", "video", "source",
                               "object", "a", "style", "div", "figure", "svg", "image", "use"):
                    continue
                if not is_local(ref):
                    continue
                url = urllib.parse.urljoin(self.page_url("/"), ref)   # all resolve against the page
                path = urllib.parse.urlsplit(url).path
                where = "%s <%s %s=%r>" % (doc, tag, attr, ref)
                if not path.startswith(PREFIX + "/"):
                    failures.append("%s resolves to %s, outside %s/" % (where, path, PREFIX))
                    continue
                if url not in seen:
                    seen[url] = self.fetch_url(url).status
                checked += 1
                if seen[url] != 200:
                    failures.append("%s -> %s: %d" % (where, path, seen[url]))
        self.assertGreater(checked, 10)
        self.assertEqual(failures, [], "%d references fail under %s/ (%d answered 200):\n%s"
                         % (len(failures), PREFIX, checked - len([f for f in failures if "->" in f]),
                            "\n".join(failures)))



# ---- the Kubernetes Ingress (config/kubernetes/ingress.yaml), rendered -----------------------

def render_ingress(ingresses, host):
    """An nginx site that routes as ingress-nginx does for these Ingress
    objects and this host, for what folio relies on: a Prefix path "/p" is
    `location /p/` and `location = /p` ("/" is `location /`), an Exact path
    `location = /p`; no URI part in proxy_pass (no rewrite: the path reaches
    folio unchanged); allowlist-source-range is allow + deny all, and
    x-forwarded-prefix sets that header. Anything else an Ingress asks for
    is refused here, so a new annotation needs its rendering first."""
    known = {"nginx.ingress.kubernetes.io/allowlist-source-range",
             "nginx.ingress.kubernetes.io/x-forwarded-prefix"}
    locations = []
    for ing in ingresses:
        notes = ing["metadata"].get("annotations") or {}
        unknown = set(notes) - known
        assert not unknown, "render_ingress does not render %s" % sorted(unknown)
        extra = ""
        if "nginx.ingress.kubernetes.io/allowlist-source-range" in notes:
            for cidr in notes["nginx.ingress.kubernetes.io/allowlist-source-range"].split(","):
                extra += "        allow %s;\n" % cidr.strip()
            extra += "        deny all;\n"
        if "nginx.ingress.kubernetes.io/x-forwarded-prefix" in notes:
            extra += '        proxy_set_header X-Forwarded-Prefix "%s";\n' % notes[
                "nginx.ingress.kubernetes.io/x-forwarded-prefix"]
        for rule in ing["spec"]["rules"]:
            if rule.get("host") != host:
                continue
            for path in rule["http"]["paths"]:
                p, kind = path["path"], path["pathType"]
                assert kind in ("Prefix", "Exact"), kind
                if kind == "Exact":
                    matches = ["= " + p]
                elif p == "/":
                    matches = ["/"]
                else:
                    matches = [p.rstrip("/") + "/", "= " + p.rstrip("/")]
                for m in matches:
                    locations.append(
                        "    location %s {\n"
                        "        proxy_pass http://folio;\n"
                        "        proxy_http_version 1.1;\n"
                        '        proxy_set_header Connection "";\n'
                        "        proxy_set_header Host $host;\n"
                        "        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n"
                        "%s    }\n" % (m, extra))
    return ("upstream folio {\n    server 127.0.0.1:8000;\n}\n"
            "server {\n    listen 80;\n    server_name %s;\n%s}\n" % (host, "".join(locations)))


class IngressRendered(ProxyTestCase):
    """config/kubernetes/ingress.yaml as ingress-nginx would route it, in a
    real nginx, in front of folio started with the Deployment's environment."""
    HOST = "article.example.org"

    @classmethod
    def setUpClass(cls):
        from test_kubernetes import manifests
        _, (status, results) = manifests()
        assert status == 0, "the manifests do not validate: run the kubernetes suite"
        objects = [r["object"] for r in results]
        ingresses = [o for o in objects if o["kind"] == "Ingress"]
        container = [o for o in objects if o["kind"] == "Deployment"][0]["spec"]["template"]["spec"]["containers"][0]
        env = {e["name"]: str(e["value"]) for e in container.get("env", [])}
        env["FOLIO_PRODUCTION"] = "true"  # the image's ENV
        cls.tmp = tempfile.mkdtemp(prefix="folio-it-")
        try:
            cls.root = cls.build_root(cls.tmp)
            cls.server = Server(cls.root, env=env).__enter__()
            cls.site = render_ingress(ingresses, cls.HOST)
            cls.nginx = Nginx(cls.server.port, site=cls.site, listens=1).__enter__()
        except BaseException:
            if getattr(cls, "server", None):
                cls.server.__exit__(None, None, None)
            shutil.rmtree(cls.tmp, ignore_errors=True)
            raise
        cls.port = cls.nginx.root_port

    def get(self, path, source=CLIENT_ADDR, headers=None):
        return self.proxied(path, headers=dict({"Host": self.HOST}, **(headers or {})), source=source)

    def test_the_article_at_the_root(self):
        r = self.get("/")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.body, self.direct("/").body)
        for path in ("/style.css", "/fragments/small.html", "/assets/images/a.png"):
            self.assertEqual(self.get(path).status, 200, path)
        self.assertEqual(self.get("/fragments/missing.html").status, 404)

    def test_folder_redirect_stays_relative(self):
        r = self.get("/assets/images")
        self.assertEqual(r.status, 301)
        self.assertEqual(r.getheader("Location"), "images/")

    def test_health_is_not_public(self):
        for path in ("/__folio/health", "/__folio", "/__folio/events"):
            r = self.get(path)
            self.assertEqual(r.status, 403, path)
            self.assertNotIn(b"uptime", r.body)
        # From inside (the allowed address) it still reaches folio.
        r = self.get("/__folio/health", source="127.0.0.1")
        self.assertEqual(r.status, 200)
        self.assertIn(b'"status":"ok"', r.body)
        # Prefix is element-wise: a name that only starts the same is the article's.
        self.assertEqual(self.get("/__folioX").status, 404)
        self.assertNotIn(b"403", self.get("/__folioX").body)

    def test_client_cannot_set_a_prefix(self):
        evil = self.get("/refs.html", headers={"X-Forwarded-Prefix": "/evil"})
        self.assertEqual(evil.status, 200)
        self.assertNotIn(b"/evil", evil.body)
        self.assertEqual(evil.body, self.get("/refs.html").body)

    def test_rendering_refuses_what_it_does_not_know(self):
        with self.assertRaises(AssertionError):
            render_ingress([{"metadata": {"annotations": {"nginx.ingress.kubernetes.io/rewrite-target": "/$1"}},
                             "spec": {"rules": []}}], self.HOST)
        site = render_ingress([{"metadata": {}, "spec": {"rules": [{"host": self.HOST, "http": {"paths": [
            {"path": "/a", "pathType": "Prefix"}, {"path": "/b", "pathType": "Exact"}]}}]}}], self.HOST)
        self.assertEqual(re.findall(r"location ([^{]*) \{", site), ["/a/", "= /a", "= /b"])


if __name__ == "__main__":
    if not os.path.exists(NGINX):
        print("nginx is not installed (apt-get install nginx-light); 0 passed, 0 failed")
        sys.exit(77)
    main()
