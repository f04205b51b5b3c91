"""The fragments' preload hints (serve/preload.h): a page gets one
`Link: <fragments/<name>.html>; rel=preload; as=fetch; crossorigin=anonymous; fetchpriority=low`
for each id="fragment-<name>" it names (not in a comment) whose file exists,
in document order, after one for its own relative stylesheet; not on a 304, a fragment, a range or another page; a
fragment added or removed, or the page edited, changes the next response's
hints in production and preview; --no-preload-fragments turns them off; a
small --header-limit gets fewer; and behind the real nginx, under /article/
and at the root, the relative URL fetches the fragment.
Standard library only; every wait is bounded."""
import os
import shutil
import sys
import tempfile
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from folio import EventStream, Server, SLOWDOWN, main, write  # noqa: E402
from test_proxy import NGINX, PREFIX, Nginx  # noqa: E402


def link(name):
    return "<fragments/%s.html>; rel=preload; as=fetch; crossorigin=anonymous; fetchpriority=low" % name


PAGE = ("<!doctype html><html lang=en><head><meta charset=utf-8><title>p</title>"
        "<link rel=stylesheet href=style.css><script src=/assets/app.js defer></script></head><body>\n"
        '<div id="fragment-memory"></div>\n'
        "<!-- retired: <div id=\"fragment-old\"></div> -->\n"
        '<div id="fragment-missing"></div>\n'
        "<p>" + "Text between the fragments. " * 400 + "</p>\n"
        '<div class=fragment id="fragment-sweep"></div>\n'
        "</body></html>\n")


def make_root(tmp):
    root = os.path.join(tmp, "article")
    write(os.path.join(root, "www/index.html"), PAGE)
    write(os.path.join(root, "www/sub/index.html"), '<div id="fragment-memory"></div>\n')
    write(os.path.join(root, "www/style.css"), "p { color: #333 }\n" * 40)
    for name in ("memory", "old", "sweep", "unnamed"):
        write(os.path.join(root, "fragments/%s.html" % name), "<p>%s</p>\n" % name * 50)
    os.makedirs(os.path.join(root, "assets"))
    return root


STYLE = "<style.css>; rel=preload; as=style"   # first: the page's own, relative, stylesheet


def links(resp):
    return resp.msg.get_all("Link") or []


class Case(unittest.TestCase):
    args = ("--production",)

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="folio-preload-")
        self.root = make_root(self.tmp)
        self.server = Server(self.root, *self.args).__enter__()

    def tearDown(self):
        try:
            self.server.__exit__(None, None, None)
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def path(self, rel):
        return os.path.join(self.root, rel)


class Production(Case):
    def test_exact_header_text_in_document_order(self):
        want = [STYLE, link("memory"), link("sweep")]   # old is commented out, missing has no file
        for path in ("/", "/index.html"):
            for enc in ("br", "gzip", "identity"):
                r = self.server.get(path, Accept_Encoding=enc)
                self.assertEqual(r.status, 200)
                self.assertEqual(links(r), want, (path, enc))
        self.assertEqual(links(self.server.request("HEAD", "/")), want)
        # The hinted URL, relative to the page, is the fragment.
        r = self.server.get(urllib.parse.urljoin("/", "fragments/memory.html"))
        self.assertEqual((r.status, r.body), (200, b"<p>memory</p>\n" * 50))

    def test_not_on_what_is_no_whole_page(self):
        page = self.server.get("/")
        r = self.server.get("/", If_None_Match=page.getheader("ETag"))
        self.assertEqual(r.status, 304)
        self.assertEqual(links(r), [])    # the cached 200 keeps what it said
        r = self.server.get("/", Range="bytes=0-9")
        self.assertEqual(r.status, 206)
        self.assertEqual(links(r), [])
        self.assertEqual(links(self.server.get("/fragments/memory.html")), [])
        self.assertEqual(links(self.server.get("/sub/")), [])   # its fragments/ is no fragment route
        self.assertEqual(links(self.server.get("/nothing-here")), [])   # the 404 page answers elsewhere

    def test_fragments_added_and_removed(self):
        write(self.path("fragments/missing.html"), "<p>here now</p>\n")
        self.assertEqual(links(self.server.get("/")), [STYLE, link("memory"), link("missing"), link("sweep")])
        os.unlink(self.path("fragments/memory.html"))
        self.assertEqual(links(self.server.get("/")), [STYLE, link("missing"), link("sweep")])
        os.unlink(self.path("fragments/unnamed.html"))   # a fragment the page does not name
        self.assertEqual(links(self.server.get("/")), [STYLE, link("missing"), link("sweep")])

    def test_page_edited(self):
        self.assertEqual(links(self.server.get("/")), [STYLE, link("memory"), link("sweep")])
        write(self.path("www/index.html"), PAGE.replace("fragment-old", "fragment-unnamed")
              .replace("<!-- retired: ", "").replace(" -->", ""))
        self.assertEqual(links(self.server.get("/")), [STYLE, link("memory"), link("unnamed"), link("sweep")])


