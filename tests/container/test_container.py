"""The container suite: folio's image built and run by a real Docker engine.

engine.py provides the engine (a private dockerd unless one runs) and the
base images, imported from mmdebstrap tarballs: nothing is pulled. Checks:
the image as built (an empty base holding folio, the shared objects it links,
libmagic's database and the article: no shell, no package manager, no other
program; at most 40 MB; non-root, port, health check); run --read-only
--user 65534 --cap-drop ALL with a published port, the article loads in
Chromium with every fragment filled; HEALTHCHECK reaches healthy and its
probes leave no access-log line; `docker stop` during a slow 2 MB download
lets it finish and the container exits 0; a custom article mounted at
/article is served, its types found by libmagic; a PORT the platform injects
is honoured; docs/preview.md's line for macOS and Windows, run as written
(but the host port and the image's tag), carries an edit made on the host
side of the mount to an open page as a live update; config/compose.yaml
(nginx in front of two replicas) serves the article from both; and the
README's first command, run exactly as written in a fresh Debian 12 and a
fresh Debian 13 container with a copy of the repo mounted, serves the
article. Everything the run makes carries its run id (image tags, the
compose project, container labels) and is removed at the end, and the run
fails if the engine then holds anything it did not before (images and their
layers, containers, networks, volumes, a tag moved). Every wait is bounded;
stdlib only.
"""
import os
import re
import secrets
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from engine import DOCKER, Engine  # noqa: E402
from folio import main, need  # noqa: E402

need("docker-compose", "docker-compose")
need("node", "nodejs")

SOURCE_ROOT = os.path.abspath(os.environ.get("FOLIO_SOURCE_ROOT") or os.path.join(HERE, "..", ".."))
TITLE = "The Memory Wall"  # the repo article's <title>
BIG = 2 << 20              # the slow download's size
MAX_IMAGE_BYTES = 40 * 1000 * 1000  # the image with the article, as Docker counts MB
RELEASES = ("bookworm", "trixie")   # the README's first command is tried on both
# Everything this run makes is named or labelled after it, so that it can be
# removed whole and never touches a user's own folio:latest or folio:ci.
run_id = "folio-ci-%d-%s" % (os.getpid(), secrets.token_hex(3))
IMAGE = "folio-ci:" + run_id[len("folio-ci-"):]
BUILD_IMAGE = "folio-ci-build:" + run_id[len("folio-ci-"):]  # the build stage, removed with its layers
engine = None
scratch = None
before = None


def engine_state():
    """What the engine holds: image IDs (intermediate ones too), containers,
    networks, volumes, and every image tag."""
    ls = lambda *a: set(engine.docker(*a, check=False).stdout.split())
    return {"images": ls("images", "-aq", "--no-trunc"), "containers": ls("ps", "-aq", "--no-trunc"),
            "networks": ls("network", "ls", "-q", "--no-trunc"), "volumes": ls("volume", "ls", "-q"),
            # A tag moved to another image (a user's folio:latest retagged) shows as new.
            "tags": ls("images", "--no-trunc", "--format", "{{.Repository}}:{{.Tag}}@{{.ID}}")}


def setUpModule():
    global engine, scratch, before
    scratch = tempfile.mkdtemp(prefix="folio-container-")
    os.chmod(scratch, 0o755)  # containers run as 65534 and read mounts from here
    engine = Engine(bases=RELEASES).__enter__()
    try:
        before = engine_state()
        # The build stage under a tag of its own: removing that tag at the end
        # removes its layers too (classic builder: one image per step).
        engine.docker("build", "--target", "build", "-t", BUILD_IMAGE, SOURCE_ROOT, timeout=900)
        engine.docker("build", "-t", IMAGE, SOURCE_ROOT, timeout=900)
    except BaseException:
        tearDownModule()
        raise


