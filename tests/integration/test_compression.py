"""Compression over real sockets: health's bytes saved per coding; the
brotli-quality and zstd-level settings, live on SIGHUP."""
import gzip
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import shutil
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from folio import FOLIO, ArticleTestCase, Server, main, make_article  # noqa: E402


def built_codings():
    """The codings this binary makes beside gzip, read from what it links."""
    libs = subprocess.run(["ldd", FOLIO], stdout=subprocess.PIPE, text=True).stdout
    return {name for name, lib in (("br", "libbrotlienc"), ("zstd", "libzstd")) if lib in libs}


class BytesSaved(ArticleTestCase):
    def saved(self):
        return json.loads(self.server.get("/__folio/health").body)["bytes_saved"]

    def test_each_200_counts_identity_minus_coded(self):
        plain = self.file("www/style.css")
        before = self.saved()
        self.assertEqual(set(before), {"gzip", "zstd", "br"})
        sizes = []
        for _ in range(3):  # the first made, then the whole response kept: both count
            r = self.server.get("/style.css", Accept_Encoding="gzip")
            self.assertEqual(r.getheader("Content-Encoding"), "gzip")
            self.assertEqual(gzip.decompress(r.body), plain)
            sizes.append(len(r.body))
        after = self.saved()
        self.assertEqual(after["gzip"] - before["gzip"], sum(len(plain) - n for n in sizes))
        self.assertEqual(after["br"], before["br"])
        # Identity, a 304 and a range save nothing.
        etag = r.getheader("ETag")
        self.server.get("/style.css")
        self.assertEqual(self.server.get("/style.css", Accept_Encoding="gzip",
                                         If_None_Match=etag).status, 304)
        self.server.get("/style.css", Accept_Encoding="gzip", Range="bytes=0-9")
        self.assertEqual(self.saved(), after)


class LevelSettings(unittest.TestCase):
    """brotli-quality and zstd-level cap the level, name it in the ETag, and
    apply to the next request after a SIGHUP."""
    TEXT = "".join("line %d of a compressible asset, with words that repeat\n" % i for i in range(2000))

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="folio-levels-")
        self.root = make_article(os.path.join(self.tmp, "article"))
        with open(os.path.join(self.root, "assets", "levels.txt"), "w") as f:
            f.write(self.TEXT)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write_config(self, brotli, zstd):
        os.makedirs(os.path.join(self.root, "config"), exist_ok=True)
        with open(os.path.join(self.root, "config", "folio.conf"), "w") as f:
            f.write("[server]\nproduction = yes\nbrotli-quality = %d\nzstd-level = %d\n" % (brotli, zstd))

    def etag(self, s, coding):
        r = s.get("/assets/levels.txt", Accept_Encoding=coding)
        self.assertEqual(r.getheader("Content-Encoding"), coding)
        return r.getheader("ETag")

    def test_levels_named_and_live(self):
        built = built_codings()
        if not built:
            self.assertEqual(built, set())  # a gzip-only build has nothing to cap
            return
        self.write_config(4, 2)
        with Server(self.root) as s:
            if "br" in built:
                self.assertTrue(self.etag(s, "br").endswith('-br4"'))
            if "zstd" in built:
                self.assertTrue(self.etag(s, "zstd").endswith('-zs2"'))
            self.write_config(9, 7)
            s.proc.send_signal(signal.SIGHUP)
            deadline = time.time() + 10
            while "re-read" not in s.stderr_text and time.time() < deadline:
                time.sleep(0.05)
            self.assertIn("re-read", s.stderr_text)
            if "br" in built:
                self.assertTrue(self.etag(s, "br").endswith('-br9"'))
            if "zstd" in built:
                self.assertTrue(self.etag(s, "zstd").endswith('-zs7"'))


if __name__ == "__main__":
    main()