class Preview(Case):
    args = ()

    def test_updates_after_a_save(self):
        stream = EventStream(self.server.port)
        try:
            self.assertIsNotNone(stream.next_event(), "no hello")
            self.assertEqual(links(self.server.get("/", Sec_Fetch_Dest="document")),
                             [STYLE, link("memory"), link("sweep")])
            write(self.path("fragments/missing.html"), "<p>saved</p>\n")
            self.assertIsNotNone(stream.next_event(3 * SLOWDOWN), "no event for the new fragment")
            self.assertEqual(links(self.server.get("/", Sec_Fetch_Dest="document")),
                             [STYLE, link("memory"), link("missing"), link("sweep")])
            os.unlink(self.path("fragments/sweep.html"))
            self.assertIsNotNone(stream.next_event(3 * SLOWDOWN), "no event for the removal")
            self.assertEqual(links(self.server.get("/", Sec_Fetch_Dest="document")),
                             [STYLE, link("memory"), link("missing")])
            write(self.path("www/index.html"), PAGE.replace('id="fragment-memory"', 'id="fragment-unnamed"'))
            self.assertIsNotNone(stream.next_event(3 * SLOWDOWN), "no event for the page")
            self.assertEqual(links(self.server.get("/", Sec_Fetch_Dest="document")),
                             [STYLE, link("unnamed"), link("missing")])
        finally:
            stream.close()


class Off(Case):
    args = ("--production", "--no-preload-fragments")

    def test_flag_turns_them_off(self):
        r = self.server.get("/")
        self.assertEqual(r.status, 200)
        self.assertEqual(links(r), [])

    def test_environment_and_file_too(self):
        write(self.path("config/folio.conf"), "[server]\npreload-fragments = no\n")
        for args, env in (((), {"FOLIO_PRELOAD_FRAGMENTS": "off"}),
                          (("--config", self.path("config/folio.conf")), {})):
            with Server(self.root, "--production", *args, env=env) as s:
                self.assertEqual(links(s.get("/")), [], (args, env))


class SmallHeaderLimit(unittest.TestCase):
    """A response's head is built in the connection's memory: with the
    smallest --header-limit, a page naming many long fragments gets the
    hints that fit its budget (a quarter of it), and is served."""

    def test_fewer_hints_page_served(self):
        tmp = tempfile.mkdtemp(prefix="folio-preload-")
        try:
            root = os.path.join(tmp, "article")
            names = ["a-rather-long-fragment-name-%02d-%s" % (i, "x" * 40) for i in range(40)]
            write(os.path.join(root, "www/index.html"),
                  "".join('<div id="fragment-%s"></div>\n' % n for n in names))
            for n in names:
                write(os.path.join(root, "fragments/%s.html" % n), "<p>x</p>\n")
            os.makedirs(os.path.join(root, "assets"))
            for limit, most in (("4K", 1024), ("16K", 4096)):
                with Server(root, "--production", "--header-limit", limit) as s:
                    for _ in range(3):   # the long way, then the kept response
                        r = s.get("/", Accept_Encoding="gzip")
                        self.assertEqual(r.status, 200)
                        got = links(r)
                        self.assertGreater(len(got), 0)
                        self.assertEqual(got, [link(n) for n in names[:len(got)]])
                        self.assertLessEqual(sum(len(v) + 1 for v in got), most, limit)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class BehindNginx(Case):
    """The shipped nginx site (config/nginx/folio.conf): the hints pass
    through unchanged, and resolved against the page's address they fetch the
    fragment, at the root and under /article/."""

    def test_relative_urls_under_a_prefix(self):
        import http.client
        with Nginx(self.server.port) as nginx:
            for port, page in ((nginx.root_port, "/"), (nginx.prefix_port, PREFIX + "/")):
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10 * SLOWDOWN)
                try:
                    conn.request("GET", page)
                    r = conn.getresponse()
                    r.read()
                    self.assertEqual(r.status, 200, page)
                    got = links(r)
                    self.assertEqual(got, [STYLE, link("memory"), link("sweep")], page)
                    for value in got:   # each resolves, through nginx, to what it names
                        url = urllib.parse.urljoin(page, value[1:value.index(">")])
                        self.assertTrue(url.startswith(page), url)
                        conn.request("GET", url)
                        f = conn.getresponse()
                        body = f.read()
                        self.assertEqual(f.status, 200, url)
                        self.assertIn(b"</p>" if "/fragments/" in url else b"color", body, url)
                finally:
                    conn.close()


if __name__ == "__main__":
    if not os.path.exists(NGINX):
        print("nginx is not installed (apt-get install nginx-light); 0 passed, 0 failed")
        sys.exit(77)
    main()
