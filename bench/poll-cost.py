#!/usr/bin/env python3
"""What --watch poll costs: CPU per second of an idle folio that polls, against inotify.

    python3 bench/poll-cost.py [--seconds 20] [--interval 500] [--files 170,10000]

For each tree size, a copy of this repo's article is topped up with small files (50 a folder,
as assets/ grows) to that many files, folio is started on it in preview mode (--watch poll,
then --watch inotify), left idle for --seconds, and its utime + stime (from /proc/PID/stat)
over that time is reported as CPU milliseconds per second of wall time (1000 = one core).
A benchmark, not a test: it prints a table and asserts nothing. folio comes from $FOLIO_BIN
or build/src/folio.
"""
import argparse
import os
import shutil
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
TICK = os.sysconf("SC_CLK_TCK")


def make_tree(files):
    root = tempfile.mkdtemp(prefix="folio-poll-")
    for d in ("www", "fragments", "assets"):
        shutil.copytree(os.path.join(REPO, d), os.path.join(root, d))
    have = sum(len(f) for _, _, f in os.walk(root))
    k = 0
    while have < files:
        folder = os.path.join(root, "assets", "gen", "d%03d" % (k // 50))
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "f%05d.svg" % k), "w") as f:
            f.write("<svg xmlns='http://www.w3.org/2000/svg'/>\n")
        k += 1
        have += 1
    return root, have


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)


def measure(binary, root, mode, interval, seconds):
    args = [binary, "--root", root, "--port", "0", "--quiet", "--watch", mode,
            "--poll-interval", str(interval)]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        proc.stderr.readline()  # "serving ...": up, first walk done
        time.sleep(1.0)         # start-up work (mime, first snapshot) is not the steady state
        c0, t0 = cpu_ticks(proc.pid), time.monotonic()
        time.sleep(seconds)
        c1, t1 = cpu_ticks(proc.pid), time.monotonic()
    finally:
        proc.terminate()
        proc.wait(10)
    return (c1 - c0) * 1000.0 / TICK / (t1 - t0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--interval", type=int, default=500)
    ap.add_argument("--files", default="170,10000")
    a = ap.parse_args()
    binary = os.environ.get("FOLIO_BIN") or os.path.join(REPO, "build/src/folio")
    print("Idle folio, %g s each, poll interval %d ms; CPU ms per second of wall time.\n"
          % (a.seconds, a.interval))
    print("| files | --watch poll | --watch inotify | poll: per walk |")
    print("|---|---|---|---|")
    for n in [int(x) for x in a.files.split(",")]:
        root, have = make_tree(n)
        try:
            poll = measure(binary, root, "poll", a.interval, a.seconds)
            inotify = measure(binary, root, "inotify", a.interval, a.seconds)
        finally:
            shutil.rmtree(root)
        walks = 1000.0 / a.interval
        print("| %d | %.2f | %.2f | %.2f ms |" % (have, poll, inotify, poll / walks))


if __name__ == "__main__":
    main()
