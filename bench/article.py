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

This file wires the run; its parts: article_fixture.py (the fixture),
article_servers.py (starting each server), article_verify.py (the classes,
and every answer checked), article_load.py (wrk), article_report.py (tables,
plot) and profile_folio.py (--profile).
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import tempfile
import time

from article_fixture import die, log, make_fixture
from article_load import WRK_DONE, medians, mix_lua, run_rounds
from article_report import ratios, report, svg_plot, wire_report, write_readme
from article_servers import (NGINX_BROTLI, ensure, hb, parse_folios, start_folio, start_h2o,
                             start_lighttpd, start_nginx)
from article_verify import check, classes, measure_wire
import profile_folio

PROFILE_CLASSES = ("page-gzip", "big-fragment-gzip", "png", "304", "404", "page-load")


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
    main()
