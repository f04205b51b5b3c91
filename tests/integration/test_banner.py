"""Preview's start-up words on a terminal: on an address others reach, one
line saying so and the first network URL as a QR code that decodes (zbar's
zbarimg on a copy drawn from the terminal's own characters) to that URL.

folio runs with stderr on a pseudo-terminal. For a network address that is
the same on every machine, it runs in a network namespace of its own
(`unshare -rn`) holding one veth pair, 10.99.0.1: the URL is known before
it starts, and nothing leaves the namespace. Where namespaces are refused
(a locked-down container) the host's own interfaces are used."""
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from folio import FOLIO, SLOWDOWN, WRAPPER, main, need

ZBARIMG = need("zbarimg", "zbar-tools")

NETNS_ADDR = "10.99.0.1"
NETNS_SETUP = ("ip link set lo up && ip link add folio0 type veth peer name folio1 && "
               "ip addr add %s/24 dev folio0 && ip link set folio0 up && " % NETNS_ADDR)
# Half blocks: which of a line's two rows of modules are dark.
HALF = {" ": (0, 0), "\u2580": (1, 0), "\u2584": (0, 1), "\u2588": (1, 1)}
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def netns_works():
    try:
        r = subprocess.run(["unshare", "-rn", "sh", "-c", NETNS_SETUP + "true"],
                           capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


NETNS = netns_works()


def run_on_terminal(root, *args, netns=NETNS, wait_for="folio: serving", settle=0.5):
    """Starts folio with stderr on a pseudo-terminal; returns what it wrote
    there until wait_for was seen and then settle seconds of quiet."""
    argv = [*WRAPPER, FOLIO, "--root", root, "--port", "0", *args]
    if netns:
        argv = ["unshare", "-rn", "sh", "-c", NETNS_SETUP + 'exec "$@"', "sh", *argv]
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOLIO_")}
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    out, seen_at = b"", None
    deadline = time.monotonic() + 15 * SLOWDOWN
    try:
        while time.monotonic() < deadline:
            quiet = settle * SLOWDOWN if seen_at else deadline - time.monotonic()
            ready, _, _ = select.select([master], [], [], max(0.0, quiet))
            if not ready:
                if seen_at:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the terminal's other side closed (folio exited)
                break
            if not chunk:
                break
            out += chunk
            if seen_at is None and wait_for.encode() in out:
                seen_at = time.monotonic()
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15 * SLOWDOWN)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        os.close(master)
    return out.decode("utf-8", "replace").replace("\r\n", "\n")


def qr_rows(text):
    """The QR code's modules as drawn on the terminal: a list of rows of 0/1."""
    rows = []
    for line in text.split("\n"):
        if "\x1b[30;47m" not in line:
            continue
        cells = ANSI.sub("", line)[2:]  # the two spaces of indent
        top, bottom = [HALF[c][0] for c in cells], [HALF[c][1] for c in cells]
        rows += [top, bottom]
    return rows


def decode(rows, tmp):
    """What zbarimg reads off a picture of rows (8 pixels a module, a wide margin)."""
    scale, margin = 8, 4
    width = (len(rows[0]) + 2 * margin) * scale
    height = (len(rows) + 2 * margin) * scale
    pixels = bytearray(b"\xff" * (width * height))
    for y, row in enumerate(rows):
        for x, dark in enumerate(row):
            if dark:
                for dy in range(scale):
                    start = ((y + margin) * scale + dy) * width + (x + margin) * scale
                    pixels[start:start + scale] = b"\x00" * scale
    path = os.path.join(tmp, "code.pgm")
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (width, height) + bytes(pixels))
    r = subprocess.run([ZBARIMG, "--raw", "-q", path], capture_output=True, text=True, timeout=30)
    return r.stdout.strip()


class Banner(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="folio-banner-")
        cls.root = os.path.join(cls.tmp, "article")
        for d in ("www", "fragments", "assets"):
            os.makedirs(os.path.join(cls.root, d))
        with open(os.path.join(cls.root, "www", "index.html"), "w") as f:
            f.write("<!doctype html><title>t</title><p>hello</p>\n")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def network_url(self, text):
        m = re.search(r"folio: on the network at (http://\S+) ", text)
        self.assertIsNotNone(m, "no network URL printed (is there no interface but loopback?):\n" + text)
        if NETNS:
            self.assertTrue(m.group(1).startswith("http://%s:" % NETNS_ADDR), text)
        return m.group(1)

    def test_qr_code_decodes_to_the_first_network_url(self):
        text = run_on_terminal(self.root, "--host", "0.0.0.0")
        url = self.network_url(text)
        self.assertIn("folio: this preview is open to everyone on that network", text)
        self.assertIn("folio: scan to open %s on a phone" % url, text)
        rows = qr_rows(text)
        self.assertGreaterEqual(len(rows), 21, text)  # version 1 is 21 modules, plus the quiet zone
        self.assertEqual(decode(rows, self.tmp), url)

    def test_a_named_address_is_the_code(self):
        addr = NETNS_ADDR
        if not NETNS:  # the host's first network address
            addr = re.match(r"http://([^:/]+):", self.network_url(run_on_terminal(self.root, "--host", "0.0.0.0"))).group(1)
        text = run_on_terminal(self.root, "--host", addr)
        url = re.search(r"at (http://%s:\d+/)" % re.escape(addr), text).group(1)
        self.assertEqual(decode(qr_rows(text), self.tmp), url)

    def test_qr_no_turns_it_off(self):
        for flag in ("--qr=no", "--no-qr"):
            text = run_on_terminal(self.root, "--host", "0.0.0.0", flag)
            self.network_url(text)
            self.assertIn("open to everyone on that network", text)
            self.assertEqual(qr_rows(text), [], flag)
            self.assertNotIn("scan to open", text)

    def test_loopback_says_nothing_of_a_network(self):
        text = run_on_terminal(self.root, "--host", "127.0.0.1", netns=False)
        self.assertIn("folio: serving", text)
        self.assertNotIn("open to everyone", text)
        self.assertEqual(qr_rows(text), [])

    def test_production_draws_no_code(self):
        text = run_on_terminal(self.root, "--host", "0.0.0.0", "--production")
        self.network_url(text)
        self.assertNotIn("open to everyone", text)
        self.assertEqual(qr_rows(text), [])

    def test_not_a_terminal_draws_no_code(self):
        argv = [FOLIO, "--root", self.root, "--port", "0", "--host", "0.0.0.0"]
        if NETNS:
            argv = ["unshare", "-rn", "sh", "-c", NETNS_SETUP + 'exec "$@"', "sh", *argv]
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        lines = []
        try:
            for line in proc.stderr:
                lines.append(line)
                if "open to everyone" in line:
                    break
        finally:
            proc.send_signal(signal.SIGTERM)
            rest = proc.communicate(timeout=15 * SLOWDOWN)[1]
        text = "".join(lines) + rest
        self.assertIn("open to everyone on that network", text)
        self.assertEqual(qr_rows(text), [])


if __name__ == "__main__":
    main()
