#!/usr/bin/env python3
"""A slowloris past the connection cap: is a normal client still served?

Issue 19's case: SLOW connections (1,100 by default) from ten addresses
(127.0.0.2-11, so under any per-address limit), each sending its request
head one line every 5 s and never finishing it (with --reconnect, one the
server closes is opened again at once: the pressure never lets up, and
the servers churn). Meanwhile a normal client on
127.0.0.1 sends a whole request once a second and must have its 200 within
2 s. Reported per server: the probes answered, when the first one was, and
how many slow connections the server closed (and so made room).

    python3 bench/slowloris.py                       # folio and nginx, 60 s each
    python3 bench/slowloris.py --folio after=build/src/folio --seconds 30

folio runs with its defaults (--connection-limit 1024, --per-ip-limit 256,
--header-timeout 60), nginx with worker_connections 1024 and its default
client_header_timeout (60 s). Python standard library only; the peer is
Debian's nginx-light (installed with apt-get when missing).
"""
import argparse
import os
import resource
import selectors
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from article_servers import ensure, hb  # noqa: E402  (http.py's Server, free_port, tool)
LINE_EVERY = 5.0
SOURCES = [f"127.0.0.{i}" for i in range(2, 12)]


class Attack(threading.Thread):
    """count slow connections to port, kept open, a header line each LINE_EVERY s."""

    def __init__(self, port, count, reconnect):
        super().__init__(daemon=True)
        self.port, self.count, self.reconnect = port, count, reconnect
        self.sel = selectors.DefaultSelector()
        self.socks = {}  # socket -> next line due
        self.closed = 0  # by the server
        self.stop = threading.Event()

    def open_one(self, i):
        s = socket.socket()
        s.setblocking(False)
        s.bind((SOURCES[i % len(SOURCES)], 0))
        s.connect_ex(("127.0.0.1", self.port))
        self.socks[s] = (False, time.monotonic())  # (head begun, next line due)
        self.sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE)

    def drop(self, s):
        self.sel.unregister(s)
        del self.socks[s]
        s.close()

    def run(self):
        for i in range(self.count):
            self.open_one(i)
        n = self.count
        while not self.stop.is_set():
            now = time.monotonic()
            for key, ev in self.sel.select(timeout=0.2):
                s = key.fileobj
                begun, due = self.socks[s]
                if ev & selectors.EVENT_READ:  # the server answered or closed: gone either way
                    try:
                        s.recv(4096)
                    except OSError:
                        pass
                    self.drop(s)
                    self.closed += 1
                    if self.reconnect:
                        self.open_one(n)
                        n += 1
                elif not begun:  # connected: the head's first lines
                    try:
                        s.send(b"GET / HTTP/1.1\r\nHost: a\r\n")
                    except OSError:
                        continue
                    self.socks[s] = (True, now + LINE_EVERY)
                    self.sel.modify(s, selectors.EVENT_READ)
            for s, (begun, due) in list(self.socks.items()):
                if begun and due <= now:
                    try:
                        s.send(b"X-Slow: 1\r\n")
                    except OSError:
                        pass
                    self.socks[s] = (True, now + LINE_EVERY)
        for s in list(self.socks):
            self.drop(s)


def probe(port):
    """One whole request from 127.0.0.1: True when a 200 came within 2 s."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            return s.recv(12).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def measure(server, slow, seconds, reconnect):
    """Probes server once a second for seconds under the attack."""
    attack = Attack(server.port, slow, reconnect)
    attack.start()
    start = time.monotonic()
    answered, first = 0, None
    for k in range(seconds):
        due = start + k + 1
        time.sleep(max(0.0, due - time.monotonic()))
        if probe(server.port):
            answered += 1
            first = k + 1 if first is None else first
    attack.stop.set()
    attack.join()
    return answered, first, attack.closed


def start_folio(binary, tmp, name):
    out = os.path.join(tmp, name + ".out")
    s = hb.Server(name, f"folio ({binary})", [binary, "--root", hb.REPO, "--host", "127.0.0.1", "--port",
                  str(hb.free_port()), "--production", "--quiet", "--grace", "1"], 0, tmp, out)
    s.port = int(s.proc.args[s.proc.args.index("--port") + 1])
    s.wait_ready()
    return s


def start_nginx(tmp):
    d = os.path.join(tmp, "nginx")
    os.makedirs(os.path.join(d, "logs"))
    port = hb.free_port()
    conf = f"""
{"user root;" if os.geteuid() == 0 else ""}
worker_processes 1;
worker_rlimit_nofile 4096;
daemon off;
pid {d}/nginx.pid;
error_log {d}/logs/error.log crit;
events {{ worker_connections 1024; use epoll; }}
http {{
    access_log off;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    server {{ listen 127.0.0.1:{port}; root {hb.REPO}/www; index index.html; }}
}}
"""
    path = os.path.join(d, "nginx.conf")
    with open(path, "w") as f:
        f.write(conf)
    s = hb.Server("nginx", "nginx, worker_connections 1024", [hb.tool("nginx"), "-p", d, "-c", path], port, d,
                  os.path.join(d, "nginx.out"))
    s.wait_ready()
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--folio", action="append", default=[], metavar="NAME=BINARY")
    ap.add_argument("--slow", type=int, default=1100, help="slow connections (1100)")
    ap.add_argument("--seconds", type=int, default=60, help="probes, one a second (60)")
    ap.add_argument("--reconnect", action="store_true", help="open again each one the server closes")
    ap.add_argument("--no-nginx", action="store_true")
    args = ap.parse_args()
    ensure({"nginx": "nginx-light"})
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # our own side of 1,100 sockets
    folios = [[n, os.path.abspath(b)] for n, b in (f.split("=", 1) for f in args.folio)] or [["folio", os.path.join(hb.REPO, "build", "src", "folio")]]
    tmp = tempfile.mkdtemp(prefix="folio-slowloris-")
    rows = []
    starters = [(name, lambda n=name, b=binary: start_folio(b, tmp, "folio-" + n)) for name, binary in folios]
    if not args.no_nginx:
        starters.append(("nginx 1.22", lambda: start_nginx(tmp)))
    for name, start in starters:
        server = start()
        try:
            answered, first, closed = measure(server, args.slow, args.seconds, args.reconnect)
        finally:
            server.stop()
        rows.append((name, answered, first, closed))
        print(f"{name}: {answered}/{args.seconds} probes answered, first at {first} s, "
              f"{closed} slow connections closed by it", file=sys.stderr)
    print(f"\n{args.slow} slow connections from {len(SOURCES)} addresses, a header line every "
          f"{LINE_EVERY:g} s{', each closed one opened again' if args.reconnect else ''}; one probe a second for {args.seconds} s (load {os.getloadavg()[0]:.1f})\n")
    print("| server | probes answered | first answered | slow connections it closed |")
    print("|---|---:|---:|---:|")
    for name, answered, first, closed in rows:
        print(f"| {name} | {answered} / {args.seconds} | {f'{first} s' if first else 'never'} | {closed:,} |")


if __name__ == "__main__":
    main()
