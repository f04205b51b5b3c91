"""The command line, environment and config file as a user meets them: a bad
value is one clear line on stderr and exit status 2; signals stop the
server cleanly."""
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest

from folio import FOLIO, SLOWDOWN, Server, main, make_article

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(*args, env=None, cwd=None, timeout=10):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("FOLIO_") and k != "PORT"}
    full_env.update(env or {})
    return subprocess.run([FOLIO, *args], capture_output=True, text=True, env=full_env,
                          cwd=cwd, timeout=timeout)


class Fixture(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="folio-cli-")
        cls.root = os.path.join(cls.tmp, "article")
        for d in ("www", "fragments", "assets"):
            os.makedirs(os.path.join(cls.root, d))
        with open(os.path.join(cls.root, "www", "index.html"), "w") as f:
            f.write("<!doctype html><title>t</title><p>hello</p>\n")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def config(self, text):
        path = os.path.join(self.tmp, "folio.conf")
        with open(path, "w") as f:
            f.write(text)
        return path

    def assert_bad(self, result, *needles):
        self.assertEqual(result.returncode, 2, result.stderr)
        lines = result.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertTrue(lines[0].startswith("folio: "), lines[0])
        for needle in needles:
            self.assertIn(needle, lines[0])
        self.assertEqual(result.stdout, "")


