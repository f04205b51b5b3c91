"""Several folio instances behind a real nginx, configured by the shipped
config/nginx/balance.conf (upstream + proxy_next_upstream): one of two
instances is killed (SIGKILL) or restarted (SIGTERM) while clients keep
requesting through nginx, and not one request fails. nginx runs in the
foreground from a temp folder, on 127.0.0.1 only, and is always stopped.
Standard library only; every wait is bounded."""
import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from folio import SLOWDOWN, Server, main, need  # noqa: E402

SOURCE_ROOT = os.path.abspath(os.environ.get("FOLIO_SOURCE_ROOT") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SITE = os.path.join(SOURCE_ROOT, "config", "nginx", "balance.conf")
NGINX = need(shutil.which("nginx") or "/usr/sbin/nginx", "nginx-light")
PAGE = b"<!doctype html><title>balanced</title><p>one of several</p>\n"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent():
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Nginx:
    """nginx with balance.conf, its two upstream servers pointed at ports."""

    def __init__(self, ports):
        self.ports, self.proc = ports, None

    def __enter__(self):
        self.tmp = tempfile.mkdtemp(prefix="folio-balance-")
        with open(SITE) as f:
            site = f.read()
        servers = re.findall(r"server 127\.0\.0\.1:800[12]", site)
        assert len(servers) == 2, "balance.conf should have upstream servers 127.0.0.1:8001 and :8002"
        for default, port in zip(("8001", "8002"), self.ports):
            site = site.replace("server 127.0.0.1:%s" % default, "server 127.0.0.1:%d" % port)
        self.port = free_port()
        site = re.sub(r"(?m)^(\s*)listen 80;", r"\g<1>listen 127.0.0.1:%d;" % self.port, site)
        t = self.tmp
        with open(os.path.join(t, "site.conf"), "w") as f:
            f.write(site)
        with open(os.path.join(t, "nginx.conf"), "w") as f:
            f.write(("user root;\n" if os.geteuid() == 0 else "")
                    + "worker_processes 1;\nevents { worker_connections 512; }\nhttp {\n"
                    "    access_log %(t)s/access.log;\n    client_body_temp_path %(t)s/cb;\n"
                    "    proxy_temp_path %(t)s/proxy;\n    fastcgi_temp_path %(t)s/fcgi;\n"
                    "    uwsgi_temp_path %(t)s/uwsgi;\n    scgi_temp_path %(t)s/scgi;\n"
                    "    include %(t)s/site.conf;\n}\n" % {"t": t})
        self.error_log = os.path.join(t, "error.log")
        self.proc = subprocess.Popen(
            [NGINX, "-p", t + "/", "-c", os.path.join(t, "nginx.conf"), "-e", self.error_log,
             "-g", "daemon off; pid %s/nginx.pid;" % t],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=_die_with_parent)
        deadline = time.monotonic() + 10 * SLOWDOWN
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.__exit__()
                    raise RuntimeError("nginx did not start: " + self.errors())
                time.sleep(0.05)

    def errors(self):
        try:
            with open(self.error_log, errors="replace") as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def __exit__(self, *exc):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


class Load:
    """Clients on keep-alive connections to nginx, each GETting in a loop and
    checking every answer, until stopped."""

    def __init__(self, port, clients=4):
        self.port, self.clients = port, clients
        self.ok, self.failures = 0, []
        self.lock = threading.Lock()
        self.running = True

    def _client(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        while self.running:
            try:
                conn.request("GET", "/")
                resp = conn.getresponse()
                body = resp.read()
                good = resp.status == 200 and body == PAGE
                with self.lock:
                    if good:
                        self.ok += 1
                    else:
                        self.failures.append("%d %r" % (resp.status, body[:80]))
            except (OSError, http.client.HTTPException) as e:
                with self.lock:
                    self.failures.append(repr(e))
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        conn.close()

    def __enter__(self):
        self.threads = [threading.Thread(target=self._client) for _ in range(self.clients)]
        for t in self.threads:
            t.start()
        return self

    def wait_ok(self, count, timeout=30):
        deadline = time.monotonic() + timeout * SLOWDOWN
        target = self.ok + count
        while self.ok < target:
            if time.monotonic() > deadline:
                raise AssertionError("only %d of %d requests within %ss" % (self.ok, target, timeout))
            time.sleep(0.01)

    def __exit__(self, *exc):
        self.running = False
        for t in self.threads:
            t.join(20)


class Balance(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="folio-balance-root-")
        cls.root = os.path.join(cls.tmp, "article")
        for d in ("www", "fragments", "assets"):
            os.makedirs(os.path.join(cls.root, d))
        with open(os.path.join(cls.root, "www", "index.html"), "wb") as f:
            f.write(PAGE)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def one_goes_away(self, sig):
        a = Server(self.root, "--production", "--grace", "2").__enter__()
        with Server(self.root, "--production") as b:
            try:
                with Nginx((a.port, b.port)) as nginx, Load(nginx.port) as load:
                    load.wait_ok(300)
                    self.assertTrue(a.log_lines and b.log_lines, "both instances served")
                    self.assertEqual(a.stop(sig), 0 if sig == signal.SIGTERM else -signal.SIGKILL)
                    served_by_b = len(b.log_lines)
                    load.wait_ok(300)  # all on b now, through the same nginx
                    self.assertGreater(len(b.log_lines), served_by_b)
                self.assertEqual(load.failures, [], nginx.errors())
                self.assertGreater(load.ok, 600)
            finally:
                a.stop(signal.SIGKILL)

    def test_killed_instance_costs_no_request(self):
        self.one_goes_away(signal.SIGKILL)

    def test_restarted_instance_costs_no_request(self):
        self.one_goes_away(signal.SIGTERM)


if __name__ == "__main__":
    main()
