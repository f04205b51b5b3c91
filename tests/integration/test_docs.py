"""The manual stays true: README.md, docs/ and the READMEs in bench/ and
tests/fuzz/ against the repo and folio.

- every link resolves: a file or folder of the repo, and its #anchor a
  heading there as GitHub renders Markdown anchors (or an HTML id/name);
- every repo path named (src/..., tests/..., bench/..., config/..., docs/...,
  .ci/...) exists, in prose, code spans and code blocks alike;
- every option `folio --help` and `folio check --help` print is said
  somewhere in docs/, and every setting has its line in config/folio.conf;
- the README: at most 150 lines, what folio is first, then the two commands.

Standard library only; external URLs are never fetched.
"""
import glob
import os
import re
import subprocess
import unicodedata
import unittest

from folio import need

need("groff", "groff-base")  # the man pages render without a warning
need("man", "man-db")

FOLIO = os.environ.get("FOLIO_BIN", "build/src/folio")
REPO = os.environ.get("FOLIO_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
REPO = os.path.realpath(REPO)


def manual_files():
    """README.md, every Markdown page under docs/, and the READMEs beside the
    code they explain (bench/, tests/fuzz/), as repo-relative paths."""
    pages = sorted(os.path.relpath(p, REPO) for p in glob.glob(os.path.join(REPO, "docs", "**", "*.md"),
                                                               recursive=True))
    return ["README.md"] + pages + ["bench/README.md", "tests/fuzz/README.md"]


def read(rel):
    with open(os.path.join(REPO, rel), encoding="utf-8") as f:
        return f.read()


FENCE = re.compile(r"^ {0,3}(```|~~~)[^\n]*\n.*?^ {0,3}\1[ \t]*$", re.S | re.M)
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)


def prose(text):
    """text with code blocks and code spans blanked (same length, so lines keep their numbers)."""
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))
    return CODE_SPAN.sub(blank, FENCE.sub(blank, text))


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def slug(heading):
    """The anchor GitHub gives a heading: its rendered text, lower case, with
    everything but letters, marks, digits, '_', '-' and spaces dropped, and
    spaces made '-' (github-slugger's rule)."""
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", heading)            # images render no text
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)          # a link renders its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").replace("*", "")
    text = text.strip().lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LMN")
    return kept.replace(" ", "-")


def anchors(text):
    """Every anchor a Markdown file offers: its headings' (with GitHub's -1,
    -2 for repeats) and HTML id= and name= attributes."""
    found, seen = set(), {}
    outside_code = FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    for m in re.finditer(r"^ {0,3}#{1,6}[ \t]+(.*?)[ \t#]*$", outside_code, re.M):
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else "%s-%d" % (base, n))
    for m in re.finditer(r"<[a-zA-Z][^>]*\s(?:id|name)=\"([^\"]+)\"", outside_code):
        found.add(m.group(1))
    return found


LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)
HTML_LINK = re.compile(r"<(?:a|img|source)\s[^>]*?(?:href|src)=\"([^\"]+)\"")


def links(text):
    """(line, target) of every link and image of a Markdown text, code aside."""
    plain = prose(text)
    for pattern in (LINK, REFERENCE, HTML_LINK):
        for m in pattern.finditer(plain):
            yield line_of(text, m.start()), text[m.start(1):m.end(1)]


# A repo path: one of these folders (or a file at the top) and what follows
# it, not preceded by a path character (build/src/folio names no src/).
REPO_PATH = re.compile(r"(?<![\w./$~-])((?:\.ci|src|tests|bench|config|docs)/[\w.*/<>+-]*"
                       r"|Dockerfile|\.dockerignore|meson_options\.txt|meson\.build)")


