"""A 1,500-level folder tree under RLIMIT_NOFILE 1,024 (issue 19, item 11): the
walks hold a bounded number of descriptors whatever the depth, so preview still
watches every folder (a change at the deepest level reaches the event stream, with
inotify and with --watch poll, which looked no deeper than 64 levels before) and
still checks the article (a broken <img> in a top-level page is a `check` event).
Folders that cannot be watched are said once, in one line: how many, the first,
why, and what folio does instead."""
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from folio import SLOWDOWN, EventStream, Server, preloaded, write  # noqa: E402

DEPTH = 1500
NOFILE = 1024
WAIT = 5.0 * SLOWDOWN


def setUpModule():
    # This process and every folio it starts: a soft and hard limit of 1,024 (folio
    # raises its soft limit to the hard one, so the hard one is what binds).
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > NOFILE:
        resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, NOFILE))


def make_deep_root(base):
    """An article whose www/ holds a chain of DEPTH folders named d, a file at the bottom."""
    root = os.path.join(base, "article")
    write(os.path.join(root, "www/index.html"),
          "<!doctype html><html><head><meta charset=utf-8><title>t</title></head>"
          "<body><p>top</p></body></html>\n")
    deepest = os.path.join(root, "www")
    for _ in range(DEPTH):  # one level at a time: os.makedirs recurses per level
        deepest = os.path.join(deepest, "d")
        os.mkdir(deepest)
    write(os.path.join(deepest, "notes.txt"), "v0\n")
    return root, deepest


class DeepTreeTestCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="folio-deep-")
        self.root, self.deepest = make_deep_root(self.tmp)

    def tearDown(self):
        subprocess.run(["rm", "-rf", self.tmp], check=True)  # shutil.rmtree recurses per level

    def events_until(self, stream, kind):
        """Events up to and including the first of @kind."""
        seen = []
        while not seen or seen[-1][0] != kind:
            ev = stream.next_event(WAIT)
            self.assertIsNotNone(ev, "no %s event; got %r" % (kind, [k for k, *_ in seen]))
            seen.append(ev)
        return seen

    def assert_deep_change_heard(self, server):
        stream = EventStream(server.port)
        try:
            self.assertEqual(stream.next_event(WAIT)[0], "hello")
            write(os.path.join(self.deepest, "notes.txt"), "v1, changed\n")
            ev = stream.next_event(WAIT)
            self.assertIsNotNone(ev, "no event for a change %d levels down" % DEPTH)
            self.assertEqual(ev[0], "reload")
        finally:
            stream.close()

    def watched(self, server):
        return json.loads(server.get("/__folio/health").body)["folders_watched"]


class InotifyTest(DeepTreeTestCase):
    def test_every_folder_watched_and_the_deepest_change_heard(self):
        with Server(self.root, "--watch", "inotify") as server:
            # www and its DEPTH folders (fragments/ and assets/ are not there)
            self.assertEqual(self.watched(server), DEPTH + 1)
            self.assert_deep_change_heard(server)
        self.assertNotIn("not watched", server.stderr_text)

    def test_a_broken_img_in_a_top_level_page_is_a_check_event(self):
        with Server(self.root) as server:
            stream = EventStream(server.port)
            try:
                self.assertEqual(stream.next_event(WAIT)[0], "hello")
                write(os.path.join(self.root, "www/index.html"),
                      "<!doctype html><html><head><meta charset=utf-8><title>t</title></head>"
                      '<body><p>top</p><img src="missing.png" alt=""></body></html>\n')
                # The check runs beside the reloads (check_live_worker.h): its event comes
                # first when it is quick, after the page's when a tree this deep makes it slow.
                seen = self.events_until(stream, "page")
                if not any(k == "check" for k, *_ in seen):
                    seen += self.events_until(stream, "check")
                self.assertEqual(sorted(k for k, *_ in seen), ["check", "page"])
                (f,) = json.loads(next(e for e in seen if e[0] == "check")[1])["files"]
                self.assertEqual(f["file"], "www/index.html")
                self.assertIn('img src "missing.png" not found', f["problems"][0]["message"])
            finally:
                stream.close()


class PollTest(DeepTreeTestCase):
    def test_poll_looks_at_the_deepest_folder(self):
        with Server(self.root, "--watch", "poll", "--poll-interval", "100") as server:
            self.assertIn("(preview, live reload by polling) at http://", server.banner)
            self.assertEqual(self.watched(server), DEPTH + 1)
            self.assert_deep_change_heard(server)


class NotWatchedTest(DeepTreeTestCase):
    """The kernel's watch limit (tests/shim/inotify_limit.c, 100 watches) reached by a
    deep tree: one line, not one per folder."""

    def limited(self, watches):
        return preloaded("FOLIO_INOTIFY_SHIM", max_inotify_watches=watches)

    def lines(self, err):
        return [l for l in err.splitlines() if "not watched" in l]

    def test_auto_says_once_and_polls_instead(self):
        with Server(self.root, "--poll-interval", "100", env=self.limited(100)) as server:
            self.assert_deep_change_heard(server)  # polled, all the way down
        lines = self.lines(server.stderr_text)
        self.assertEqual(len(lines), 1, server.stderr_text)
        for line in lines:
            m = re.match(r"folio: (\d+) folders not watched, the first (\S+): (.*)$", line)
            self.assertIsNotNone(m, line)
            self.assertGreater(int(m.group(1)), DEPTH - 100)
            self.assertTrue(m.group(2).startswith(os.path.join(self.root, "www", "d", "d")), line)
            self.assertIn("fs.inotify.max_user_watches", m.group(3))
            self.assertIn("watching by polling instead (--watch poll)", m.group(3))
            self.assertIn("sudo sysctl fs.inotify.max_user_watches=", m.group(3))

    def test_inotify_chosen_says_once_what_it_misses(self):
        with Server(self.root, "--watch", "inotify", env=self.limited(100)) as server:
            self.assertEqual(server.get("/").status, 200)  # serving goes on
        lines = self.lines(server.stderr_text)
        self.assertEqual(len(lines), 1, server.stderr_text)
        self.assertIn("live reload misses changes there", lines[0])
        self.assertNotIn("cannot watch", server.stderr_text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
