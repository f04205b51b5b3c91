#!/usr/bin/env python3
"""folio against nginx, lighttpd and h2o on an article shaped like the real one.

Generates a fixture with the real article's shape in a temporary folder (a
308 KB index.html, 15 fragments one of them 2.3 MB, a 323 KB PNG, CSS, JS, SVG
figures, a 404 page; gzip -9 .gz, brotli -q 11 .br and zstd -19 .zst sidecars
beside every compressible file in a second copy, for the peers that serve
precompressed files), starts

  folio     --production --quiet --gzip-level 9 (compresses once, keeps it;
            br 11 and zstd 19, big bodies first at a fast level)
  nginx     gzip_static on, brotli_static on (the .gz and .br sidecars;
            brotli from Debian's libnginx-mod-http-brotli-static; no zstd)
  lighttpd  mod_deflate gzip 9, br 11, zstd 19 with deflate.cache-dir
            (compresses once, to disk)
  h2o 2.2   file.send-compressed (the .br and .gz sidecars; no zstd)

on 127.0.0.1 with free ports, checks that all return the same decoded bytes
in every coding they offer, waits until folio has its best levels, measures
the bytes on the wire per class and coding (header block + body as read),
then loads them with wrk in interleaved rounds (every class: server A, B, C,
D, then the next round in a rotated order; a server is not timed on a coding
it does not offer) and reports medians per class:
server CPU per request (utime + stime of all the server's processes, from
/proc), requests/s, p50/p99 latency, peak RSS (VmHWM summed over the
processes), and folio/best-peer ratios from the same run. Prints a Markdown
report; --readme writes it into bench/README.md, --svg writes a plot.

    python3 bench/article.py                         # ~16 minutes
    python3 bench/article.py --rounds 3              # ~10 minutes
    python3 bench/article.py --rounds 1 --duration 2 # a quick look
    python3 bench/article.py --folio main=build/src/folio --folio after=/tmp/b/src/folio
    python3 bench/article.py --folio main=build/src/folio --folio "sidecars=build/src/folio --root {static}"
    python3 bench/article.py --profile perf --class page-gzip
    python3 bench/article.py --profile callgrind
    python3 bench/article.py --profile strace      # syscalls per request, every server

Python standard library only. Installs wrk, nginx-light, libnginx-mod-http-brotli-static,
lighttpd, lighttpd-mod-deflate, h2o, curl, brotli and zstd
with apt-get when missing (and linux-perf / valgrind for --profile).
"""
import argparse
import gzip
import importlib.util
import json
import os
import random
import re
import resource
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# bench/http.py's helpers (Server, curl, ...): loaded by path, since "http"
# is also the name of a standard-library package.
_spec = importlib.util.spec_from_file_location("folio_bench_http", os.path.join(HERE, "http.py"))
hb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hb)

GZIP_LEVEL = 9
GZIP_MIN = 512  # folio's GZIP_MIN_BYTES: smaller files are sent as they are
COMPRESSIBLE = {".html", ".css", ".js", ".svg", ".json"}
MIME = {".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8",
        ".js": "text/javascript; charset=utf-8", ".json": "application/json",
        ".svg": "image/svg+xml", ".png": "image/png", "": "application/octet-stream"}
# Codings measured one by one (each request sends it alone), and what
# Chromium sends, for the row where each server picks.
CODINGS = ("gzip", "br", "zstd")
BROWSER = "gzip, deflate, br, zstd"
BR_QUALITY = 11   # folio's production best, the .br sidecars', lighttpd's
BR_WINDOW = 24    # folio's lgwin (16 MiB)
ZSTD_LEVEL = 19   # folio's production best, the .zst sidecars', lighttpd's
SUFFIX = {"gzip": ".gz", "br": ".br", "zstd": ".zst"}
NGINX_BROTLI = "/usr/lib/nginx/modules/ngx_http_brotli_static_module.so"
BIG_FRAGMENT = "config-sweep"
PNG_PATH = "/assets/images/cluster-photo.png"
PROFILE_CLASSES = ("page-gzip", "big-fragment-gzip", "png", "304", "404", "page-load")
README_BEGIN = "<!-- article.py: begin -->"
README_END = "<!-- article.py: end -->"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def die(msg):
    log("bench/article.py: " + msg)
    sys.exit(1)


# ---------------------------------------------------------------- fixture

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


# ---------------------------------------------------------------- servers

def start_folio(name, binary, root, tmp, workers, extra=()):
    out = os.path.join(tmp, name + ".out")
    s = hb.Server(name, " ".join([binary, "--threads", str(workers), "--gzip-level", str(GZIP_LEVEL)]
                                 + list(extra)),
                  [binary, "--root", root, "--host", "127.0.0.1", "--port", "0", "--production",
                   "--quiet", "--threads", str(workers), "--gzip-level", str(GZIP_LEVEL),
                   "--grace", "1"] + list(extra), 0, tmp, out)
    deadline = time.time() + 15
    while time.time() < deadline:
        with open(out, errors="replace") as f:  # warnings may come first
            lines = [l for l in f if "http://127.0.0.1:" in l and l.endswith("\n")]
        if lines:
            s.port = int(lines[0].split("http://127.0.0.1:")[1].split("/")[0])
            s.wait_ready()
            s.offers = set(CODINGS)
            s.best = best_levels(extra)
            return s
        if s.proc.poll() is not None:
            break
        time.sleep(0.05)
    s.stop()  # it may be running without having said where
    with open(out, errors="replace") as f:
        die(f"{name} ({binary}) did not start:\n" + f.read())


