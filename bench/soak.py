#!/usr/bin/env python3
"""Soak: a few hundred thousand mixed requests against one folio while its
files are edited and its folder is swapped; then whether its descriptors and
memory came back to where they were (from /proc). By hand, not CI:

    python3 bench/soak.py                     # 300,000 requests, build/src/folio
    python3 bench/soak.py --requests 50000 --rounds 4 --folio build-asan/src/folio

Mix per request, chosen at random: the page with gzip, a stylesheet, a range
of a big file, a conditional that is a 304, a missing file (404, the custom
page), a page under one of 50 proxy prefixes (each its own cached variant),
a fragment. Meanwhile a thread rewrites a stylesheet and a fragment every
50 ms and swaps www/ between two builds by symlink every 2 s (ln -sfn).
The requests are run in rounds (2 by default): a leak grows every round,
a cache fills once (it is bounded by --cache-size). Standard library only;
prints the figures of each round.

With --full-cache the cache is small (1 MiB) and full all along: the mix
also asks for one of 200 files of 600 KB (each a kept response holding its
file open) and the churn deletes and re-creates ten of them every 50 ms, so
held descriptors of deleted files show as "(deleted)" in /proc if they are
never let go (the figures count them)."""
import argparse
import collections
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# bench/http.py (the throughput bench) would shadow the standard library's http.
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import folio  # noqa: E402  (the integration tests' fixture article and helpers)


def proc_figures(pid):
    """Open descriptors and resident memory (KiB) of pid, from /proc."""
    fds = len(os.listdir("/proc/%d/fd" % pid))
    with open("/proc/%d/status" % pid) as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return fds, rss


def build(root):
    """The fixture article, with www/ a symlink to one of two builds."""
    folio.make_article(root)
    www = os.path.join(root, "www")
    os.unlink(os.path.join(www, "pipe.html"))  # copytree cannot copy a fifo
    shutil.copytree(www, os.path.join(root, "v1"), symlinks=True)
    shutil.copytree(www, os.path.join(root, "v2"), symlinks=True)
    with open(os.path.join(root, "v2", "style.css"), "a") as f:
        f.write("/* v2 */\n")
    shutil.rmtree(www)
    os.symlink("v1", www)


KINDS = ["gzip", "css", "range", "304", "404", "prefix", "fragment"]
MANY = 200  # --full-cache: files of 600 KB under assets/many/


def write_many(root, i, n):
    folio.write(os.path.join(root, "assets", "many", "%d.bin" % i), bytes([n % 256]) * 600_000)


def deleted_fds(pid):
    """Descriptors of pid whose file is gone."""
    n = 0
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            n += os.readlink("/proc/%d/fd/%s" % (pid, fd)).endswith("(deleted)")
        except OSError:
            pass
    return n


def requests_for(rng, etag):
    """One request of the mix, as bytes, and its kind."""
    kind = rng.choice(KINDS)
    h = b"Host: soak\r\n"
    if kind == "gzip":
        line, h = b"/", h + b"Accept-Encoding: gzip\r\nSec-Fetch-Dest: document\r\n"
    elif kind == "css":
        line = b"/style.css"
    elif kind == "range":
        start = rng.randrange(0, 1000000)
        line, h = b"/assets/images/big.svg", h + b"Range: bytes=%d-%d\r\n" % (start, start + 999)
    elif kind == "304":
        line, h = b"/app.js", h + b"If-None-Match: " + etag.encode() + b"\r\n"
    elif kind == "404":
        line, h = b"/missing/%d.html" % rng.randrange(1000), h + b"Sec-Fetch-Dest: document\r\n"
    elif kind == "prefix":
        line = b"/index.html"
        h += b"X-Forwarded-Prefix: /p%d\r\nAccept-Encoding: gzip\r\n" % rng.randrange(50)
    elif kind == "many":
        line = b"/assets/many/%d.bin" % rng.randrange(MANY)
    else:
        line = b"/fragments/small.html"
    return kind, b"GET " + line + b" HTTP/1.1\r\n" + h + b"\r\n"


def read_response(sock, buf):
    """Reads one response off a keep-alive socket; returns (status, rest)."""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v)
    if status == 304:
        length = 0
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed in body")
        rest += chunk
    return status, rest[length:]


def client(port, count, seed, etag, tally, errors):
    rng = random.Random(seed)
    sock, buf = None, b""
    for i in range(count):
        kind, data = requests_for(rng, etag)
        try:
            if sock is None or i % 200 == 0:  # new connections now and then, too
                if sock:
                    sock.close()
                sock, buf = socket.create_connection(("127.0.0.1", port), timeout=10), b""
            sock.sendall(data)
            status, buf = read_response(sock, buf)
            tally[(kind, status)] += 1
        except (OSError, ValueError) as e:
            errors.append("%s: %s" % (kind, e))
            if sock:
                sock.close()
            sock, buf = None, b""
    if sock:
        sock.close()


