#!/usr/bin/env python3
"""A Docker engine for the container suite and CI, on a machine with no registry.

There is nothing to pull here, so Debian images are made locally: a root file
system from mmdebstrap (Debian's mirrors only; built once, cached in
FOLIO_CI_CACHE, default /var/cache/folio-ci, and made again when a week old),
imported under the name Docker Hub would give it (debian:bookworm-slim,
debian:trixie-slim), or, with packages in it, as folio-ci-debian:RELEASE-HASH
(CI's Debian 13 run: every package there at import, so its container needs no
network). A system engine's own debian:*-slim (pulled) is kept and no
mmdebstrap runs; an image imported into a running system dockerd is removed
again at the end, one imported into the private engine stays in that engine's
data root (the suite's cache, used by nothing else). If a dockerd already
answers on /var/run/docker.sock it is used as it is; otherwise a private one is
started (data root in the cache, so image layers stay warm between runs; exec
root, socket and pid file in a scratch folder) and, at the end, stopped by its
PID, with what dockerd leaves behind removed: /etc/docker/key.json,
/var/run/docker*, the docker0 and br-* bridges, the iptables rules,
ip_forward and its bind mount of the data root, each only if it was not
there before. What was there before is
kept in the cache (engine.before.json) while the engine runs: a run killed
outright (SIGKILL, a session's end) cannot clean up, so the next one stops
what it left (its dockerd, by the PID it wrote) and restores that state,
not the leftovers it would otherwise take for the machine's own.

As a library: `with Engine(bases=("trixie",)) as engine: engine.docker("ps")`;
`engine.image("trixie", packages)` for an image with packages in it.
As a command: `engine.py [--base RELEASE]... -- CMD ARGS...` runs CMD with
DOCKER_HOST and DOCKER=/usr/bin/docker set, the bases imported (trixie, the
Dockerfile's, unless --base says), then takes the engine down; exits with
CMD's status.
"""

import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

DOCKER = "/usr/bin/docker"  # Debian's client (docker.io on 12, docker-cli on 13); /usr/local/bin may hold another
SYSTEM_SOCKET = "/var/run/docker.sock"
RELEASES = ("bookworm", "trixie")  # Debian 12 and 13
REFRESH_DAYS = 7  # a cached root file system older than this is made again (security updates)
STAMP = "folio-ci.rootfs"  # the label an imported image carries: its tarball's mtime


def sources(release):
    """The apt lines of a release: main, updates and security, as a stable
    Debian's own images have them (mmdebstrap adds the last two by itself only
    for releases it knows as stable)."""
    return ["deb http://deb.debian.org/debian %s main" % release,
            "deb http://deb.debian.org/debian %s-updates main" % release,
            "deb http://deb.debian.org/debian-security %s-security main" % release]


def image_name(release, packages=()):
    """debian:RELEASE-slim for a minimal base, folio-ci-debian:RELEASE-HASH
    for one with packages (the hash names the sorted package list)."""
    if not packages:
        return "debian:%s-slim" % release
    return "folio-ci-debian:%s-%s" % (release, _digest(packages))


def _digest(packages):
    return hashlib.sha256(" ".join(sorted(packages)).encode()).hexdigest()[:12]


def _log(msg):
    print(f"engine: {msg}", file=sys.stderr, flush=True)


def _run(cmd, **kw):
    """Runs cmd; on failure raises with its own output, never hides it."""
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, **kw)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}")
    return proc.stdout


def _answers(sock_path):
    """Whether a Docker engine answers /_ping on this unix socket."""
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(2)
            s.connect(sock_path)
            s.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            return s.recv(64).split(b" ")[1:2] == [b"200"]
    except (OSError, IndexError):
        return False


def _stop_on_signal(signum, frame):
    """SIGTERM or SIGHUP (meson test's timeout, a closed terminal) as an
    exception, so the engine is still taken down: by default Python dies at
    once, leaving a private dockerd running with its bridges and rules."""
    raise SystemExit(128 + signum)


def _need(program, package):
    """Stops with one line naming the Debian package when program is missing."""
    if not (os.access(program, os.X_OK) if os.path.isabs(program) else shutil.which(program)):
        raise SystemExit("engine: %s is missing: install the Debian package %s "
                         "(`bash .ci/setup --tests` does)" % (program, package))