class Links(unittest.TestCase):
    def test_every_link_resolves(self):
        problems = []
        cache = {}
        for rel in manual_files():
            text = read(rel)
            for line, target in links(text):
                where = "%s:%d: %s" % (rel, line, target)
                if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                    continue  # http:, https:, mailto:: not fetched
                path, _, anchor = target.partition("#")
                if path.startswith("/"):
                    problems.append(where + " (an absolute path: GitHub resolves it against the site, not the repo)")
                    continue
                resolved = os.path.normpath(os.path.join(os.path.dirname(rel), path)) if path else rel
                full = os.path.join(REPO, resolved)
                if resolved.startswith("..") or not os.path.exists(full):
                    problems.append(where + " (no such file in the repo: %s)" % resolved)
                    continue
                if anchor:
                    if not resolved.endswith(".md"):
                        problems.append(where + " (an anchor into a file that is not Markdown)")
                        continue
                    if resolved not in cache:
                        cache[resolved] = anchors(read(resolved))
                    if anchor not in cache[resolved]:
                        problems.append(where + " (no heading or id '%s' in %s)" % (anchor, resolved))
        self.assertEqual(problems, [], "\n" + "\n".join(problems))

    def test_every_repo_path_named_exists(self):
        problems = []
        for rel in manual_files():
            text = read(rel)
            for m in REPO_PATH.finditer(text):
                name = m.group(1).rstrip(".,:;")
                if "<" in name:  # a pattern such as docs/<topic>.md
                    continue
                if not glob.glob(os.path.join(REPO, name)):
                    problems.append("%s:%d: %s" % (rel, line_of(text, m.start()), name))
        self.assertEqual(problems, [], "\n" + "\n".join(problems))


def help_options(*args):
    """The long options a --help text lists ('root', 'production', ...): on
    its option lines, or for a command without them (folio check), anywhere."""
    out = subprocess.run([FOLIO, *args, "--help"], capture_output=True, text=True, timeout=10)
    assert out.returncode == 0, out.stderr
    listed = [l for l in out.stdout.splitlines() if l.startswith("  ")]
    text = "\n".join(listed) if listed else out.stdout
    names = []
    for m in re.finditer(r"--(?:\[no-\])?([a-z][a-z0-9-]*)", text):
        if m.group(1) not in names:
            names.append(m.group(1))
    return names


def mentions(text, option):
    return re.search(r"--(?:\[no-\]|no-)?%s(?![\w-])" % re.escape(option), text) is not None


class Options(unittest.TestCase):
    def test_every_option_is_in_the_docs(self):
        docs = "".join(read(rel) for rel in manual_files() if rel.startswith("docs/"))
        missing = [o for o in help_options() + help_options("check") if not mentions(docs, o)]
        self.assertEqual(missing, [], "options --help prints that no page of docs/ names")

    def test_every_setting_has_its_line_in_config_folio_conf(self):
        shipped = read("config/folio.conf")
        server = shipped.split("[server]", 1)[1].split("[routes]", 1)[0]
        keys = set(re.findall(r"^;\s*([a-z][a-z0-9-]*)\s*=", server, re.M))
        settings = [o for o in help_options() if o not in ("config", "health-check", "help", "version")]
        self.assertEqual([s for s in settings if s not in keys], [],
                         "settings without their '; key = default' line in config/folio.conf")
        self.assertEqual(sorted(keys - set(settings)), [], "keys in config/folio.conf folio does not have")

    def test_config_folio_conf_states_the_defaults(self):
        # config_init holds the defaults; --help states them (config_value_text), and so must
        # the shipped file, whose lines say "the values below are the defaults".
        server = read("config/folio.conf").split("[server]", 1)[1].split("[routes]", 1)[0]
        shipped = {k: v.strip() for k, v in re.findall(r"^;\s*([a-z][a-z0-9-]*)\s*=([^;\n]*)", server, re.M)}
        words = {"true": "on", "yes": "on", "1": "on", "false": "off", "no": "off", "0": "off", "": "none"}

        def plain(value, default):  # a yes/no written any way folio reads it; the mode's for live-reload
            value = words.get(value, value) if default in ("on", "off", "on in preview", "none") else value
            return "on in preview" if default == "on in preview" and value == "on" else value
        wrong = ["%s = %r, --help says (%s)" % (k, shipped[k], d) for k, d in help_defaults().items()
                 if k in shipped and plain(shipped[k], d) != d]
        self.assertEqual(wrong, [], "config/folio.conf states a default config_init does not have")