def start_nginx(root, tmp, workers):
    d = os.path.join(tmp, "nginx")
    os.makedirs(os.path.join(d, "logs"))
    port = hb.free_port()
    # Debian 12's nginx has brotli only as a module package (.br sidecars, as
    # gzip_static serves the .gz ones); no zstd module exists there.
    brotli = os.path.exists(NGINX_BROTLI)
    conf = f"""
{"user root;" if os.geteuid() == 0 else ""}
{f"load_module {NGINX_BROTLI};" if brotli else ""}
worker_processes {workers};
daemon off;
master_process on;
pid {d}/nginx.pid;
error_log {d}/logs/error.log warn;
events {{ worker_connections 4096; use epoll; }}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    charset utf-8;
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    keepalive_timeout 30s;
    gzip off;
    gzip_static on;
    gzip_vary on;
    {"brotli_static on;" if brotli else ""}
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    server {{
        listen 127.0.0.1:{port};
        root {root}/www;
        index index.html;
        error_page 404 /404.html;
        location /fragments/ {{ alias {root}/fragments/; }}
        location /assets/ {{ alias {root}/assets/; }}
    }}
}}
"""
    path = os.path.join(d, "nginx.conf")
    with open(path, "w") as f:
        f.write(conf)
    s = hb.Server("nginx", f"nginx, worker_processes {workers}, gzip_static"
                  + (", brotli_static" if brotli else " (no brotli module)"),
                  [hb.tool("nginx"), "-p", d, "-c", path], port, d, os.path.join(d, "nginx.out"))
    s.wait_ready()
    s.offers = {"gzip", "br"} if brotli else {"gzip"}
    return s


def start_lighttpd(root, tmp):
    d = os.path.join(tmp, "lighttpd")
    os.makedirs(os.path.join(d, "deflate-cache"))
    os.makedirs(os.path.join(d, "errors"))
    shutil.copy(os.path.join(root, "www", "404.html"), os.path.join(d, "errors", "status-404.html"))
    port = hb.free_port()
    q = json.dumps  # a double-quoted string lighttpd accepts
    mimes = ",\n    ".join(f"{q(e)} => {q(t)}" for e, t in MIME.items())
    types = sorted({MIME[e].split(";")[0] for e in COMPRESSIBLE})
    conf = f"""
server.modules = ("mod_alias", "mod_deflate")
server.bind = "127.0.0.1"
server.port = {port}
server.document-root = {q(root + "/www")}
server.pid-file = {q(d + "/lighttpd.pid")}
server.errorlog = {q(d + "/error.log")}
server.errorfile-prefix = {q(d + "/errors/status-")}
server.network-backend = "sendfile"
server.max-keep-alive-requests = 1000000
server.max-keep-alive-idle = 30
server.max-connections = 4096
server.max-fds = 16384
index-file.names = ("index.html")
alias.url = ("/fragments/" => {q(root + "/fragments/")}, "/assets/" => {q(root + "/assets/")})
static-file.etags = "enable"
mimetype.assign = (
    {mimes}
)
deflate.mimetypes = ({", ".join(q(t) for t in types)})
deflate.allowed-encodings = ("br", "zstd", "gzip")
deflate.compression-level = {GZIP_LEVEL}
deflate.params = ("BROTLI_PARAM_QUALITY" => {BR_QUALITY}, "BROTLI_PARAM_LGWIN" => {BR_WINDOW},
                  "ZSTD_c_compressionLevel" => {ZSTD_LEVEL})
deflate.min-compress-size = {GZIP_MIN}
deflate.max-compress-size = 65536
deflate.cache-dir = {q(d + "/deflate-cache")}
"""
    path = os.path.join(d, "lighttpd.conf")
    with open(path, "w") as f:
        f.write(conf)
    s = hb.Server("lighttpd", f"lighttpd (one process), mod_deflate gzip -9, br {BR_QUALITY}, "
                  f"zstd {ZSTD_LEVEL} + deflate.cache-dir",
                  [hb.tool("lighttpd"), "-D", "-f", path], port, d, os.path.join(d, "lighttpd.out"))
    s.wait_ready()
    s.offers = set(CODINGS)
    return s


def start_h2o(root, tmp, workers):
    d = os.path.join(tmp, "h2o")
    os.makedirs(d)
    port = hb.free_port()
    conf = f"""
{"user: root" if os.geteuid() == 0 else ""}
pid-file: {d}/h2o.pid
error-log: {d}/error.log
num-threads: {workers}
listen:
  host: 127.0.0.1
  port: {port}
file.send-compressed: ON
hosts:
  default:
    paths:
      /:
        file.dir: {root}/www
      /fragments:
        file.dir: {root}/fragments
      /assets:
        file.dir: {root}/assets
    error-doc:
      status: 404
      url: /404.html
"""
    path = os.path.join(d, "h2o.conf")
    with open(path, "w") as f:
        f.write(conf)
    # h2o 2.2 sends a .br or .gz sidecar (file.send-compressed); it knows no zstd.
    s = hb.Server("h2o", f"h2o, num-threads {workers}, file.send-compressed (.br, .gz)",
                  [hb.tool("h2o"), "-c", path], port, d, os.path.join(d, "h2o.out"))
    s.wait_ready()
    s.offers = {"gzip", "br"}
    return s


# ---------------------------------------------------------------- classes

def accept(coding):
    """The Accept-Encoding a class sends: one coding alone, or a browser's."""
    return {"Accept-Encoding": BROWSER if coding in ("browser", "identity") else coding}


def classes(page):
    """The timed classes. Each names its coding: one of CODINGS (sent alone),
    "identity" (the PNG, asked for as a browser asks) or "browser" (Chromium's
    Accept-Encoding: each server picks). The gzip ones keep the ids and the
    method of the table before brotli and zstd."""
    frag = f"/fragments/{BIG_FRAGMENT}.html"
    mix = (f"page-load mix ({len(page)} requests: page, CSS, JS, {len(fragment_names())} "
           "fragments, SVGs, PNG)")
    out = [dict(id=f"page-{k}", base="page", label=f"page 308 KB, {k}", path="/", coding=k)
           for k in CODINGS]
    out += [dict(id=f"big-fragment-{k}", base="big-fragment", label=f"fragment 2.3 MB, {k}",
                 path=frag, coding=k) for k in CODINGS]
    out += [dict(id="png", base="png", label="PNG 323 KB", path=PNG_PATH, coding="identity"),
            dict(id="304", base="304", label="304 revalidation of the page, gzip", path="/",
                 coding="gzip", status=304, etag=True)]
    # The 404 page is under GZIP_MIN: every server sends it as it is.
    out += [dict(id="404", base="404", label="404 (the article's 404.html)",
                 path="/no-such-page.html", coding="identity", status=404, file="www/404.html")]
    out += [dict(id="page-load", base="page-load", label=mix + ", gzip", mix=page, coding="gzip"),
            dict(id="page-load-browser", base="page-load", label=mix + ", " + BROWSER,
                 mix=page, coding="browser")]
    for c in out:
        c["headers"] = accept(c["coding"])
        c.setdefault("status", 200)
    return out


