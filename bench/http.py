#!/usr/bin/env python3
"""HTTP throughput of folio against nginx and lighttpd, serving the same files.

Starts folio, nginx (gzip on the fly), nginx (gzip_static: precompressed .gz
sidecars in a temporary copy) and lighttpd (mod_deflate with a cache dir), all
on 127.0.0.1 with free ports and configs generated in a temporary folder;
checks that every server returns the same decoded bytes for every scenario;
then loads each with wrk and prints a Markdown report: requests/s, transfer/s,
latency, server CPU per request, the ratio folio/nginx, peak RSS (VmHWM) and
CPU time. One run; ratios, never timed assertions (see bench/README.md).

    python3 bench/http.py                 # about 5 minutes
    python3 bench/http.py --duration 3 --warmup 1 --scenarios 1,2
    python3 bench/http.py --help

Standard library only. Installs nginx-light, lighttpd, wrk and curl with apt-get
when they are missing (as root, or through sudo).
"""
import argparse
import gzip
import hashlib
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zlib

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AUDIO_DIR = os.path.join("assets", "audio")

# Types compressed by all servers (folio's compressible types found in the article).
GZIP_TYPES = ["text/html", "text/css", "text/javascript", "application/javascript",
              "application/json", "image/svg+xml", "text/csv", "text/plain",
              "application/xml", "text/x-bibtex"]