MAN = os.environ.get("FOLIO_MAN_DIR", os.path.join(os.path.dirname(os.path.dirname(FOLIO)), "docs", "man"))


def man_source(page):
    with open(os.path.join(MAN, page), encoding="utf-8") as f:
        return f.read()


def help_defaults():
    """{option: the default its --help line ends with, "(...)"}."""
    out = subprocess.run([FOLIO, "--help"], capture_output=True, text=True, timeout=10).stdout
    found = {}
    for line in out.splitlines():
        m = re.match(r"^  (?:-., )?\s*--(?:\[no-\])?([a-z][a-z0-9-]*).*\((.*)\)$", line)
        if m:
            found[m.group(1)] = m.group(2)
    return found


class ManPages(unittest.TestCase):
    """folio(1) and folio.conf(5), as meson made them from the settings table."""

    def test_they_render_without_a_warning(self):
        for page in ("folio.1", "folio.conf.5"):
            path = os.path.join(MAN, page)
            r = subprocess.run(["groff", "-ww", "-z", "-man", path], capture_output=True, text=True, timeout=30)
            self.assertEqual((r.returncode, r.stderr), (0, ""), page)
            r = subprocess.run(["man", "-l", path], capture_output=True, text=True, timeout=30,
                               env=dict(os.environ, MANWIDTH="80", MANPAGER="cat", PAGER="cat"))
            self.assertEqual((r.returncode, r.stderr), (0, ""), page)
            self.assertIn("NAME", r.stdout)

    def test_folio_1_has_every_option(self):
        page = man_source("folio.1").replace("\\-", "-").replace("\\%", "")
        missing = [o for o in help_options() + help_options("check") if not mentions(page, o)]
        self.assertEqual(missing, [], "options --help prints that folio(1) lacks")

    def test_folio_conf_5_has_every_key(self):
        page = man_source("folio.conf.5").replace("\\-", "-").replace("\\%", "")
        settings = [o for o in help_options() if o not in ("config", "health-check", "help", "version")]
        self.assertEqual([s for s in settings if "\\fB%s =" % s not in page], [])
        self.assertIn("[routes]", page)

    def test_the_defaults_help_states_are_the_defaults(self):
        # Both read the defaults from config_init (config_value_text): they cannot differ.
        page = man_source("folio.1").replace("\\-", "-").replace("\\%", "").replace("\\&", "")
        entries = dict(re.findall(r"^\\fB--([a-z0-9-]+)\\fR.*?\nDefault: \\fB(.*?)\\fR", page, re.M | re.S))
        stated = help_defaults()
        wrong = ["--%s says (%s), config_init %s" % (o, d, entries[o]) for o, d in stated.items()
                 if o in entries and d != entries[o] and not d.startswith(entries[o] + ";")]
        self.assertEqual(wrong, [], "a --help default (in src/base/config_table.c) differs from config_init's")


class Readme(unittest.TestCase):
    def setUp(self):
        self.text = read("README.md")

    def test_short_and_saying_what_folio_is_first(self):
        lines = self.text.splitlines()
        self.assertLessEqual(len(lines), 150)
        self.assertEqual(lines[0], "# folio")
        self.assertIn("HTTP server", lines[1])

    def test_the_two_commands_come_first(self):
        block = re.search(r"```sh\n(.*?)```", self.text, re.S)
        self.assertEqual(self.text[:block.start()].count("```"), 0)
        commands = [l.split("#")[0].strip() for l in block.group(1).splitlines()]
        # The first is run in a fresh Debian by the container suite; the second is CI itself.
        self.assertEqual(commands, ["bash .ci/setup && build/src/folio", "bash .ci/run"])
        ci = read(".ci/run")
        self.assertIn("bash .ci/setup --tests", ci)


if __name__ == "__main__":
    unittest.main()
