"""What bench/article.py times and what it checks first: the classes of
requests, one GET as wrk sends it, every server's answer to each class
decoded and held to the fixture's bytes, folio's best levels awaited, and the
bytes on the wire per response."""
import os
import socket
import subprocess
import time
import zlib

from article_fixture import (BIG_FRAGMENT, CODINGS, COMPRESSIBLE, GZIP_MIN, PNG_PATH, die,
                             fragment_names, log, url_file)
from article_servers import is_folio

BROWSER = "gzip, deflate, br, zstd"
def is_folio(name):
    return name.startswith("folio")


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
    deadline = time.monotonic() + deadline_s
    for s in [s for s in servers if is_folio(s.name)]:
        todo = [(p, k) for p in paths for k in ("br", "zstd")]
        t0 = time.monotonic()
        while todo and time.monotonic() < deadline:
            todo = [(p, k) for p, k in todo if not at_best(s, p, k, files)]
            if todo:
                time.sleep(0.5)
        if todo:
            log(f"{s.name}: not at its best level after {deadline_s} s: "
                + ", ".join(f"{p} {k}" for p, k in todo) + "; timing anyway")
        else:
            log(f"{s.name}: best brotli and zstd levels in place after {time.monotonic() - t0:.1f} s")


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