def tearDownModule():
    """Removes what this run made: its containers (by label), compose's
    (each test takes its project down), both images with their layers. Then
    fails if the engine holds anything it did not hold before."""
    global engine
    left = {}
    if engine:
        try:
            names = engine.docker("ps", "-aq", "--filter", "label=" + run_id, check=False).stdout.split()
            if names:
                engine.docker("rm", "-f", *names, check=False)
            engine.docker("image", "rm", IMAGE, BUILD_IMAGE, check=False)
            if before is not None:
                # What builds left untagged: compose's own build of the Dockerfile
                # misses the classic builder's cache here and leaves its build
                # stage as a dangling leaf. Only images this run made, never an
                # `image prune` (a user's dangling images are not ours).
                dangling = set(engine.docker("images", "-q", "--no-trunc", "--filter", "dangling=true",
                                             check=False).stdout.split())
                ours = sorted(dangling - before["images"])
                if ours:
                    engine.docker("image", "rm", *ours, check=False)
            if before is not None:
                now = engine_state()
                left = {k: sorted(now[k] - before[k]) for k in now if now[k] - before[k]}
        finally:
            engine.__exit__(None, None, None)
            engine = None
    shutil.rmtree(scratch, ignore_errors=True)
    if left:
        raise AssertionError("the run left this in the engine: %r" % left)


