"""HTTP behaviour of the real binary: methods, types, compression,
validators, ranges, caching headers, errors, folders, logs."""
import email.utils
import gzip
import http.client
import json
import os
import re
import subprocess
import tempfile
import threading
import time
import unittest

from folio import FOLIO, SLOWDOWN, ArticleTestCase, Server, main, make_article, need, write


def built_codings():
    """The codings this folio binary makes beside gzip (meson options brotli,
    zstd): read from the libraries it links, so a gzip-only build runs too."""
    libs = subprocess.run(["ldd", FOLIO], stdout=subprocess.PIPE, text=True).stdout
    return {name for name, lib in (("br", "libbrotlienc"), ("zstd", "libzstd")) if lib in libs}


BUILT = built_codings()
for _coding, _tool in (("br", "brotli"), ("zstd", "zstd")):
    if _coding in BUILT:
        need(_tool, _tool)  # the tool decodes what folio sent
BEST = "br" if "br" in BUILT else "zstd" if "zstd" in BUILT else "gzip"

AUDIO = "/assets/audio/read%20aloud%2C%20intro.wav"


class Methods(ArticleTestCase):
    def test_get_and_head_agree(self):
        get = self.server.get("/style.css")
        head = self.server.request("HEAD", "/style.css")
        self.assertEqual(get.status, 200)
        self.assertEqual(head.status, 200)
        self.assertEqual(head.body, b"")
        self.assertEqual(head.getheader("Content-Length"), str(len(self.file("www/style.css"))))
        for name in ("Content-Type", "ETag", "Last-Modified", "Cache-Control"):
            self.assertEqual(get.getheader(name), head.getheader(name), name)

    def test_options(self):
        r = self.server.request("OPTIONS", "/")
        self.assertEqual(r.status, 204)
        self.assertEqual(r.getheader("Allow"), "GET, HEAD, OPTIONS")

    def test_other_methods_405(self):
        for method in ("POST", "PUT", "DELETE", "PATCH", "PROPFIND", "TRACE"):
            r = self.server.request(method, "/index.html")
            self.assertEqual(r.status, 405, method)
            self.assertEqual(r.getheader("Allow"), "GET, HEAD, OPTIONS")
            self.assertNotIn(b"pipeline bubble", r.body)

    def test_keep_alive(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=5 * SLOWDOWN)
        first = self.server.request("GET", "/style.css", conn=conn)
        sock = conn.sock
        second = self.server.request("GET", "/app.js", conn=conn)
        self.assertEqual((first.status, second.status), (200, 200))
        self.assertIs(conn.sock, sock, "the connection was not reused")
        self.assertNotEqual(first.getheader("Connection"), "close")
        conn.close()


class Types(ArticleTestCase):
    cases = {
        "/": "text/html; charset=utf-8",
        "/style.css": "text/css; charset=utf-8",
        "/app.js": "text/javascript; charset=utf-8",
        "/module.mjs": "text/javascript; charset=utf-8",
        "/fragments/small.html": "text/html; charset=utf-8",
        "/assets/images/a.png": "image/png",
        "/assets/images/big.svg": "image/svg+xml",
        "/assets/data/table.csv": "text/csv; charset=utf-8",
        "/assets/references.bib": "text/x-bibtex; charset=utf-8",
        AUDIO: "audio/wav",
        "/notes": "text/plain; charset=utf-8",   # libmagic, no extension
        "/empty.txt": "text/plain; charset=utf-8",
        "/assets/data/blob.unknownext": "application/octet-stream",
    }

    def test_content_types(self):
        for path, want in self.cases.items():
            r = self.server.get(path)
            self.assertEqual(r.status, 200, path)
            self.assertEqual(r.getheader("Content-Type"), want, path)
            self.assertEqual(r.getheader("X-Content-Type-Options"), "nosniff", path)

    def test_sniffed_type_is_stable(self):
        # The libmagic answer is cached per file; asking twice changes nothing.
        a = self.server.get("/notes").getheader("Content-Type")
        b = self.server.get("/notes").getheader("Content-Type")
        self.assertEqual(a, b)

    def test_nosniff_on_errors_too(self):
        for path in ("/missing", "/%zz"):
            self.assertEqual(self.server.get(path).getheader("X-Content-Type-Options"), "nosniff")

    def test_content_length_everywhere(self):
        for path in ("/", "/missing", "/sub", "/empty.txt", "/__folio/health"):
            r = self.server.get(path, Accept_Encoding="gzip")
            self.assertEqual(r.getheader("Content-Length"), str(len(r.body)), path)
            self.assertIsNone(r.getheader("Transfer-Encoding"), path)


