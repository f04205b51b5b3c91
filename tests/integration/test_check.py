"""`folio check` on fixture articles (tests/fixtures/check/): every kind of correct
reference passes, every kind of breakage is reported at its file:line:column, edits that
break a good article are caught, the JSON report keeps its schema, and the exit status is
0 clean, 1 errors, 2 could not run. Standard library only."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from folio import FOLIO, SLOWDOWN, WRAPPER, EventStream, Server  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "check")
LINE = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<sev>error|warning): (?P<what>.+)$")
SUMMARY = re.compile(r"^folio check: (\d+) errors?, (\d+) warnings?, (\d+) unverified in \d+ files "
                     r"\(\d+ references, (\d+) external, not fetched\); URLs built by scripts are not seen"
                     r"(?:; \d+ anchors? unverified: the id is in no source of a page that runs scripts "
                     r"\(--strict: errors\)|; \d+ anchors? in no source counted as errors \(--strict\))?$")


def check(root, *args, cwd=None):
    """Runs `folio check --root root args...` in an empty folder (no config file there)."""
    with tempfile.TemporaryDirectory() as empty:
        p = subprocess.run(WRAPPER + [FOLIO, "check", "--root", root, *args], cwd=cwd or empty,
                           capture_output=True, text=True, timeout=60)
    # valgrind (the leakcheck setup) says on stderr that it does not know openat2: not ours.
    err = "".join(l for l in p.stderr.splitlines(True) if not re.match(r"--\d+-- ", l))
    return p.returncode, p.stdout, err


def problems(stdout):
    """(file, line, column, severity, message) for each problem line; the summary apart."""
    lines = stdout.rstrip("\n").split("\n")
    summary = SUMMARY.match(lines[-1])
    assert summary, "no summary line at the end: %r" % lines[-1]
    found = []
    for text in lines[:-1]:
        m = LINE.match(text)
        assert m, "not a file:line:column: line: %r" % text
        found.append((m["file"], int(m["line"]), int(m["col"]), m["sev"], m["what"]))
    return found, summary


# Each breakage in fixtures/check/broken: where it is and what the message says.
BROKEN = [
    ("www/index.html", 3, 66, 'link href "styles.css" not found'),
    ("www/index.html", 5, 11, 'img src "assets/img/typo.png" not found'),
    ("www/index.html", 6, 60, 'img srcset "assets/img/missing@2x.png" not found'),
    ("www/index.html", 7, 22, 'audio src "assets/audio/never-committed.ogg" not found'),
    ("www/index.html", 8, 16, 'video poster "assets/img/no-poster.jpg" not found'),
    ("www/index.html", 8, 55, 'source src "assets/clip.webm" not found'),
    ("www/index.html", 8, 85, 'track src "assets/clip.vtt" not found'),
    ("www/index.html", 9, 14, 'iframe src "assets/frame.html" not found'),
    ("www/index.html", 9, 66, 'object data "assets/figure.svg" not found'),
    ("www/index.html", 10, 27, 'p style url() "assets/img/no-tile.png" not found'),
    ("www/index.html", 11, 10, 'fragment "fragments/renamed.html" not found'),
    ("www/index.html", 12, 10, 'a href "#nowhere" points at no element with id "nowhere"'),
    ("www/index.html", 12, 35, 'a href "other.html#gone" points at no element with id "gone"'),
    ("www/index.html", 13, 27, 'duplicate id "twice"'),
    ("www/index.html", 14, 11, 'img src "assets/img/bad%zz.png" is not a valid URL path (folio answers 400)'),
    ("www/index.html", 14, 52, 'img src "/blog/x.png" not found'),
    ("www/index.html", 14, 83, 'img src "assets/.secret.png" names a hidden file or folder'),
    ("www/index.html", 15, 10, 'a href "assets/" is a folder without index.html'),
    ("www/index.html", 15, 61, "img src is empty"),
    ("www/index.html", 17, 11, 'img src "assets/img/with%2Fslash.png" is not a valid URL path'),
    ("www/style.css", 1, 10, '@import "gone.css" not found'),
    ("www/style.css", 2, 25, 'url() "img/missing.png" not found'),
]
BROKEN_WARNINGS = [
    ("assets/img/unused.png", 1, 1, "nothing references this file"),
    ("fragments/renamed-to.html", 1, 1, "nothing references this file"),
]


class Fixtures(unittest.TestCase):
    def test_every_correct_reference_passes(self):
        good = os.path.join(FIXTURES, "good")
        for extra in ([], ["--base-path", "/article"], ["--format", "text"]):
            code, out, err = check(good, *extra)
            self.assertEqual(code, 0, out + err)
            found, summary = problems(out)
            self.assertEqual(found, [], extra)
            self.assertEqual(summary.groups(), ("0", "0", "0", "3"))
            self.assertEqual(err, "")

    def test_every_breakage_is_reported_where_it_is(self):
        code, out, err = check(os.path.join(FIXTURES, "broken"))
        self.assertEqual(code, 1, out + err)
        found, summary = problems(out)
        errors = [p for p in found if p[3] == "error"]
        warnings = [p for p in found if p[3] == "warning"]
        self.assertEqual(found, errors + warnings, "errors first, then warnings")
        self.assertEqual([p[:3] for p in errors], [b[:3] for b in BROKEN])
        for got, want in zip(errors, BROKEN):
            self.assertIn(want[3], got[4], got)
        self.assertEqual([p[:3] for p in warnings], [w[:3] for w in BROKEN_WARNINGS])
        self.assertEqual(summary.groups()[:2], (str(len(BROKEN)), str(len(BROKEN_WARNINGS))))
        # The resolved path is the file it came to, relative to the root.
        self.assertIn("(assets/img/typo.png)", out)
        self.assertIn("(first at www/index.html:13:8)", out)

    def test_a_climb_that_works_at_the_root_but_leaves_the_prefix(self):
        code, out, _ = check(os.path.join(FIXTURES, "broken"), "--base-path", "/article")
        self.assertEqual(code, 1)
        found, _ = problems(out)
        extra = [p for p in found if p[:3] not in {b[:3] for b in BROKEN + BROKEN_WARNINGS}]
        self.assertEqual(len(extra), 1, extra)
        self.assertEqual(extra[0][:4], ("www/index.html", 16, 11, "error"))
        self.assertIn("leaves --base-path /article, and folio does not rewrite it", extra[0][4])
        self.assertIn("(/assets/img/ok.png)", out)


class Edits(unittest.TestCase):
    """A copy of the good fixture, broken one way at a time."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="folio-check-")
        self.root = os.path.join(self.tmp, "article")
        shutil.copytree(os.path.join(FIXTURES, "good"), self.root, symlinks=True)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def p(self, rel):
        return os.path.join(self.root, rel)

    def errors(self, *args):
        code, out, _ = check(self.root, *args)
        found, _ = problems(out)
        errs = [p for p in found if p[3] == "error"]
        self.assertEqual(code, 1 if errs else 0, out)
        return errs

    def test_a_renamed_image_breaks_every_reference_to_it(self):
        os.rename(self.p("assets/img/hero.png"), self.p("assets/img/hero-old.png"))
        errs = self.errors()
        places = {(f, line) for f, line, _, _, _ in errs}
        # <style> in the head, the absolute and the query-string forms, srcset, <picture>,
        # and ../../ from the chapter page (clamped at the root, as a browser does).
        self.assertEqual(places, {("www/index.html", 9), ("www/index.html", 18),
                                  ("www/index.html", 20), ("www/index.html", 21),
                                  ("www/chapter/index.html", 3)})
        self.assertTrue(all("hero.png" in e[4] and "not found" in e[4] for e in errs), errs)

    def test_a_renamed_fragment_breaks_its_element_and_the_anchors_into_it(self):
        os.rename(self.p("fragments/notes.html"), self.p("fragments/notes-v2.html"))
        # The page runs scripts, so an id no source holds is only unverified; --strict is how an
        # author whose ids are all written by hand asks for the error.
        errs = self.errors("--strict")
        self.assertIn(("www/index.html", 30, 10), [e[:3] for e in errs])
        self.assertTrue(any('fragment "fragments/notes.html" not found' in e[4] for e in errs))
        self.assertTrue(any('"#from-fragment" points at no element' in e[4] for e in errs), errs)
        found, _ = problems(check(self.root)[1])
        self.assertIn("warning", [p[3] for p in found if '"#from-fragment"' in p[4]])

    def test_a_fragment_resolves_against_its_page(self):
        # fragments/notes.html says assets/img/in-fragment.png: right from the page at /,
        # wrong from fragments/ itself. Moving the image next to the fragment breaks it.
        os.rename(self.p("assets/img/in-fragment.png"), self.p("fragments/in-fragment.png"))
        errs = self.errors()
        self.assertEqual([e[:3] for e in errs], [("fragments/notes.html", 2, 57)])
        self.assertIn("(assets/img/in-fragment.png)", errs[0][4] + str(errs))

    def test_a_symlink_out_of_the_folders(self):
        os.unlink(self.p("assets/img/tile.png"))
        os.symlink("/etc/passwd", self.p("assets/img/tile.png"))
        errs = self.errors()
        self.assertTrue(errs)
        self.assertTrue(all("leads outside the article's folders" in e[4] for e in errs), errs)

    def test_a_name_that_differs_only_in_case(self):
        os.rename(self.p("assets/img/figure.svg"), self.p("assets/img/Figure.svg"))
        errs = self.errors()
        self.assertEqual([e[:3] for e in errs], [("assets/data/frame.html", 2, 17), ("www/index.html", 25, 15)])
        for e in errs:
            self.assertIn("not found; assets/img/Figure.svg differs only in case", e[4])

    def test_percent_encoding_is_decoded_once_as_folio_does(self):
        with open(self.p("www/index.html"), "a") as f:
            f.write('<img src="assets/img/with%2520space%2C%20comma.png" alt="">\n')
        errs = self.errors()
        self.assertEqual(len(errs), 1, errs)
        self.assertIn("with%2520space", errs[0][4])

    def test_comments_and_script_text_never_count_but_markup_after_them_does(self):
        with open(self.p("www/index.html"), "a") as f:
            f.write("<!-- <img src=a.png> --!><img src=b.png alt=''>\n"
                    "<script>'</scripts><img src=c.png>'</script><img src=d.png alt=''>\n")
        errs = self.errors()
        self.assertEqual([e[4].split('"')[1] for e in errs], ["b.png", "d.png"])

    def test_an_anchor_a_typo_away_from_an_id_says_which(self):
        with open(self.p("www/index.html"), "a") as f:
            f.write('<a href="#fragment-nots">notes</a><a href="#elsewhere">far</a>\n')
        code, out, _ = check(self.root)
        found, _ = problems(out)
        typo = [p for p in found if '"#fragment-nots"' in p[4]]
        self.assertEqual(len(typo), 1, out)
        self.assertIn('may be made by a script; did you mean "fragment-notes"? [unverified-anchor]', typo[0][4])
        far = [p for p in found if '"#elsewhere"' in p[4]]
        self.assertEqual(len(far), 1, out)
        self.assertNotIn("did you mean", far[0][4])

    def test_control_bytes_of_the_article_never_reach_the_terminal(self):
        # An href that would erase its own error line and print a forged clean summary, an
        # OSC sequence that sets the title, and a file whose name holds an escape: each is
        # said once, on its own line, as \xHH (the log's and the config errors' rule).
        forged = "\r\x1b[2K\x1b[1Afolio check: 0 errors"
        with open(self.p("www/index.html"), "a") as f:
            f.write('<a href="%s.html">x</a><img src="\x1b]0;owned\x07.png" alt="">\n' % forged)
        odd = self.p("assets/img/unused-\x1b[31mred\u202e.png")
        with open(odd, "wb") as f:
            f.write(b"\x89PNG")
        code, out, _ = check(self.root)
        self.assertEqual(code, 1, out)
        for raw in ("\x1b", "\r", "\x07", "\u202e"):
            self.assertNotIn(raw, out)
        found, summary = problems(out)
        messages = [p[4] for p in found]
        self.assertTrue(any('"\\x0D\\x1B[2K\\x1B[1Afolio check: 0 errors.html" not found' in m
                            for m in messages), messages)
        self.assertTrue(any('"\\x1B]0;owned\\x07.png" not found' in m for m in messages), messages)
        self.assertIn("assets/img/unused-\\x1B[31mred\\xE2\\x80\\xAE.png", [p[0] for p in found])
        self.assertNotEqual(summary.group(1), "0")
        # The JSON report keeps its own escaping (RFC 8259), the bytes as they were.
        doc = json.loads(check(self.root, "--format", "json")[1])
        self.assertIn(forged + ".html", [p["reference"] for p in doc["problems"]])

    def test_thousands_of_anchors_that_miss_are_checked_at_once(self):
        # A generated table of contents after its id scheme changed: 6,000 ids, 6,000
        # anchors that name none of them, a few a typo away. Each miss asked every id for
        # a "did you mean" by a whole edit-distance table: minutes. The bound here is the
        # test's, not a measurement (bench/check.py --misses measures it: ~0.15 s).
        words = ["pipeline", "tensor", "shard", "gradient", "bubble", "stage", "batch", "memory"]
        ids, hrefs = [], []
        for i in range(6000):
            title = "-".join(words[(i * k) % 8] for k in (1, 3, 5))
            ids.append("sec-%d-%s" % (i, title))
            hrefs.append(("sec-%d-%sx" if i % 1000 == 0 else "section-%d-%s") % (i, title))
        with open(self.p("www/big.html"), "w") as f:
            f.write("<!doctype html><html lang=en><head><meta charset=utf-8><title>t</title></head><body>"
                    "<nav>%s</nav>%s</body></html>\n"
                    % ("".join('<a href="#%s">x</a>' % h for h in hrefs),
                       "".join('<h2 id="%s">x</h2>' % i for i in ids)))
        with open(self.p("www/index.html"), "a") as f:
            f.write('<a href="big.html">big</a>\n')
        with tempfile.TemporaryDirectory() as empty:
            p = subprocess.run(WRAPPER + [FOLIO, "check", "--root", self.root], cwd=empty,
                               capture_output=True, text=True, timeout=20 * SLOWDOWN)
        self.assertEqual(p.returncode, 1, p.stderr)
        found, _ = problems(p.stdout)
        misses = [m for f, _, _, sev, m in found if f == "www/big.html" and sev == "error"]
        self.assertEqual(len(misses), 6000, p.stdout[-2000:])
        typos = [m for m in misses if "did you mean" in m]
        self.assertEqual(len(typos), 6, typos)
        self.assertIn('"#%sx" points at no element with id "%sx"; did you mean "%s"?' % (ids[1000], ids[1000], ids[1000]),
                      typos[1])

    def test_a_page_folio_cannot_read(self):
        # As a user who is not root (root reads any file): the page is an error of its own,
        # and a link to its folder says why the folder cannot be served.
        for d, _, names in os.walk(self.tmp):
            for n in [d] + [os.path.join(d, n) for n in names]:
                os.chmod(n, 0o755 if os.path.isdir(n) else 0o644)
        os.chmod(self.p("www/index.html"), 0)
        with tempfile.TemporaryDirectory() as empty:
            os.chmod(empty, 0o755)
            p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + WRAPPER
                               + [FOLIO, "check", "--root", self.root], cwd=empty,
                               capture_output=True, text=True, timeout=60 * SLOWDOWN)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        errs = [e for e in problems(p.stdout)[0] if e[3] == "error"]
        self.assertIn(("www/index.html", 1, 1, "error",
                       "cannot be read (folio answers 403), so its references are not checked "
                       "(www/index.html)"), errs)
        folder = [e for e in errs if e[0] == "www/chapter/index.html"]
        self.assertEqual(len(folder), 1, errs)
        self.assertIn('"../#intro" is a folder whose index.html is not readable', folder[0][4])

    def test_the_routes_of_the_config_file_are_the_ground_truth(self):
        conf = os.path.join(self.tmp, "folio.conf")
        with open(conf, "w") as f:
            f.write("[routes]\n/assets/ =\n")  # unmount /assets/: "/" (www/) answers for it
        errs = self.errors("--config", conf)
        self.assertTrue(len(errs) > 10, errs)
        code, out, _ = check(self.root, "--config", conf)
        for line in out.split("\n")[:-2]:
            self.assertRegex(line, r"not found \(www/assets/[^)]*\)$")