def serves(s, c):
    """Whether server s is timed on class c: not on a coding it does not offer."""
    return c["coding"] not in CODINGS or c["coding"] in s.offers


def fetch(s, path, headers, timeout=120):
    """One GET as wrk sends it (HTTP/1.1, keep-alive, on a fresh connection):
    (status, {lower-case name: value}, header block bytes, body bytes as they
    came over the wire, body with any chunking undone). The timeout is long:
    a peer's first brotli 11 of the 2.3 MB fragment takes seconds."""
    req = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{s.port}\r\n" + "".join(
        f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    with socket.create_connection(("127.0.0.1", s.port), timeout=timeout) as sock:
        sock.sendall(req.encode())
        f = sock.makefile("rb")
        head = [f.readline()]
        while head[-1] not in (b"\r\n", b"\n", b""):
            head.append(f.readline())
        status = int(head[0].split()[1])
        h = {}
        for line in head[1:]:
            k, sep, v = line.decode("latin-1").partition(":")
            if sep:
                h[k.strip().lower()] = v.strip()
        raw = body = b""
        if status in (204, 304):
            pass
        elif "content-length" in h:
            raw = body = f.read(int(h["content-length"]))
        elif "chunked" in h.get("transfer-encoding", ""):
            while True:
                size_line = f.readline()
                n = int(size_line.split(b";")[0], 16)
                chunk = f.read(n + 2)
                raw += size_line + chunk
                body += chunk[:n]
                if n == 0:  # no trailers here: the last chunk's CRLF ends the body
                    break
        else:
            raw = body = f.read()
    return status, h, len(b"".join(head)), raw, body


def decode(coding, data):
    """data with its Content-Encoding undone (brotli and zstd by their CLIs:
    Python's standard library has neither)."""
    if coding in ("gzip", "x-gzip"):
        return zlib.decompress(data, 16 + zlib.MAX_WBITS)
    if coding in ("br", "zstd"):
        argv = ["brotli", "-d", "-c"] if coding == "br" else ["zstd", "-d", "-c", "-q"]
        p = subprocess.run(argv, input=data, capture_output=True)
        if p.returncode:
            raise ValueError(p.stderr.decode(errors="replace").strip())
        return p.stdout
    return data


def compressible(f, files):
    """Whether every server compresses fixture file f (folio's rule)."""
    return os.path.splitext(f)[1] in COMPRESSIBLE and len(files[f]) >= GZIP_MIN


def answer_file(path, status):
    """The fixture file whose bytes answer path with status."""
    return "www/404.html" if status == 404 else url_file(path)


def allowed(s, path, coding, status, files):
    """The Content-Encodings server s may answer path with: the coding asked
    for when s offers it (identity when not), one of its codings for a
    browser; identity for what is not compressible; an error page compressed
    or not."""
    if not compressible(answer_file(path, status), files):
        return {"identity"}
    want = set(s.offers) if coding == "browser" else {coding} & s.offers or {"identity"}
    return want | {"identity"} if status != 200 else want


def expect(s, path, coding, status, files, extra=None):
    """Fetches path from s as class coding asks; (problem or None, fetched:
    {wire, header, body, sent, etag})."""
    want_body = files[answer_file(path, status)]
    try:
        st, h, head, raw, body = fetch(s, path, dict(accept(coding), **(extra or {})))
    except (OSError, ValueError, IndexError) as e:
        return f"{s.name} {path} ({coding}): {e}", None
    got = dict(wire=head + len(raw), header=head, body=len(raw),
               sent=h.get("content-encoding", "identity"), etag=h.get("etag"))
    if st != status:
        return f"{s.name} {path} ({coding}): status {st}, expected {status}", got
    if status == 304:
        return None, got
    if got["sent"] not in allowed(s, path, coding, status, files):
        return (f"{s.name} {path} ({coding}): Content-Encoding {got['sent']}, expected "
                + " or ".join(sorted(allowed(s, path, coding, status, files)))), got
    try:
        body = decode(got["sent"], body)
    except (zlib.error, ValueError) as e:
        return f"{s.name} {path}: bad {got['sent']}: {e}", got
    if body != want_body:
        return (f"{s.name} {path} ({coding}): body of {len(body)} B differs from the file's "
                f"{len(want_body)} B"), got
    return None, got


def verify(servers, cls, files):
    """Every server it is timed on gives every class the expected status and
    decoded bytes; fills in each server's ETag for the 304 class. Returns the
    problems."""
    problems = []
    for c in cls:
        for s in [s for s in servers if serves(s, c)]:
            if c.get("etag"):
                p, got = expect(s, c["path"], c["coding"], 200, files)
                if p or not got["etag"]:
                    problems.append(p or f"{s.name}: no ETag on {c['path']}")
                    continue
                c.setdefault("inm", {})[s.name] = got["etag"]
                problems.append(expect(s, c["path"], c["coding"], 304, files,
                                       {"If-None-Match": got["etag"]})[0])
            else:
                problems += [expect(s, p, c["coding"], c["status"], files)[0]
                             for p in c.get("mix") or [c["path"]]]
    return [p for p in problems if p]