def wait_for(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("timed out after %ss waiting for %s" % (timeout, what))


def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read().decode("utf-8", "replace")


def served(url):
    try:
        return http_get(url)
    except OSError:
        return None


def chromium(url, min_fragments=4):
    """tests/container/article.mjs: every fragment filled, no failed request."""
    return subprocess.run(["node", os.path.join(HERE, "article.mjs"), url, str(min_fragments)],
                          capture_output=True,
                          text=True, timeout=120, cwd=os.path.join(SOURCE_ROOT, "tests"))


class Container:
    """docker run -d with the options given; the published 8080 (or port)
    found with `docker port`; removed on exit."""

    def __init__(self, *args, image=IMAGE, port=8080):
        self.args, self.image, self.port = list(args), image, port

    def __enter__(self):
        self.id = engine.docker("run", "-d", "--label", run_id, *self.args, self.image).stdout.strip()
        out = engine.docker("port", self.id, "%d/tcp" % self.port).stdout.split()[0]
        self.url = "http://%s/" % out.replace("0.0.0.0", "127.0.0.1")
        return self

    def inspect(self, fmt):
        return engine.docker("inspect", "-f", fmt, self.id).stdout.strip()

    def logs(self):
        r = engine.docker("logs", self.id, check=False)
        return r.stdout + r.stderr

    def __exit__(self, *exc):
        engine.docker("rm", "-f", self.id, check=False)


def locked_down(*extra):
    return ["--read-only", "--user", "65534", "--cap-drop", "ALL", "-p", "127.0.0.1::8080", *extra]


def readme_loader():
    """The minimal fragment loader docs/writing.md shows."""
    with open(os.path.join(SOURCE_ROOT, "docs", "writing.md")) as f:
        section = f.read().split("\n## Fragments", 1)[1]
    return re.search(r"```html\n(.*?)```", section, re.S).group(1)


def make_article(name, title):
    """A small article of one's own: a page with docs/writing.md's loader, its
    fragment (with a script the loader must run), a 2 MB asset, a PNG picture
    named without an extension."""
    root = os.path.join(scratch, name)
    for d in ("www", "fragments", "assets"):
        os.makedirs(os.path.join(root, d))
    with open(os.path.join(root, "www", "index.html"), "w") as f:
        f.write("<!doctype html><html lang=en><meta charset=utf-8><title>%s</title>\n%s"
                % (title, readme_loader()))
    with open(os.path.join(root, "fragments", "intro.html"), "w") as f:
        f.write("<p>a fragment</p><script>document.title += ' (scripted)';</script>\n")
    with open(os.path.join(root, "assets", "big.bin"), "wb") as f:
        f.write(os.urandom(BIG))
    with open(os.path.join(root, "assets", "picture"), "wb") as f:  # no extension: libmagic's to type
        f.write(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\1\0\0\0\1\x08\x06\0\0\0\x1f\x15\xc4\x89")
    for dirpath, dirs, files in os.walk(root):
        os.chmod(dirpath, 0o755)
        for name in files:
            os.chmod(os.path.join(dirpath, name), 0o644)
    return root


def image_files(image):
    """{path: (type, size)} of every entry in a container of image, as
    `docker export` writes it ("-" a file, "l" a link, "d" a folder)."""
    cid = engine.docker("create", "--label", run_id, image).stdout.strip()
    try:
        listing = subprocess.run(["sh", "-c", '"$DOCKER" export "$1" | tar -tvf -', "sh", cid],
                                 env=engine.env, capture_output=True, text=True, timeout=120, check=True)
    finally:
        engine.docker("rm", cid, check=False)
    files = {}
    for line in listing.stdout.splitlines():
        fields = line.split(None, 5)
        files[fields[5].split(" -> ")[0].rstrip("/")] = (fields[0][0], int(fields[2]))
    return files


class Image(unittest.TestCase):
    def test_image_as_built(self):
        cfg = engine.docker("image", "inspect", "-f",
                            "{{.Config.User}}|{{json .Config.ExposedPorts}}|{{json .Config.Env}}|"
                            "{{json .Config.Healthcheck.Test}}", IMAGE).stdout.strip().split("|")
        self.assertEqual(cfg[0], "65534:65534")
        self.assertIn('"8080/tcp"', cfg[1])
        self.assertIn('"PORT=8080"', cfg[2])
        self.assertEqual(cfg[3], '["CMD","folio","--health-check"]')

    def test_build_stage_is_labelled(self):
        # What the classic builder leaves untagged after each build is the
        # build stage: `docker image prune --filter label=folio.stage=build`
        # (the Dockerfile says so) removes it and never the image itself.
        label = '{{index .Config.Labels "folio.stage"}}'
        self.assertEqual(engine.docker("image", "inspect", "-f", label, BUILD_IMAGE).stdout.strip(), "build")
        self.assertIn(engine.docker("image", "inspect", "-f", label, IMAGE).stdout.strip(), ("", "<no value>"))
        with open(os.path.join(SOURCE_ROOT, "Dockerfile")) as f:
            self.assertIn("docker image prune -f --filter label=folio.stage=build", f.read())

    def test_only_what_folio_needs(self):
        files = image_files(IMAGE)
        programs = sorted(p for p, (kind, _) in files.items() if kind in "-l"
                          and re.match(r"(usr/)?(local/)?s?bin/", p))
        self.assertEqual(programs, ["usr/local/bin/folio"])  # no shell, no sleep, no apt, no gcc
        for gone in ("var/lib/dpkg", "var/lib/apt", "usr/include", "usr/share/doc"):
            self.assertNotIn(gone, files)
        self.assertIn("usr/share/misc/magic.mgc", files)
        self.assertIn("srv/folio/www/index.html", files)
        # Its users: nobody alone, whom it runs as.
        cid = engine.docker("create", "--label", run_id, IMAGE).stdout.strip()
        try:
            engine.docker("cp", cid + ":/etc/passwd", os.path.join(scratch, "passwd"))
        finally:
            engine.docker("rm", cid, check=False)
        with open(os.path.join(scratch, "passwd")) as f:
            self.assertEqual([line.split(":")[:3] for line in f], [["nobody", "x", "65534"]])

    def test_at_most_40_mb(self):
        size = int(engine.docker("image", "inspect", "-f", "{{.Size}}", IMAGE).stdout)
        print("image %s: %.1f MB" % (IMAGE, size / 1e6), file=sys.stderr)
        self.assertLessEqual(size, MAX_IMAGE_BYTES, "the image is %.1f MB" % (size / 1e6))


class Run(unittest.TestCase):
    def test_article_in_chromium_and_healthy(self):
        with Container(*locked_down()) as c:
            status, body = wait_for(lambda: served(c.url), 20, "the article")
            self.assertEqual(status, 200)
            self.assertIn(TITLE, body)
            health = http_get(c.url + "__folio/health")[1]
            self.assertIn('"mode":"production"', health.replace(" ", ""))
            r = chromium(c.url)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertRegex(r.stdout, r"\n[1-9]\d* passed, 0 failed")
            wait_for(lambda: c.inspect("{{.State.Health.Status}}") == "healthy", 60, "healthy")
            # The access log is on stdout, where `docker logs` finds it; the
            # HEALTHCHECK's probes (three by now) are not in it, ours above is.
            wait_for(lambda: int(c.inspect("{{len .State.Health.Log}}")) >= 3, 30, "three health checks")
            logs = c.logs()
            self.assertRegex(logs, r'"GET / HTTP/1\.1" 200')
            self.assertEqual(len(re.findall(r'"GET /__folio/health HTTP/1\.1" 200', logs)), 1, logs)

    def test_stop_lets_a_slow_download_finish(self):
        root = make_article("slow", "Slow")
        with Container(*locked_down("-v", root + ":/article:ro", "-e", "FOLIO_ROOT=/article")) as c:
            wait_for(lambda: served(c.url), 20, "folio")
            # Straight to the container's address: no docker-proxy buffering between.
            ip = c.inspect("{{.NetworkSettings.IPAddress}}")
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)  # a slow reader's small window
            s.settimeout(30)
            s.connect((ip, 8080))
            s.sendall(b"GET /assets/big.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            got, stop = bytearray(), {}

            def docker_stop():
                stop["at"] = time.monotonic()
                stop["result"] = engine.docker("stop", "-t", "30", c.id, check=False)

            stopper = None
            while True:
                chunk = s.recv(16384)
                if not chunk:
                    break
                got += chunk
                if stopper is None and len(got) > 256 << 10:
                    stopper = threading.Thread(target=docker_stop)
                    stopper.start()
                time.sleep(0.03)  # about 0.5 MB/s: the 2 MB take seconds
            last_byte = time.monotonic()
            s.close()
            stopper.join(60)
            head, _, body = bytes(got).partition(b"\r\n\r\n")
            self.assertTrue(head.startswith(b"HTTP/1.1 200"), head[:100])
            self.assertEqual(len(body), BIG)
            self.assertGreater(last_byte, stop["at"])  # the stop did land mid-download
            self.assertEqual(stop["result"].returncode, 0, stop["result"].stderr)
            self.assertEqual(c.inspect("{{.State.ExitCode}}"), "0")
            self.assertIn("SIGTERM, stopping", c.logs())

    def test_custom_article(self):
        root = make_article("mine", "My own article")
        with Container(*locked_down("-v", root + ":/article:ro", "-e", "FOLIO_ROOT=/article")) as c:
            status, body = wait_for(lambda: served(c.url), 20, "folio")
            self.assertIn("<title>My own article</title>", body)
            self.assertIn("<p>a fragment</p>", http_get(c.url + "fragments/intro.html")[1])
            # libmagic and its database are in the image: the picture is typed by its bytes.
            with urllib.request.urlopen(c.url + "assets/picture", timeout=5) as r:
                self.assertEqual(r.headers["Content-Type"], "image/png")
            self.assertNotIn("libmagic", c.logs())
            # In Chromium docs/writing.md's loader fills the fragment (article.mjs: every one).
            r = chromium(c.url, min_fragments=1)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("ok   #fragment-intro filled", r.stdout)
            self.assertIn("title: My own article (scripted)", r.stdout)  # its script ran

    def test_injected_port(self):
        with Container("--read-only", "--user", "65534", "--cap-drop", "ALL", "-e", "PORT=9090",
                       "-p", "127.0.0.1::9090", port=9090) as c:
            status, body = wait_for(lambda: served(c.url), 20, "folio on 9090")
            self.assertIn(TITLE, body)
            self.assertIn(":9090/", c.logs())
            # The health check follows the same PORT.
            r = engine.docker("exec", c.id, "folio", "--health-check", check=False)
            self.assertEqual(r.returncode, 0, r.stderr)


def preview_line():
    """docs/preview.md's copy-paste line for macOS and Windows: the code
    block after its <!-- docker-preview --> mark."""
    with open(os.path.join(SOURCE_ROOT, "docs", "preview.md")) as f:
        text = f.read()
    block = re.search(r"<!-- docker-preview -->\s*```sh\n(.*?)```", text, re.S)
    lines = block.group(1).strip().splitlines() if block else []
    if len(lines) != 1:
        raise AssertionError("docs/preview.md: no one-line block after <!-- docker-preview -->")
    return lines[0]


class Preview(unittest.TestCase):
    """The line an author on macOS or Windows copies, run as written in the
    folder that holds the article, but for two words: the host port (8000
    may be taken here; Docker picks a free one) and the image (this run's
    tag for `folio`). An edit on the host side of the bind mount must reach
    the page open in Chromium as a live update (preview.mjs)."""

    def test_docs_line_reaches_the_browser_live(self):
        line = preview_line()
        words = line.split()
        self.assertEqual(words[:2], ["docker", "run"], line)
        self.assertEqual(words[-1], "folio", line)
        self.assertEqual(words.count("-p"), 1, line)
        port = words[words.index("-p") + 1]
        self.assertRegex(port, r"^\d+:8080$", line)
        tag = run_id + "=preview"
        command = ('"$DOCKER" run --label %s ' % tag + line[len("docker run "):-len("folio")]
                   .replace("-p " + port, "-p 127.0.0.1::8080") + IMAGE)
        root = make_article("preview", "Preview")
        author = subprocess.Popen(["bash", "-c", command], cwd=root, env=engine.env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            cid = wait_for(lambda: engine.docker("ps", "-q", "--filter", "label=" + tag).stdout.strip(),
                           30, "the preview container")
            out = engine.docker("port", cid, "8080/tcp").stdout.split()[0]
            url = "http://%s/" % out.replace("0.0.0.0", "127.0.0.1")
            wait_for(lambda: served(url), 20, "the preview")
            banner = engine.docker("logs", cid).stderr
            self.assertIn("(preview, live reload by polling)", banner)
            r = subprocess.run(["node", os.path.join(HERE, "preview.mjs"), url, root], capture_output=True,
                               text=True, timeout=120, cwd=os.path.join(SOURCE_ROOT, "tests"))
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            print(r.stdout, file=sys.stderr)
        finally:
            author.terminate()  # docker run passes the signal on: folio stops, --rm removes it
            try:
                author.wait(30)
            except subprocess.TimeoutExpired:
                author.kill()
                author.wait()


class Compose(unittest.TestCase):
    def compose(self, *args, timeout=600):
        env = dict(engine.env, FOLIO_HTTP_PORT="")  # "127.0.0.1::80": a free port
        return subprocess.run(["docker-compose", "-f", os.path.join(SOURCE_ROOT, "config", "compose.yaml"),
                               "-p", run_id, *args], env=env, capture_output=True, text=True,
                              timeout=timeout)

    def test_nginx_in_front_of_two_replicas(self):
        up = self.compose("up", "-d", "--build")
        try:
            self.assertEqual(up.returncode, 0, up.stdout + up.stderr)
            port = self.compose("port", "nginx", "80").stdout.strip().rsplit(":", 1)[1]
            url = "http://127.0.0.1:%s/" % port
            status, body = wait_for(lambda: served(url), 60, "nginx")
            self.assertIn(TITLE, body)
            r = chromium(url)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            for _ in range(20):
                self.assertEqual(http_get(url + "style.css")[0], 200)
            replicas = self.compose("ps", "-q", "folio").stdout.split()
            self.assertEqual(len(replicas), 2)
            for cid in replicas:  # round robin: each replica logged some of them
                logs = engine.docker("logs", cid).stdout
                self.assertRegex(logs, r'"GET /style\.css HTTP/1\.1" 200')
        finally:
            # Its containers, network and the images it built (named after the project).
            # (tearDownModule fails the run if any of it stays.)
            down = self.compose("down", "--remove-orphans", "--rmi", "local", "-v", "-t", "20")
            if down.returncode != 0:
                print("compose down failed:\n" + down.stdout + down.stderr, file=sys.stderr)


def docker_run_options(text):
    """The options of the `docker run` in text, comparable across docs/testing.md
    and fresh-ci.sh: flags with values, mount targets, variable names, the
    image and its command; a path spelt with a shell variable is $SCRATCH."""
    text = re.sub(r"\\\n\s*", " ", text)
    words = shlex.split(text[text.index(" run ") + 5:], posix=True)
    out, i = set(), 0
    scratch = lambda v: "$SCRATCH" if "$" in v else v
    while i < len(words):
        w = words[i]
        if w in ("--cap-add", "--security-opt", "--network", "-w"):
            out.add((w, words[i + 1]))
        elif w == "-v":
            ro = words[i + 1].endswith(":ro")
            target = words[i + 1][:-3 if ro else None].rsplit(":", 1)[1]
            out.add(("-v", scratch(target), ro))
        elif w == "-e":
            name, _, value = words[i + 1].partition("=")
            out.add(("-e", name, scratch(value)))
        elif w in ("--rm", "--name"):
            i += 1 if w == "--rm" else 2
            continue
        else:
            out.add(("image", w))
            out.add(("command", " ".join(" ".join(words[i + 1:]).split())))
            break
        i += 2
    return out


class FreshCiScript(unittest.TestCase):
    def test_fresh_ci_runs_what_the_docs_say(self):
        with open(os.path.join(SOURCE_ROOT, "docs", "testing.md")) as f:
            tests = f.read().split("\n## `.ci/run` in a fresh container", 1)[1].split("\n## ", 1)[0]
        readme = [b for b in re.findall(r"```sh\n(.*?)```", tests, re.S) if "docker run" in b]
        self.assertEqual(len(readme), 1)
        with open(os.path.join(HERE, "fresh-ci.sh")) as f:
            script = f.read()
        run = re.search(r'"\$DOCKER" run .*?bash \.ci/run\'', script, re.S).group(0)
        # The script's own extras: its log and the container's name; its
        # release is an argument, Debian 12 unless told.
        run = run.replace('--name "folio-fresh-ci-$$"', "").replace('"debian:$release-slim"', "debian:bookworm-slim")
        ours, theirs = docker_run_options(run), docker_run_options(readme[0])
        self.assertEqual(ours, theirs)
        self.assertIn(("-v", "/var/run/docker.sock", False), ours)
        self.assertIn(("image", "debian:bookworm-slim"), ours)


class FreshDebian(unittest.TestCase):
    """The README's first command, exactly as written, in a fresh Debian 12
    and a fresh Debian 13 container (minbase) with a copy of the repo."""

    def first_command(self, release):
        readme = open(os.path.join(SOURCE_ROOT, "README.md")).read()
        block = re.search(r"```sh\n(.*?)```", readme, re.S).group(1)
        command = block.splitlines()[0].split("#")[0].strip()
        self.assertEqual(command, "bash .ci/setup && build/src/folio")  # what a newcomer types
        repo = os.path.join(scratch, "repo-" + release)
        shutil.copytree(SOURCE_ROOT, repo, symlinks=True, ignore=shutil.ignore_patterns(
            "build*", "node_modules", ".git"))
        apt_cache = os.path.join(engine.cache, "apt-archives-" + release)  # warm runs fetch nothing
        os.makedirs(os.path.join(apt_cache, "partial"), exist_ok=True)
        cid = engine.docker("run", "-d", "--label", run_id, "-v", repo + ":/repo", "-w", "/repo",
                            "-v", apt_cache + ":/var/cache/apt/archives",
                            "debian:%s-slim" % release, "bash", "-c", command).stdout.strip()
        try:
            def started():
                logs = engine.docker("logs", cid, check=False)
                out = logs.stdout + logs.stderr
                if engine.docker("inspect", "-f", "{{.State.Running}}", cid).stdout.strip() != "true":
                    raise AssertionError("the command ended:\n" + out[-4000:])
                return "folio: serving" in out and out
            out = wait_for(started, 600, "the README's first command to serve")
            self.assertIn("http://127.0.0.1:8000/", out)
            fetch = engine.docker("exec", cid, "python3", "-c",
                                  "import urllib.request;print(urllib.request.urlopen("
                                  "'http://127.0.0.1:8000/', timeout=5).read().decode())")
            self.assertIn(TITLE, fetch.stdout)
        finally:
            engine.docker("rm", "-f", cid, check=False)

    def test_readme_first_command_on_debian_12(self):
        self.first_command("bookworm")

    def test_readme_first_command_on_debian_13(self):
        self.first_command("trixie")


if __name__ == "__main__":
    main()
