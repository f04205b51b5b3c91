"""The article-shaped fixture for bench/article.py: a page, fragments, CSS, JS,
SVG figures and a PNG with the real article's sizes, written once as they are
(plain/) and once with .gz, .br and .zst sidecars (static/), and the levels and
rules folio compresses with, which the peers are configured to match."""
import gzip
import os
import random
import shutil
import struct
import subprocess
import sys
import time
import zlib

GZIP_LEVEL = 9
GZIP_MIN = 512  # folio's GZIP_MIN_BYTES: smaller files are sent as they are
COMPRESSIBLE = {".html", ".css", ".js", ".svg", ".json"}
MIME = {".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8",
        ".js": "text/javascript; charset=utf-8", ".json": "application/json",
        ".svg": "image/svg+xml", ".png": "image/png", "": "application/octet-stream"}
# Codings measured one by one (each request sends it alone), and what
# Chromium sends, for the row where each server picks.
CODINGS = ("gzip", "br", "zstd")
BR_QUALITY = 11   # folio's production best, the .br sidecars', lighttpd's
BR_WINDOW = 24    # folio's lgwin (16 MiB)
ZSTD_LEVEL = 19   # folio's production best, the .zst sidecars', lighttpd's
SUFFIX = {"gzip": ".gz", "br": ".br", "zstd": ".zst"}
BIG_FRAGMENT = "config-sweep"
PNG_PATH = "/assets/images/cluster-photo.png"
def log(msg):
    print(msg, file=sys.stderr, flush=True)


def die(msg):
    log("bench/article.py: " + msg)
    sys.exit(1)