def best_levels(extra):
    """The ETag marks a folio's brotli and zstd bodies reach once its
    background work is done: its production best (br 11, zstd 19) capped by
    --brotli-quality and --zstd-level, or a sidecar's mark."""
    caps = {"--brotli-quality": BR_QUALITY, "--zstd-level": ZSTD_LEVEL}
    args = [a for x in extra for a in x.split("=", 1)]
    for i, a in enumerate(args[:-1]):
        if a in caps and args[i + 1].isdigit():
            caps[a] = min(caps[a], int(args[i + 1]))
    return {"br": (f"-br{caps['--brotli-quality']}", "-brs"),
            "zstd": (f"-zs{caps['--zstd-level']}", "-zss")}


def at_best(s, path, coding, files):
    """Whether folio s answers path in coding with its best level (its ETag says)."""
    etag = (expect(s, path, coding, 200, files)[1] or {}).get("etag") or ""
    return any(mark in etag for mark in s.best[coding])


def warm_best(servers, cls, files, deadline_s=300):
    """Waits until each folio answers every compressible path of the classes
    with its best brotli and zstd (the ETag names the level): in production
    a big body first gets a fast level, and br 11 / zstd 19 of it replace it
    when the background thread has made them. The peers compress on the
    first request (lighttpd, into its cache) or not at all (sidecars)."""
    paths = sorted({p for c in cls for p in c.get("mix") or [c["path"]] if c["status"] == 200})
    paths = [p for p in paths if compressible(url_file(p), files)]
    deadline = time.time() + deadline_s
    for s in [s for s in servers if is_folio(s.name)]:
        todo = [(p, k) for p in paths for k in ("br", "zstd")]
        t0 = time.time()
        while todo and time.time() < deadline:
            todo = [(p, k) for p, k in todo if not at_best(s, p, k, files)]
            if todo:
                time.sleep(0.5)
        if todo:
            log(f"{s.name}: not at its best level after {deadline_s} s: "
                + ", ".join(f"{p} {k}" for p, k in todo) + "; timing anyway")
        else:
            log(f"{s.name}: best brotli and zstd levels in place after {time.time() - t0:.1f} s")


def check(servers, cls, files, tmp=None):
    """Verifies every class on every server (warming the peers' caches and
    folio's first levels), waits for folio's best levels, then verifies again
    (the ETags of the 304 class are taken then). Stops the run on any
    problem. tmp: unused, kept for bench/profile_folio.py."""
    problems = verify(servers, cls, files)
    if not problems:
        warm_best(servers, cls, files)
        problems = verify(servers, cls, files)
    if problems:
        die("servers disagree, not timing anything:\n  " + "\n  ".join(problems))


def wire_targets(page):
    """What the wire table measures: (id, label, paths, status, codings)."""
    every = CODINGS + ("browser",)
    return [("page", "page 308 KB", ["/"], 200, every),
            ("big-fragment", "fragment 2.3 MB", [f"/fragments/{BIG_FRAGMENT}.html"], 200, every),
            ("404", "404 (the article's 404.html, 312 B)", ["/no-such-page.html"], 404, ("browser",)),
            ("page-load", f"whole page load ({len(page)} requests)", page, 200, every),
            ("png", "PNG 323 KB", [PNG_PATH], 200, ("browser",))]


def measure_wire(servers, page, files):
    """Bytes on the wire per response (header block + body as received),
    per target, coding and server, after the warm-up: {(target, coding,
    server): {wire, header, body, sent}}, a page load summed over its
    requests; sent is the Content-Encoding of its compressible responses.
    Verifies each response as check() does."""
    out, problems = {}, []
    warm_best(servers, [dict(mix=page, status=200)], files)
    for tid, _, paths, status, codings in wire_targets(page):
        for k in codings:
            for s in servers:
                tot = dict(wire=0, header=0, body=0, sent=set())
                for p in paths:
                    problem, got = expect(s, p, k, status, files)
                    if problem:
                        problems.append(problem)
                        continue
                    for m in ("wire", "header", "body"):
                        tot[m] += got[m]
                    if compressible(answer_file(p, status), files) or len(paths) == 1:
                        tot["sent"].add(got["sent"])
                tot["sent"] = "+".join(sorted(tot["sent"]))
                out[(tid, k, s.name)] = tot
    if problems:
        die("servers disagree on the wire pass:\n  " + "\n  ".join(problems))
    return out


# ---------------------------------------------------------------- load

WRK_DONE = r"""
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%d,"bytes":%d,"duration_us":%d,"connect":%d,"read":%d,' ..
    '"write":%d,"status":%d,"timeout":%d,"p50_us":%d,"p99_us":%d}\n',
    summary.requests, summary.bytes, summary.duration, e.connect, e.read, e.write,
    e.status, e.timeout, latency:percentile(50), latency:percentile(99)))
end
"""


def mix_lua(paths, headers):
    hs = ", ".join(f'["{k}"] = "{v}"' for k, v in headers.items())
    ps = ", ".join(f'"{p}"' for p in paths)
    # Each connection walks the page's requests in order, as one page view.
    return (f"local paths = {{{ps}}}\nlocal headers = {{{hs}}}\nlocal i = 0\n"
            "request = function()\n  i = i % #paths + 1\n"
            "  return wrk.format('GET', paths[i], headers)\nend\n" + WRK_DONE)


