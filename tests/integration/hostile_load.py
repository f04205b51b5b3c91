"""Hostile load for a bounded time (test_edge.py HostileMix): body lorises holding the
connection cap, a writer rewriting files in place (truncate, then write, as an editor or
cp does) while they are sent by sendfile and by Range, and normal readers, each of whose
requests must be answered with no silence past a second. Standard library only; every
thread ends by the deadline it is given."""
import os
import socket
import struct
import threading
import time

# Linux's (asm-generic) SO_TIMESTAMPNS, which Python's socket module does not name.
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


def body_lorises(port, until, addresses, keep):
    """Keeps about keep connections open, each a complete head announcing a body (half
    Content-Length, half chunked) that never comes, from the addresses given in turn (a
    per-address limit holds); one closed by the server is opened again at once, as a
    loris that reconnects does. Returns the thread; it ends at until."""
    def run():
        held, i = [], 0
        while time.monotonic() < until:
            held = [s for s in held if not closed(s)]
            while len(held) < keep and time.monotonic() < until:
                s = socket.socket()
                try:
                    s.bind((addresses[i % len(addresses)], 0))
                    s.settimeout(1)
                    s.connect(("127.0.0.1", port))
                    body = b"Content-Length: 100\r\n" if i % 2 else b"Transfer-Encoding: chunked\r\n"
                    s.sendall(b"GET /tiny.css HTTP/1.1\r\nHost: localhost\r\n" + body + b"\r\n")
                    held.append(s)
                except OSError:
                    s.close()
                    break  # the cap or the address's limit: try again in a moment
                i += 1
            time.sleep(0.02)
        for s in held:
            s.close()
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def closed(s):
    """True when the server ended s (a peek: nothing is taken)."""
    try:
        s.setblocking(False)
        return s.recv(1, socket.MSG_PEEK) == b""
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return True
    finally:
        try:
            s.setblocking(True)
        except OSError:
            pass


def rewriter(paths, until):
    """Rewrites each file of paths in place, in turn, until until: truncated, then
    written again with its size, a few milliseconds apart (the moment a sendfile meets the
    new end), with random bytes of its size in turn. (Not one byte repeated: libmagic
    takes most of a second over 16 KiB of newlines, under the one lock every sniff takes,
    which would time libmagic here.) Returns the thread."""
    contents = {p: [os.urandom(os.path.getsize(p)) for _ in range(2)] for p in paths}
    def run():
        n = 0
        while time.monotonic() < until:
            for p in paths:
                with open(p, "r+b") as f:
                    f.truncate(0)
                    f.flush()
                    time.sleep(0.003)
                    f.write(contents[p][n % 2])
            n += 1
            time.sleep(0.01)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def arrival(anc):
    """The kernel's arrival time of the bytes a recvmsg returned (SO_TIMESTAMPNS), or None."""
    for level, kind, value in anc:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(value) >= 16:
            sec, nsec = struct.unpack("qq", value[:16])
            return sec + nsec / 1e9
    return None


def last_segment(s):
    """When s last received a segment from its peer (struct tcp_info's tcpi_last_ack_recv,
    milliseconds ago, at offset 56): the close's arrival, read once the close is seen."""
    info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    return time.time() - struct.unpack_from("I", info, 56)[0] / 1000


def ask(port, request, silence, source="127.0.0.1"):
    """Sends request on a new connection and reads the answer to its end (Content-Length
    bytes, or the close). Returns (status or None, body bytes, declared length, longest
    silence in seconds, and what ended it: "head", "data", "close" or "timeout"). A silence is the
    server's: from the later of the last bytes' arrival and this thread's last read (a full
    window holds the server back until then) to the next bytes' arrival. Arrivals are the
    kernel's (SO_TIMESTAMPNS; the close's, tcp_info), not when this thread got to them, so
    a test thread kept waiting by the others, the GIL or a loaded machine is not taken for
    the server."""
    with socket.socket() as s:
        s.settimeout(silence * 10)
        s.bind((source, 0))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
        s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        s.connect(("127.0.0.1", port))
        s.sendall(request)
        data, longest, ended_by, ready, head, length = b"", 0.0, None, time.time(), None, None
        while True:
            try:
                chunk, anc, _, _ = s.recvmsg(65536, socket.CMSG_SPACE(16))
            except socket.timeout:
                longest, ended_by = max(longest, time.time() - ready), "timeout"
                break
            except ConnectionResetError:
                chunk, anc = b"", []
            at = arrival(anc) if chunk else last_segment(s)
            if at is not None and at - ready > longest:
                longest, ended_by = at - ready, "close" if not chunk else "data" if head else "head"
            ready = max(ready, at or 0, time.time())
            if not chunk:
                break
            data += chunk
            if head is None and b"\r\n\r\n" in data:
                head, _, rest = data.partition(b"\r\n\r\n")
                for line in head.split(b"\r\n")[1:]:
                    k, _, v = line.partition(b":")
                    if k.strip().lower() == b"content-length":
                        length = int(v)
                data = rest
            if head is not None and length is not None and len(data) >= length:
                break
    status = int(head.split(b" ")[1]) if head else None
    return status, len(data), length, longest, ended_by


def readers(port, until, requests, threads=4, silence=1.0):
    """threads readers asking the requests in turn until until, each from an address of
    its own (127.0.0.10 on): a per-address limit counts the connections a busy server has
    not closed yet, and one reader's own must not shut it out. Returns every answer's
    (request, status, body bytes, declared length, longest silence, what ended it)."""
    results, errors, lock = [], [], threading.Lock()
    def run(k):
        i = k
        try:
            while time.monotonic() < until:
                req = requests[i % len(requests)]
                got = ask(port, req, silence, source="127.0.0.%d" % (10 + k))
                with lock:
                    results.append((req,) + got)
                i += 1
        except Exception as e:  # a reader that cannot go on fails the test, not silently
            errors.append(e)
    ts = [threading.Thread(target=run, args=(k,), daemon=True) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(until - time.monotonic() + 30)
    if errors:
        raise errors[0]
    return results