class Compression(ArticleTestCase):
    def test_gzip_negotiated_and_correct(self):
        r = self.server.get("/style.css", Accept_Encoding="gzip, deflate")
        self.assertEqual(r.getheader("Content-Encoding"), "gzip")
        self.assertEqual(r.getheader("Vary"), "Accept-Encoding")
        self.assertEqual(gzip.decompress(r.body), self.file("www/style.css"))
        plain = self.server.get("/style.css")
        self.assertIsNone(plain.getheader("Content-Encoding"))
        self.assertEqual(plain.getheader("Vary"), "Accept-Encoding")
        self.assertNotEqual(plain.getheader("ETag"), r.getheader("ETag"))

    def test_q_values(self):
        # Since issue 18, "*" and "br" reach brotli, the smallest (docs/production.md, Compression).
        for header, coding in (("gzip;q=0", None), ("identity, gzip;q=0.5", "gzip"),
                               ("*", BEST), ("*;q=0", None), ("br", "br" if "br" in BUILT else None),
                               ("gzip;q=0, *;q=1", BEST if BEST != "gzip" else None),
                               ("gzip;q=0, br;q=0, zstd;q=0, *;q=1", None)):
            r = self.server.get("/style.css", Accept_Encoding=header)
            self.assertEqual(r.getheader("Content-Encoding"), coding, header)

    def test_large_fragment_compresses_well(self):
        r = self.server.get("/fragments/plot.html", Accept_Encoding="gzip")
        original = self.file("fragments/plot.html")
        self.assertGreater(len(original), 2_000_000)
        self.assertEqual(gzip.decompress(r.body), original)
        self.assertLess(len(r.body) * 4, len(original))

    def test_not_for_small_or_binary(self):
        for path in ("/tiny.css", "/assets/images/a.png", AUDIO):
            r = self.server.get(path, Accept_Encoding="gzip")
            self.assertIsNone(r.getheader("Content-Encoding"), path)
        self.assertIsNone(self.server.get("/assets/images/a.png").getheader("Vary"))

    def test_incompressible_text_goes_as_is(self):
        for _ in range(2):  # the second answer comes from the cached "not worth it"
            r = self.server.get("/assets/data/noise.txt", Accept_Encoding="gzip")
            self.assertIsNone(r.getheader("Content-Encoding"))
            self.assertEqual(r.getheader("Vary"), "Accept-Encoding")
            self.assertEqual(r.body, self.file("assets/data/noise.txt"))

    def test_fresh_sidecar_used_as_is(self):
        r = self.server.get("/assets/data/pre.json", Accept_Encoding="gzip")
        self.assertEqual(r.getheader("Content-Encoding"), "gzip")
        self.assertEqual(r.body, self.file("assets/data/pre.json.gz"))
        self.assertEqual(r.getheader("Content-Type"), "application/json")
        self.assertEqual(self.server.get("/assets/data/pre.json").body, self.file("assets/data/pre.json"))

    def test_stale_sidecar_ignored(self):
        r = self.server.get("/assets/data/stale.json", Accept_Encoding="gzip")
        self.assertEqual(r.getheader("Content-Encoding"), "gzip")
        self.assertEqual(gzip.decompress(r.body), self.file("assets/data/stale.json"))


class Validators(ArticleTestCase):
    def test_etag_and_last_modified(self):
        r = self.server.get("/style.css")
        etag, lm = r.getheader("ETag"), r.getheader("Last-Modified")
        self.assertRegex(etag, r'^"[0-9a-f-]+"$')
        self.assertRegex(lm, r"^\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT$")
        self.assertEqual(self.server.get("/style.css", If_None_Match=etag).status, 304)
        self.assertEqual(self.server.get("/style.css", If_None_Match='W/' + etag).status, 304)
        self.assertEqual(self.server.get("/style.css", If_None_Match='"x", ' + etag).status, 304)
        self.assertEqual(self.server.get("/style.css", If_None_Match='"other"').status, 200)
        self.assertEqual(self.server.get("/style.css", If_Modified_Since=lm).status, 304)
        self.assertEqual(self.server.get("/style.css", If_Modified_Since="Sat, 01 Jan 2000 00:00:00 GMT").status, 200)
        # If-None-Match wins over If-Modified-Since.
        self.assertEqual(self.server.get("/style.css", If_None_Match='"other"', If_Modified_Since=lm).status, 200)

    def test_304_has_validators_and_no_body(self):
        etag = self.server.get("/style.css").getheader("ETag")
        r = self.server.get("/style.css", If_None_Match=etag)
        self.assertEqual(r.status, 304)
        self.assertEqual(r.body, b"")
        self.assertEqual(r.getheader("ETag"), etag)
        self.assertEqual(r.getheader("Cache-Control"), "no-cache")

    def test_gzip_variant_revalidates(self):
        r = self.server.get("/style.css", Accept_Encoding="gzip")
        etag = r.getheader("ETag")
        again = self.server.get("/style.css", Accept_Encoding="gzip", If_None_Match=etag)
        self.assertEqual(again.status, 304)
        # The identity representation does not match the gzip one's tag.
        self.assertEqual(self.server.get("/style.css", If_None_Match=etag).status, 200)

    def test_if_match(self):
        etag = self.server.get("/style.css").getheader("ETag")
        self.assertEqual(self.server.get("/style.css", If_Match=etag).status, 200)
        self.assertEqual(self.server.get("/style.css", If_Match='"nope"').status, 412)
        self.assertEqual(self.server.get("/style.css", If_Unmodified_Since="Sat, 01 Jan 2000 00:00:00 GMT").status, 412)

    def test_a_list_sent_on_several_lines_is_one_list(self):
        # RFC 9110 5.3: repeated field lines are one comma-joined list (only the first was read)
        etag = self.server.get("/style.css").getheader("ETag")

        def status(*lines):
            head = "".join(line + "\r\n" for line in lines)
            raw = self.server.raw(("GET /style.css HTTP/1.1\r\nHost: localhost\r\n%sConnection: close\r\n\r\n"
                                   % head).encode())
            return int(raw.split(b" ", 2)[1])
        self.assertEqual(status('If-None-Match: "a"', "If-None-Match: " + etag), 304)
        self.assertEqual(status('If-None-Match: "a"', 'If-None-Match: "b"'), 200)
        self.assertEqual(status('If-Match: "a"', "If-Match: " + etag), 200)
        self.assertEqual(status('If-Match: "a"', 'if-match: "b"'), 412)
        self.assertEqual(status('If-None-Match: , ' + etag), 304)  # an empty element (5.6.1)
        self.assertEqual(status('If-Match: , ' + etag), 200)

    def test_change_is_seen(self):
        path = os.path.join(self.root, "www/changing.txt")
        with open(path, "w") as f:
            f.write("version one\n")
        first = self.server.get("/changing.txt", Accept_Encoding="gzip")
        with open(path, "w") as f:  # same size, new bytes, later mtime
            f.write("version two\n")
        later = time.time() + 5
        os.utime(path, (later, later))
        second = self.server.get("/changing.txt")
        self.assertEqual(second.body, b"version two\n")
        self.assertNotEqual(first.getheader("ETag"), second.getheader("ETag"))
        self.assertEqual(self.server.get("/changing.txt", If_None_Match=first.getheader("ETag")).status, 200)


