#!/usr/bin/env python3
"""Many clients on one file against many clients on many files, and a 404 flood.

What the article's own run (article.py) cannot show: whether folio's threads get
in each other's way. Generates N incompressible files of one size (16-256 KiB,
sent by sendfile from a held descriptor) and starts each folio build given with
--threads 2 and with --threads 8; then, in interleaved rounds, wrk with many
connections loads

  one       every connection asks for the same file (one shared response)
  many      the requests walk all N files (a response each)
  404       missing addresses under a flood (the miss path, routes_missed)

and reports requests/s and server CPU per request (utime + stime from /proc)
per class, the ratio one / many (1.0: one file scales like different files),
and futex calls per request in the server (perf stat on the
syscalls:sys_enter_futex tracepoint): a thread that waits for a lock another
holds makes one, so this counts contention itself, which on a shared 2-core
machine shows where requests/s is mostly noise. Run it with two builds to see before and after:

    python3 bench/contention.py --folio main=/tmp/main/src/folio --folio after=build-rel/src/folio
    python3 bench/contention.py --size 256K --connections 128 --threads 2,8

Python standard library only; needs wrk (apt-get install wrk).
"""
import argparse
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# article.py's helpers (start_folio, wrk, the WRKJSON script ending, ...).
from article_fixture import log  # noqa: E402
from article_load import mix_lua, wrk  # noqa: E402
from article_servers import ensure, hb, parse_folios, start_folio  # noqa: E402


def size_arg(text):
    mult = {"K": 1024, "M": 1024 * 1024}.get(text[-1:].upper(), 1)
    return int(text[:-1] if mult > 1 else text) * mult


def make_tree(tmp, count, size):
    """www/ with count files of size random bytes (.png: never compressed)."""
    www = os.path.join(tmp, "www")
    for folder in ("www", "fragments", "assets"):  # folio's default routes
        os.makedirs(os.path.join(tmp, folder))
    rng = random.Random(17)
    for i in range(count):
        with open(os.path.join(www, f"f{i:03d}.png"), "wb") as f:
            f.write(rng.randbytes(size))
    with open(os.path.join(www, "index.html"), "w") as f:
        f.write("<!doctype html><title>contention</title>\n")
    return tmp


def lua_for(paths):
    """Each request the next path of the list (per wrk thread): with many
    connections, different files are in flight at once."""
    return mix_lua(paths, {})


def run(server, lua, args):
    a = argparse.Namespace(wrk_threads=args.wrk_threads, connections=args.connections)
    if args.warmup:
        wrk(server.base() + "/", {}, args.warmup, a, lua)
    perf = subprocess.Popen(["perf", "stat", "-x,", "-e", "syscalls:sys_enter_futex", "-p",
                             str(server.proc.pid)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True) if args.futex else None
    cpu0 = server.cpu_seconds()
    busy0 = hb.machine_busy()
    r = wrk(server.base() + "/", {}, args.duration, a, lua)
    cpu = server.cpu_seconds() - cpu0
    secs = r["duration_us"] / 1e6
    futex = 0
    if perf:
        perf.send_signal(signal.SIGINT)
        out = perf.communicate(timeout=10)[1]
        futex = next((int(l.split(",")[0]) for l in out.splitlines()
                      if "sys_enter_futex" in l and l.split(",")[0].isdigit()), 0)
    return dict(rps=r["requests"] / secs, cpu_us=cpu * 1e6 / max(r["requests"], 1),
                futex=futex / max(r["requests"], 1),
                p99_ms=r["p99_us"] / 1000, errors=r["connect"] + r["read"] + r["write"] + r["timeout"],
                other=max(0.0, (hb.machine_busy() - busy0 - cpu - r["wrk_cpu_s"]) / secs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--folio", action="append", metavar="'[NAME=]PATH [ARGS]'",
                    help="a folio binary, optionally with arguments (repeat to compare builds)")
    ap.add_argument("--threads", default="2,8", help="folio --threads values (2,8)")
    ap.add_argument("--size", type=size_arg, default=64 * 1024, help="file size (64K)")
    ap.add_argument("--files", type=int, default=64, help="files for 'many' (64)")
    ap.add_argument("--connections", type=int, default=64, help="wrk -c (64)")
    ap.add_argument("--wrk-threads", type=int, default=2, help="wrk -t (2)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (3)")
    ap.add_argument("--duration", type=int, default=3, help="seconds per measured run (3)")
    ap.add_argument("--warmup", type=int, default=1, help="seconds of warm-up (1)")
    ap.add_argument("--no-futex", dest="futex", action="store_false",
                    help="do not count futex calls (perf stat; it costs a little)")
    ap.add_argument("--class", dest="classes", default="one,many,404", help="classes (one,many,404)")
    args = ap.parse_args()
    ensure({"wrk": "wrk"} | ({"perf": "linux-perf"} if args.futex else {}))
    tmp = tempfile.mkdtemp(prefix="folio-contention-")
    servers = []
    try:
        root = make_tree(tmp, args.files, args.size)
        paths = {"one": ["/f000.png"], "many": [f"/f{i:03d}.png" for i in range(args.files)],
                 "404": [f"/missing-{i}.png" for i in range(args.files)]}
        classes = [c for c in args.classes.split(",") if c in paths]
        luas = {}
        for c in classes:
            luas[c] = os.path.join(tmp, c + ".lua")
            with open(luas[c], "w") as f:
                f.write(lua_for(paths[c]))
        for name, path, extra in parse_folios(args.folio):
            for t in (int(x) for x in args.threads.split(",")):
                servers.append(start_folio(f"{name}-t{t}", path, root, tmp, t, extra))
        load = os.getloadavg()
        runs = {}
        for rnd in range(args.rounds):
            order = servers[rnd % len(servers):] + servers[:rnd % len(servers)]
            for c in classes:
                for s in order:
                    r = run(s, luas[c], args)
                    runs.setdefault((c, s.name), []).append(r)
                    log(f"  round {rnd + 1} {c:<5} {s.name:<16} {r['rps']:9.0f} req/s "
                           f"{r['cpu_us']:7.1f} µs/req {r['futex']:.3f} futex/req p99 {r['p99_ms']:.2f} ms others {r['other']:.2f} CPUs"
                           + (f" ERRORS {r['errors']}" if r["errors"] else ""))
        med = {k: {m: statistics.median(x[m] for x in v) for m in v[0]} for k, v in runs.items()}
        print(f"\n{os.cpu_count()} vCPU, load average {' '.join(f'{x:.2f}' for x in load)} at the start, "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end; wrk -t{args.wrk_threads} "
              f"-c{args.connections}; {args.files} files of {args.size // 1024} KiB; medians of "
              f"{args.rounds} interleaved rounds of {args.duration} s.\n")
        print("| server | " + " | ".join(f"{c}: req/s, µs/req, futex/req" for c in classes)
              + (" | one / many req/s |" if "one" in classes and "many" in classes else " |"))
        print("|---|" + "---:|" * (len(classes) + ("one" in classes and "many" in classes)))
        for s in servers:
            cells = [f"{med[(c, s.name)]['rps']:,.0f}, {med[(c, s.name)]['cpu_us']:.1f}, "
                     f"{med[(c, s.name)]['futex']:.3f}" for c in classes]
            if "one" in classes and "many" in classes:
                cells.append(f"**{med[('one', s.name)]['rps'] / med[('many', s.name)]['rps']:.2f}**")
            print(f"| {s.name} | " + " | ".join(cells) + " |")
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    main()