class Report(unittest.TestCase):
    def test_json_schema(self):
        code, out, err = check(os.path.join(FIXTURES, "broken"), "--format", "json")
        self.assertEqual(code, 1, err)
        doc = json.loads(out)
        self.assertEqual(set(doc), {"root", "base_path", "files", "references", "errors", "warnings",
                                    "unverified", "problems", "external", "not_seen", "summary"})
        self.assertEqual(doc["root"], os.path.realpath(os.path.join(FIXTURES, "broken")))
        self.assertEqual(doc["base_path"], "")
        for key in ("files", "references", "errors", "warnings"):
            self.assertIsInstance(doc[key], int)
        self.assertEqual(doc["errors"], len(BROKEN))
        self.assertEqual(doc["warnings"], len(BROKEN_WARNINGS))
        for p in doc["problems"]:
            self.assertEqual(set(p), {"severity", "code", "file", "line", "column", "message",
                                      "reference", "resolved"})
            self.assertEqual(p["code"], "")
            self.assertIn(p["severity"], ("error", "warning"))
            self.assertTrue(p["line"] >= 1 and p["column"] >= 1)
            for key in ("file", "message", "reference", "resolved"):
                self.assertIsInstance(p[key], str)
        self.assertEqual([(p["file"], p["line"], p["column"]) for p in doc["problems"]],
                         [b[:3] for b in BROKEN + BROKEN_WARNINGS])
        self.assertIn("URLs built by scripts", doc["not_seen"])
        self.assertIn("ids made by scripts", doc["not_seen"])
        self.assertEqual(doc["unverified"], 0)
        self.assertTrue(SUMMARY.match(doc["summary"]))

    def test_external_urls_are_listed_never_fetched(self):
        code, out, _ = check(os.path.join(FIXTURES, "good"), "--format=json")
        self.assertEqual(code, 0)
        ext = json.loads(out)["external"]
        self.assertEqual([(e["file"], e["line"], e["url"]) for e in ext], [
            ("www/index.html", 8, "https://fonts.example.org"),
            ("www/index.html", 27, "https://example.com/paper.pdf"),
            ("www/index.html", 27, "//cdn.example.net/lib.js"),
        ])

    def test_exit_two_when_it_cannot_run(self):
        good = os.path.join(FIXTURES, "good")
        for args in (["--format", "xml"], ["--format"], ["--base-path", "article/"], ["--bogus"]):
            code, out, err = check(good, *args)
            self.assertEqual(code, 2, args)
            self.assertEqual(out, "", args)
            self.assertEqual(len(err.strip().split("\n")), 1, err)
            if args == ["--bogus"]:
                self.assertIn("(see folio check --help)", err)
        code, _, err = check("/nonexistent/article")
        self.assertEqual(code, 2)
        self.assertIn("/nonexistent/article", err)

    def test_help(self):
        with tempfile.TemporaryDirectory() as empty:
            p = subprocess.run(WRAPPER + [FOLIO, "check", "--help"], cwd=empty, capture_output=True,
                               text=True, timeout=60)
        self.assertEqual(p.returncode, 0)
        self.assertIn("usage: folio check", p.stdout)
        self.assertIn("--strict", p.stdout)

    def test_folio_help_lists_check(self):
        with tempfile.TemporaryDirectory() as empty:
            p = subprocess.run(WRAPPER + [FOLIO, "--help"], cwd=empty, capture_output=True, text=True,
                               timeout=60)
        self.assertEqual(p.returncode, 0)
        self.assertIn("folio check", p.stdout)
        self.assertIn("folio check --help", p.stdout)