class Usage(Fixture):
    def test_help_and_version(self):
        r = run("--help")
        self.assertEqual(r.returncode, 0)
        for option in ("--root", "--config", "--host", "--port", "--threads", "--[no-]live-reload",
                       "--log-format", "--[no-]quiet", "--[no-]production", "--help", "--version"):
            self.assertIn(option, r.stdout)
        r = run("--version")
        self.assertEqual((r.returncode, r.stdout), (0, "folio 0.1.0\n"))

    def test_bad_flags(self):
        self.assert_bad(run("--root", self.root, "--port", "99999"), "--port", "'99999'", "0 to 65535")
        self.assert_bad(run("--root", self.root, "--log-format", "xml"), "--log-format", "common, combined, json")
        self.assert_bad(run("--root", self.root, "--threads", "257"), "--threads", "0 to 256")
        self.assert_bad(run("--root", self.root, "--bogus"), "unknown option '--bogus'")
        self.assert_bad(run("--root", self.root, "--port"), "--port needs a value")
        self.assert_bad(run("--root", self.root, "stray"), "unexpected argument 'stray'")

    def test_an_empty_variable_counts_as_unset(self):
        # As templated manifests leave them: FOLIO_PRODUCTION= is no value, not a bad one.
        empty = {"PORT": "", "FOLIO_PRODUCTION": "", "FOLIO_CONFIG": "", "FOLIO_ROOT": "", "FOLIO_HOST": ""}
        with Server(self.root, env=empty) as s:
            self.assertEqual(json.loads(s.get("/__folio/health").body)["mode"], "preview")

    def test_a_control_byte_in_a_bad_value_is_escaped(self):
        # an escape sequence must not reach the terminal, nor a newline break the one line
        self.assert_bad(run("--root", self.root, "--base-path", "/a\x1b[31mred"), "'/a\\x1B[31mred'")
        path = self.config("[server]\nbase-path = /b\x07\n")
        self.assert_bad(run("--root", self.root, "--config", path), path + ":2:", "'/b\\x07'")

    def test_a_bad_allowed_hosts_list(self):
        self.assert_bad(run("--root", self.root, "--allowed-hosts", "box/x"), "--allowed-hosts", "'box/x'")
        self.assert_bad(run("--root", self.root, env={"FOLIO_ALLOWED_HOSTS": "a,,b"}), "FOLIO_ALLOWED_HOSTS", "'a,,b'")

    def test_bad_environment(self):
        self.assert_bad(run("--root", self.root, env={"PORT": "eighty"}), "PORT:", "'eighty'")
        # what Kubernetes puts in a pod beside a Service named folio
        self.assert_bad(run("--root", self.root, env={"FOLIO_PORT": "tcp://10.0.0.7:80"}), "FOLIO_PORT:",
                        "service link", "enableServiceLinks: false")
        self.assert_bad(run("--root", self.root, env={"FOLIO_LIVE_RELOAD": "perhaps"}),
                        "FOLIO_LIVE_RELOAD", "yes/no")

    def test_missing_folders(self):
        self.assert_bad(run("--root", os.path.join(self.tmp, "nope")), "root", "nope", "No such file")
        # fragments/ and assets/ may be absent (test_ops: an article of www/ alone); www/ not.
        partial = os.path.join(self.tmp, "partial")
        os.makedirs(os.path.join(partial, "assets"), exist_ok=True)
        self.assert_bad(run(cwd=partial), "route /: folder", "www", "No such file", "--root DIR")
        # a root someone set is named with where it was set
        self.assert_bad(run("--root", partial), "route /: folder", "the root, from --root, must be")
        self.assert_bad(run(env={"FOLIO_ROOT": partial}), "the root, from FOLIO_ROOT, must be")
        path = self.config("[server]\nroot = %s\n" % partial)
        self.assert_bad(run("--config", path), "the root, from %s:2, must be" % path)

    def test_bad_config_file(self):
        path = self.config("[server]\nport = 8080\nthreads = many\n")
        self.assert_bad(run("--root", self.root, "--config", path), path + ":3:", "threads", "'many'")
        path = self.config("[server]\nthis is not ini\n")
        self.assert_bad(run("--root", self.root, "--config", path), path + ":2:")
        path = self.config("[routes]\n/extra/ = missing-folder\n")
        self.assert_bad(run("--root", self.root, "--config", path), "route /extra/", "missing-folder")
        self.assert_bad(run("--root", self.root, "--config", os.path.join(self.tmp, "absent.conf")),
                        "absent.conf", "No such file")
        self.assert_bad(run("--root", self.root, env={"FOLIO_CONFIG": self.tmp}), "config", self.tmp,
                        "Is a directory")
        path = self.config("port = 8080\n[server]\n")
        self.assert_bad(run("--root", self.root, "--config", path), path + ":1:",
                        "'port' is outside any section: put it under [server]")

    def test_default_config_is_read_from_the_root(self):
        # ROOT/config/folio.conf, wherever folio starts; the working folder's is not read.
        root = os.path.join(self.tmp, "rooted")
        for d in ("www", "fragments", "assets", "config"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        with open(os.path.join(root, "config", "folio.conf"), "w") as f:
            f.write("[server]\nlog-format = yaml\n")
        self.assert_bad(run("--root", root, cwd="/"), root + "/config/folio.conf:2:", "log-format")
        self.assert_bad(run(env={"FOLIO_ROOT": root}, cwd="/"), root + "/config/folio.conf:2:")
        self.assert_bad(run(cwd=root), "config/folio.conf:2:", "log-format")
        # a link there to nothing is named, not taken for no file
        os.remove(os.path.join(root, "config", "folio.conf"))
        os.symlink("/nonexistent/folio.conf", os.path.join(root, "config", "folio.conf"))
        self.assert_bad(run("--root", root), root + "/config/folio.conf", "a symbolic link to nothing there")
        self.assertEqual(run("--root", self.root, "--port", "99999", cwd=root).stderr,
                         "folio: --port: '99999' is not a number from 0 to 65535\n")


    def test_the_shipped_config_file_changes_nothing(self):
        # config/folio.conf says its values are the defaults: an article of www/ alone
        # with it copied in starts as it does without it (no route made explicit).
        root = os.path.join(self.tmp, "shipped")
        for d in ("www", "config"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        shutil.copy(os.path.join(self.root, "www", "index.html"), os.path.join(root, "www"))
        shutil.copy(os.path.join(REPO, "config", "folio.conf"), os.path.join(root, "config"))
        with Server(root) as s:
            self.assertEqual(s.get("/").status, 200)
            self.assertEqual(s.get("/assets/x.png").status, 404)


class Layers(Fixture):
    def test_precedence(self):
        path = self.config("[server]\nlog-format = combined\nproduction = yes\n")
        # file says combined, environment says json, the flag says common
        with Server(self.root, "--config", path, env={"FOLIO_LOG_FORMAT": "json"}) as s:
            s.get("/")
            line = s.wait_log(1)[0]
            json.loads(line)
            self.assertEqual(json.loads(s.get("/__folio/health").body)["mode"], "production")
        with Server(self.root, "--config", path, "--log-format", "common",
                    env={"FOLIO_LOG_FORMAT": "json"}) as s:
            s.get("/")
            self.assertRegex(s.wait_log(1)[0], r'^127\.0\.0\.1 - - \[.*\] "GET / HTTP/1\.1" 200 \d+\n$')

    def test_routes_from_config(self):
        os.makedirs(os.path.join(self.root, "extra"), exist_ok=True)
        with open(os.path.join(self.root, "extra", "data.json"), "w") as f:
            f.write('{"mounted": true}\n')
        path = self.config("[routes]\n/data/ = extra\n/fragments/ =\n")
        with Server(self.root, "--config", path) as s:
            self.assertEqual(s.get("/data/data.json").body, b'{"mounted": true}\n')
            self.assertEqual(s.get("/fragments/x.html").status, 404)

    def test_port_zero_prints_the_port(self):
        with Server(self.root) as s:
            self.assertRegex(s.banner, r"^folio: serving .*article \(preview, live reload\) at "
                                       r"http://127\.0\.0\.1:\d+/\n$")
            self.assertNotEqual(s.port, 0)
            self.assertEqual(s.get("/").status, 200)

    def test_port_from_environment(self):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if k != "FOLIO_PORT"}
        env["PORT"] = str(port)
        proc = subprocess.Popen([FOLIO, "--root", self.root], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env, text=True)
        try:
            line = proc.stderr.readline()
            self.assertIn("http://127.0.0.1:%d/" % port, line)
        finally:
            proc.send_signal(signal.SIGTERM)
            self.assertEqual(proc.wait(10), 0)

    def test_port_in_use(self):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            r = run("--root", self.root, "--port", str(port))
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot listen on 127.0.0.1 port %d" % port, r.stderr)
        self.assertIn("in use", r.stderr)
        self.assertNotIn("port 0", r.stderr)  # MHD's own words name the port asked for too

    @contextlib.contextmanager
    def on_host(self, host):
        """folio bound to host on a free port: (process, its first stderr line, port);
        stopped by SIGTERM after, which must exit 0."""
        proc = subprocess.Popen([FOLIO, "--root", self.root, "--host", host, "--port", "0"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            first = proc.stderr.readline()
            yield proc, first, int(first.rsplit(":", 1)[1].strip("/\n"))
        finally:
            proc.send_signal(signal.SIGTERM)
            self.assertEqual(proc.wait(10), 0)

    def assert_serves(self, family, address, port):
        with socket.socket(family) as c:
            c.settimeout(5)
            c.connect((address, port))
            c.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            self.assertTrue(c.recv(100).startswith(b"HTTP/1.1 200"), address)

    def test_banner_is_on_stderr_with_the_network_urls(self):
        """stdout is the access log's alone; bound to all addresses, folio names
        every address a reader elsewhere can use, as vite does."""
        with self.on_host("0.0.0.0") as (proc, first, port):
            self.assertRegex(first, r"^folio: serving .* at http://127\.0\.0\.1:\d+/$")
            wanted = subprocess.run(["ip", "-o", "-4", "addr", "show", "scope", "global"],
                                    capture_output=True, text=True, check=True).stdout.split("\n")
            addresses = [w.split()[3].split("/")[0] for w in wanted if w.strip()]
            lines = [proc.stderr.readline() for _ in addresses]
            for a in addresses:
                self.assertIn("folio: on the network at http://%s:%d/" % (a, port), "".join(lines))
        self.assertEqual(proc.stdout.read(), "")  # no request, no log: the banner is not on stdout

    def test_dual_stack_for_all_ipv6_addresses(self):
        """--host :: listens on both families, as nginx's ipv6only=off."""
        with self.on_host("::") as (_, _first, port):
            self.assert_serves(socket.AF_INET, "127.0.0.1", port)
            self.assert_serves(socket.AF_INET6, "::1", port)

    def test_ipv6_loopback(self):
        with self.on_host("::1") as (_, first, port):
            self.assertRegex(first, r"http://\[::1\]:\d+/")
            self.assert_serves(socket.AF_INET6, "::1", port)


class Shutdown(Fixture):
    def test_sigterm_and_sigint_exit_zero(self):
        for sig in (signal.SIGTERM, signal.SIGINT):
            s = Server(self.root).__enter__()
            self.assertEqual(s.get("/").status, 200)
            start = time.monotonic()
            self.assertEqual(s.stop(sig), 0)
            self.assertLess(time.monotonic() - start, 3 * SLOWDOWN)
            self.assertIn("stopping", s.stderr_text)

    def test_request_in_flight_completes(self):
        big = os.path.join(self.root, "assets", "big.bin")
        with open(big, "wb") as f:
            f.write(os.urandom(1 << 20) * 24)
        s = Server(self.root, "--grace", "10").__enter__()
        got = {}
        begun = threading.Event()

        def slow_download():
            with socket.create_connection(("127.0.0.1", s.port), timeout=20) as c:
                c.sendall(b"GET /assets/big.bin HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                data = []
                while True:
                    b = c.recv(65536)
                    if not b:
                        break
                    data.append(b)
                    begun.set()
                    if len(data) < 20:
                        time.sleep(0.05)  # slow at first, so SIGTERM lands mid-body
                got["bytes"] = sum(len(b) for b in data)

        t = threading.Thread(target=slow_download)
        t.start()
        self.assertTrue(begun.wait(30), "the download never began")
        deadline = time.monotonic() + 30
        s.proc.send_signal(signal.SIGTERM)
        # Draining: a new connection is not served (MHD keeps the listening
        # socket open, unaccepted, until the daemon stops; then it is refused).
        # folio says "stopping" only once it accepts no more.
        while "stopping" not in s.stderr_text and time.monotonic() < deadline:
            time.sleep(0.01)
        try:
            with socket.create_connection(("127.0.0.1", s.port), timeout=1) as late:
                late.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
                self.assertEqual(late.recv(100), b"")
        except OSError:
            pass  # refused or timed out: either way not served
        t.join(30)
        self.assertEqual(s.stop(), 0)
        self.assertGreater(got["bytes"], 24 << 20)  # the whole body (plus headers) arrived
        os.remove(big)

    def test_idle_kept_alive_connections_close_at_once_on_sigterm(self):
        """As nginx on a graceful stop: a kept-alive connection between requests
        ends at once (it was kept, and its next request served, to the end of the
        grace, then reset), while a download in flight goes on to its end."""
        big = os.path.join(self.root, "assets", "big.bin")
        with open(big, "wb") as f:
            f.write(os.urandom(1 << 20) * 16)
        s = Server(self.root, "--grace", "10").__enter__()
        try:
            idle = socket.create_connection(("127.0.0.1", s.port), timeout=5)
            idle.sendall(b"GET /www-missing HTTP/1.1\r\nHost: localhost\r\n\r\n")
            self.assertTrue(idle.recv(65536).startswith(b"HTTP/1.1 404"))
            busy = socket.create_connection(("127.0.0.1", s.port), timeout=10)
            busy.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
            busy.sendall(b"GET /assets/big.bin HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            got = len(busy.recv(65536))
            start = time.monotonic()
            s.proc.send_signal(signal.SIGTERM)
            self.assertEqual(idle.recv(100), b"")  # ended, unanswered, within the socket's timeout
            self.assertLess(time.monotonic() - start, 2 * SLOWDOWN)
            while True:  # and the download is whole
                b = busy.recv(1 << 20)
                if not b:
                    break
                got += len(b)
            self.assertGreater(got, 16 << 20)
            idle.close()
            busy.close()
        finally:
            self.assertEqual(s.stop(), 0)
            os.remove(big)

    def test_what_is_left_at_the_end_of_the_grace_is_reset_at_once(self):
        """A client that stops reading holds its download past --grace: folio then
        resets it and exits 0 (issue 21, 1). The client learns at once, not when
        its own timeout runs out (in a container the queued bytes and FIN would
        vanish with folio's network)."""
        big = os.path.join(self.root, "assets", "big.bin")
        with open(big, "wb") as f:
            f.write(os.urandom(1 << 20) * 24)
        s = Server(self.root, "--grace", "1").__enter__()
        try:
            with socket.create_connection(("127.0.0.1", s.port), timeout=10) as c:
                c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                c.sendall(b"GET /assets/big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n")
                self.assertTrue(c.recv(4096).startswith(b"HTTP/1.1 200"))
                started = time.monotonic()
                self.assertEqual(s.stop(), 0)  # SIGTERM: the grace passes with the body unsent
                received = 0
                with self.assertRaises(ConnectionResetError):
                    while True:
                        chunk = c.recv(1 << 20)
                        if not chunk:
                            break
                        received += len(chunk)
                self.assertLess(received, 24 << 20)
                self.assertLess(time.monotonic() - started, 8)
        finally:
            os.remove(big)


if __name__ == "__main__":
    main()