class FutureModificationTime(unittest.TestCase):
    """A file whose mtime is in the future (a build machine's clock, an archive, touch -d):
    its Last-Modified is the message's Date (RFC 9110 8.8.2.1), the same version revalidated
    by date alone is 304, and the redeploy that gives it a real, older mtime is seen (it was
    304 for ever: any real mtime is earlier than the future date a client held)."""

    def run_in(self, *args):
        from email.utils import parsedate_to_datetime as parse
        with tempfile.TemporaryDirectory() as tmp:
            root = make_article(os.path.join(tmp, "article"))
            path = os.path.join(root, "assets", "future.txt")
            year = 365 * 86400
            write(path, b"built by a clock a year ahead\n", mtime=time.time() + year)
            with Server(root, *args) as s:
                first = s.get("/assets/future.txt")
                lm = first.getheader("Last-Modified")
                self.assertLessEqual(parse(lm), parse(first.getheader("Date")))
                self.assertEqual(s.get("/assets/future.txt", If_Modified_Since=lm).status, 304)
                # A client that kept the future date an older folio sent: no date folio sends.
                ahead = email.utils.formatdate(time.time() + year, usegmt=True)
                self.assertEqual(s.get("/assets/future.txt", If_Modified_Since=ahead).status, 200)
                # The redeploy, in a later second than the date the client holds.
                while int(time.time()) <= parse(lm).timestamp():
                    time.sleep(0.05)
                write(path, b"built again, clock fixed\n", mtime=time.time() - 3600)
                again = s.get("/assets/future.txt", If_Modified_Since=lm)
                self.assertEqual((again.status, again.body), (200, b"built again, clock fixed\n"))
                self.assertEqual(s.get("/assets/future.txt",
                                       If_Modified_Since=again.getheader("Last-Modified")).status, 304)

    def test_preview(self):
        self.run_in()

    def test_production(self):
        self.run_in("--production")


def settled(server, path, coding):
    """server's answer for path in coding once its best level, if one is being made, has
    landed: a big body goes out in br 5 first and br 11 later (its ETag names the level),
    so two replicas are compared at the same stage, as any two are once settled."""
    deadline = time.monotonic() + 60 * SLOWDOWN
    while True:
        r = server.get(path, Accept_Encoding=coding)
        if not (r.getheader("ETag") or "").endswith('-br5"') or time.monotonic() > deadline:
            return r
        time.sleep(0.05)


class ReplicaETags(unittest.TestCase):
    """The same bytes have the same ETag on every replica (cp -a: other inodes, the same
    mtimes), so a revalidation the balancer sends to the other one is 304, not the file
    again; each coding keeps its own tag, and a change of the bytes that keeps size and
    mtime still changes it."""

    def test_two_copies_agree(self):
        with tempfile.TemporaryDirectory() as tmp:
            one = make_article(os.path.join(tmp, "one"))
            two = os.path.join(tmp, "two")
            subprocess.run(["cp", "-a", one, two], check=True)  # other inodes, the same mtimes
            paths = ["/", "/style.css", "/fragments/plot.html", "/assets/images/a.png"]
            with Server(one, "--production") as a, Server(two, "--production") as b:
                for path in paths:
                    for coding in ("identity", "gzip", "br"):
                        ra, rb = a.get(path, Accept_Encoding=coding), b.get(path, Accept_Encoding=coding)
                        again = b.get(path, Accept_Encoding=coding, If_None_Match=ra.getheader("ETag"))
                        tags = {r.getheader("ETag") for r in (ra, rb, again)}
                        if len(tags) > 1 and any((t or "").endswith('-br5"') for t in tags):
                            # A best level landed on one meanwhile: compare them settled.
                            ra, rb = settled(a, path, coding), settled(b, path, coding)
                            again = b.get(path, Accept_Encoding=coding, If_None_Match=ra.getheader("ETag"))
                        self.assertEqual(ra.body, rb.body, path)
                        self.assertEqual(ra.getheader("ETag"), rb.getheader("ETag"), (path, coding))
                        self.assertEqual(again.status, 304, (path, coding))
                tags = {a.get("/style.css", Accept_Encoding=c).getheader("ETag") for c in ("identity", "gzip", "br")}
                self.assertEqual(len(tags), 3, tags)  # each coding its own
                # Other bytes, the same size and mtime: another tag.
                css = os.path.join(one, "www", "style.css")
                st = os.stat(css)
                with open(css, "rb") as f:
                    data = f.read()
                old = a.get("/style.css").getheader("ETag")
                with open(css, "wb") as f:
                    f.write(data[::-1])
                os.utime(css, ns=(st.st_atime_ns, st.st_mtime_ns))
                self.assertNotEqual(a.get("/style.css").getheader("ETag"), old)
                self.assertEqual(a.get("/style.css", If_None_Match=old).status, 200)