def churn(root, stop, counts):
    """Edits files every 50 ms and swaps www/ by symlink every 2 s."""
    n, last_swap, which = 0, time.monotonic(), 1
    while not stop.is_set():
        n += 1
        for build_dir in ("v1", "v2"):
            folio.write(os.path.join(root, build_dir, "style.css"),
                        "body { color: #%06x; }\n" % (n * 7919 % 0xffffff) * 40)
        folio.write(os.path.join(root, "fragments", "small.html"), "<p>edit %d</p>\n" % n * 40)
        if "many" in KINDS:  # --full-cache: ten big files deleted, then made again
            for i in range(n * 10 % MANY, n * 10 % MANY + 10):
                os.unlink(os.path.join(root, "assets", "many", "%d.bin" % i))
                write_many(root, i, n)
        counts["edits"] += 1
        if time.monotonic() - last_swap > 2:
            which = 3 - which
            link = os.path.join(root, "www.next")
            os.symlink("v%d" % which, link)
            os.replace(link, os.path.join(root, "www"))
            counts["swaps"] += 1
            last_swap = time.monotonic()
        stop.wait(0.05)


def cache_bytes(server):
    body = server.get("/__folio/health").body
    return int(body.split(b'"cache_bytes":')[1].split(b",")[0])


def soak_round(server, root, args, etag, base, round_no):
    """One round: the mix from every client while files churn; the figures
    after it. Two rounds tell a leak (growing each round) from a cache that
    filled once (bounded by --cache-size)."""
    pid = server.proc.pid
    stop, counts = threading.Event(), collections.Counter()
    churner = threading.Thread(target=churn, args=(root, stop, counts))
    churner.start()
    tally, errors = collections.Counter(), []
    per = args.requests // args.clients
    threads = [threading.Thread(target=client, args=(server.port, per, round_no * 100 + seed, etag,
                                                     tally, errors))
               for seed in range(args.clients)]
    peak = base
    start = time.monotonic()
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        fds, rss = proc_figures(pid)
        peak = (max(peak[0], fds), max(peak[1], rss))
        time.sleep(0.5)
    elapsed = time.monotonic() - start
    stop.set()
    churner.join()
    time.sleep(2)  # connections counted out, the last swap seen
    after = proc_figures(pid)
    alive = server.get("/__folio/health").status == 200
    done = sum(tally.values())
    print("round %d: %d requests in %.1f s (%.0f/s), %d errors, %d edits, %d folder swaps"
          % (round_no, done, elapsed, done / elapsed, len(errors), counts["edits"], counts["swaps"]))
    by_kind = collections.defaultdict(dict)
    for (kind, status), n in sorted(tally.items()):
        by_kind[kind][status] = n
    for kind, statuses in sorted(by_kind.items()):
        print("  %-9s %s" % (kind, " ".join("%d:%d" % kv for kv in sorted(statuses.items()))))
    print("  peak:  %d fds, %d KiB RSS; held of deleted files now: %d" % (peak + (deleted_fds(pid),)))
    print("  after: %d fds, %d KiB RSS (baseline %+d fds, %+d KiB), cache %d bytes, health %s"
          % (after[0], after[1], after[0] - base[0], after[1] - base[1], cache_bytes(server),
             "200" if alive else "FAILED"))
    if errors:
        print("  errors: %s" % errors[:3])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=300000)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--full-cache", action="store_true",
                    help="a 1 MiB cache, full all along, and big files deleted under it")
    ap.add_argument("--folio", default=os.environ.get("FOLIO_BIN",
                                                      os.path.join(HERE, "..", "build", "src", "folio")))
    args = ap.parse_args()
    folio.FOLIO = os.path.abspath(args.folio)
    tmp = tempfile.mkdtemp(prefix="folio-soak-")
    root = os.path.join(tmp, "article")
    build(root)
    extra = []
    if args.full_cache:
        KINDS.append("many")
        for i in range(MANY):
            write_many(root, i, 0)
        extra = ["--cache-size", "1M"]
    try:
        with folio.Server(root, "--trust-proxy", "--quiet", *extra) as server:
            pid = server.proc.pid
            etag = server.get("/app.js").getheader("ETag")
            # Warm up: every kind once per client, so the cache holds its
            # working set before the baseline is taken.
            warm = collections.Counter()
            client(server.port, 2000, 0, etag, warm, [])
            time.sleep(1)
            base = proc_figures(pid)
            print("baseline: %d fds, %d KiB RSS, cache %s bytes" % (base + (cache_bytes(server),)))
            for round_no in range(1, args.rounds + 1):
                soak_round(server, root, args, etag, base, round_no)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