def wrk(url, headers, seconds, args, lua):
    argv = ["wrk", f"-t{args.wrk_threads}", f"-c{args.connections}", f"-d{seconds}s",
            "--latency", "--timeout", "5s", "-s", lua]
    for k, v in headers.items():
        argv += ["-H", f"{k}: {v}"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(argv + [url], capture_output=True, text=True, timeout=seconds + 60)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    for line in p.stdout.splitlines():
        if line.startswith("WRKJSON "):
            r = json.loads(line[8:])
            r["wrk_cpu_s"] = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
            return r
    die("wrk failed:\n" + p.stdout + p.stderr)


def one_run(s, c, args, luas):
    headers = dict(c["headers"])
    if c.get("etag"):
        headers["If-None-Match"] = c["inm"][s.name]
    lua = luas[c["id"]]
    url = s.base() + (c.get("path") or "/")
    if c.get("mix"):
        headers = {}  # the script sets them per request
    if args.warmup:
        wrk(url, headers, args.warmup, args, lua)
    cpu0, busy0 = s.cpu_seconds(), hb.machine_busy()
    r = wrk(url, headers, args.duration, args, lua)
    cpu = s.cpu_seconds() - cpu0
    secs = r["duration_us"] / 1e6
    errors = r["connect"] + r["read"] + r["write"] + r["timeout"] + (0 if c["id"] == "404" else r["status"])
    return dict(cpu_us=cpu * 1e6 / max(r["requests"], 1), rps=r["requests"] / secs,
                p50_ms=r["p50_us"] / 1000, p99_ms=r["p99_us"] / 1000, mbps=r["bytes"] / secs / 1e6,
                errors=errors, requests=r["requests"], server_cpus=cpu / secs,
                wrk_cpus=r["wrk_cpu_s"] / secs,
                # What the rest of the machine took meanwhile: the noise.
                other_cpus=max(0.0, (hb.machine_busy() - busy0 - cpu - r["wrk_cpu_s"]) / secs))


def run_rounds(servers, cls, args, luas):
    """{(class, server): [run, ...]}, and the (class, server) pairs where wrk
    completed no response."""
    runs, unmeasured = {}, set()
    n = len(servers)
    for rnd in range(args.rounds):
        order = servers[rnd % n:] + servers[:rnd % n]
        for c in cls:
            for s in [s for s in order if serves(s, c)]:
                r = one_run(s, c, args, luas)
                if not r["requests"]:
                    # wrk's parser (http_parser 2) reads a body of Content-Length bytes
                    # after a 304 that has the field (RFC 9112 6.3 says it has none), so
                    # it completes no request there: not a measurement, left out.
                    log(f"  round {rnd + 1}/{args.rounds} {c['id']:<18} {s.name:<10} wrk completed "
                        "no response: not measured")
                    unmeasured.add((c["id"], s.name))
                    continue
                runs.setdefault((c["id"], s.name), []).append(r)
                log(f"  round {rnd + 1}/{args.rounds} {c['id']:<18} {s.name:<10} "
                    f"{r['cpu_us']:7.1f} µs/req {r['rps']:9.0f} req/s  p50 {r['p50_ms']:.2f} "
                    f"p99 {r['p99_ms']:.2f} ms  CPUs: server {r['server_cpus']:.2f} wrk {r['wrk_cpus']:.2f} "
                    f"others {r['other_cpus']:.2f}"
                    + (f"  ERRORS {r['errors']}" if r["errors"] else ""))
    return runs, unmeasured


def medians(runs):
    return {k: {m: statistics.median(r[m] for r in v) for m in v[0]} | {"n": len(v)}
            for k, v in runs.items()}


# ---------------------------------------------------------------- report

def is_folio(name):
    return name.startswith("folio")


def best_peer(med, cid, peers, metric, low):
    vals = [(med[(cid, p)][metric], p) for p in peers if (cid, p) in med]
    return (min if low else max)(vals) if vals else (None, None)


def ratios(med, cls, names):
    """{(class, folio name): {cpu, rps, p99: (ratio, best peer name)}}"""
    peers = [n for n in names if not is_folio(n)]
    out = {}
    for c in cls:
        for f in names:
            if not is_folio(f) or (c["id"], f) not in med:
                continue
            if not any((c["id"], p) in med for p in peers):
                continue  # no peer timed on this class (--servers, a coding it lacks)
            m = med[(c["id"], f)]
            d = {}
            for metric, low in (("cpu_us", True), ("rps", False), ("p99_ms", True)):
                v, p = best_peer(med, c["id"], peers, metric, low)
                d[metric] = (m[metric] / v if v else None, p)
            out[(c["id"], f)] = d
    return out


def report(servers, cls, med, rat, mem, args, meta):
    names = [s.name for s in servers]
    folios = [n for n in names if is_folio(n)]
    out = []
    w = out.append
    w(f"{meta['when']}; {meta['machine']}. wrk -t{args.wrk_threads} -c{args.connections} "
      f"--latency, {args.rounds} interleaved rounds of {args.duration} s per class and server "
      f"(after {args.warmup} s of warm-up each); medians over the rounds. Load average "
      f"{meta['load_start']} at the start, {meta['load_end']} at the end; the machine is shared "
      f"with other sessions, so absolute numbers move from run to run and only the ratios of one "
      f"run are compared. During the measured runs the server took a median of "
      f"{meta['server_cpus']:.2f} CPUs, wrk {meta['wrk_cpus']:.2f}, and other processes "
      f"{meta['other_cpus']:.2f} (up to {meta['other_max']:.2f}: that is the noise).\n")
    w("Server CPU per request (µs, utime + stime of all the server's processes) and requests/s; "
      "ratios folio / best peer of the same run (CPU: ≤ 1 is the target; req/s: ≥ 1):\n")
    hdr = "| class | " + " | ".join(names) + " | " + " | ".join(
        f"{f} CPU / best | {f} req/s / best" for f in folios) + " |"
    w(hdr)
    w("|---|" + "---:|" * (len(names) + 2 * len(folios)))
    for c in cls:
        row = []
        for n in names:
            m = med.get((c["id"], n))
            row.append("—" if not m else f"{m['cpu_us']:.1f} µs, {m['rps']:,.0f}/s"
                       + (f" ({m['errors']:.0f} err)" if m["errors"] else ""))
        for f in folios:
            r = rat.get((c["id"], f))
            row.append(f"**{r['cpu_us'][0]:.2f}** ({r['cpu_us'][1]})" if r else "—")
            row.append(f"**{r['rps'][0]:.2f}** ({r['rps'][1]})" if r else "—")
        w(f"| {c['label']} | " + " | ".join(row) + " |")
    w("")
    unmeasured = [(c, n) for c, n in meta["unmeasured"] if (c, n) not in med]
    if unmeasured:
        w("Not measured (wrk completed no response in any round; a 304 that carries its 200's "
          "`Content-Length`, as libmicrohttpd 0.9.75 writes it, leaves wrk's parser waiting for a "
          "body): " + ", ".join(f"{c} on {n}" for c, n in unmeasured) + ".\n")
    w("Latency p50 / p99 (ms, wrk --latency), ratio folio p99 / best peer p99 (≤ 1 is the target):\n")
    w("| class | " + " | ".join(names) + " | " + " | ".join(f"{f} p99 / best" for f in folios) + " |")
    w("|---|" + "---:|" * (len(names) + len(folios)))
    for c in cls:
        row = []
        for n in names:
            m = med.get((c["id"], n))
            row.append("—" if not m else f"{m['p50_ms']:.2f} / {m['p99_ms']:.2f}")
        for f in folios:
            r = rat.get((c["id"], f))
            row.append(f"**{r['p99_ms'][0]:.2f}** ({r['p99_ms'][1]})" if r else "—")
        w(f"| {c['label']} | " + " | ".join(row) + " |")
    w("")
    nginx = mem.get("nginx", {}).get("hwm")
    w("Peak RSS after all rounds (VmHWM summed over the server's processes: nginx's master and "
      "workers share pages, so it is counted more than once; folio and lighttpd peak while they "
      "make zstd 19 and brotli 11 of the 2.3 MB fragment) and RSS at the end:\n")
    w("| server | configuration | processes | peak RSS | / nginx | RSS at the end |")
    w("|---|---|---:|---:|---:|---:|")
    for s in servers:
        m = mem[s.name]
        w(f"| {s.name} | {s.label} | {m['procs']} | {m['hwm'] / 1024:.1f} MiB | "
          + (f"{m['hwm'] / nginx:.2f}" if nginx else "—") + f" | {m['rss'] / 1024:.1f} MiB |")
    w("")
    w("Versions: " + "; ".join(meta["versions"]) + ".")
    return "\n".join(out)


def timed_id(target, coding):
    """The timed class that measures wire target target in coding, if any."""
    ids = {("page-load", "gzip"): "page-load", ("page-load", "browser"): "page-load-browser",
           ("png", "browser"): "png", ("404", "browser"): "404"}
    return ids.get((target, coding), f"{target}-{coding}")


def wire_cell(w, coding, m):
    """One server's bytes for one coding, the coding it sent when that is not
    the one asked for (or the browser's pick), and its CPU per request."""
    cell = f"{w['wire']:,}"
    if coding == "browser" or w["sent"] != coding:
        cell = f"{w['sent']} {cell}"
    return cell + (f" · {m['cpu_us']:.1f} µs" if m else "")


def wire_report(servers, page, wire, med, cls):
    """The Markdown table of bytes on the wire (server × class × coding),
    with folio / fewest peer bytes, beside CPU per request."""
    names = [s.name for s in servers]
    folios = [n for n in names if is_folio(n)]
    peers = [n for n in names if not is_folio(n)]
    timed = {c["id"] for c in cls}
    out = ["Bytes on the wire per response: status line and header block plus body, as the client "
           "reads them, after the warm-up (a whole page load: its responses summed), each coding "
           "asked for alone (`Accept-Encoding: gzip`, `br`, `zstd`), and `browser`: Chromium's "
           f"`{BROWSER}`, with the coding each server chose. A server that does not offer a coding "
           "sends identity (named in the cell). Beside it, where that class is timed above, the "
           "server CPU per request. folio / fewest: folio's bytes over the fewest any peer sent "
           "in that coding (browser: in whatever it chose); < 1 is fewer bytes than every peer.\n",
           "| class | coding | " + " | ".join(names) + " | "
           + " | ".join(f"{f} / fewest" for f in folios) + " |",
           "|---|---|" + "---:|" * (len(names) + len(folios))]
    for tid, label, _, _, codings in wire_targets(page):
        for k in codings:
            cid = timed_id(tid, k)
            cells = [wire_cell(wire[(tid, k, n)], k,
                               med.get((cid, n)) if cid in timed else None) for n in names]
            fair = [(wire[(tid, k, p)]["wire"], p) for p in peers
                    if k in ("browser",) or wire[(tid, k, p)]["sent"] == k]
            for f in folios:
                best = min(fair) if fair else None
                cells.append(f"**{wire[(tid, k, f)]['wire'] / best[0]:.3f}** ({best[1]})"
                             if best else "—")
            out.append(f"| {label if k == codings[0] else ''} | {k} | " + " | ".join(cells) + " |")
    out += ["", "Header block of the page's response (bytes: status line, fields, blank line), "
            "per coding:\n", "| server | " + " | ".join(CODINGS + ("browser",)) + " |",
            "|---|" + "---:|" * (len(CODINGS) + 1)]
    for n in names:
        out.append(f"| {n} | " + " | ".join(str(wire[("page", k, n)]["header"])
                                            for k in CODINGS + ("browser",)) + " |")
    return "\n".join(out)


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def svg_plot(servers, cls, med, meta):
    """Two panels, one bar per server and class: CPU per request and req/s,
    each relative to the best peer of the class (1.0 = the best of nginx,
    lighttpd, h2o), with the absolute value written beside each bar."""
    names = [s.name for s in servers]
    peers = [n for n in names if not is_folio(n)]
    colours = {"nginx": "#2a9d8f", "lighttpd": "#e9c46a", "h2o": "#8d99ae"}
    folio_colours = ["#d62828", "#f77f00", "#7b2cbf", "#1d3557"]
    col = {}
    for n in names:
        col[n] = colours.get(n) or folio_colours[len([m for m in col if is_folio(m)]) % 4]
    bar_h, gap = 11, 14
    group_h = bar_h * len(names) + gap
    left, panel_w, label_w = 130, 330, 100
    top = 56
    height = top + group_h * len(cls) + 50
    width = left + 2 * (panel_w + label_w) + 30
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
         f'width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
         f'<rect width="{width}" height="{height}" fill="#fff"/>',
         f'<text x="10" y="18" font-size="14" font-weight="bold">folio against nginx, lighttpd, h2o '
         f'on a real-article-shaped fixture</text>',
         f'<text x="10" y="34" fill="#555">{esc(meta["short"])}</text>']
    panels = [("cpu_us", "server CPU per request, ÷ best peer (lower is better)", "{:.1f} µs", True),
              ("rps", "requests/s, ÷ best peer (higher is better)", "{:,.0f}/s", False)]
    for pi, (metric, title, fmt, low) in enumerate(panels):
        x0 = left + pi * (panel_w + label_w)
        vmax = 2.0
        sx = panel_w / vmax
        o.append(f'<text x="{x0}" y="{top - 6}" font-weight="bold">{esc(title)}</text>')
        for tick in (0, 0.5, 1.0, 1.5, 2.0):
            x = x0 + tick * sx
            dash = ' stroke-dasharray="4 3"' if tick == 1.0 else ""
            o.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{height - 40}" '
                     f'stroke="{"#333" if tick == 1.0 else "#ddd"}"{dash}/>')
            o.append(f'<text x="{x:.1f}" y="{height - 28}" text-anchor="middle" fill="#555">{tick:g}×</text>')
        for ci, c in enumerate(cls):
            y0 = top + ci * group_h + 4
            vals = [med[(c["id"], p)][metric] for p in peers if (c["id"], p) in med]
            if not vals:
                continue
            best = min(vals) if low else max(vals)
            if pi == 0:
                o.append(f'<text x="{left - 8}" y="{y0 + group_h / 2 - 4:.1f}" text-anchor="end">'
                         f'{esc(c["id"])}</text>')
            for ni, n in enumerate(names):
                m = med.get((c["id"], n))
                if not m:
                    continue
                rel = m[metric] / best if best else 0
                y = y0 + ni * bar_h
                wbar = min(rel, vmax) * sx
                o.append(f'<rect x="{x0}" y="{y}" width="{wbar:.1f}" height="{bar_h - 2}" '
                         f'fill="{col[n]}"><title>{esc(n)}: {fmt.format(m[metric])} '
                         f'({rel:.2f}×)</title></rect>')
                o.append(f'<text x="{x0 + wbar + 3:.1f}" y="{y + bar_h - 3}" font-size="9" fill="#333">'
                         f'{rel:.2f} · {fmt.format(m[metric])}</text>')
    lx = 10
    for n in names:
        o.append(f'<rect x="{lx}" y="{height - 16}" width="10" height="10" fill="{col[n]}"/>'
                 f'<text x="{lx + 14}" y="{height - 7}">{esc(n)}</text>')
        lx += 24 + 7 * len(n)
    o.append("</svg>")
    return "\n".join(o) + "\n"