class Ranges(ArticleTestCase):
    def setUp(self):
        self.audio = self.file("assets/audio/read aloud, intro.wav")
        self.size = len(self.audio)

    def test_single_ranges(self):
        for header, first, last in (("bytes=0-99", 0, 99), ("bytes=1000-", 1000, self.size - 1),
                                    ("bytes=-500", self.size - 500, self.size - 1),
                                    ("bytes=10-10", 10, 10),
                                    ("bytes=100-999999999", 100, self.size - 1)):
            r = self.server.get(AUDIO, Range=header)
            self.assertEqual(r.status, 206, header)
            self.assertEqual(r.getheader("Content-Range"), "bytes %d-%d/%d" % (first, last, self.size))
            self.assertEqual(r.body, self.audio[first:last + 1], header)
            self.assertEqual(r.getheader("Content-Length"), str(last - first + 1))
        self.assertEqual(self.server.get(AUDIO).getheader("Accept-Ranges"), "bytes")

    def test_unsatisfiable(self):
        r = self.server.get(AUDIO, Range="bytes=%d-" % self.size)
        self.assertEqual(r.status, 416)
        self.assertEqual(r.getheader("Content-Range"), "bytes */%d" % self.size)

    def test_ignored_forms_give_200(self):
        for header in ("bytes=5-1", "items=0-5", "bytes=0-1,5-6", "bytes=abc"):
            r = self.server.get(AUDIO, Range=header)
            self.assertEqual(r.status, 200, header)
            self.assertEqual(len(r.body), self.size, header)

    def test_range_gets_identity_bytes(self):
        r = self.server.get("/style.css", Range="bytes=0-9", Accept_Encoding="gzip")
        self.assertEqual(r.status, 206)
        self.assertIsNone(r.getheader("Content-Encoding"))
        self.assertEqual(r.body, self.file("www/style.css")[:10])

    def test_if_range(self):
        etag = self.server.get(AUDIO).getheader("ETag")
        lm = self.server.get(AUDIO).getheader("Last-Modified")
        self.assertEqual(self.server.get(AUDIO, Range="bytes=0-9", If_Range=etag).status, 206)
        self.assertEqual(self.server.get(AUDIO, Range="bytes=0-9", If_Range=lm).status, 206)
        stale = self.server.get(AUDIO, Range="bytes=0-9", If_Range='"old"')
        self.assertEqual(stale.status, 200)
        self.assertEqual(len(stale.body), self.size)

    def test_head_range(self):
        r = self.server.request("HEAD", AUDIO, {"Range": "bytes=0-9"})
        self.assertEqual(r.status, 206)
        self.assertEqual(r.body, b"")


class Folders(ArticleTestCase):
    def test_index_and_redirects(self):
        r = self.server.get("/sub")
        self.assertEqual(r.status, 301)
        self.assertEqual(r.getheader("Location"), "sub/")  # relative: safe behind a prefix
        self.assertEqual(self.server.get("/sub?x=1").getheader("Location"), "sub/?x=1")
        r = self.server.get("/sub/")
        self.assertEqual(r.status, 200)
        self.assertIn(b"sub page", r.body)
        r = self.server.get("/fragments")
        self.assertEqual((r.status, r.getheader("Location")), (301, "fragments/"))

    def test_folder_without_index_is_404_not_a_listing(self):
        self.assertEqual(self.server.get("/empty-dir/").status, 404)
        self.assertEqual(self.server.get("/assets/").status, 404)

    def test_file_with_slash(self):
        self.assertEqual(self.server.get("/style.css/").status, 404)


class Errors(ArticleTestCase):
    def test_custom_404(self):
        r = self.server.get("/fragments/missing.html")
        self.assertEqual(r.status, 404)
        self.assertIn(b"This page wandered off", r.body)
        self.assertEqual(r.getheader("Cache-Control"), "no-store")
        self.assertEqual(r.getheader("Content-Type"), "text/html; charset=utf-8")
        self.assertNotIn(b"pipeline bubble", r.body)  # never the page itself (no SPA fallback)

    def test_bad_request_page(self):
        r = self.server.get("/a%00b")
        self.assertEqual(r.status, 400)
        self.assertIn(b"400 Bad Request", r.body)

    def test_a_path_longer_than_any_file_is_414(self):
        for target in ("/" + "a" * 5000, "/" + "../" * 2500 + "style.css"):
            r = self.server.get(target)
            self.assertEqual(r.status, 414, target[:20])
            self.assertIn(b"414 URI Too Long", r.body)

    def test_thousands_of_slashes_are_served_not_sent_a_location_too_long(self):
        # its Location ("../" a slash) would not fit the head: 431 came instead
        r = self.server.get("/" * 4000 + "style.css")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.body, self.file("www/style.css"))
        self.assertEqual(self.server.get("//style.css").status, 301)  # a few: still sent to the one address


class Default404(ArticleTestCase):
    with_404 = False

    def test_builtin_404(self):
        r = self.server.get("/nothing-here.png")
        self.assertEqual(r.status, 404)
        self.assertIn(b"404 Not Found", r.body)

    def test_builtin_pages_get_the_client_in_preview(self):
        """A page the browser loads (a folder gone while it rebuilds, say)
        reloads with the rest: folio's own error page carries the client too,
        relative to its address; a script's fetch gets none."""
        tag = b'<script src="%s__folio/reload.js" defer></script></html>'
        r = self.server.get("/gone/deeper/page.html", Sec_Fetch_Dest="document")
        self.assertEqual(r.status, 404)
        self.assertIn(tag % b"../../", r.body)
        self.assertIn(tag % b"", self.server.get("/a%00b", Sec_Fetch_Dest="document").body)
        self.assertNotIn(b"reload.js", self.server.get("/gone/x.html", Sec_Fetch_Dest="empty").body)


class Default404InProduction(ArticleTestCase):
    with_404 = False
    server_args = ("--production",)

    def test_no_client_in_production(self):
        r = self.server.get("/gone/page.html", Sec_Fetch_Dest="document")
        self.assertEqual(r.status, 404)
        self.assertNotIn(b"reload.js", r.body)


class CachingPreview(ArticleTestCase):
    def test_no_cache_everywhere(self):
        for path in ("/", "/style.css", "/assets/images/a.png"):
            self.assertEqual(self.server.get(path).getheader("Cache-Control"), "no-cache", path)