def _mounted(path):
    """Whether something is mounted on path (a bind mount of a folder on its
    own file system included, which os.path.ismount does not see)."""
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == path for line in f)


def _links():
    return set(os.listdir("/sys/class/net"))


def _iptables_save(cmd):
    try:
        return _run([cmd])
    except (RuntimeError, FileNotFoundError):
        return None


def _tables(save):
    """iptables-save text as {table: [lines]}; builtin chains keep their policy."""
    tables, current = {}, None
    for line in (save or "").splitlines():
        if line.startswith("*"):
            current = tables.setdefault(line[1:], [])
        elif current is not None and line and not line.startswith(("#", "COMMIT")):
            current.append(line)
    return tables


def _iptables_restore(tool, saved):
    """Puts every table back as it was before dockerd; a table dockerd brought
    into being is emptied, its builtin chains back to ACCEPT. iptables-restore
    replaces each table it is given, and only those."""
    if saved is None:
        return
    before, now = _tables(saved), _tables(_iptables_save(tool + "-save"))
    text = ""
    for table, lines in now.items():
        if table in before:
            keep = before[table]
        else:
            keep = [ln.split(" ")[0] + " ACCEPT [0:0]" for ln in lines
                    if ln.startswith(":") and ln.split(" ")[1] != "-"]
        if keep != lines:
            text += f"*{table}\n" + "".join(ln + "\n" for ln in keep) + "COMMIT\n"
    if text:
        subprocess.run([tool + "-restore"], input=text, text=True, check=True)