def write_readme(text, begin=README_BEGIN, end=README_END):
    """Puts text between the begin and end markers of bench/README.md (at
    its end when the markers are not there yet)."""
    path = os.path.join(HERE, "README.md")
    with open(path) as f:
        doc = f.read()
    block = f"{begin}\n{text}\n{end}"
    if begin in doc and end in doc:
        doc = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block, doc, flags=re.S)
    else:
        doc = doc.rstrip("\n") + "\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(doc)
    log("wrote the report into " + path)


# ---------------------------------------------------------------- main

def present(cmd):
    """Whether a command (or a file, given by its absolute path) is there."""
    return os.path.exists(cmd) if cmd.startswith("/") else bool(
        shutil.which(cmd) or os.path.exists("/usr/sbin/" + cmd))


def ensure(packages):
    """packages: {command or absolute path: Debian package}; installs the
    missing ones."""
    missing = sorted({pkg for cmd, pkg in packages.items() if not present(cmd)})
    if not missing:
        return
    log("installing " + " ".join(missing))
    prefix = [] if os.geteuid() == 0 else (["sudo"] if shutil.which("sudo") else None)
    if prefix is None:
        die("missing " + " ".join(missing) + "; apt-get install -y " + " ".join(missing))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(prefix + ["apt-get", "install", "-y", "-q"] + missing, env=env)
    if not all(present(c) for c in packages):
        subprocess.run(prefix + ["apt-get", "update", "-q"], check=True, env=env)
        subprocess.run(prefix + ["apt-get", "install", "-y", "-q"] + missing, check=True, env=env)