class CachingProduction(ArticleTestCase):
    server_args = ("--production", "--max-age", "600")

    def test_html_revalidates_rest_cached(self):
        self.assertEqual(self.server.get("/").getheader("Cache-Control"), "no-cache")
        self.assertEqual(self.server.get("/fragments/small.html").getheader("Cache-Control"), "no-cache")
        self.assertEqual(self.server.get("/style.css").getheader("Cache-Control"), "public, max-age=600")
        self.assertEqual(self.server.get("/assets/images/a.png").getheader("Cache-Control"), "public, max-age=600")
        self.assertEqual(self.server.get("/missing.css").getheader("Cache-Control"), "no-store")

    def test_no_live_reload_in_production(self):
        self.assertNotIn(b"__folio/reload.js", self.server.get("/").body)
        self.assertEqual(self.server.get("/__folio/events").status, 404)
        self.assertEqual(self.server.get("/__folio/reload.js").status, 404)
        self.assertEqual(self.server.get("/__folio/early.js").status, 404)
        r = self.server.get("/", Accept_Encoding="gzip")
        self.assertEqual(gzip.decompress(r.body), self.file("www/index.html"))
        self.assertEqual(r.getheader("Vary"), "Accept-Encoding")  # no client: Sec-Fetch-Dest changes nothing


class Injection(ArticleTestCase):
    def test_documents_get_the_client(self):
        page = self.server.get("/", Sec_Fetch_Dest="document")
        self.assertIn(b'<script src="__folio/reload.js" defer></script></head>', page.body)
        self.assertIn("Sec-Fetch-Dest", page.getheader("Vary"))  # RFC 9110 12.5.5: the field chose
        plain = self.server.get("/", Sec_Fetch_Dest="empty")
        self.assertNotEqual(page.getheader("ETag"), plain.getheader("ETag"))
        frame = self.server.get("/assets/data/frame.html", Sec_Fetch_Dest="iframe")
        self.assertIn(b'<script src="../../__folio/reload.js"', frame.body)
        self.assertEqual(self.server.get("/__folio/reload.js").status, 200)

    def test_first_part_before_the_page_scripts_and_kept(self):
        """The client's first part (it hears errors from the page's first
        byte on) stands before the page's first script, a classic script; its
        URL names its bytes, so a browser keeps it and a reload costs no
        request; another version is revalidated."""
        body = self.server.get("/", Sec_Fetch_Dest="document").body
        m = re.search(rb'<script src="(__folio/early\.js\?v=[0-9a-f]{8})" data-folio></script>', body)
        self.assertIsNotNone(m)
        self.assertEqual(body.find(b"<script"), m.start())
        self.assertEqual(body[:m.start()], b"<!doctype html>\n<html lang=en><head><meta charset=utf-8>")
        js = self.server.get("/" + m.group(1).decode())
        self.assertEqual(js.status, 200)
        self.assertEqual(js.getheader("Content-Type"), "text/javascript; charset=utf-8")
        self.assertEqual(js.getheader("Cache-Control"), "max-age=31536000, immutable")
        self.assertIn(b"window.__folioEarly", js.body)
        for other in ("/__folio/early.js", "/__folio/early.js?v=00000000"):
            r = self.server.get(other)
            self.assertEqual((r.status, r.getheader("Cache-Control")), (200, "no-cache"), other)
            self.assertEqual(r.body, js.body)

    def test_fragments_never_do(self):
        for headers in ({}, {"Sec-Fetch-Dest": "empty"}):
            r = self.server.request("GET", "/fragments/small.html", headers)
            self.assertNotIn(b"reload.js", r.body)
            self.assertEqual(r.body, self.file("fragments/small.html"))
        fetched = self.server.get("/", Sec_Fetch_Dest="empty")
        self.assertEqual(fetched.body, self.file("www/index.html"))

    def test_gzip_of_injected_page(self):
        r = self.server.get("/", Sec_Fetch_Dest="document", Accept_Encoding="gzip")
        body = gzip.decompress(r.body)
        self.assertIn(b"__folio/reload.js", body)
        early = re.search(rb'<script src="__folio/early\.js\?v=[0-9a-f]{8}" data-folio></script>', body)
        self.assertIsNotNone(early)
        self.assertEqual(len(body), len(self.file("www/index.html")) + len(early.group(0)) +
                         len(b'<script src="__folio/reload.js" defer></script>'))


class BasePath(ArticleTestCase):
    server_args = ("--base-path", "/article/", "--no-live-reload")

    def test_page_references_get_the_prefix(self):
        body = self.server.get("/").body
        self.assertEqual(body.count(b'src="/article/assets/images/a.png"'), 2)  # "/assets" and "../assets"
        self.assertIn(b'src="assets/images/a.png"', body)  # relative and inside: untouched
        self.assertIn(b'href=style.css', body)
        self.assertNotIn(b'"/assets/', body)

    def test_fragment_references_resolve_against_its_page(self):
        body = self.server.get("/fragments/refs.html").body
        self.assertEqual(body, b'<img src="/article/assets/images/a.png" alt=x>'
                               b'<img src="/article/assets/images/a.png" alt=y>'
                               b'<img src="assets/images/a.png" alt=z>\n')

    def test_stylesheet_references(self):
        r = self.server.get("/refs.css", Accept_Encoding="gzip")
        self.assertEqual(gzip.decompress(r.body) if r.getheader("Content-Encoding") else r.body,
                         b"h1 { background: url(/article/assets/images/a.png); }\n"
                         b"h2 { background: url('/article/assets/images/a.png'); }\n"
                         b"h3 { background: url(images/x.png); }\n")

    def test_404_page_too(self):
        self.assertIn(b"href=/article/style.css", self.server.get("/nothing").body)

    def test_other_files_untouched(self):
        self.assertEqual(self.server.get("/app.js").body, self.file("www/app.js"))


