#!/usr/bin/env python3
"""How long `folio check` takes on an article shaped like the real one, at its scale.

Generates in a temporary folder a 300 KB page (sections, in-page anchors, images), a
stylesheet and 15 fragments (one of 2.3 MB like the article's largest, 14 of 40 KB), then
runs `folio check --root` on it and on this repo's own article, N times each, and prints
the median and the fastest wall time (process start included) with the summary line.
No peer does this, so there is no ratio: a measurement, never a timed assertion.

    python3 bench/check.py                # build/src/folio, 20 runs
    python3 bench/check.py --runs 50 --folio build-ci/src/folio
    python3 bench/check.py --misses 6000  # a page of 6,000 ids and 6,000 anchors that miss

--misses N: "did you mean" at scale (check_near.h), three pages of N ids and N in-page
anchors naming none of them: a table of contents whose id scheme changed (sec- became
section-), each anchor a typo of its id, and ids alike in all but their digits (a00001 for
b00001), the last the worst case of the index's filters.

Standard library only.
"""
import argparse
import os
import resource
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


def make_misses(root, n, scheme):
    """One page of n ids and n in-page anchors that name none of them (see the docstring)."""
    words = ["pipeline", "tensor", "shard", "gradient", "bubble", "stage", "batch", "optimizer",
             "memory", "overlap"]
    ids, hrefs = [], []
    for i in range(n):
        title = "-".join(words[(i * k) % 10] for k in (1, 3, 7))
        ids.append({"toc": "sec-%d-%s", "typo": "sec-%d-%s"}.get(scheme, "a%05d") % ((i, title) if scheme != "alike" else i))
        hrefs.append({"toc": "section-%d-%s", "typo": "sec-%d-%sx"}.get(scheme, "b%05d") % ((i, title) if scheme != "alike" else i))
    os.makedirs(os.path.join(root, "www"), exist_ok=True)
    with open(os.path.join(root, "www", "index.html"), "w") as f:
        f.write("<!doctype html><html lang=en><head><meta charset=utf-8><title>t</title></head><body><nav>%s</nav>%s"
                "</body></html>\n" % ("".join('<a href="#%s">x</a>' % h for h in hrefs),
                                      "".join('<h2 id="%s">x</h2>' % i for i in ids)))


def measure(folio, root, runs, cpu=None):
    """Wall times (ms) of `folio check --root root`, and its last summary line; the CPU
    times (user + system, ms) appended to cpu when given (a shared machine's wall times
    say more of the others' load)."""
    times, out = [], ""
    for _ in range(runs):
        t, used = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run([folio, "check", "--root", root], capture_output=True, text=True, cwd=root)
        times.append((time.perf_counter() - t) * 1000)
        now = resource.getrusage(resource.RUSAGE_CHILDREN)
        if cpu is not None:
            cpu.append((now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime) * 1000)
        if p.returncode == 2:
            sys.exit("folio check could not run: " + p.stderr)
        out = p.stdout.strip().split("\n")[-1]
    return times, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--folio", default=os.path.join(HERE, "..", "build", "src", "folio"))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--misses", type=int, default=0, metavar="N")
    a = ap.parse_args()
    if a.misses:
        print("| page of %d ids, %d anchors that miss | median ms | fastest ms | median CPU ms |\n|---|---|---|---|"
              % (a.misses, a.misses))
        for scheme in ("toc", "typo", "alike"):
            with tempfile.TemporaryDirectory() as tmp:
                make_misses(tmp, a.misses, scheme)
                cpu = []
                times, _ = measure(a.folio, tmp, a.runs, cpu)
                print("| %s | %.1f | %.1f | %.1f |" % (scheme, statistics.median(times), min(times),
                                                      statistics.median(cpu)))
        return
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
