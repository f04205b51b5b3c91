"""Compression over real sockets: health's bytes saved per coding."""
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from folio import ArticleTestCase, main  # noqa: E402


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


if __name__ == "__main__":
    main()