class Engine:
    """A running Docker engine with the bases' debian:RELEASE-slim in it."""

    def __init__(self, cache=None, bases=("bookworm",)):
        self.cache = cache or os.environ.get("FOLIO_CI_CACHE", "/var/cache/folio-ci")
        self.bases = bases
        self.env = dict(os.environ)
        self.proc = None
        self.scratch = None
        self.lock = None
        self.system = False
        self.imported = []

    # -- the images ---------------------------------------------------------
    def rootfs(self, release="bookworm", packages=()):
        """Path of the cached minbase tarball of release with packages in it,
        made by mmdebstrap when missing or older than REFRESH_DAYS (a minimal
        base ~45 s, CI's Debian 13 with Chromium and gcc ~2 minutes)."""
        if release not in RELEASES:
            raise ValueError("no such release here: %s (%s)" % (release, ", ".join(RELEASES)))
        stem = "debian-" + release + ("-" + _digest(packages) if packages else "")
        path = os.path.join(self.cache, stem + ".tar")
        if os.path.exists(path) and time.time() - os.stat(path).st_mtime < REFRESH_DAYS * 86400:
            return path
        _need("mmdebstrap", "mmdebstrap")
        _log("building the %s root file system%s (mmdebstrap)"
             % (release, " with " + " ".join(sorted(packages)) if packages else ""))
        # mmdebstrap picks the format by suffix; a run's own partial name, so
        # two runs never write one file.
        partial = os.path.join(self.cache, "%s-partial-%d.tar" % (stem, os.getpid()))
        include = ["--include=" + ",".join(sorted(packages))] if packages else []
        try:
            _run(["mmdebstrap", "--variant=minbase", *include, release, partial, *sources(release)])
        except BaseException:
            if os.path.exists(partial):
                os.remove(partial)
            raise
        os.rename(partial, path)
        # What this one replaces: the same release with another package list,
        # and the Debian 12 base's name before there were two releases.
        for old in os.listdir(self.cache):
            if old == "rootfs.tar" or (packages and old.startswith("debian-%s-" % release)
                                       and old.endswith(".tar") and "-partial-" not in old
                                       and old != stem + ".tar"):
                os.remove(os.path.join(self.cache, old))
        return path

    def _label(self, name):
        """None when the engine lacks the image; else its STAMP label ("" if none)."""
        r = subprocess.run([DOCKER, "image", "inspect", "-f", '{{index .Config.Labels "%s"}}' % STAMP, name],
                           env=self.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if r.returncode != 0:
            return None
        return r.stdout.strip().replace("<no value>", "")

    def image(self, release, packages=()):
        """The name of an image of release with packages, in this engine:
        imported from rootfs() unless the engine holds it from that very
        tarball (or, in a system engine, a debian:*-slim of its own)."""
        name = image_name(release, packages)
        label = self._label(name)
        if label == "" and self.system and not packages:
            return name  # the user's own (pulled from a registry): keep it
        tar = self.rootfs(release, packages)
        stamp = str(int(os.stat(tar).st_mtime))
        if label == stamp:
            return name
        old = self.docker("image", "inspect", "-f", "{{.Id}}", name).stdout.strip() if label is not None else None
        _log("docker import %s %s" % (tar, name))
        _run([DOCKER, "import", "--change", "LABEL %s=%s" % (STAMP, stamp), tar, name], env=self.env)
        if old:  # the same name from an older tarball: its layers go
            self.docker("image", "rm", old, check=False)
        if packages and not self.system:  # and the same release with another package list
            others = self.docker("images", "--filter", "reference=folio-ci-debian:%s-*" % release,
                                 "--format", "{{.Repository}}:{{.Tag}}").stdout.split()
            for other in set(others) - {name}:
                self.docker("image", "rm", other, check=False)
        if self.system and name not in self.imported:
            self.imported.append(name)  # a user's engine gets back as it was
        return name

    # -- the engine ---------------------------------------------------------
    def __enter__(self):
        _need(DOCKER, "docker-cli (docker.io on Debian 12)")
        os.makedirs(self.cache, exist_ok=True)
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, _stop_on_signal)
        self.system = _answers(SYSTEM_SOCKET)
        try:
            if self.system:
                _log(f"using the running dockerd at {SYSTEM_SOCKET}")
                self.env["DOCKER_HOST"] = "unix://" + SYSTEM_SOCKET
            else:
                self._start()
            self.env["DOCKER"] = DOCKER
            for release in self.bases:
                self.image(release)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _start(self):
        _need("dockerd", "docker.io")
        _need("ip", "iproute2")  # to remove the bridges dockerd leaves
        # One private engine at a time: they would share the data root, docker0
        # and the iptables chains. A second run waits for the first.
        self.lock = open(os.path.join(self.cache, "engine.lock"), "w")
        fcntl.flock(self.lock, fcntl.LOCK_EX)
        # Short paths: containerd's sockets go under the exec root (108-byte limit).
        self.scratch = tempfile.mkdtemp(prefix="folio-dockerd-", dir="/tmp")
        self.before = self._killed_run() or {
            "links": sorted(_links()),
            "key": os.path.exists("/etc/docker/key.json"),
            "etc": os.path.exists("/etc/docker"),
            "run": sorted(p for p in ("/var/run/docker", "/var/run/docker.pid", "/var/run/docker.sock")
                          if os.path.lexists(p)),
            "iptables": _iptables_save("iptables-save"),
            "ip6tables": _iptables_save("ip6tables-save"),
            "forward": open("/proc/sys/net/ipv4/ip_forward").read(),
            "data_root_mounted": _mounted(os.path.join(self.cache, "docker")),
        }
        self.before["scratch"] = self.scratch
        with open(self.before_path + ".new", "w") as f:
            json.dump(self.before, f)
        os.rename(self.before_path + ".new", self.before_path)
        sock = os.path.join(self.scratch, "docker.sock")
        self.log_path = os.path.join(self.scratch, "dockerd.log")
        data_root = os.path.join(self.cache, "docker")
        cmd = ["dockerd", "--data-root", data_root, "--exec-root", os.path.join(self.scratch, "x"),
               "-H", "unix://" + sock, "--pidfile", os.path.join(self.scratch, "dockerd.pid"),
               "--storage-driver", "overlay2"]
        _log("starting a private dockerd (" + " ".join(cmd[1:]) + ")")
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        self.before["dockerd"] = self.proc.pid
        with open(self.before_path, "w") as f:
            json.dump(self.before, f)
        self.env["DOCKER_HOST"] = "unix://" + sock
        deadline = time.monotonic() + 60
        while not _answers(sock):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("dockerd did not start:\n" + open(self.log_path).read()[-4000:])
            time.sleep(0.2)

    @property
    def before_path(self):
        return os.path.join(self.cache, "engine.before.json")

    def _killed_run(self):
        """The state before a private engine whose run was killed before it
        could stop it (None if the last one stopped): its dockerd, if still
        running, is stopped by the PID it recorded, and its scratch folder
        goes; the leftovers then go with this run's own at its end."""
        try:
            with open(self.before_path) as f:
                before = json.load(f)
        except (OSError, ValueError):
            return None
        _log("a run killed before it could stop its engine left the machine changed: "
             "restoring it at the end")
        pid = before.get("dockerd")
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                cmdline = f.read()
        except (OSError, TypeError):
            cmdline = b""
        ours = cmdline.split(b"\0")[0].endswith(b"dockerd") and before["scratch"].encode() in cmdline
        if ours:
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 60
            while os.path.exists("/proc/%d" % pid) and time.monotonic() < deadline:
                time.sleep(0.2)
        self._unmount_scratch(before["scratch"])
        return before

    def __exit__(self, *exc):
        if self.imported:
            subprocess.run([DOCKER, "image", "rm", *self.imported], env=self.env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
            self.imported = []
        if self.proc:
            self._stop()
        if self.lock:
            self.lock.close()
            self.lock = None

    def _stop(self):
        # Networks compose left would keep br-* bridges and their rules.
        subprocess.run([DOCKER, "network", "prune", "-f"], env=self.env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        self.proc.terminate()  # by its PID: SIGTERM, dockerd stops its containers and containerd
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None
        b = self.before
        for link in _links() - set(b["links"]):
            if link == "docker0" or link.startswith(("br-", "veth")):
                subprocess.run(["ip", "link", "delete", link], stderr=subprocess.DEVNULL)
        if not b["key"] and os.path.exists("/etc/docker/key.json"):
            os.remove("/etc/docker/key.json")
        if not b["etc"] and os.path.isdir("/etc/docker") and not os.listdir("/etc/docker"):
            os.rmdir("/etc/docker")
        for p in ("/var/run/docker", "/var/run/docker.pid", "/var/run/docker.sock"):
            if p not in b["run"] and os.path.lexists(p):
                shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
        for tool in ("iptables", "ip6tables"):
            _iptables_restore(tool, b[tool])
        with open("/proc/sys/net/ipv4/ip_forward", "w") as f:
            f.write(b["forward"])
        data_root = os.path.join(self.cache, "docker")
        for _ in range(8):  # dockerd's bind mount of it, left; a killed run's lies under this one's
            if b["data_root_mounted"] or not _mounted(data_root):
                break
            subprocess.run(["umount", "-l", data_root], stderr=subprocess.DEVNULL)
        self._unmount_scratch(self.scratch)
        if os.path.exists(self.before_path):
            os.remove(self.before_path)

    @staticmethod
    def _unmount_scratch(scratch):
        """Removes a private engine's scratch folder; dockerd can leave its
        netns/default bind mount under the exec root."""
        with open("/proc/mounts") as f:
            mounts = [line.split()[1] for line in f if line.split()[1].startswith(scratch + "/")]
        for mount in sorted(mounts, reverse=True):
            subprocess.run(["umount", "-l", mount], stderr=subprocess.DEVNULL)
        shutil.rmtree(scratch, ignore_errors=True)

    def docker(self, *args, check=True, timeout=600, **kw):
        """Runs Debian's docker client against this engine; returns its result."""
        proc = subprocess.run([DOCKER, *args], env=self.env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=timeout, **kw)
        if check and proc.returncode != 0:
            raise RuntimeError(f"docker {' '.join(args)} failed ({proc.returncode}):\n"
                               f"{proc.stdout[-4000:]}{proc.stderr[-4000:]}")
        return proc


def main(argv):
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        print("usage: engine.py [--base RELEASE]... -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    options, cmd = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    bases = [options[i + 1] for i in range(len(options) - 1) if options[i] == "--base"] or ["trixie"]
    with Engine(bases=bases) as engine:
        return subprocess.run(cmd, env=engine.env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