GZIP_MIN = 512   # folio's GZIP_MIN_BYTES
GZIP_LEVEL = 6   # folio's default --gzip-level
MIME = {  # for lighttpd, which has no table of its own here; same as folio's
    ".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8", ".json": "application/json",
    ".csv": "text/csv; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png",
    ".jpg": "image/jpeg", ".webp": "image/webp", ".ogg": "audio/ogg",
    ".bib": "text/x-bibtex; charset=utf-8", "": "application/octet-stream",
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def die(msg):
    log("bench/http.py: " + msg)
    sys.exit(1)


# ---------------------------------------------------------------- scenarios

def audio_path():
    d = os.path.join(REPO, AUDIO_DIR)
    names = sorted(n for n in os.listdir(d) if n.endswith(".ogg"))
    if not names:
        die("no assets/audio/*.ogg in " + REPO)
    return names[0]


def scenarios():
    from urllib.parse import quote
    ogg = audio_path()
    ogg_size = os.path.getsize(os.path.join(REPO, AUDIO_DIR, ogg))
    first, last = 16384, min(16384 + 32768, ogg_size) - 1
    gz = {"Accept-Encoding": "gzip"}
    return [
        dict(id=1, name="index.html, gzip", path="/", headers=gz, status=200,
             file="www/index.html", gzip=True),
        dict(id=2, name="index.html, identity", path="/", headers={}, status=200,
             file="www/index.html"),
        dict(id=3, name="small SVG (5.9 KB), identity", path="/assets/figures/flash-attention.svg",
             headers={}, status=200, file="assets/figures/flash-attention.svg"),
        dict(id=4, name="fragment (606 KB), gzip", path="/fragments/config-sweep.html",
             headers=gz, status=200, file="fragments/config-sweep.html", gzip=True),
        dict(id=5, name="large SVG (959 KB), identity", path="/assets/images/sweep-dense.svg",
             headers={}, status=200, file="assets/images/sweep-dense.svg"),
        dict(id=6, name="304, If-None-Match (index.html, gzip)", path="/", headers=gz,
             status=304, file=None, etag=True),
        dict(id=7, name=f"Range {last - first + 1} B of the .ogg", status=206,
             path="/assets/audio/" + quote(ogg), headers={"Range": f"bytes={first}-{last}"},
             file=os.path.join(AUDIO_DIR, ogg), range=(first, last)),
    ]


# ---------------------------------------------------------------- tools

def ensure_tools():
    need = {"nginx": "nginx-light", "lighttpd": "lighttpd", "wrk": "wrk", "curl": "curl"}
    missing = [pkg for tool, pkg in need.items() if not shutil.which(tool)
               and not os.path.exists("/usr/sbin/" + tool)]
    if not missing:
        return
    log("installing " + " ".join(missing))
    prefix = [] if os.geteuid() == 0 else (["sudo"] if shutil.which("sudo") else None)
    if prefix is None:
        die("missing " + " ".join(missing) + " and not root; apt-get install -y " + " ".join(missing))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(prefix + ["apt-get", "update", "-q"], check=True, env=env)
    subprocess.run(prefix + ["apt-get", "install", "-y", "-q"] + missing, check=True, env=env)


def tool(name):
    return shutil.which(name) or "/usr/sbin/" + name


def version(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return (p.stdout + p.stderr).strip().splitlines()[0]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def machine_busy():
    """CPU seconds spent by everything on the machine so far (from /proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / os.sysconf("SC_CLK_TCK")


def loadavg():
    with open("/proc/loadavg") as f:
        return tuple(float(x) for x in f.read().split()[:3])


# ---------------------------------------------------------------- servers

class Server:
    """A server we started, in its own process group so that it and its
    workers are found (and stopped) by the pid we got."""

    def __init__(self, name, label, argv, port, cwd, out):
        self.name, self.label, self.port = name, label, port
        self.out = open(out, "wb")
        self.proc = subprocess.Popen(argv, cwd=cwd, stdout=self.out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        self.outpath = out

    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def pids(self):
        pgid = self.proc.pid
        found = []
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    with open(f"/proc/{d}/stat") as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                    if int(fields[2]) == pgid:  # field 5: pgrp
                        found.append(int(d))
                except (OSError, IndexError, ValueError):
                    pass
        return found

    def cpu_seconds(self):
        tick = os.sysconf("SC_CLK_TCK")
        total = 0
        for pid in self.pids():
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])  # utime, stime
            except (OSError, IndexError):
                pass
        return total / tick

    def memory(self):
        """(sum of VmHWM, sum of VmRSS) in KiB over the server's processes."""
        hwm = rss = 0
        for pid in self.pids():
            try:
                with open(f"/proc/{pid}/status") as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            hwm += int(line.split()[1])
                        elif line.startswith("VmRSS:"):
                            rss += int(line.split()[1])
            except OSError:
                pass
        return hwm, rss

    def wait_ready(self, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        with open(self.outpath, errors="replace") as f:
            die(f"{self.name} did not start:\n{f.read()[-2000:]}")

    def stop(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            except ProcessLookupError:
                pass
        self.out.close()


def start_folio(binary, tmp, threads):
    out = os.path.join(tmp, "folio.out")
    # cwd is the temp dir, so no config/folio.conf is read.
    s = Server("folio", f"folio --threads {threads}",
               [binary, "--root", REPO, "--host", "127.0.0.1", "--port", "0", "--production",
                "--quiet", "--threads", str(threads), "--grace", "1"], 0, tmp, out)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with open(out, errors="replace") as f:
            line = f.readline()
        if "http://127.0.0.1:" in line and line.endswith("\n"):
            s.port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
            s.wait_ready()
            return s
        if s.proc.poll() is not None:
            break
        time.sleep(0.05)
    with open(out, errors="replace") as f:
        die("folio did not start:\n" + f.read())


def make_static_copy(tmp):
    """The article copied, with a .gz beside each compressible file (level 6,
    same mtime), for nginx's gzip_static."""
    root = os.path.join(tmp, "static")
    exts = {e for e, t in MIME.items() if e and t.split(";")[0] in GZIP_TYPES}
    for part in ("www", "fragments", "assets"):
        shutil.copytree(os.path.join(REPO, part), os.path.join(root, part))
    for d, _, files in os.walk(root):
        for n in files:
            p = os.path.join(d, n)
            if os.path.splitext(n)[1] in exts and os.path.getsize(p) >= GZIP_MIN:
                with open(p, "rb") as f:
                    data = f.read()
                with open(p + ".gz", "wb") as f:
                    f.write(gzip.compress(data, GZIP_LEVEL, mtime=0))
                st = os.stat(p)
                os.utime(p + ".gz", ns=(st.st_atime_ns, st.st_mtime_ns))
    return root


def start_nginx(tmp, name, root, workers, static):
    d = os.path.join(tmp, name)
    os.makedirs(os.path.join(d, "logs"))
    port = free_port()
    gz = (f"gzip_static on;\n    gzip off;" if static else
          f"gzip on;\n    gzip_comp_level {GZIP_LEVEL};\n    gzip_min_length {GZIP_MIN};\n"
          f"    gzip_types {' '.join(t for t in GZIP_TYPES if t != 'text/html')};")
    conf = f"""
{"user root;" if os.geteuid() == 0 else ""}
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
    {gz}
    gzip_vary on;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    server {{
        listen 127.0.0.1:{port};
        root {root}/www;
        index index.html;
        location /fragments/ {{ alias {root}/fragments/; }}
        location /assets/ {{ alias {root}/assets/; }}
    }}
}}
"""
    path = os.path.join(d, "nginx.conf")
    with open(path, "w") as f:
        f.write(conf)
    label = (f"nginx, worker_processes {workers}, " +
             ("gzip_static (precompressed .gz)" if static else f"gzip on the fly, level {GZIP_LEVEL}"))
    s = Server(name, label, [tool("nginx"), "-p", d, "-c", path], port, d,
               os.path.join(d, "nginx.out"))
    s.wait_ready()
    return s


def start_lighttpd(tmp):
    d = os.path.join(tmp, "lighttpd")
    os.makedirs(os.path.join(d, "deflate-cache"))
    port = free_port()
    q = lambda s: json.dumps(s)  # a double-quoted string lighttpd accepts
    mimes = ",\n    ".join(f"{q(e)} => {q(t)}" for e, t in MIME.items())
    conf = f"""
server.modules = ("mod_alias", "mod_deflate")
server.bind = "127.0.0.1"
server.port = {port}
server.document-root = {q(REPO + "/www")}
server.pid-file = {q(d + "/lighttpd.pid")}
server.errorlog = {q(d + "/error.log")}
server.network-backend = "sendfile"
server.max-keep-alive-requests = 1000000
server.max-keep-alive-idle = 30
server.max-connections = 4096
server.max-fds = 16384
index-file.names = ("index.html")
alias.url = ("/fragments/" => {q(REPO + "/fragments/")}, "/assets/" => {q(REPO + "/assets/")})
static-file.etags = "enable"
mimetype.assign = (
    {mimes}
)
deflate.mimetypes = ({", ".join(q(t) for t in GZIP_TYPES)})
deflate.allowed-encodings = ("gzip")
deflate.compression-level = {GZIP_LEVEL}
deflate.min-compress-size = {GZIP_MIN}
deflate.cache-dir = {q(d + "/deflate-cache")}
"""
    path = os.path.join(d, "lighttpd.conf")
    with open(path, "w") as f:
        f.write(conf)
    s = Server("lighttpd", "lighttpd (one process), mod_deflate level 6 + cache-dir",
               [tool("lighttpd"), "-D", "-f", path], port, d, os.path.join(d, "lighttpd.out"))
    s.wait_ready()
    return s


# ---------------------------------------------------------------- checks

def curl(url, headers, tmp):
    hdr, body = os.path.join(tmp, "curl.h"), os.path.join(tmp, "curl.b")
    for p in (hdr, body):  # curl writes no body file for an empty body
        if os.path.exists(p):
            os.unlink(p)
    argv = ["curl", "-sS", "--http1.1", "--max-time", "10", "-D", hdr, "-o", body]
    for k, v in headers.items():
        argv += ["-H", f"{k}: {v}"]
    subprocess.run(argv + [url], check=True)
    with open(hdr, "rb") as f:
        lines = f.read().decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    h = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            h[k.strip().lower()] = v.strip()
    data = b""
    if os.path.exists(body):
        with open(body, "rb") as f:
            data = f.read()
    return status, h, data


def check(servers, scens, tmp):
    """Every server returns the expected status and the same decoded bytes
    (the file's own, or its range) for every scenario; fills in per-server
    If-None-Match values for the 304 scenario."""
    problems = []
    for sc in scens:
        expected = None
        if sc.get("file"):
            with open(os.path.join(REPO, sc["file"]), "rb") as f:
                expected = f.read()
            if sc.get("range"):
                a, b = sc["range"]
                expected = expected[a:b + 1]
        for s in servers[sc["id"]]:
            headers = dict(sc["headers"])
            if sc.get("etag"):
                st, h, _ = curl(s.base() + sc["path"], sc["headers"], tmp)
                if st != 200 or "etag" not in h:
                    problems.append(f"{s.name}: scenario {sc['id']}: no ETag to revalidate with")
                    continue
                headers["If-None-Match"] = h["etag"]
                sc.setdefault("inm", {})[s.name] = h["etag"]
            status, h, data = curl(s.base() + sc["path"], headers, tmp)
            where = f"{s.name}: scenario {sc['id']} ({sc['name']}), {sc['path']}"
            if status != sc["status"]:
                problems.append(f"{where}: status {status}, expected {sc['status']}")
                continue
            enc = h.get("content-encoding", "identity")
            if sc.get("gzip") and enc != "gzip":
                problems.append(f"{where}: not gzipped (Content-Encoding {enc})")
                continue
            if not sc.get("gzip") and enc != "identity":
                problems.append(f"{where}: unexpected Content-Encoding {enc}")
                continue
            if enc == "gzip":
                try:
                    data = zlib.decompress(data, 16 + zlib.MAX_WBITS)
                except zlib.error as e:
                    problems.append(f"{where}: bad gzip: {e}")
                    continue
            if expected is not None and data != expected:
                problems.append(f"{where}: body sha256 {hashlib.sha256(data).hexdigest()[:16]}… "
                                f"({len(data)} B) differs from the file's "
                                f"{hashlib.sha256(expected).hexdigest()[:16]}… ({len(expected)} B)")
            if sc["status"] == 304 and data:
                problems.append(f"{where}: 304 with a body")
            if sc.get("range"):
                a, b = sc["range"]
                want = f"bytes {a}-{b}/"
                if not h.get("content-range", "").startswith(want):
                    problems.append(f"{where}: Content-Range {h.get('content-range')}, expected {want}…")
    if problems:
        die("servers disagree, not timing anything:\n  " + "\n  ".join(problems))


# ---------------------------------------------------------------- load

WRK_LUA = r"""
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%d,"bytes":%d,"duration_us":%d,"connect":%d,"read":%d,' ..
    '"write":%d,"status":%d,"timeout":%d,"p50_us":%d,"p99_us":%d,"mean_us":%f}\n',
    summary.requests, summary.bytes, summary.duration, e.connect, e.read, e.write,
    e.status, e.timeout, latency:percentile(50), latency:percentile(99), latency.mean))
end
"""


def wrk(url, headers, seconds, args, lua):
    argv = ["wrk", f"-t{args.wrk_threads}", f"-c{args.connections}", f"-d{seconds}s",
            "--timeout", "5s", "-s", lua]
    for k, v in headers.items():
        argv += ["-H", f"{k}: {v}"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(argv + [url], capture_output=True, text=True, timeout=seconds + 30)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    for line in p.stdout.splitlines():
        if line.startswith("WRKJSON "):
            r = json.loads(line[8:])
            r["wrk_cpu_s"] = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
            return r
    die("wrk failed:\n" + p.stdout + p.stderr)


def run_load(servers, scens, args, lua):
    results = {}
    for sc in scens:
        for s in servers[sc["id"]]:
            headers = dict(sc["headers"])
            if sc.get("etag"):
                headers["If-None-Match"] = sc["inm"][s.name]
            url = s.base() + sc["path"]
            if args.warmup:
                wrk(url, headers, args.warmup, args, lua)
            cpu0, la0, busy0 = s.cpu_seconds(), loadavg()[0], machine_busy()
            r = wrk(url, headers, args.duration, args, lua)
            r["cpu_s"] = s.cpu_seconds() - cpu0
            # What the rest of the machine took meanwhile: noise, if well above 0.
            r["others_s"] = max(0.0, machine_busy() - busy0 - r["cpu_s"] - r["wrk_cpu_s"])
            r["load_before"] = la0
            secs = r["duration_us"] / 1e6
            r["rps"] = r["requests"] / secs
            r["mbps"] = r["bytes"] / secs / 1e6
            r["errors"] = sum(r[k] for k in ("connect", "read", "write", "status", "timeout"))
            results[(sc["id"], s.name)] = r
            log(f"  {sc['id']} {sc['name']:<40} {s.name:<13} {r['rps']:>9.0f} req/s "
                f"{r['mbps']:>8.1f} MB/s  server CPU {r['cpu_s']:.1f} s"
                + (f"  ERRORS {r['errors']}" if r["errors"] else ""))
    return results


# ---------------------------------------------------------------- report

def secs(r):
    return r["duration_us"] / 1e6


def fmt_ratio(a, b):
    return f"{a / b:.2f}" if b else "—"


def report(servers_all, scens, results, args, meta, resources):
    out = []
    w = out.append
    w(f"wrk -t{args.wrk_threads} -c{args.connections}, {args.duration} s per run after a "
      f"{args.warmup} s warm-up; {meta['machine']}; load average {meta['load_start']} at the "
      f"start (the bench itself raises it to about 3-4 while it runs).\n")
    names = [s.name for s in servers_all]
    w("Requests per second (ratio: folio / nginx, above 1 means folio is faster):\n")
    w("| # | scenario | " + " | ".join(names) + " | folio/nginx | folio/nginx-static |")
    w("|---|---|" + "---:|" * len(names) + "---:|---:|")
    for sc in scens:
        row = []
        for n in names:
            r = results.get((sc["id"], n))
            row.append("—" if not r else f"{r['rps']:,.0f}" + (f" ({r['errors']} err)" if r["errors"] else ""))
        f = results.get((sc["id"], "folio"))
        ng = results.get((sc["id"], "nginx"))
        ns = results.get((sc["id"], "nginx-static"))
        w(f"| {sc['id']} | {sc['name']} | " + " | ".join(row) +
          f" | **{fmt_ratio(f['rps'], ng['rps']) if f and ng else '—'}** | "
          f"{fmt_ratio(f['rps'], ns['rps']) if f and ns else '—'} |")
    w("")
    w("Transfer, MB/s as wrk counts it (response headers + body as sent: compressed bytes for gzip):\n")
    w("| # | scenario | " + " | ".join(names) + " |")
    w("|---|---|" + "---:|" * len(names))
    for sc in scens:
        row = [f"{results[(sc['id'], n)]['mbps']:,.1f}" if (sc["id"], n) in results else "—" for n in names]
        w(f"| {sc['id']} | {sc['name']} | " + " | ".join(row) + " |")
    w("")
    w("Latency p50 / p99 (ms); server CPU per request (µs, all of the server's processes); "
      "CPUs busy in the server + in wrk + in anything else on the machine (of "
      + str(os.cpu_count()) + "; the last is noise):\n")
    w("| # | scenario | " + " | ".join(names) + " |")
    w("|---|---|" + "---:|" * len(names))
    for sc in scens:
        row = []
        for n in names:
            r = results.get((sc["id"], n))
            row.append("—" if not r else
                       f"{r['p50_us'] / 1000:.2f} / {r['p99_us'] / 1000:.2f}; "
                       f"{r['cpu_s'] * 1e6 / max(r['requests'], 1):.0f} µs; "
                       f"{r['cpu_s'] / secs(r):.2f} + {r['wrk_cpu_s'] / secs(r):.2f} + {r['others_s'] / secs(r):.2f}")
        w(f"| {sc['id']} | {sc['name']} | " + " | ".join(row) + " |")
    w("")
    w("Resources after all runs (VmHWM and VmRSS summed over the server's processes; "
      "CPU = user + system over the whole bench, warm-ups included):\n")
    w("| server | configuration | processes | peak RSS (VmHWM) | RSS at the end | RSS at start | CPU time |")
    w("|---|---|---:|---:|---:|---:|---:|")
    for s in servers_all:
        r = resources[s.name]
        w(f"| {s.name} | {s.label} | {r['procs']} | {r['hwm'] / 1024:.1f} MiB | "
          f"{r['rss'] / 1024:.1f} MiB | {r['rss0'] / 1024:.1f} MiB | {r['cpu']:.1f} s |")
    w("")
    w("Versions: " + "; ".join(meta["versions"]) + ".")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=int, default=10, help="seconds per measured run (10)")
    ap.add_argument("--warmup", type=int, default=1, help="seconds of warm-up before each run (1)")
    ap.add_argument("--connections", type=int, default=64, help="wrk -c (64)")
    ap.add_argument("--wrk-threads", type=int, default=2, help="wrk -t (2)")
    ap.add_argument("--workers", type=int, default=0,
                    help="folio --threads and nginx worker_processes (0: number of CPUs)")
    ap.add_argument("--folio", default=os.path.join(REPO, "build", "src", "folio"),
                    help="the folio binary (build/src/folio; built when missing)")
    ap.add_argument("--scenarios", default="1,2,3,4,5,6,7", help="which, e.g. 1,4")
    ap.add_argument("--servers", default="folio,nginx,nginx-static,lighttpd")
    ap.add_argument("--max-load", type=float, default=0.7,
                    help="wait for the 1-minute load average to drop below this (0.7)")
    ap.add_argument("--wait-load", type=int, default=0,
                    help="seconds to wait for that before running anyway (0: don't wait)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = ap.parse_args()

    ensure_tools()
    if not os.path.exists(args.folio):
        log("building folio")
        if not os.path.exists(os.path.join(REPO, "build")):
            subprocess.run(["meson", "setup", "build"], cwd=REPO, check=True)
        subprocess.run(["ninja", "-C", "build", "src/folio"], cwd=REPO, check=True)
    cpus = os.cpu_count() or 1
    workers = args.workers or cpus
    wanted_sc = {int(x) for x in args.scenarios.split(",")}
    scens = [s for s in scenarios() if s["id"] in wanted_sc]
    wanted = args.servers.split(",")

    deadline = time.monotonic() + args.wait_load
    while loadavg()[0] > args.max_load and time.monotonic() < deadline:
        log(f"load average {loadavg()[0]:.2f} > {args.max_load}; waiting")
        time.sleep(15)
    load_start = loadavg()
    if load_start[0] > args.max_load:
        log(f"warning: load average {load_start[0]:.2f} is above {args.max_load}; "
            "numbers will be noisy")

    tmp = tempfile.mkdtemp(prefix="folio-http-bench-")
    started = []

    def on_signal(sig, frame):
        raise SystemExit(128 + sig)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    try:
        lua = os.path.join(tmp, "report.lua")
        with open(lua, "w") as f:
            f.write(WRK_LUA)
        if "folio" in wanted:
            started.append(start_folio(args.folio, tmp, workers))
        if "nginx" in wanted:
            started.append(start_nginx(tmp, "nginx", REPO, workers, static=False))
        if "nginx-static" in wanted:
            started.append(start_nginx(tmp, "nginx-static", make_static_copy(tmp), workers,
                                       static=True))
        if "lighttpd" in wanted:
            started.append(start_lighttpd(tmp))
        # gzip_static only differs from nginx where a body is compressed.
        servers = {sc["id"]: [s for s in started if s.name != "nginx-static" or
                              (sc.get("gzip") and sc["status"] == 200)] for sc in scens}
        rss0 = {s.name: s.memory()[1] for s in started}
        log(f"servers up in {tmp}: " + ", ".join(f"{s.name} :{s.port}" for s in started))
        check(servers, scens, tmp)
        log("all servers agree on every scenario; loading")
        results = run_load(servers, scens, args, lua)
        resources = {}
        for s in started:
            hwm, rss = s.memory()
            resources[s.name] = dict(hwm=hwm, rss=rss, rss0=rss0[s.name], cpu=s.cpu_seconds(),
                                     procs=len(s.pids()))
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
        meta = dict(
            machine=f"{cpus} vCPU {model}, {mem:.0f} GiB, Linux {os.uname().release}; "
                    "servers and wrk share the CPUs",
            load_start=" ".join(f"{x:.2f}" for x in load_start),
            load_end=" ".join(f"{x:.2f}" for x in loadavg()),
            versions=[version([args.folio, "--version"]),
                      "libmicrohttpd " + subprocess.run(
                          ["dpkg-query", "-W", "-f", "${Version}", "libmicrohttpd12"],
                          capture_output=True, text=True).stdout,
                      version([tool("nginx"), "-v"]), version([tool("lighttpd"), "-v"]),
                      version(["wrk", "-v"]).split(" [")[0]])
        print(report(started, scens, results, args, meta, resources))
    finally:
        for s in started:
            s.stop()
        if args.keep:
            log("kept " + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
