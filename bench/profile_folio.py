"""Profiles of folio on the article-shaped fixture, for bench/article.py --profile.

perf: `perf record -g` attached to folio while wrk loads one class; prints the
top symbols by self time (the VM has no hardware counters, so perf samples
cpu-clock) and the split by DSO (kernel, libc, libmicrohttpd, folio).

callgrind: folio under `valgrind --tool=callgrind`; after a warm-up of every
class, counters are zeroed, N requests of one class are sent over one
keep-alive connection, and the counters dumped (callgrind_control), so each
dump holds exactly those N requests: instructions per request (user space
only, independent of the machine's noise) and the top functions. Under
valgrind folio has no openat2 (valgrind 3.19 does not know the syscall), so
it opens files by its component-walk fallback.

strace: syscalls per request of every server (folio and the peers), class
by class, strace -f -c attached while one keep-alive client sends N requests.
"""
import os
import re
import socket
import subprocess
import time

from article_fixture import CODINGS, GZIP_LEVEL, die, log
from article_load import wrk
from article_report import write_readme
from article_servers import best_levels, ensure, hb, start_folio, start_h2o, start_lighttpd, start_nginx
from article_verify import check
PROFILE_BEGIN = "<!-- article.py profile {}: begin -->"
PROFILE_END = "<!-- article.py profile {}: end -->"


def ensure_tools(kind):
    ensure({"perf": {"perf": "linux-perf"}, "strace": {"strace": "strace"}}.get(kind) or
             {"valgrind": "valgrind", "callgrind_control": "valgrind"})


def perf_top(data, n, sort):
    p = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", sort,
                        "--percent-limit", "0.3", "-g", "none"],
                       capture_output=True, text=True)
    rows = []
    for line in p.stdout.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+(.*\S)", line)
        if m:
            sym = re.sub(r"\s+", " ", m.group(2))
            rows.append((float(m.group(1)), re.sub(r"( -)+$", "", sym)))
    return rows[:n]