# The distill-style fixture: headings the page's script ids from their text, a fragment whose
# script adds links and images once injected, and, among all that, only two real breakages a
# reader of the source can see: an anchor into a page that runs no script, and a missing image.
DISTILL_ERRORS = [
    ("www/index.html", 16, 10, 'a href "notes.html#gone" points at no element with id "gone"'),
    ("www/index.html", 21, 20, 'img src "assets/missing.png" not found'),
]
# Ids in no source of a page that runs scripts: the template makes four; one (#no_such_section)
# nothing makes, which only the live panel, in the rendered page, can tell.
DISTILL_UNVERIFIED = [
    ("fragments/sweep.html", 1, 30, '"#introduction" points at no element with id "introduction" in the source'),
    ("www/index.html", 12, 10, '"#introduction" points at no element with id "introduction" in the source'),
    ("www/index.html", 13, 10, '"#mixed_precision_training" points at no element with id "mixed_precision_training" in the source'),
    ("www/index.html", 14, 10, '"#a1%3A_distributed_training_profiling" points at no element with id "a1:_distributed_training_profiling" in the source'),
    ("www/index.html", 15, 10, '"#no_such_section" points at no element with id "no_such_section" in the source'),
    ("www/notes.html", 5, 57, '"index.html#introduction" points at no element with id "introduction" in the source'),
]


