#!/usr/bin/env python3
"""The suite once more, inside a fresh Debian 13 (trixie) container.

    python3 .ci/debian13.py [--release bookworm] BUILD_DIR [MESON SETUP ARGS...] -- [MESON TEST ARGS...]

As a new user would run the README's second command there: in a copy of this
repo (no build folders, no node_modules, no .git), `bash .ci/setup --tests`
first, then meson setup BUILD_DIR with the arguments given, ninja, meson test.
The image holds every package `.ci/setup --packages trixie` names (gcc 14,
libmicrohttpd 1.0.1, Chromium, nginx, Node, npm, Docker's client...), made by
mmdebstrap from Debian's mirrors through tests/container/engine.py: nothing
is pulled from a registry, and setup finds them installed (were one missing,
setup would install it: the names are its own). Setup runs with the host's
network (npm's registry, as fresh-ci.sh reaches it); its container is then
committed, and the suite runs in one made from that on an internal network of
its own: an address as a machine has one (the banner's network URL), no way
out (the tests speak to loopback only; IPv6 loopback is turned back on, which
Docker turns off), and the resolver of an offline machine (nothing answers on
loopback's port 53, so a name lookup fails at once; Docker's own DNS makes
each one wait 10 s there). Its meson-logs come back to BUILD_DIR/meson-logs
here, where .ci/count.py reads them; exits with setup's status if it failed,
else meson test's. --release bookworm does the same on Debian 12 (by hand:
CI's own machine is Debian 12).
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "container"))
from engine import DOCKER, Engine  # noqa: E402

TIMEOUT = 3600  # the build and every test, each bounded by meson's own timeouts, well within


CA = "/etc/ssl/certs/ca-certificates.crt"
# Docker's own Debian images have it: installing docker.io must not start a dockerd inside.
NO_SERVICES = 'printf "#!/bin/sh\\nexit 101\\n" >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d'


def packages(release):
    out = subprocess.run(["bash", os.path.join(ROOT, ".ci", "setup"), "--packages", release],
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def copy_repo(dest):
    """This checkout as a fresh clone has it: no build folders, no npm packages, no .git."""
    tar = subprocess.Popen(["tar", "-c", "--exclude=./build*", "--exclude=node_modules", "--exclude=./.git", "."],
                           cwd=ROOT, stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", dest], stdin=tar.stdout, check=True)
    if tar.wait() != 0:
        raise RuntimeError("could not copy the repo")


def setup(engine, image, repo, name):
    """`bash .ci/setup --tests` in a container of image with the host's network;
    returns the image committed from it (what setup installed, if anything),
    or None when setup failed."""
    # npm's registry may be reached through a proxy only this machine trusts:
    # its CA bundle (NODE_EXTRA_CA_CERTS's when set, as in fresh-ci.sh's
    # container), copied beside the repo, where the engine sees the same path.
    ca, bundle = [], os.environ.get("NODE_EXTRA_CA_CERTS") or CA
    if os.path.isfile(bundle):
        copy = os.path.join(os.path.dirname(repo), "ca-certificates.crt")
        shutil.copyfile(bundle, copy)
        os.chmod(copy, 0o644)
        ca = ["-v", copy + ":/host-ca/ca-certificates.crt:ro", "-e", "NODE_EXTRA_CA_CERTS=/host-ca/ca-certificates.crt"]
    cmd = [DOCKER, "run", "--name", name, "--network", "host", *ca,
           "-v", repo + ":/repo", "-w", "/repo", image,
           "bash", "-c", NO_SERVICES + " && bash .ci/setup --tests"]
    print("=== debian13: bash .ci/setup --tests in %s" % image, flush=True)
    start = time.monotonic()
    try:
        status = subprocess.run(cmd, env=engine.env, timeout=TIMEOUT).returncode
        print("debian13: setup took %.0f s" % (time.monotonic() - start), flush=True)
        if status != 0:
            print("debian13: .ci/setup --tests failed (%d)" % status, file=sys.stderr)
            return None
        engine.docker("commit", name, name + ":set-up")
        return name + ":set-up"
    finally:
        engine.docker("rm", "-f", name, check=False)


def suite(engine, image, repo, name, inside):
    """Runs inside (bash) in a container of image on an internal network of
    its own, offline; returns its exit status."""
    resolv = os.path.join(os.path.dirname(repo), "resolv.conf")
    with open(resolv, "w") as f:
        f.write("nameserver 127.0.0.1\n")
    os.chmod(resolv, 0o644)
    print("=== debian13: %s" % inside, flush=True)
    engine.docker("network", "create", "--internal", name)
    cmd = [DOCKER, "run", "--rm", "--name", name, "--network", name,
           "--sysctl", "net.ipv6.conf.all.disable_ipv6=0",
           "--shm-size", "1g",  # Chromium's shared memory; Docker gives 64 MB
           "-v", resolv + ":/etc/resolv.conf:ro",
           "-v", repo + ":/repo", "-w", "/repo", image, "bash", "-c", inside]
    try:
        return subprocess.run(cmd, env=engine.env, timeout=TIMEOUT).returncode
    finally:
        engine.docker("rm", "-f", name, check=False)
        engine.docker("network", "rm", name, check=False)


def main(argv):
    release = "trixie"
    if argv[:1] == ["--release"] and len(argv) > 1:
        release, argv = argv[1], argv[2:]
    if len(argv) < 1 or "--" not in argv or argv[0].startswith("-"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    build, setup_args, test = argv[0], argv[1:argv.index("--")], argv[argv.index("--") + 1:]
    logs = os.path.join(ROOT, build, "meson-logs")
    shutil.rmtree(logs, ignore_errors=True)  # a run that fails to start leaves no count behind
    # Bind mounts name paths on the engine's side: TMPDIR is the same path there
    # (tests/container/fresh-ci.sh mounts it so).
    work = tempfile.mkdtemp(prefix="folio-debian13-")
    name = "folio-ci-%s-%d" % (release, os.getpid())
    try:
        os.chmod(work, 0o755)
        repo = os.path.join(work, "repo")
        os.mkdir(repo)
        copy_repo(repo)
        inside = ("meson setup %s %s >/dev/null && ninja -C %s && "
                  "meson test -C %s --print-errorlogs %s"
                  % (build, " ".join(setup_args), build, build, " ".join(test)))
        with Engine(bases=()) as engine:
            image = setup(engine, engine.image(release, packages(release)), repo, name)
            if image is None:
                return 1
            try:
                status = suite(engine, image, repo, name, inside)
            finally:
                engine.docker("image", "rm", image, check=False)
        if os.path.isdir(os.path.join(repo, build, "meson-logs")):
            shutil.copytree(os.path.join(repo, build, "meson-logs"), logs)
        return status
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