class ForwardedPrefix(ArticleTestCase):
    server_args = ("--trust-proxy",)

    def test_health_says_the_prefix_the_proxy_sent(self):
        data = json.loads(self.server.get("/__folio/health", X_Forwarded_Prefix="/playbook/").body)
        self.assertEqual((data["base_path"], data["trust_proxy"], data["prefix"]), ("", True, "/playbook"))

    def test_header_sets_the_prefix(self):
        r = self.server.get("/fragments/refs.html", X_Forwarded_Prefix="/playbook/")
        self.assertIn(b'src="/playbook/assets/images/a.png"', r.body)
        other = self.server.get("/fragments/refs.html", X_Forwarded_Prefix="/other")
        self.assertIn(b'src="/other/assets/images/a.png"', other.body)
        self.assertNotEqual(r.getheader("ETag"), other.getheader("ETag"))
        plain = self.server.get("/fragments/refs.html")
        self.assertEqual(plain.body, self.file("fragments/refs.html"))

    def test_bad_prefix_is_refused(self):
        for bad in ('/a"><script>', "article", "/a/../b", "//evil.example"):
            r = self.server.get("/", X_Forwarded_Prefix=bad)
            self.assertEqual(r.status, 400, bad)
            # names the header for the proxy's operator, and never echoes what came
            self.assertIn(b"X-Forwarded-Prefix is not a URL path such as /article", r.body)
            if bad != "article":  # a word of the sentence itself
                self.assertNotIn(bad.encode(), r.body)

    def test_page_gets_both_prefix_and_client(self):
        body = self.server.get("/", X_Forwarded_Prefix="/article", Sec_Fetch_Dest="document").body
        self.assertIn(b'src="/article/assets/images/a.png"', body)
        self.assertIn(b'<script src="__folio/reload.js" defer></script>', body)


class UntrustedPrefix(ArticleTestCase):
    def test_header_ignored_without_trust(self):
        r = self.server.get("/fragments/refs.html", X_Forwarded_Prefix="/evil")
        self.assertEqual(r.body, self.file("fragments/refs.html"))


class Health(ArticleTestCase):
    def test_health(self):
        r = self.server.get("/__folio/health")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.getheader("Content-Type"), "application/json")
        data = json.loads(r.body)
        self.assertEqual(data["status"], "ok")
        self.assertEqual(data["mode"], "preview")
        self.assertGreater(data["folders_watched"], 3)
        self.assertIn("cache_bytes", data)
        self.assertEqual((data["base_path"], data["trust_proxy"], data["prefix"]), ("", False, ""))
        self.assertEqual(self.server.get("/__folio/other").status, 404)


class AccessLog(ArticleTestCase):
    def test_common_format(self):
        before = len(self.server.log_lines)
        self.server.get("/style.css", User_Agent="probe/1")
        self.server.get('/missing"\x1b[31m'.replace("\x1b", "%1B").replace('"', "%22"))
        # Completion order across threads is not request order: sort by path.
        lines = sorted(self.server.wait_log(before + 2)[before:], key=lambda l: "missing" in l)
        self.assertEqual(len(lines), 2, lines)
        self.assertRegex(lines[0], r'^127\.0\.0\.1 - - \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}\] '
                                   r'"GET /style\.css HTTP/1\.1" 200 %d\n$' % len(self.file("www/style.css")))
        self.assertIn('"GET /missing%22%1B[31m HTTP/1.1" 404', lines[1])

    def test_raw_control_bytes_are_escaped(self):
        before = len(self.server.log_lines)
        self.server.raw(b"GET /x\x01y HTTP/1.1\r\nHost: localhost\r\nUser-Agent: \"evil\"\r\n\r\n")
        lines = self.server.wait_log(before + 1)[before:]
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("/x\\x01y", lines[0])
        self.assertNotIn("\x01", lines[0])
        self.assertEqual(lines[0].count("\n"), 1)


class LogFormats(ArticleTestCase):
    server_args = ("--log-format", "json")

    def test_json_lines(self):
        before = len(self.server.log_lines)
        self.server.get("/style.css", Referer="http://x/", User_Agent='say "hi"')
        line = self.server.wait_log(before + 1)[before]
        entry = json.loads(line)
        self.assertEqual((entry["method"], entry["uri"], entry["status"]), ("GET", "/style.css", 200))
        self.assertEqual(entry["user_agent"], 'say "hi"')
        self.assertEqual(entry["bytes"], len(self.file("www/style.css")))
        self.assertGreaterEqual(entry["duration_ms"], 0)


class Concurrency(ArticleTestCase):
    def test_many_parallel_clients(self):
        errors, results = [], []

        def worker():
            try:
                for path in ("/", "/fragments/plot.html", AUDIO, "/assets/images/big.svg"):
                    r = self.server.get(path, Accept_Encoding="gzip")
                    results.append(r.status)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=worker) for _ in range(40)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertEqual(errors, [])
        self.assertEqual(results, [200] * 160)


class CombinedAndQuiet(ArticleTestCase):
    server_args = ("--log-format", "combined", "--quiet")

    def test_quiet_writes_no_log(self):
        # A server of its own, stopped before looking: once it has exited,
        # everything it wrote has been read, so no line means none was written.
        with Server(self.root, "--log-format", "combined", "--quiet") as quiet:
            self.assertEqual(quiet.get("/").status, 200)
            self.assertEqual(quiet.get("/missing").status, 404)
            self.assertEqual(quiet.stop(), 0)
            self.assertEqual(quiet.log_lines, [])
        # The same requests without --quiet do write lines: the check can fail.
        with Server(self.root, "--log-format", "combined") as loud:
            loud.get("/")
            loud.get("/missing")
            self.assertEqual(loud.stop(), 0)
            self.assertEqual(len(loud.log_lines), 2, loud.log_lines)