class ScriptMadeIds(unittest.TestCase):
    ROOT = os.path.join(FIXTURES, "distill")

    def test_only_the_real_errors_and_the_script_made_ids_as_unverified(self):
        code, out, err = check(self.ROOT)
        self.assertEqual(code, 1, out + err)
        found, summary = problems(out)
        errors = [p for p in found if p[3] == "error"]
        self.assertEqual([p[:3] for p in errors], [e[:3] for e in DISTILL_ERRORS])
        for got, want in zip(errors, DISTILL_ERRORS):
            self.assertIn(want[3], got[4])
        unverified = [p for p in found if p[3] == "warning"]
        self.assertEqual([p[:3] for p in unverified], [u[:3] for u in DISTILL_UNVERIFIED])
        for got, want in zip(unverified, DISTILL_UNVERIFIED):
            self.assertIn(want[3], got[4])
            self.assertIn(" in the source; may be made by a script [unverified-anchor]", got[4])
        self.assertEqual(summary.groups(), ("2", "0", "6", "0"))
        self.assertIn("; 6 anchors unverified: the id is in no source of a page that runs scripts",
                      out)

    def test_strict_makes_them_errors(self):
        code, out, err = check(self.ROOT, "--strict")
        self.assertEqual(code, 1, out + err)
        found, summary = problems(out)
        self.assertEqual({p[3] for p in found}, {"error"})
        self.assertEqual(len(found), len(DISTILL_ERRORS) + len(DISTILL_UNVERIFIED))
        self.assertEqual(summary.groups(), ("8", "0", "0", "0"))
        self.assertIn("; 6 anchors in no source counted as errors (--strict)", out)

    def test_json_gives_them_their_own_code_and_count(self):
        code, out, _ = check(self.ROOT, "--format", "json")
        self.assertEqual(code, 1)
        doc = json.loads(out)
        self.assertEqual((doc["errors"], doc["warnings"], doc["unverified"]), (2, 0, 6))
        codes = [(p["severity"], p["code"]) for p in doc["problems"]]
        self.assertEqual(codes, [("error", "")] * 2 + [("warning", "unverified-anchor")] * 6)

    def test_a_page_without_scripts_keeps_the_error(self):
        with tempfile.TemporaryDirectory() as root:
            shutil.copytree(self.ROOT, root, dirs_exist_ok=True)
            for name in ("template.js", "loader.js"):
                os.remove(os.path.join(root, "www", name))
            with open(os.path.join(root, "www", "index.html")) as f:
                page = f.read()
            page = re.sub(r"<script src=\w+\.js( defer)?></script>\n", "", page)
            with open(os.path.join(root, "www", "index.html"), "w") as f:
                f.write(page.replace('<div id="fragment-sweep"><p>Loading…</p></div>', "<p>no sweep</p>"))
            code, out, _ = check(root)
            found, summary = problems(out)
            self.assertEqual(code, 1)
            anchors = [p for p in found if "#no_such_section" in p[4]]
            self.assertEqual([p[3] for p in anchors], ["error"])
            self.assertEqual(summary.groups()[2], "0")