def run_perf(args, folio, tmp, files, cls, luas):
    name, binary, extra = folio
    s = start_folio(name, binary, os.path.join(tmp, "plain"), tmp,
                      args.workers or os.cpu_count(), args.folio_args.split() + extra)
    out = []
    try:
        check([s], cls, files, tmp)
        for c in cls:
            data = os.path.join(tmp, f"perf-{c['id']}.data")
            headers = dict(c["headers"])
            if c.get("etag"):
                headers["If-None-Match"] = c["inm"][s.name]
            if c.get("mix"):
                headers = {}
            url = s.base() + (c.get("path") or "/")
            rec = subprocess.Popen(["perf", "record", "-g", "-q", "-o", data, "-p", str(s.proc.pid)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            time.sleep(0.3)
            cpu0 = s.cpu_seconds()
            r = wrk(url, headers, args.duration, args, luas[c["id"]])
            cpu = s.cpu_seconds() - cpu0
            rec.send_signal(2)
            rec.wait(timeout=60)
            us = cpu * 1e6 / max(r["requests"], 1)
            log(f"  perf {c['id']}: {r['requests']} requests, {us:.1f} µs/req")
            out.append(f"**{c['id']}** ({us:.1f} µs of server CPU per request under perf, "
                       f"{r['requests'] / (r['duration_us'] / 1e6):,.0f} req/s). By DSO: "
                       + ", ".join(f"{d} {p:.1f} %" for p, d in perf_top(data, 6, "dso"))
                       + ". Top symbols by self time:\n")
            out.append("| self | DSO · symbol |")
            out.append("|---:|---|")
            for p, sym in perf_top(data, args.top, "dso,symbol"):
                out.append(f"| {p:.1f} % | `{sym.replace('|', '/')}` |")
            out.append("")
    finally:
        s.stop()
    return "\n".join(out)


def keepalive(port, c, n, inm):
    """n requests of class c on one connection; returns how many answered.
    (A raw socket: bench/http.py shadows the standard library's http.)"""
    paths = c.get("mix") or [c["path"]]
    headers = dict(c["headers"])
    if inm:
        headers["If-None-Match"] = inm
    extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    done = 0
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        f = sock.makefile("rb")
        for i in range(n):
            sock.sendall(f"GET {paths[i % len(paths)]} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}\r\n"
                         .encode())
            status = f.readline().split()[1]
            length = 0
            while True:
                line = f.readline()
                if line in (b"\r\n", b""):
                    break
                k, _, v = line.decode("latin-1").partition(":")
                if k.strip().lower() == "content-length":
                    length = int(v)
            if status != b"304":
                f.read(length)
            done += 1
    return done


def callgrind_totals(path):
    with open(path) as f:
        for line in f:
            if line.startswith("totals:") or line.startswith("summary:"):
                return int(line.split()[1])
    return 0


def callgrind_top(path, n):
    p = subprocess.run(["callgrind_annotate", "--threshold=100", path], capture_output=True, text=True)
    rows = []
    for line in p.stdout.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*([\d.]+)%\)\s+(.*\S)", line)
        # clone and start_thread: the threads' roots, whose cost callgrind
        # reports inclusive after a mid-run dump.
        if m and not re.search(r"PROGRAM TOTALS|:clone |:start_thread ", line):
            fn = m.group(3)
            fn = re.sub(r"^\S*/", "", fn)  # drop the directories of the file
            fn = re.sub(r"\[\S*/", "[", fn)
            rows.append((int(m.group(1).replace(",", "")), float(m.group(2)), fn))
    return rows[:n]


def run_callgrind(args, folio, tmp, files, cls, luas):
    name, binary, extra = folio
    out_file = os.path.join(tmp, "callgrind.out")
    valgrind_log = os.path.join(tmp, "valgrind.log")
    root = os.path.join(tmp, "plain")
    argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", f"--log-file={valgrind_log}",
            "--dump-instr=no", binary, "--root", root, "--host", "127.0.0.1", "--port", "0",
            "--production", "--quiet", "--threads", "2", "--gzip-level", str(GZIP_LEVEL),
            "--grace", "1"] + args.folio_args.split() + extra
    stdout = os.path.join(tmp, "folio-callgrind.out")
    s = hb.Server(name, "folio under callgrind", argv, 0, tmp, stdout)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with open(stdout, errors="replace") as f:
            lines = [l for l in f if "http://127.0.0.1:" in l and l.endswith("\n")]
        if lines:  # (an earlier line says valgrind does not know openat2)
            s.port = int(lines[0].split("http://127.0.0.1:")[1].split("/")[0])
            s.offers = set(CODINGS)  # as start_folio sets them
            s.best = best_levels(args.folio_args.split() + extra)
            break
        if s.proc.poll() is not None:
            break
        time.sleep(0.2)
    else:
        s.stop()
        die("folio under callgrind did not start")
    if not s.port:
        with open(valgrind_log, errors="replace") as f:
            die("folio under callgrind did not start:\n" + f.read()[-2000:])
    out = []
    n = args.requests
    try:
        check([s], cls, files, tmp)  # the warm-up: every class compressed and cached
        for c in cls:
            inm = c.get("inm", {}).get(s.name) if c.get("etag") else None
            keepalive(s.port, c, 20, inm)
            subprocess.run(["callgrind_control", "--zero", str(s.proc.pid)], check=True,
                           stdout=subprocess.DEVNULL)
            done = keepalive(s.port, c, n, inm)
            before = set(os.listdir(tmp))
            subprocess.run(["callgrind_control", f"--dump={c['id']}", str(s.proc.pid)], check=True,
                           stdout=subprocess.DEVNULL)
            dumps = sorted(set(os.listdir(tmp)) - before)
            dumps = [os.path.join(tmp, d) for d in dumps if d.startswith("callgrind.out")]
            total = sum(callgrind_totals(d) for d in dumps)
            log(f"  callgrind {c['id']}: {total / done:,.0f} instructions per request")
            out.append(f"**{c['id']}**: {total / done:,.0f} instructions per request in user space "
                       f"({done} requests on one keep-alive connection, after a warm-up). "
                       f"Top functions by self instructions:\n")
            out.append("| Ir per request | share | function |")
            out.append("|---:|---:|---|")
            rows = {}
            for d in dumps:
                for ir, _, fn in callgrind_top(d, 60):
                    rows[fn] = rows.get(fn, 0) + ir
            for fn, ir in sorted(rows.items(), key=lambda kv: -kv[1])[:args.top]:
                out.append(f"| {ir / done:,.0f} | {100 * ir / max(total, 1):.1f} % | "
                           f"`{fn.replace('|', '/')}` |")
            out.append("")
    finally:
        s.stop()
    return "\n".join(out)


