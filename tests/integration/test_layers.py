"""src/ keeps its shape: includes point one way, no header loop, small files and functions.

- A folder includes only the folders below it: base/ nothing but itself; site/ base/;
  serve/ base/ and site/; check/ base/ and site/; live/ base/, site/ and check/. serve/
  and live/ never include each other (live reload reaches the server through
  site/live_hook.h); only main.c, at the top, wires everything.
- No header includes itself back through others.
- No .c file over 700 lines, no function body over 70 (docs/design.md, the BRIEF's rule).

Reads the sources as text; standard library only.
"""
import glob
import os
import re
import unittest

REPO = os.environ.get("FOLIO_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
SRC = os.path.join(os.path.realpath(REPO), "src")
BELOW = {
    "base": {"base"},
    "site": {"base", "site"},
    "serve": {"base", "site", "serve"},
    "check": {"base", "site", "check"},
    "live": {"base", "site", "check", "live"},
}
FILE_MAX, FUNCTION_MAX = 700, 70
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(pattern="**/*.[ch]"):
    """src/'s files matching pattern, as paths relative to src/."""
    return sorted(os.path.relpath(p, SRC) for p in glob.glob(os.path.join(SRC, pattern), recursive=True))


def includes(rel):
    """The src/-relative paths of rel's quoted includes found in src/ (a
    generated file, such as a build's reload_js.c, is not)."""
    with open(os.path.join(SRC, rel), encoding="utf-8", errors="replace") as f:
        text = f.read()
    out = []
    for name in INCLUDE.findall(text):
        for candidate in (os.path.join(os.path.dirname(rel), name), name):
            if os.path.exists(os.path.join(SRC, candidate)):
                out.append(os.path.normpath(candidate))
                break
    return out


def folder(rel):
    return rel.split(os.sep)[0] if os.sep in rel else None


class Layers(unittest.TestCase):
    def test_includes_point_down(self):
        wrong = []
        for rel in sources():
            mine = folder(rel)
            if mine is None:
                continue  # main.c: it wires the subsystems
            self.assertIn(mine, BELOW, f"src/{mine}/ is a folder this test does not know: add it")
            wrong += [f"src/{rel} includes src/{inc}" for inc in includes(rel)
                      if folder(inc) not in BELOW[mine]]
        self.assertEqual(wrong, [], "includes that point up or across:\n" + "\n".join(wrong))

    def test_no_header_loop(self):
        graph = {rel: [i for i in includes(rel) if i.endswith(".h")] for rel in sources("**/*.h")}
        state, loops = {}, []

        def visit(node, path):
            state[node] = "open"
            for nxt in graph.get(node, []):
                if state.get(nxt) == "open":
                    loops.append(" -> ".join(path[path.index(nxt):] + [nxt]))
                elif nxt not in state:
                    visit(nxt, path + [nxt])
            state[node] = "done"

        for h in graph:
            if h not in state:
                visit(h, [h])
        self.assertEqual(loops, [], "headers that include themselves back:\n" + "\n".join(loops))

    def test_files_and_functions_are_small(self):
        big = []
        for rel in sources("**/*.c"):
            with open(os.path.join(SRC, rel), encoding="utf-8", errors="replace") as f:
                lines = f.read().split("\n")
            if len(lines) > FILE_MAX:
                big.append(f"src/{rel}: {len(lines)} lines")
            start = None
            for i, line in enumerate(lines):  # a function's braces stand alone in column 0
                if line == "{":
                    start = i
                elif line == "}" and start is not None:
                    if i - start - 1 > FUNCTION_MAX:
                        big.append(f"src/{rel}:{start}: a function of {i - start - 1} lines")
                    start = None
        self.assertEqual(big, [], f"over {FILE_MAX} lines a file or {FUNCTION_MAX} a function:\n"
                         + "\n".join(big))


if __name__ == "__main__":
    unittest.main()