class FragmentsRouteProperty(ArticleTestCase):
    """Fragment behaviour (no live-reload client without Sec-Fetch-Dest)
    belongs to a route marked so in [routes], whatever its name."""

    def test_marked_route_is_fragments_whatever_its_name(self):
        conf = os.path.join(self.tmp, "routes.conf")
        with open(conf, "w") as f:
            f.write("[routes]\n/parts/ = fragments, fragments\n/plain/ = fragments\n")
        with Server(self.root, "--config", conf) as srv:
            marked = srv.get("/parts/small.html")
            plain = srv.get("/plain/small.html")
            page = srv.get("/parts/small.html", Sec_Fetch_Dest="document")
        self.assertEqual((marked.status, plain.status, page.status), (200, 200, 200))
        self.assertEqual(marked.body, self.file("fragments/small.html"))
        self.assertIn(b"__folio/reload.js", plain.body)
        self.assertIn(b"__folio/reload.js", page.body)


CHROMIUM_ACCEPT = "gzip, deflate, br, zstd"  # what Chromium sends, on plain http too


def decode(coding, data):
    """The bytes data stands for in Content-Encoding coding, decoded by the
    reference CLIs (Python has no brotli module; .ci/setup installs both)."""
    if coding is None:
        return data
    if coding == "gzip":
        return gzip.decompress(data)
    command = {"br": ["brotli", "-d", "-c"], "zstd": ["zstd", "-d", "-c", "-q"]}[coding]
    return subprocess.run(command, input=data, stdout=subprocess.PIPE, check=True).stdout


@unittest.skipUnless(BUILT == {"br", "zstd"}, "folio built without brotli or zstd")
class Codings(ArticleTestCase):
    """Issue 18: br and zstd beside gzip, negotiated by RFC 9110 12.5.3; the
    smallest acceptable body answers, each with its own strong ETag."""

    def test_each_accept_gets_its_coding(self):
        original = self.file("www/style.css")
        for header, coding in ((CHROMIUM_ACCEPT, "br"), ("zstd", "zstd"), ("br", "br"),
                               ("gzip", "gzip"), ("zstd, gzip", "zstd"),
                               ("br;q=0, zstd;q=0.1, gzip", "zstd"),
                               ("br;q=0.5, gzip;q=1", "br"), ("identity;q=0, gzip", "gzip"),
                               ("deflate", None), ("*;q=0", None), ("", None)):
            r = self.server.get("/style.css", Accept_Encoding=header)
            self.assertEqual(r.status, 200, header)
            self.assertEqual(r.getheader("Content-Encoding"), coding, header)
            self.assertEqual(r.getheader("Vary"), "Accept-Encoding", header)
            self.assertEqual(decode(coding, r.body), original, header)

    def test_distinct_strong_etags_and_304(self):
        etags = {}
        for coding in ("br", "zstd", "gzip", None):
            r = self.server.get("/", Accept_Encoding=coding or "identity")
            self.assertEqual(r.getheader("Content-Encoding"), coding)
            etag = r.getheader("ETag")
            self.assertFalse(etag.startswith("W/"), etag)
            etags[coding] = etag
            again = self.server.get("/", Accept_Encoding=coding or "identity", If_None_Match=etag)
            self.assertEqual(again.status, 304, coding)
            self.assertEqual(again.getheader("ETag"), etag)
            # preview: a page gets the live-reload client when a browser loads it, a fetch not
            self.assertEqual(again.getheader("Vary"), "Accept-Encoding, Sec-Fetch-Dest")
            self.assertIsNone(again.getheader("Content-Encoding"))
        self.assertEqual(len(set(etags.values())), 4, etags)
        self.assertTrue(etags["br"].endswith('-br5"'), etags)  # preview's fast level
        self.assertTrue(etags["zstd"].endswith('-zs3"'), etags)
        self.assertTrue(etags["gzip"].endswith('-gz6"'), etags)

    def test_large_fragment_smaller_in_br_and_zstd(self):
        original = self.file("fragments/plot.html")
        sizes = {}
        for coding in ("gzip", "zstd", "br"):
            r = self.server.get("/fragments/plot.html", Accept_Encoding=coding)
            self.assertEqual(r.getheader("Content-Encoding"), coding)
            self.assertEqual(decode(coding, r.body), original)
            sizes[coding] = len(r.body)
        self.assertLess(sizes["br"], sizes["gzip"])
        self.assertLess(sizes["zstd"], sizes["gzip"])
        r = self.server.get("/fragments/plot.html", Accept_Encoding=CHROMIUM_ACCEPT)
        self.assertEqual(len(r.body), min(sizes.values()))  # the smallest answers

    def test_range_gets_identity_whatever_is_accepted(self):
        r = self.server.get("/style.css", Range="bytes=0-9", Accept_Encoding=CHROMIUM_ACCEPT)
        self.assertEqual(r.status, 206)
        self.assertIsNone(r.getheader("Content-Encoding"))
        self.assertEqual(r.body, self.file("www/style.css")[:10])

    def test_not_for_binary_or_small(self):
        for path in ("/tiny.css", "/assets/images/a.png", AUDIO):
            r = self.server.get(path, Accept_Encoding=CHROMIUM_ACCEPT)
            self.assertIsNone(r.getheader("Content-Encoding"), path)

    def test_injection_and_prefix_before_compression(self):
        r = self.server.get("/", Accept_Encoding=CHROMIUM_ACCEPT, Sec_Fetch_Dest="document")
        self.assertEqual(r.getheader("Content-Encoding"), "br")
        self.assertIn(b"__folio/reload.js", decode("br", r.body))
        z = self.server.get("/", Accept_Encoding="zstd", Sec_Fetch_Dest="document")
        self.assertEqual(decode("zstd", z.body), decode("br", r.body))

    def test_file_changed_between_requests(self):
        path = os.path.join(self.root, "www", "changing.css")
        write(path, "body { color: red }\n" * 200, mtime=1_700_000_000)
        first = self.server.get("/changing.css", Accept_Encoding=CHROMIUM_ACCEPT)
        write(path, "main { color: blue }\n" * 200, mtime=1_700_000_100)
        second = self.server.get("/changing.css", Accept_Encoding=CHROMIUM_ACCEPT)
        self.assertEqual(decode("br", second.body), b"main { color: blue }\n" * 200)
        self.assertNotEqual(first.getheader("ETag"), second.getheader("ETag"))
        z = self.server.get("/changing.css", Accept_Encoding="zstd")
        self.assertEqual(decode("zstd", z.body), b"main { color: blue }\n" * 200)