def strace_counts(path):
    """{syscall: calls} from the summary strace -c wrote."""
    counts = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$", line)
            if m and m.group(2) != "total":
                counts[m.group(2)] = int(m.group(1))
    return counts


def run_strace(args, folios, tmp, files, cls, luas):
    """Syscalls per request of every server, class by class: strace -f -c
    attached to all the server's processes while one keep-alive client
    sends N requests in a row."""
    plain, static = os.path.join(tmp, "plain"), os.path.join(tmp, "static")
    workers = args.workers or os.cpu_count()
    servers = [start_folio(n, p, plain, tmp, workers, args.folio_args.split() + x)
               for n, p, x in folios]
    servers += [start_nginx(static, tmp, workers), start_lighttpd(plain, tmp),
                start_h2o(static, tmp, workers)]
    n = args.requests
    table = {}
    try:
        check(servers, cls, files, tmp)
        for c in cls:
            for s in servers:
                inm = c.get("inm", {}).get(s.name) if c.get("etag") else None
                keepalive(s.port, c, 10, inm)
                out = os.path.join(tmp, f"strace-{c['id']}-{s.name}.txt")
                argv = ["strace", "-f", "-c", "-o", out]
                for pid in s.pids():
                    argv += ["-p", str(pid)]
                st = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(0.5)
                done = keepalive(s.port, c, n, inm)
                st.send_signal(2)
                st.wait(timeout=30)
                counts = strace_counts(out)
                table[(c["id"], s.name)] = {k: v / done for k, v in counts.items()}
                log(f"  strace {c['id']:<18} {s.name:<10} {sum(counts.values()) / done:5.1f} syscalls/request")
    finally:
        for s in servers:
            s.stop()
    lines = [f"Syscalls per request (strace -f -c on all the server's processes, {n} requests in a "
             "row on one keep-alive connection, after a warm-up), total and the calls made at least "
             "0.5 times a request:\n",
             "| class | " + " | ".join(s.name for s in servers) + " |",
             "|---|" + "---|" * len(servers)]
    for c in cls:
        row = []
        for s in servers:
            t = table[(c["id"], s.name)]
            top = sorted(((v, k) for k, v in t.items() if v >= 0.5), reverse=True)
            row.append(f"**{sum(t.values()):.1f}**: " + ", ".join(f"{k} {v:.1f}" if abs(v - 1) > 0.05 else k
                                                               for v, k in top))
        lines.append(f"| {c['id']} | " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def run(args, folios, tmp, files, cls, luas):
    ensure_tools(args.profile)
    folio = folios[0]
    if not args.classes and args.profile != "strace":
        cls = [c for c in cls if c["id"] in ("page-gzip", "png", "404")]
    if args.profile == "strace":
        body = run_strace(args, folios, tmp, files, cls, luas)
    else:
        body = (run_perf if args.profile == "perf" else run_callgrind)(args, folio, tmp, files, cls, luas)
    head = (f"{args.profile} of {folio[0]} ({' '.join([folio[1]] + folio[2] + args.folio_args.split())}, "
            f"{hb.version([folio[1], '--version'])}), "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}:\n")
    text = head + "\n" + body
    print(text)
    if args.readme:
        label = args.profile + " " + folio[0]
        write_readme(text, PROFILE_BEGIN.format(label), PROFILE_END.format(label))
    if args.keep:
        log("kept " + tmp)
    return 0
