"""The load of bench/article.py: wrk runs in interleaved rounds, each class on
each server, with the server's CPU per request read from /proc."""
import json
import resource
import statistics
import subprocess

from article_fixture import die, log
from article_servers import hb
from article_verify import serves

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
