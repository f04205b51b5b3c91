#!/usr/bin/env python3
"""The suite once more, inside a fresh Debian 13 (trixie) container.

    python3 .ci/debian13.py BUILD_DIR [MESON SETUP ARGS...] -- [MESON TEST ARGS...]

Debian 13's own packages, in an image that holds them all when it starts
(`.ci/setup --packages`: gcc 14, libmicrohttpd 1.0.1, Chromium, nginx,
Node), made by mmdebstrap from Debian's mirrors through
tests/container/engine.py: nothing is pulled from a registry. The container
is on an internal network of its own: an address as a machine has one (the
banner's network URL), no way out (the tests speak to loopback only; IPv6
loopback is turned back on, which Docker turns off), and the resolver of an
offline machine (nothing answers on loopback's port 53, so a name lookup
fails at once; Docker's own DNS makes each one wait 10 s there). It gets a
copy of this
repo with tests/node_modules as `.ci/setup --tests` installed it from the lock
file (JavaScript only, the same on both releases); build folders and .git stay
out. Inside: meson setup BUILD_DIR with the arguments given, ninja, meson
test. Its meson-logs come back to BUILD_DIR/meson-logs here, where
.ci/count.py reads them; exits with meson test's status.
"""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "container"))
from engine import DOCKER, Engine  # noqa: E402

TIMEOUT = 3600  # the build and every test, each bounded by meson's own timeouts, well within


def packages():
    out = subprocess.run(["bash", os.path.join(ROOT, ".ci", "setup"), "--packages"],
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def copy_repo(dest):
    """This checkout as the container sees it: no build folders, no .git."""
    tar = subprocess.Popen(["tar", "-c", "--exclude=./build*", "--exclude=./.git", "."],
                           cwd=ROOT, stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", dest], stdin=tar.stdout, check=True)
    if tar.wait() != 0:
        raise RuntimeError("could not copy the repo")


def main(argv):
    if len(argv) < 1 or "--" not in argv or argv[0].startswith("-"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    build, setup, test = argv[0], argv[1:argv.index("--")], argv[argv.index("--") + 1:]
    if not os.path.isdir(os.path.join(ROOT, "tests", "node_modules", "playwright-core")):
        print("debian13: tests/node_modules is missing: run `bash .ci/setup --tests` first", file=sys.stderr)
        return 1
    logs = os.path.join(ROOT, build, "meson-logs")
    shutil.rmtree(logs, ignore_errors=True)  # a run that fails to start leaves no count behind
    # Bind mounts name paths on the engine's side: TMPDIR is the same path there
    # (tests/container/fresh-ci.sh mounts it so).
    work = tempfile.mkdtemp(prefix="folio-debian13-")
    name = "folio-ci-debian13-%d" % os.getpid()
    try:
        os.chmod(work, 0o755)
        repo = os.path.join(work, "repo")
        os.mkdir(repo)
        copy_repo(repo)
        resolv = os.path.join(work, "resolv.conf")
        with open(resolv, "w") as f:
            f.write("nameserver 127.0.0.1\n")
        os.chmod(resolv, 0o644)
        inside = ("meson setup %s %s >/dev/null && ninja -C %s && "
                  "meson test -C %s --print-errorlogs %s"
                  % (build, " ".join(setup), build, build, " ".join(test)))
        with Engine(bases=()) as engine:
            image = engine.image("trixie", packages())
            print("=== debian13: %s in %s" % (inside, image), flush=True)
            engine.docker("network", "create", "--internal", name)
            cmd = [DOCKER, "run", "--rm", "--name", name, "--network", name,
                   "--sysctl", "net.ipv6.conf.all.disable_ipv6=0",
                   "--shm-size", "1g",  # Chromium's shared memory; Docker gives 64 MB
                   "-v", resolv + ":/etc/resolv.conf:ro",
                   "-v", repo + ":/repo", "-w", "/repo", image, "bash", "-c", inside]
            try:
                status = subprocess.run(cmd, env=engine.env, timeout=TIMEOUT).returncode
            finally:
                engine.docker("rm", "-f", name, check=False)
                engine.docker("network", "rm", name, check=False)
        if os.path.isdir(os.path.join(repo, build, "meson-logs")):
            shutil.copytree(os.path.join(repo, build, "meson-logs"), logs)
        return status
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