class Text:
    """Deterministic prose: a Zipf-weighted vocabulary of made-up words, so
    that gzip finds about what it finds in English (the page compresses to
    about a third, as the real one does)."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        letters = "etaoinshrdlcumwfgypbvkjxqz"
        lw = [12, 9, 8, 7.5, 7, 6.7, 6.3, 6, 5.9, 4.3, 4, 2.8, 2.8, 2.4, 2.4, 2.2, 2, 2, 1.9,
              1.5, 1, .8, .2, .2, .1, .1]
        words = set()
        while len(words) < 4000:
            n = self.rng.choice([2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 8, 9, 10, 11, 12])
            words.add("".join(self.rng.choices(letters, lw, k=n)))
        self.words = sorted(words)
        acc, self.cum = 0.0, []
        for i in range(len(self.words)):
            acc += 1.0 / (i + 2)
            self.cum.append(acc)

    def words_(self, n):
        return " ".join(self.rng.choices(self.words, cum_weights=self.cum, k=n))

    def sentence(self):
        s = self.words_(self.rng.randint(6, 24))
        return s[0].upper() + s[1:] + self.rng.choice([".", ".", ".", ",", ";", ":"])

    def para(self):
        parts = []
        for _ in range(self.rng.randint(3, 8)):
            s = self.sentence()
            r = self.rng.random()
            if r < 0.15:
                s += f" <code>{self.words_(1)}_{self.words_(1)}()</code>"
            elif r < 0.25:
                s += f' <a href="#{self.words_(1)}">{self.words_(2)}</a>'
            elif r < 0.3:
                s += f" <em>{self.words_(2)}</em>"
            parts.append(s)
        return "<p>" + " ".join(parts) + "</p>\n"

    def table(self):
        rng = self.rng
        cols = rng.randint(3, 6)
        rows = ["<tr>" + "".join(f"<th>{self.words_(1)}</th>" for _ in range(cols)) + "</tr>"]
        for _ in range(rng.randint(4, 12)):
            rows.append("<tr>" + "".join(f"<td>{rng.choice([rng.randint(1, 4096), round(rng.random() * 100, 1)])}</td>"
                                         for _ in range(cols)) + "</tr>")
        return '<table class="data">\n' + "\n".join(rows) + "\n</table>\n"

    def code(self):
        lines = []
        for _ in range(self.rng.randint(4, 14)):
            lines.append("    " * self.rng.randint(0, 3) + f"{self.words_(1)} = {self.words_(1)}"
                         f"({self.words_(1)}, {self.rng.randint(0, 999)})")
        return "<pre><code>" + "\n".join(lines) + "</code></pre>\n"

    def block(self):
        r = self.rng.random()
        return self.para() if r < 0.8 else self.table() if r < 0.9 else self.code()


def fragment_names():
    return [BIG_FRAGMENT, "memory-calculator", "parallelism-explorer", "pipeline-schedule",
            "cheat-sheet", "zero-stages", "tensor-parallel", "context-parallel", "expert-routing",
            "collectives", "flash-attention", "activation-memory", "interconnect", "glossary",
            "checkpointing"]


def make_page(t, size, svgs):
    head = ('<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            '<title>The Memory Wall and the Many-GPU Machine</title>\n'
            '<link rel="stylesheet" href="style.css">\n<script src="article.js" defer></script>\n'
            '</head>\n<body>\n<main>\n<h1>The Memory Wall and the Many-GPU Machine</h1>\n')
    tail = "</main>\n</body>\n</html>\n"
    names = fragment_names()
    out, n, sec = [head], len(head) + len(tail), 0
    while n < size:
        chunk = f'<section id="s{sec}">\n<h2>{t.words_(4).title()}</h2>\n'
        for _ in range(6):
            chunk += t.block()
        if sec < len(names):
            chunk += f'<div id="fragment-{names[sec]}" class="fragment" aria-busy="true"></div>\n'
        if sec < len(svgs):
            chunk += f'<figure><img src="assets/figures/{svgs[sec]}" alt="{t.words_(5)}"></figure>\n'
        if sec == 3:
            chunk += (f'<figure><img src="{PNG_PATH[1:]}" width="480" height="230" '
                      f'alt="{t.words_(6)}"></figure>\n')
        chunk += "</section>\n"
        out.append(chunk)
        n += len(chunk)
        sec += 1
    return ("".join(out) + tail).encode()


def make_sweep(t, size):
    """The big fragment: an SVG scatter of configurations, like the real
    config sweep (numbers in attributes, compresses well)."""
    rng = t.rng
    out = ['<div class="sweep">\n' + t.para() + '<svg class="sweep-chart" viewBox="0 0 900 560">\n']
    n = len(out[0])
    while n < size - 20:
        dp, tp, pp = rng.choice([1, 2, 4, 8, 16, 32]), rng.choice([1, 2, 4, 8]), rng.choice([1, 2, 4, 8, 16])
        line = (f'<circle cx="{rng.uniform(40, 880):.1f}" cy="{rng.uniform(20, 540):.1f}" r="3" '
                f'class="{rng.choice(["fit", "oom"])}" data-dp="{dp}" data-tp="{tp}" data-pp="{pp}" '
                f'data-cp="{rng.choice([1, 2, 4])}" data-mb="{rng.choice([1, 2, 4, 8])}" '
                f'data-zero="{rng.randint(0, 3)}" data-mfu="{rng.uniform(0.1, 0.6):.3f}" '
                f'data-mem="{rng.uniform(10, 120):.1f}"></circle>\n')
        out.append(line)
        n += len(line)
    out.append("</svg>\n</div>\n")
    return "".join(out).encode()


def make_fragment(t, size):
    out, n = [], 0
    while n < size:
        b = t.block()
        out.append(b)
        n += len(b)
    return ('<div class="widget">\n' + "".join(out) + "</div>\n").encode()


def make_css(t, size):
    rng, out, n = t.rng, [], 0
    props = ["color", "margin", "padding", "font-size", "line-height", "border", "display",
             "grid-template-columns", "background", "max-width", "gap", "transition"]
    while n < size:
        rule = f".{t.words_(1)}-{t.words_(1)} {{\n" + "".join(
            f"  {rng.choice(props)}: {rng.randint(0, 64)}px {rng.choice(['auto', 'solid', '#' + format(rng.randrange(1 << 24), '06x')])};\n"
            for _ in range(rng.randint(2, 7))) + "}\n"
        out.append(rule)
        n += len(rule)
    return "".join(out).encode()


def make_js(t, size):
    rng, out, n = t.rng, ['"use strict";\n'], 0
    while n < size:
        f = (f"function {t.words_(1)}_{rng.randint(0, 99)}({t.words_(1)}, {t.words_(1)}) {{\n"
             + "".join(f"  const {t.words_(1)}{i} = {t.words_(1)}.{t.words_(1)}({rng.randint(0, 999)});\n"
                       for i in range(rng.randint(2, 9)))
             + f"  return {t.words_(1)};\n}}\n")
        out.append(f)
        n += len(f)
    return "".join(out).encode()


def make_svg(t, size):
    rng = t.rng
    out = ['<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 640 360">\n']
    n = len(out[0])
    while n < size:
        el = (f'<rect x="{rng.randint(0, 600)}" y="{rng.randint(0, 330)}" width="{rng.randint(4, 60)}" '
              f'height="{rng.randint(4, 40)}" fill="#{rng.randrange(1 << 24):06x}"/>\n')
        if rng.random() < 0.2:
            el += f'<text x="{rng.randint(0, 600)}" y="{rng.randint(0, 350)}">{t.words_(2)}</text>\n'
        out.append(el)
        n += len(el)
    out.append("</svg>\n")
    return "".join(out).encode()


def make_png(rng, width, height):
    """A valid RGB PNG of noise: incompressible, like a photo."""
    raw = bytearray()
    for _ in range(height):
        raw.append(0)
        raw += rng.randbytes(width * 3)

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + chunk(b"IEND", b""))


def make_fixture(tmp):
    """Writes tmp/plain (the article) and tmp/static (the same files plus
    .gz, .br and .zst sidecars, write_sidecars). Returns ({file path
    relative to the tree: bytes}, [the url paths a page view loads])."""
    t = Text(9)
    plain = os.path.join(tmp, "plain")
    files = {}
    svgs = [f"figure-{i}.svg" for i in range(1, 5)]
    files["www/index.html"] = make_page(t, 308 * 1024, svgs)
    files["www/style.css"] = make_css(t, 42 * 1024)
    files["www/article.js"] = make_js(t, 58 * 1024)
    files["www/404.html"] = (b'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
                             b'<title>Not found</title><link rel="stylesheet" href="/style.css"></head>\n'
                             b"<body><main><h1>Not found</h1>\n" + t.para().encode()
                             + b'<p><a href="/">Back to the article</a></p></main></body></html>\n')
    sizes = [2300 * 1024, 9, 12, 6, 3, 22, 30, 18, 26, 15, 40, 11, 20, 64, 8]
    for name, kb in zip(fragment_names(), sizes):
        files[f"fragments/{name}.html"] = (make_sweep(t, kb) if name == BIG_FRAGMENT
                                           else make_fragment(t, kb * 1024))
    for s in svgs:
        files["assets/figures/" + s] = make_svg(t, t.rng.randint(4, 9) * 1024)
    files["assets/images/cluster-photo.png"] = make_png(t.rng, 480, 230)
    stamp = time.time() - 3600
    for rel, data in files.items():
        p = os.path.join(plain, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
        os.utime(p, (stamp, stamp))
    static = os.path.join(tmp, "static")
    shutil.copytree(plain, static)
    write_sidecars(static, files, stamp)
    page = ["/", "/style.css", "/article.js"] + [f"/fragments/{n}.html" for n in fragment_names()] \
        + [f"/assets/figures/{s}" for s in svgs] + [PNG_PATH]
    return files, page


def write_sidecars(static, files, stamp):
    """A gzip -9, brotli -q 11 (window 24, as folio's) and zstd -19 file
    beside each compressible file of the static tree, same mtime: the
    levels folio reaches in production, for the peers that serve
    precompressed files (nginx .gz and .br, h2o .gz and .br)."""
    todo = [rel for rel, data in files.items()
            if os.path.splitext(rel)[1] in COMPRESSIBLE and len(data) >= GZIP_MIN]
    procs = []
    for rel in todo:
        p = os.path.join(static, rel)
        with open(p + ".gz", "wb") as f:
            f.write(gzip.compress(files[rel], GZIP_LEVEL, mtime=0))
        # brotli 11 of the 2.3 MB fragment takes seconds: the CLIs run side by side.
        procs.append(subprocess.Popen(["brotli", "-f", "-q", str(BR_QUALITY), "-w", str(BR_WINDOW),
                                       "-o", p + ".br", p]))
        procs.append(subprocess.Popen(["zstd", "-q", "-f", f"-{ZSTD_LEVEL}", "-o", p + ".zst", p]))
    if any(pr.wait() for pr in procs):
        die("brotli or zstd failed on the fixture")
    for rel in todo:
        for suffix in SUFFIX.values():
            os.utime(os.path.join(static, rel) + suffix, (stamp, stamp))


def url_file(path):
    """The fixture file a URL path names."""
    if path == "/":
        return "www/index.html"
    if path.startswith(("/fragments/", "/assets/")):
        return path[1:]
    return "www" + path
