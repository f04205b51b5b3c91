"""Operations, as a container platform or an operator meets folio:
--health-check, SIGHUP, PORT as platforms set it, the article's own config
file, bad values naming their source, threads = 0, and `meson install`."""
import gzip
import http.server
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

from folio import FOLIO, Server, main, preloaded


def run(*args, env=None, cwd=None, timeout=10):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("FOLIO_") and k != "PORT"}
    full_env.update(env or {})
    return subprocess.run([FOLIO, *args], capture_output=True, text=True, env=full_env,
                          cwd=cwd, timeout=timeout)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(condition, timeout=10, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


class Fixture(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="folio-ops-")
        self.root = os.path.join(self.tmp, "article")
        for d in ("www", "fragments", "assets", "config"):
            os.makedirs(os.path.join(self.root, d))
        with open(os.path.join(self.root, "www", "index.html"), "w") as f:
            f.write("<!doctype html><title>t</title><p>hello <a href=\"/assets/a.txt\">a</a></p>\n")
        with open(os.path.join(self.root, "assets", "a.txt"), "w") as f:
            f.write("asset\n")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write_config(self, text):
        path = os.path.join(self.root, "config", "folio.conf")
        with open(path, "w") as f:
            f.write(text)
        return path

    def assert_bad(self, result, *needles):
        self.assertEqual(result.returncode, 2, result.stderr)
        lines = result.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        for needle in needles:
            self.assertIn(needle, lines[0])


class HealthCheck(Fixture):
    def test_healthy_server(self):
        with Server(self.root) as s:
            self.assertEqual(run("--health-check", s.url).returncode, 0)
            self.assertEqual(run("--health-check=" + s.url + "__folio/health").returncode, 0)
            # No URL: the one the same settings would serve (environment, file).
            self.assertEqual(run("--health-check", env={"PORT": str(s.port)}).returncode, 0)
            self.assertEqual(run("--health-check", env={"FOLIO_HOST": "0.0.0.0",
                                                        "FOLIO_PORT": str(s.port)}).returncode, 0)
            self.write_config("[server]\nport = %d\n" % s.port)
            self.assertEqual(run("--health-check", "--root", self.root, cwd="/").returncode, 0)
            port = s.port
        r = run("--health-check", "--port", str(port))
        self.assertEqual(r.returncode, 1)
        self.assertIn("http://127.0.0.1:%d/__folio/health" % port, r.stderr)
        self.assertIn("refused", r.stderr)

    def test_not_200_is_unhealthy(self):
        class Unavailable(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(503 if self.path == "/__folio/health" else 200)
                self.end_headers()

            def log_message(self, *args):
                pass

        httpd = http.server.HTTPServer(("127.0.0.1", 0), Unavailable)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        try:
            r = run("--health-check", "http://127.0.0.1:%d/" % httpd.server_port)
            self.assertEqual(r.returncode, 1)
            self.assertIn("503", r.stderr)
        finally:
            httpd.shutdown()
            httpd.server_close()

    def test_silent_server_times_out(self):
        with socket.socket() as silent:  # accepts (the kernel does), never answers
            silent.bind(("127.0.0.1", 0))
            silent.listen()
            start = time.monotonic()
            r = run("--health-check", "http://127.0.0.1:%d/" % silent.getsockname()[1])
            elapsed = time.monotonic() - start
        self.assertEqual(r.returncode, 1)
        self.assertIn("no answer", r.stderr)
        self.assertLess(elapsed, 8)  # a bound, not a speed: the timeout is 2 s

    def test_bad_url(self):
        for url in ("ftp://x/", "http://", "http://h:port/", "http://[::1/"):
            r = run("--health-check", url)
            self.assertEqual(r.returncode, 2, url)
            self.assertIn("not a URL", r.stderr)
        self.assert_bad(run("--health-check", "--port", "0"), "--health-check", "port 0")
        self.assert_bad(run("--health-check", "https://127.0.0.1:8000/"), "not a URL", "plain HTTP")
        self.assert_bad(run("--health-check", "http://127.0.0.1:8000/", "extra"), "unexpected argument 'extra'")


class HealthCheckUnlogged(Fixture):
    """A container's HEALTHCHECK asks every 5 s: folio's own probe leaves
    no access-log line, and nothing else can pass for it: the probe's
    User-Agent from another user's socket, or with a proxy's
    X-Forwarded-For, or on another path, is logged as any request."""

    def test_only_our_own_probe_goes_unlogged(self):
        with Server(self.root) as s:
            health = lambda: [line for line in s.log_lines if '"GET /__folio/health ' in line]
            logged = lambda n: wait_for(lambda: len(health()) >= n, 5, "%d health lines" % n)
            for _ in range(3):
                self.assertEqual(run("--health-check", s.url).returncode, 0)
            # The same program as another user (nobody): a socket folio's user does not own.
            other = subprocess.run([FOLIO, "--health-check", s.url], capture_output=True, text=True,
                                   timeout=10, user=65534, group=65534, extra_groups=[])
            self.assertEqual(other.returncode, 0, other.stderr)
            logged(1)
            probe = {"User_Agent": "folio-health-check"}
            s.get("/__folio/health", X_Forwarded_For="192.0.2.7", **probe)
            logged(2)
            s.get("/__folio/health", User_Agent="curl/8")
            logged(3)
            s.get("/assets/a.txt", **probe)
            self.assertIsNotNone(s.wait_log_line("GET /assets/a.txt"))
            # Another user's, the proxied one and curl's; none of our three probes.
            self.assertEqual(len(health()), 3, "".join(s.log_lines))


class Reload(Fixture):
    def max_age(self, s):
        return s.get("/assets/a.txt").getheader("Cache-Control")

    def sighup_line(self, s, count):
        s.proc.send_signal(signal.SIGHUP)
        lines = wait_for(lambda: [ln for ln in s.stderr_text.splitlines() if "SIGHUP" in ln][count - 1:],
                         what="SIGHUP line %d" % count)
        return lines[0]

    def test_sighup(self):
        path = self.write_config("[server]\nproduction = yes\nmax-age = 100\n")
        with Server(self.root) as s:
            self.assertEqual(self.max_age(s), "public, max-age=100")
            self.assertIn(b'href="/assets/a.txt"', s.get("/").body)
            self.write_config("[server]\nproduction = yes\nmax-age = 200\nbase-path = /pre\n")
            line = self.sighup_line(s, 1)
            self.assertIn("re-read", line)
            self.assertNotIn("restart", line)
            self.assertEqual(self.max_age(s), "public, max-age=200")
            self.assertIn(b'href="/pre/assets/a.txt"', s.get("/").body)  # a string, swapped live

            # A bad value: one line naming file:line, the old settings stay.
            self.write_config("[server]\nproduction = yes\nmax-age = forever\n")
            line = self.sighup_line(s, 2)
            self.assertIn(path + ":3:", line)
            self.assertIn("max-age", line)
            self.assertIn("previous settings", line)
            self.assertEqual(len([ln for ln in s.stderr_text.splitlines() if "forever" in ln]), 1)
            self.assertEqual(self.max_age(s), "public, max-age=200")

            # A route folder that does not exist is as bad.
            self.write_config("[server]\nproduction = yes\nmax-age = 1\n[routes]\n/x/ = nowhere\n")
            line = self.sighup_line(s, 3)
            self.assertIn(path + ":5: route /x/", line)
            self.assertEqual(self.max_age(s), "public, max-age=200")

            # What only applies at start-up is named, and kept; the rest applies.
            self.write_config("[server]\nproduction = yes\nmax-age = 300\ntimeout = 5\n"
                              "log-format = json\n")
            line = self.sighup_line(s, 4)
            self.assertIn("needs a restart: timeout", line)
            self.assertEqual(self.max_age(s), "public, max-age=300")
            logged = len(s.log_lines)
            s.get("/")
            last = wait_for(lambda: s.log_lines[logged:], what="the log line")[-1]
            self.assertEqual(json.loads(last)["status"], 200)

    def test_out_of_memory_keeps_the_previous_settings(self):
        # A route's prefix is copied by malloc(its length + 2), here 178, a size nothing else
        # asks for: it fails there, as under memory pressure (malloc itself: a sanitizer's
        # strdup would not come through the shim). A SIGHUP that cannot make its settings
        # changes nothing, as a bad file.
        self.write_config("[server]\nproduction = yes\nmax-age = 100\n")
        env = preloaded("FOLIO_FAILING_MALLOC_SHIM", fail_malloc_size=178, fail_malloc_times=1)
        with Server(self.root, env=env) as s:
            self.write_config("[server]\nproduction = yes\nmax-age = 200\n[routes]\n/%s/ = assets\n"
                              % ("p" * 175))
            line = self.sighup_line(s, 1)
            self.assertIn("out of memory", line)
            self.assertIn("previous settings", line)
            self.assertEqual(self.max_age(s), "public, max-age=100")
            self.write_config("[server]\nproduction = yes\nmax-age = 200\n")
            self.assertIn("re-read", self.sighup_line(s, 2))  # the next one applies
            self.assertEqual(self.max_age(s), "public, max-age=200")

    def test_production_needs_a_restart(self):
        self.write_config("[server]\n")
        with Server(self.root) as s:
            self.write_config("[server]\nproduction = yes\n")
            self.assertIn("needs a restart: production", self.sighup_line(s, 1))
            self.assertEqual(s.get("/assets/a.txt").getheader("Cache-Control"), "no-cache")


class ReloadUnderLoad(Fixture):
    """SIGHUP swaps a whole settings snapshot while requests run: each request
    sees one generation's settings, never a mix, and what docs/deploy.md calls
    live applies to the next request (gzip-level too). Run under
    ThreadSanitizer by .ci/run, which fails it on any data race."""

    BIG = "".join("line %d of a compressible asset, with words that repeat\n" % i for i in range(4000))

    def setUp(self):
        super().setUp()
        with open(os.path.join(self.root, "assets", "big.txt"), "w") as f:
            f.write(self.BIG)

    def config(self, n):
        return ("[server]\nproduction = yes\ntrust-proxy = yes\nmax-age = %d\ngzip-level = %d\n"
                "log-format = %s\nbase-path = %s\n" % (100 + n % 2, 1 + 8 * (n % 2),
                                                       ("common", "json")[n % 2], ("/a", "/b")[n % 2]))

    def sighup(self, s, count):
        s.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: len([ln for ln in s.stderr_text.splitlines() if "re-read" in ln]) >= count,
                 what="SIGHUP %d re-read" % count)

    def big(self, s, **headers):
        return s.get("/assets/big.txt", Accept_Encoding="gzip", **headers)

    def test_forty_reloads_under_four_clients(self):
        self.write_config(self.config(0))
        failures, done = [], threading.Event()
        with Server(self.root) as s:
            def client(i):
                prefix = "/p%d" % i
                while not done.is_set():
                    page = s.get("/", X_Forwarded_Prefix=prefix)
                    if page.status != 200 or b'href="%s/assets/a.txt"' % prefix.encode() not in page.body:
                        failures.append(("page", page.status, page.body[:80]))
                    big = self.big(s, X_Forwarded_Prefix=prefix)
                    age = big.getheader("Cache-Control")
                    if big.status != 200 or age not in ("public, max-age=100", "public, max-age=101"):
                        failures.append(("asset", big.status, age))
                    elif gzip.decompress(big.body).decode() != self.BIG:
                        failures.append(("asset bytes", len(big.body)))
            clients = [threading.Thread(target=client, args=(i,)) for i in range(4)]
            for c in clients:
                c.start()
            try:
                for n in range(1, 41):
                    self.write_config(self.config(n))
                    self.sighup(s, n)
            finally:
                done.set()
                for c in clients:
                    c.join(30)
            self.assertEqual(failures, [])
            self.assertEqual(s.stop(), 0, s.stderr_text)

    def test_gzip_level_shows_in_the_next_compressed_body(self):
        self.write_config(self.config(0))  # gzip-level 1
        with Server(self.root) as s:
            fast = self.big(s)
            self.assertTrue(fast.getheader("ETag").endswith('-gz1"'), fast.getheader("ETag"))
            self.write_config(self.config(1))  # gzip-level 9
            self.sighup(s, 1)
            best = self.big(s)
            self.assertTrue(best.getheader("ETag").endswith('-gz9"'), best.getheader("ETag"))
            self.assertLess(len(best.body), len(fast.body))  # level 9 packs these lines tighter
            self.assertEqual(gzip.decompress(best.body).decode(), self.BIG)

    def test_config_file_gone_changes_nothing(self):
        path = self.write_config("[server]\nproduction = yes\nmax-age = 60\nbase-path = /article\n")
        with Server(self.root) as s:
            os.rename(path, path + ".away")
            s.proc.send_signal(signal.SIGHUP)
            line = wait_for(lambda: [ln for ln in s.stderr_text.splitlines() if "SIGHUP" in ln],
                            what="the SIGHUP line")[0]
            self.assertIn("config " + path, line)
            self.assertIn("previous settings", line)
            self.assertNotIn("re-read", line)
            self.assertEqual(s.get("/assets/a.txt").getheader("Cache-Control"), "public, max-age=60")
            self.assertIn(b'href="/article/assets/a.txt"', s.get("/").body)


class Settings(Fixture):
    def test_empty_port_is_unset(self):
        port = free_port()
        self.write_config("[server]\nport = %d\n" % port)
        env = {k: v for k, v in os.environ.items() if not k.startswith("FOLIO_")}
        env["PORT"] = ""
        proc = subprocess.Popen([FOLIO, "--root", self.root], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env, text=True, cwd="/")
        try:
            self.assertIn("http://127.0.0.1:%d/" % port, proc.stderr.readline())
        finally:
            proc.send_signal(signal.SIGTERM)
            self.assertEqual(proc.wait(10), 0, proc.stderr.read())

    def test_bad_host_names_its_source(self):
        self.assert_bad(run("--root", self.root, "--host", "no such host"), "--host", "'no such host'")
        self.assert_bad(run("--root", self.root, env={"FOLIO_HOST": "300.1.1.1"}), "FOLIO_HOST")
        path = self.write_config("[server]\n\nhost = 1.2.3.4.5\n")
        self.assert_bad(run("--root", self.root), path + ":3:", "host")

    def test_missing_root_names_its_source(self):
        nowhere = os.path.join(self.tmp, "nowhere")
        self.assert_bad(run("--root", nowhere), "--root: root " + nowhere, "No such file")
        self.assert_bad(run(env={"FOLIO_ROOT": nowhere}), "FOLIO_ROOT: root " + nowhere)
        path = os.path.join(self.tmp, "other.conf")
        with open(path, "w") as f:
            f.write("[server]\n\nroot = %s\n" % nowhere)
        self.assert_bad(run("--config", path), "%s:3: root %s" % (path, nowhere))

    def test_missing_route_folder_names_file_and_line(self):
        path = self.write_config("; mounts\n[routes]\n/data/ = no-such-folder\n")
        self.assert_bad(run("--root", self.root), path + ":3:", "route /data/", "no-such-folder",
                        "No such file")
        os.makedirs(os.path.join(self.root, "plain"))
        os.rmdir(os.path.join(self.root, "fragments"))
        with open(os.path.join(self.root, "fragments"), "w") as f:
            f.write("a file where a default route's folder would be\n")
        self.write_config("")
        self.assert_bad(run("--root", self.root), "route /fragments/", "default route",
                        "'/fragments/ ='")
        self.write_config("[routes]\n/fragments/ =\n")  # dropped: it starts without one
        with Server(self.root) as s:
            self.assertEqual(s.get("/").status, 200)

    def test_an_article_of_www_alone_starts(self):
        """fragments/ and assets/ are optional: a default route whose folder is
        absent is not mounted, and one line says so; "/" stays required."""
        shutil.rmtree(os.path.join(self.root, "fragments"))
        shutil.rmtree(os.path.join(self.root, "assets"))
        with Server(self.root) as s:
            self.assertEqual(s.get("/").status, 200)
            self.assertEqual(s.get("/assets/a.txt").status, 404)
            notes = wait_for(lambda: [ln for ln in s.stderr_text.splitlines() if "not mounted" in ln][1:] and
                             [ln for ln in s.stderr_text.splitlines() if "not mounted" in ln], what="two notes")
            self.assertEqual(len(notes), 2, s.stderr_text)
            self.assertIn("route /fragments/: no folder", notes[0] + notes[1])
            self.assertIn("route /assets/: no folder", notes[0] + notes[1])

    def test_no_www_suggests_root_first(self):
        elsewhere = os.path.join(self.tmp, "elsewhere")
        os.makedirs(elsewhere)
        result = run(cwd=elsewhere)
        self.assert_bad(result, "route /: folder ./www", "--root DIR")
        line = result.stderr.strip()
        self.assertLess(line.index("--root"), line.index("'/ ='"), line)  # the usual fix first

    def test_a_misspelt_folio_variable_is_named(self):
        with Server(self.root, env={"FOLIO_PRODUCTON": "1", "FOLIO_BIN": "/x"}) as s:
            self.assertEqual(s.get("/assets/a.txt").getheader("Cache-Control"), "no-cache")  # still preview
            typos = wait_for(lambda: [ln for ln in s.stderr_text.splitlines() if "is not a setting" in ln],
                             what="the typo's line")
            self.assertEqual(typos, ["folio: FOLIO_PRODUCTON is not a setting, ignored (FOLIO_PRODUCTION?)"])

    def test_threads_zero_is_one_per_cpu(self):
        with Server(self.root, "--threads", "0") as s:
            self.assertTrue(s.alive())
        self.write_config("[server]\nthreads = 0\n")
        with Server(self.root) as s:
            self.assertTrue(s.alive())

    def threads_of(self, *args, wrap=()):
        """The thread count of a folio started with args (under wrap, e.g. taskset)."""
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("FOLIO_")}
        proc = subprocess.Popen([*wrap, FOLIO, "--root", self.root, "--port", str(port), *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
        try:
            while "http://" not in proc.stderr.readline():  # the banner: the daemon's threads run
                self.assertIsNone(proc.poll())
            with open("/proc/%d/status" % proc.pid) as f:
                return int(next(ln for ln in f if ln.startswith("Threads:")).split()[1])
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(10)

    def test_the_open_file_limit_is_raised_to_the_hard_one(self):
        """1,024 connections + 256 held files + memfds + watched folders exceed a
        soft limit of 1,024 (issue 19, 11): folio takes what the hard limit allows."""
        port = free_port()
        proc = subprocess.Popen(["prlimit", "--nofile=1024:4096", FOLIO, "--root", self.root, "--port", str(port)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            self.assertIn("http://", proc.stderr.readline())
            with open("/proc/%d/limits" % proc.pid) as f:
                line = next(ln for ln in f if ln.startswith("Max open files"))
            self.assertEqual(line.split()[3:5], ["4096", "4096"], line)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(10)

    def test_threads_follow_the_cpus_this_process_may_use(self):
        """--threads 0 counts the affinity mask (taskset, --cpuset-cpus), not the
        node's CPUs: pinned to one CPU, folio runs as many threads as with --threads 1."""
        one = self.threads_of("--threads", "1")
        self.assertEqual(self.threads_of("--threads", "0", wrap=("taskset", "-c", "0")), one)
        cpus = len(os.sched_getaffinity(0))
        if cpus > 1:  # a second CPU adds a worker
            self.assertEqual(self.threads_of("--threads", "0"), self.threads_of("--threads", str(cpus)))
            self.assertGreater(self.threads_of("--threads", "0"), one)


class Install(unittest.TestCase):
    def test_meson_install_puts_folio_on_path(self):
        build = os.path.dirname(os.path.dirname(FOLIO))
        dest = tempfile.mkdtemp(prefix="folio-install-")
        try:
            r = subprocess.run(["meson", "install", "-C", build, "--destdir", dest, "--no-rebuild",
                                "--quiet"], capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            prefix = subprocess.run(["meson", "introspect", build, "--buildoptions"],
                                    capture_output=True, text=True, check=True).stdout
            prefix = next(o["value"] for o in json.loads(prefix) if o["name"] == "prefix")
            bindir = os.path.join(prefix, "bin")
            self.assertIn(bindir, "/usr/local/bin:/usr/bin:/bin".split(":"))  # on the default PATH
            installed = dest + bindir + "/folio"
            out = subprocess.run([installed, "--version"], capture_output=True, text=True, timeout=10)
            self.assertEqual(out.stdout, "folio 0.1.0\n")
            # and its man pages where man looks (/usr/local/share/man is on man-db's path)
            mandir = dest + os.path.join(prefix, "share", "man")
            for page in ("man1/folio.1", "man5/folio.conf.5"):
                self.assertTrue(os.path.isfile(os.path.join(mandir, page)), page)
        finally:
            shutil.rmtree(dest, ignore_errors=True)


if __name__ == "__main__":
    main()