def parse_folios(specs):
    out = []
    for i, spec in enumerate(specs or [os.path.join(REPO, "build", "src", "folio")]):
        head, *extra = spec.split()
        name, _, path = head.rpartition("=")
        name = name or ("folio" if i == 0 else f"folio{i + 1}")
        if not is_folio(name):
            name = "folio-" + name
        path = os.path.abspath(path)
        if not os.access(path, os.X_OK):
            die(f"no folio binary at {path} (build it: meson setup build && ninja -C build)")
        out.append((name, path, extra))
    return out


def machine_meta(args, load_start, folios):
    with open("/proc/cpuinfo") as f:
        model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    cpus = os.cpu_count()
    ver = [f"{n}: {hb.version([p, '--version'])} ({' '.join([p] + x)})" for n, p, x in folios]
    ver += ["libmicrohttpd " + subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "libmicrohttpd12"],
                                              capture_output=True, text=True).stdout,
            hb.version([hb.tool("nginx"), "-v"]), hb.version([hb.tool("lighttpd"), "-v"]),
            hb.version([hb.tool("h2o"), "--version"]), hb.version(["wrk", "-v"]).split(" [")[0]]
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return dict(machine=f"{cpus} vCPU {model}, {mem:.0f} GiB, Linux {os.uname().release}; "
                        "servers and wrk share the CPUs",
                short=f"{when}, {cpus} vCPU shared; wrk -t{args.wrk_threads} -c{args.connections}; "
                      f"medians of {args.rounds} interleaved rounds",
                when=when, load_start=" ".join(f"{x:.2f}" for x in load_start), versions=ver)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--folio", action="append", metavar="'[NAME=]PATH [ARGS]'",
                    help="a folio binary to measure, with more arguments if given; repeat to "
                         "compare builds in one run (build/src/folio)")
    ap.add_argument("--folio-args", default="", help="more arguments for every folio, e.g. "
                    "'--header-limit 8K'")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (5)")
    ap.add_argument("--duration", type=int, default=3, help="seconds per measured run (3)")
    ap.add_argument("--warmup", type=int, default=1, help="seconds of warm-up before each run (1)")
    ap.add_argument("--connections", type=int, default=32, help="wrk -c (32)")
    ap.add_argument("--wrk-threads", type=int, default=1, help="wrk -t (1)")
    ap.add_argument("--workers", type=int, default=0,
                    help="folio --threads, nginx worker_processes, h2o num-threads "
                         "(the CPUs wrk's threads leave, at least 1)")
    ap.add_argument("--class", dest="classes", default="",
                    help="comma-separated subset: page-{gzip,br,zstd}, big-fragment-{gzip,br,zstd}, "
                         "png, 304, 404, page-load, page-load-browser (every one; "
                         "--profile: the gzip ones, png, 304, 404, page-load)")
    ap.add_argument("--servers", default="folio,nginx,lighttpd,h2o",
                    help="subset of the peers (folio = every --folio)")
    ap.add_argument("--readme", action="store_true", help="write the report into bench/README.md")
    ap.add_argument("--svg", default=None, help="write the plot here (e.g. bench/article.svg)")
    ap.add_argument("--json", default=None, help="write every run's numbers here")
    ap.add_argument("--profile", choices=["perf", "callgrind", "strace"],
                    help="profile the (first) folio instead of comparing servers (strace: "
                         "syscalls per request of every server)")
    ap.add_argument("--requests", type=int, default=300,
                    help="callgrind, strace: requests per class (300)")
    ap.add_argument("--top", type=int, default=15, help="profile: entries shown (15)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = ap.parse_args()

    ensure({"wrk": "wrk", "nginx": "nginx-light", "lighttpd": "lighttpd", "h2o": "h2o",
            "curl": "curl", "brotli": "brotli", "zstd": "zstd",
            NGINX_BROTLI: "libnginx-mod-http-brotli-static",
            "/usr/lib/lighttpd/mod_deflate.so": "lighttpd-mod-deflate"})
    folios = parse_folios(args.folio)
    # wrk and the server on the same CPUs: more workers than the CPUs wrk leaves
    # make one wait a scheduler slice (~4 ms), which is then every threaded
    # server's p99 (bench/README.md, Method).
    workers = args.workers or max(1, (os.cpu_count() or 1) - args.wrk_threads)
    tmp = tempfile.mkdtemp(prefix="folio-article-bench-")
    started = []

    def on_signal(sig, frame):
        raise SystemExit(128 + sig)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    try:
        files, page = make_fixture(tmp)
        cls = classes(page)
        if args.classes:
            want = args.classes.split(",")
            unknown = set(want) - {c["id"] for c in cls}
            if unknown:
                die("unknown class " + ", ".join(sorted(unknown)))
            cls = [c for c in cls if c["id"] in want]
        elif args.profile:  # the profiles' classes as they were before brotli and zstd
            cls = [c for c in cls if c["id"] in PROFILE_CLASSES]
        luas = {}
        for c in cls:
            luas[c["id"]] = os.path.join(tmp, c["id"] + ".lua")
            with open(luas[c["id"]], "w") as f:
                f.write(mix_lua(c["mix"], c["headers"]) if c.get("mix") else WRK_DONE)
        if args.profile:
            import profile_folio  # noqa: E402 (bench/profile_folio.py)
            return profile_folio.run(args, folios, tmp, files, cls, luas)
        plain, static = os.path.join(tmp, "plain"), os.path.join(tmp, "static")
        wanted = args.servers.split(",")
        load_start = hb.loadavg()
        if "folio" in wanted:
            for name, path, extra in folios:
                # {static}: the tree with .gz sidecars, e.g. --folio "sc=PATH --root {static}"
                extra = [x.replace("{static}", static).replace("{plain}", plain) for x in
                         args.folio_args.split() + extra]
                started.append(start_folio(name, path, plain, tmp, workers, extra))
        if "nginx" in wanted:
            started.append(start_nginx(static, tmp, workers))
        if "lighttpd" in wanted:
            started.append(start_lighttpd(plain, tmp))
        if "h2o" in wanted:
            started.append(start_h2o(static, tmp, workers))
        log(f"fixture and servers in {tmp}: " + ", ".join(f"{s.name} :{s.port}" for s in started))
        check(started, cls, files, tmp)
        wire = measure_wire(started, page, files)
        log("all servers agree on every class; loading")
        runs, unmeasured = run_rounds(started, cls, args, luas)
        med = medians(runs)
        mem = {s.name: dict(zip(("hwm", "rss"), s.memory()), procs=len(s.pids())) for s in started}
        meta = machine_meta(args, load_start, folios)
        meta["load_end"] = " ".join(f"{x:.2f}" for x in hb.loadavg())
        meta["unmeasured"] = sorted(unmeasured)
        every = [r for v in runs.values() for r in v]
        for k in ("server_cpus", "wrk_cpus", "other_cpus"):
            meta[k] = statistics.median(r[k] for r in every)
        meta["other_max"] = max(r["other_cpus"] for r in every)
        rat = ratios(med, cls, [s.name for s in started])
        text = report(started, cls, med, rat, mem, args, meta) + "\n\n" + wire_report(
            started, page, wire, med, cls)
        print(text)
        if args.readme:
            write_readme(text)
        if args.svg:
            with open(args.svg, "w") as f:
                f.write(svg_plot(started, cls, med, meta))
            log("wrote " + args.svg)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(dict(meta=meta, memory=mem, wire={" ".join(k): v for k, v in wire.items()},
                               runs={f"{k[0]} {k[1]}": v for k, v in runs.items()}), f, indent=1)
    finally:
        for s in started:
            s.stop()
        if args.keep:
            log("kept " + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    main()
