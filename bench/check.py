#!/usr/bin/env python3
"""How long `folio check` takes on an article shaped like the real one, at its scale.

Generates in a temporary folder a 300 KB page (sections, in-page anchors, images), a
stylesheet and 15 fragments (one of 2.3 MB like the article's largest, 14 of 40 KB), then
runs `folio check --root` on it and on this repo's own article, N times each, and prints
the median and the fastest wall time (process start included) with the summary line.
No peer does this, so there is no ratio: a measurement, never a timed assertion.

    python3 bench/check.py                # build/src/folio, 20 runs
    python3 bench/check.py --runs 50 --folio build-ci/src/folio

Standard library only.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def make_article(root, page_bytes=300_000, fragments=15):
    """The page, its stylesheet, 50 images and the fragments; returns the reference count."""
    def w(rel, text):
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        with open(os.path.join(root, rel), "w") as f:
            f.write(text)
    parts, i = ["<!doctype html><html><head><title>b</title><link rel=stylesheet href=style.css></head><body>\n"], 0
    while sum(map(len, parts)) < page_bytes:
        parts.append('<h2 id="s%d">Section %d</h2><p>Words <a href="#s%d">back</a> <img src="assets/img/f%d.png" '
                     'alt=""> and more words about pipelines and memory.</p>\n' % (i, i, max(0, i - 1), i % 50))
        i += 1
    parts += ['<div id="fragment-f%d"></div>\n' % k for k in range(fragments)] + ["</body></html>\n"]
    w("www/index.html", "".join(parts))
    w("www/style.css", "body{background:url(../assets/img/f1.png)}\n" * 50)
    for k in range(50):
        w("assets/img/f%d.png" % k, "x")
    for k in range(fragments):
        size, n, fp = (2_300_000 if k == 0 else 40_000), 0, ["<div class=plot>"]
        total = len(fp[0])
        while total < size:
            fp.append('<circle cx="%d" cy="%d" r="1.5" data-step="%d"></circle>' % (n % 1000, n % 400, n))
            total += len(fp[-1])
            n += 1
        fp.append('<img src="assets/img/f2.png" alt=""><a href="#s3">s3</a></div>\n')
        w("fragments/f%d.html" % k, "".join(fp))


def measure(folio, root, runs):
    """Wall times (ms) of `folio check --root root`, and its last summary line."""
    times, out = [], ""
    for _ in range(runs):
        t = time.perf_counter()
        p = subprocess.run([folio, "check", "--root", root], capture_output=True, text=True, cwd=root)
        times.append((time.perf_counter() - t) * 1000)
        if p.returncode == 2:
            sys.exit("folio check could not run: " + p.stderr)
        out = p.stdout.strip().split("\n")[-1]
    return times, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--folio", default=os.path.join(HERE, "..", "build", "src", "folio"))
    ap.add_argument("--runs", type=int, default=20)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        make_article(tmp)
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(tmp) for f in fs)
        cases = [("300 KB page + 15 fragments (%.1f MB)" % (size / 1e6), tmp),
                 ("this repo's article", os.path.join(HERE, ".."))]
        print("| article | median ms | fastest ms | summary |\n|---|---|---|---|")
        for name, root in cases:
            times, summary = measure(a.folio, root, a.runs)
            print("| %s | %.1f | %.1f | %s |" % (name, statistics.median(times), min(times), summary))


if __name__ == "__main__":
    main()