@unittest.skipUnless(BUILT == {"br", "zstd"}, "folio built without brotli or zstd")
class CodingsInProduction(ArticleTestCase):
    """Production makes the best levels (br 11, zstd 19), once per version."""
    server_args = ("--production",)

    def test_best_levels_named_in_etags(self):
        # The best levels where they cost about a quarter of a second at
        # most; a 2.3 MB fragment steps down (compress.h's figures).
        for path, coding, tag in (("/style.css", "br", '-br11"'), ("/style.css", "zstd", '-zs19"'),
                                  ("/style.css", "gzip", '-gz6"'),
                                  ("/fragments/plot.html", "br", '-br5"'),
                                  ("/fragments/plot.html", "zstd", '-zs3"')):
            original = self.file("www/style.css" if path == "/style.css" else "fragments/plot.html")
            for _ in range(2):  # the second from what the first made
                r = self.server.get(path, Accept_Encoding=coding)
                self.assertEqual(r.getheader("Content-Encoding"), coding)
                self.assertTrue(r.getheader("ETag").endswith(tag), r.getheader("ETag"))
                self.assertEqual(decode(coding, r.body), original)

    def test_whole_responses_apart_by_accept(self):
        # Whole responses are kept per set of accepted codings: one must not
        # answer a client that refuses its coding.
        for header, coding in ((CHROMIUM_ACCEPT, "br"), ("gzip", "gzip"), ("br;q=0, zstd", "zstd"),
                               (CHROMIUM_ACCEPT, "br"), ("gzip", "gzip"), (None, None)):
            headers = {"Accept_Encoding": header} if header is not None else {}
            r = self.server.get("/style.css", **headers)
            self.assertEqual(r.getheader("Content-Encoding"), coding, header)


@unittest.skipUnless(BUILT == {"br", "zstd"}, "folio built without brotli or zstd")
class CodingSidecars(ArticleTestCase):
    """name.br and name.zst, compressed ahead of time, are sent as they are
    when at least as new as name, like name.gz; the smallest acceptable wins."""

    @classmethod
    def build_root(cls, tmp):
        root = make_article(os.path.join(tmp, "article"))
        old = 1_600_000_000
        data = os.path.join(root, "assets", "data")
        write(os.path.join(data, "side.json"), '{"v": [' + ",".join(map(str, range(4000))) + "]}\n", mtime=old)
        write(os.path.join(data, "side.json.br"), b"BR-SIDECAR", mtime=old)       # as new: used
        write(os.path.join(data, "side.json.zst"), b"ZSTD-SIDECAR", mtime=old - 1)  # older: not
        write(os.path.join(data, "side.json.gz"), gzip.compress(b"{}\n" * 40), mtime=old + 1)
        return root

    def test_sidecars(self):
        base = "/assets/data/side.json"
        r = self.server.get(base, Accept_Encoding="br")
        self.assertEqual((r.getheader("Content-Encoding"), r.body), ("br", b"BR-SIDECAR"))
        self.assertTrue(r.getheader("ETag").endswith('-brs"'))
        r = self.server.get(base, Accept_Encoding=CHROMIUM_ACCEPT)
        self.assertEqual(r.body, b"BR-SIDECAR")  # ten bytes: the smallest of all
        z = self.server.get(base, Accept_Encoding="zstd")
        self.assertEqual(z.getheader("Content-Encoding"), "zstd")
        self.assertEqual(decode("zstd", z.body), self.file("assets/data/side.json"))  # made, not the stale sidecar
        g = self.server.get(base, Accept_Encoding="gzip, zstd;q=0")
        self.assertEqual(g.body, self.file("assets/data/side.json.gz"))
        self.assertEqual(self.server.get(base).body, self.file("assets/data/side.json"))


class ReplacedSidecar(ArticleTestCase):
    """A whole response kept from name.gz is checked against name.gz too (issue 19): a
    sidecar replaced on its own serves its new bytes on the next request, and one
    deleted never its old ones; in production, where responses are kept."""
    server_args = ("--production",)

    def test_a_replaced_then_deleted_sidecar(self):
        rel, old = "assets/data/big.txt", 1_600_000_000
        plain = "".join("line %d of text that compresses\n" % i for i in range(3000)).encode()
        write(os.path.join(self.root, rel), plain, mtime=old)
        write(os.path.join(self.root, rel + ".gz"), gzip.compress(b"first sidecar\n"), mtime=old + 1)
        get = lambda: self.server.get("/" + rel, Accept_Encoding="gzip")
        for _ in range(3):  # made, then kept: the later ones are the kept response
            self.assertEqual(gzip.decompress(get().body), b"first sidecar\n")
        write(os.path.join(self.root, rel + ".gz"), gzip.compress(b"second sidecar, longer\n"), mtime=old + 2)
        second = get()
        self.assertEqual(gzip.decompress(second.body), b"second sidecar, longer\n")
        self.assertEqual(gzip.decompress(get().body), b"second sidecar, longer\n")
        os.remove(os.path.join(self.root, rel + ".gz"))
        gone = get()
        self.assertEqual(gzip.decompress(gone.body) if gone.getheader("Content-Encoding") == "gzip" else gone.body,
                         plain)
        self.assertNotEqual(gone.getheader("ETag"), second.getheader("ETag"))

if __name__ == "__main__":
    main()