class Live(unittest.TestCase):
    """In preview, each save's check goes over the event stream as a `check` event, before
    the batch's own event (so a page that reloads has it); only changes are sent."""
    WAIT = 5.0 * SLOWDOWN

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="folio-check-live-")
        self.root = os.path.join(self.tmp, "article")
        shutil.copytree(os.path.join(FIXTURES, "good"), self.root)
        self.server = Server(self.root).__enter__()
        self.stream = EventStream(self.server.port)
        kind, self.hello = self.stream.next_event(self.WAIT)[:2]
        self.assertEqual(kind, "hello")

    def tearDown(self):
        self.stream.close()
        self.server.__exit__(None, None, None)
        shutil.rmtree(self.tmp)

    def edit(self, rel, text=None, append=None):
        path = os.path.join(self.root, rel)
        if append is not None:
            with open(path) as f:
                text = f.read() + append
        with open(path, "w") as f:
            f.write(text)

    def events_until(self, kind):
        """Events up to and including the first of @kind (the batch's own event)."""
        seen = []
        while not seen or seen[-1][0] != kind:
            ev = self.stream.next_event(self.WAIT)
            self.assertIsNotNone(ev, "no %s event; got %r" % (kind, seen))
            seen.append(ev[:2])
        return seen

    def check_and(self, kind):
        """The batch's check event and its own kind's event, in whichever order they came (the
        check runs beside the reloads: first when quick, check_live_worker.h): (the kinds in
        order of arrival, the check's data)."""
        seen = self.events_until(kind)
        if not any(k == "check" for k, _ in seen):
            seen += self.events_until("check")
        self.assertEqual(sorted(k for k, _ in seen), sorted(["check", kind]), seen)
        return next(d for k, d in seen if k == "check")

    def test_broken_then_fixed(self):
        with open(os.path.join(self.root, "www/index.html")) as f:
            good = f.read()
        lines = good.count("\n")
        self.edit("www/index.html", append='<img src="assets/img/typo.png" alt="">\n')
        data = json.loads(self.check_and("page"))
        self.assertEqual([(f["file"], f["url"]) for f in data["files"]], [("www/index.html", "/index.html")])
        (p,) = data["files"][0]["problems"]
        self.assertEqual((p["severity"], p["file"], p["line"], p["column"]), ("error", "www/index.html", lines + 1, 11))
        self.assertIn('img src "assets/img/typo.png" not found', p["message"])
        self.assertEqual(p["resolved"], "assets/img/typo.png")

        self.edit("www/style.css", append="p { background: url(gone.png); }\n")
        files = json.loads(self.check_and("css"))["files"]
        self.assertEqual([f["file"] for f in files], ["www/style.css"])
        self.assertIn('url() "gone.png" not found', files[0]["problems"][0]["message"])

        self.edit("www/index.html", good)
        cleared = json.loads(self.check_and("page"))
        self.assertEqual(cleared["files"], [{"file": "www/index.html", "url": "/index.html", "problems": []}])
        self.assertEqual(cleared["server"], self.hello, "the event names the server, as hello does")

        # Saved again, still clean: the browsers know, nothing is sent but the reload.
        self.edit("www/index.html", good)
        self.assertEqual([k for k, _ in self.events_until("page")], ["page"])

    def test_a_save_that_breaks_hundreds_never_drops_the_stream(self):
        """600 broken references would make a ~130 KB event, past the 64 KiB a stream may
        queue (issue 19, 4): the event lists 40 and counts the rest, and the save's own
        event still reaches the browser on the same stream."""
        broken = "".join('<img src="assets/img/missing-%d.png" alt="">\n' % i for i in range(600))
        self.edit("www/index.html", append=broken)
        check = self.check_and("page")
        self.assertLess(len(check), 64 * 1024 // 4)
        (f,) = json.loads(check)["files"]
        self.assertEqual((len(f["problems"]), f["more"]), (40, 560))
        self.edit("www/index.html", append="<p>and on</p>\n")  # the stream is still open
        self.assertEqual(self.events_until("page")[-1][0], "page")

    def test_a_deleted_image_is_reported_on_the_page(self):
        os.unlink(os.path.join(self.root, "assets/img/tile.png"))
        files = json.loads(self.check_and("image"))["files"]
        self.assertEqual([f["file"] for f in files], ["www/index.html"])
        self.assertTrue(all("tile.png" in p["message"] for p in files[0]["problems"]))

    def test_a_fragment_is_checked_against_its_page(self):
        self.edit("fragments/notes.html", append='<a href="#not-on-the-page">x</a>\n')
        files = json.loads(self.check_and("fragment"))["files"]
        self.assertEqual([f["file"] for f in files], ["fragments/notes.html"])
        self.assertIn('"#not-on-the-page" points at no element', files[0]["problems"][0]["message"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
