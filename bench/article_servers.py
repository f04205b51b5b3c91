"""The servers bench/article.py compares, started on the fixture with free
ports: folio (each build given), nginx, lighttpd and h2o, configured to
compress as folio does; and the Debian packages they come from."""
import importlib.util
import json
import os
import shutil
import subprocess
import time

from article_fixture import (BR_QUALITY, BR_WINDOW, CODINGS, COMPRESSIBLE, GZIP_LEVEL, GZIP_MIN, MIME,
                             ZSTD_LEVEL, die, log)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# bench/http.py's helpers (Server, curl, ...): loaded by path, since "http"
# is also the name of a standard-library package.
_spec = importlib.util.spec_from_file_location("folio_bench_http", os.path.join(HERE, "http.py"))
hb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hb)

NGINX_BROTLI = "/usr/lib/nginx/modules/ngx_http_brotli_static_module.so"
def present(cmd):
    """Whether a command (or a file, given by its absolute path) is there."""
    return os.path.exists(cmd) if cmd.startswith("/") else bool(
        shutil.which(cmd) or os.path.exists("/usr/sbin/" + cmd))


def ensure(packages):
    """packages: {command or absolute path: Debian package}; installs the
    missing ones."""
    missing = sorted({pkg for cmd, pkg in packages.items() if not present(cmd)})
    if not missing:
        return
    log("installing " + " ".join(missing))
    prefix = [] if os.geteuid() == 0 else (["sudo"] if shutil.which("sudo") else None)
    if prefix is None:
        die("missing " + " ".join(missing) + "; apt-get install -y " + " ".join(missing))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(prefix + ["apt-get", "install", "-y", "-q"] + missing, env=env)
    if not all(present(c) for c in packages):
        subprocess.run(prefix + ["apt-get", "update", "-q"], check=True, env=env)
        subprocess.run(prefix + ["apt-get", "install", "-y", "-q"] + missing, check=True, env=env)


def is_folio(name):
    return name.startswith("folio")


def parse_folios(specs):
    out = []
    for i, spec in enumerate(specs or [os.path.join(REPO, "build", "src", "folio")]):
        head, *extra = spec.split()
        name, _, path = head.rpartition("=")
        name = name or ("folio" if i == 0 else f"folio{i + 1}")
        if not is_folio(name):
            name = "folio-" + name
        path = os.path.abspath(path)
        if not os.access(path, os.X_OK):
            die(f"no folio binary at {path} (build it: meson setup build && ninja -C build)")
        out.append((name, path, extra))
    return out


def best_levels(extra):
    """The ETag marks a folio's brotli and zstd bodies reach once its
    background work is done: its production best (br 11, zstd 19) capped by
    --brotli-quality and --zstd-level, or a sidecar's mark."""
    caps = {"--brotli-quality": BR_QUALITY, "--zstd-level": ZSTD_LEVEL}
    args = [a for x in extra for a in x.split("=", 1)]
    for i, a in enumerate(args[:-1]):
        if a in caps and args[i + 1].isdigit():
            caps[a] = min(caps[a], int(args[i + 1]))
    return {"br": (f"-br{caps['--brotli-quality']}", "-brs"),
            "zstd": (f"-zs{caps['--zstd-level']}", "-zss")}


def start_folio(name, binary, root, tmp, workers, extra=()):
    out = os.path.join(tmp, name + ".out")
    s = hb.Server(name, " ".join([binary, "--threads", str(workers), "--gzip-level", str(GZIP_LEVEL)]
                                 + list(extra)),
                  [binary, "--root", root, "--host", "127.0.0.1", "--port", "0", "--production",
                   "--quiet", "--threads", str(workers), "--gzip-level", str(GZIP_LEVEL),
                   "--grace", "1"] + list(extra), 0, tmp, out)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        with open(out, errors="replace") as f:  # warnings may come first
            lines = [l for l in f if "http://127.0.0.1:" in l and l.endswith("\n")]
        if lines:
            s.port = int(lines[0].split("http://127.0.0.1:")[1].split("/")[0])
            s.wait_ready()
            s.offers = set(CODINGS)
            s.best = best_levels(extra)
            return s
        if s.proc.poll() is not None:
            break
        time.sleep(0.05)
    s.stop()  # it may be running without having said where
    with open(out, errors="replace") as f:
        die(f"{name} ({binary}) did not start:\n" + f.read())


def start_nginx(root, tmp, workers):
    d = os.path.join(tmp, "nginx")
    os.makedirs(os.path.join(d, "logs"))
    port = hb.free_port()
    # Debian 12's nginx has brotli only as a module package (.br sidecars, as
    # gzip_static serves the .gz ones); no zstd module exists there.
    brotli = os.path.exists(NGINX_BROTLI)
    conf = f"""
{"user root;" if os.geteuid() == 0 else ""}
{f"load_module {NGINX_BROTLI};" if brotli else ""}
worker_processes {workers};
daemon off;
master_process on;
pid {d}/nginx.pid;
error_log {d}/logs/error.log warn;
events {{ worker_connections 4096; use epoll; }}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    charset utf-8;
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    keepalive_timeout 30s;
    gzip off;
    gzip_static on;
    gzip_vary on;
    {"brotli_static on;" if brotli else ""}
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    server {{
        listen 127.0.0.1:{port};
        root {root}/www;
        index index.html;
        error_page 404 /404.html;
        location /fragments/ {{ alias {root}/fragments/; }}
        location /assets/ {{ alias {root}/assets/; }}
    }}
}}
"""
    path = os.path.join(d, "nginx.conf")
    with open(path, "w") as f:
        f.write(conf)
    s = hb.Server("nginx", f"nginx, worker_processes {workers}, gzip_static"
                  + (", brotli_static" if brotli else " (no brotli module)"),
                  [hb.tool("nginx"), "-p", d, "-c", path], port, d, os.path.join(d, "nginx.out"))
    s.wait_ready()
    s.offers = {"gzip", "br"} if brotli else {"gzip"}
    return s


def start_lighttpd(root, tmp):
    d = os.path.join(tmp, "lighttpd")
    os.makedirs(os.path.join(d, "deflate-cache"))
    os.makedirs(os.path.join(d, "errors"))
    shutil.copy(os.path.join(root, "www", "404.html"), os.path.join(d, "errors", "status-404.html"))
    port = hb.free_port()
    q = json.dumps  # a double-quoted string lighttpd accepts
    mimes = ",\n    ".join(f"{q(e)} => {q(t)}" for e, t in MIME.items())
    types = sorted({MIME[e].split(";")[0] for e in COMPRESSIBLE})
    conf = f"""
server.modules = ("mod_alias", "mod_deflate")
server.bind = "127.0.0.1"
server.port = {port}
server.document-root = {q(root + "/www")}
server.pid-file = {q(d + "/lighttpd.pid")}
server.errorlog = {q(d + "/error.log")}
server.errorfile-prefix = {q(d + "/errors/status-")}
server.network-backend = "sendfile"
server.max-keep-alive-requests = 1000000
server.max-keep-alive-idle = 30
server.max-connections = 4096
server.max-fds = 16384
index-file.names = ("index.html")
alias.url = ("/fragments/" => {q(root + "/fragments/")}, "/assets/" => {q(root + "/assets/")})
static-file.etags = "enable"
mimetype.assign = (
    {mimes}
)
deflate.mimetypes = ({", ".join(q(t) for t in types)})
deflate.allowed-encodings = ("br", "zstd", "gzip")
deflate.compression-level = {GZIP_LEVEL}
deflate.params = ("BROTLI_PARAM_QUALITY" => {BR_QUALITY}, "BROTLI_PARAM_LGWIN" => {BR_WINDOW},
                  "ZSTD_c_compressionLevel" => {ZSTD_LEVEL})
deflate.min-compress-size = {GZIP_MIN}
deflate.max-compress-size = 65536
deflate.cache-dir = {q(d + "/deflate-cache")}
"""
    path = os.path.join(d, "lighttpd.conf")
    with open(path, "w") as f:
        f.write(conf)
    s = hb.Server("lighttpd", f"lighttpd (one process), mod_deflate gzip -9, br {BR_QUALITY}, "
                  f"zstd {ZSTD_LEVEL} + deflate.cache-dir",
                  [hb.tool("lighttpd"), "-D", "-f", path], port, d, os.path.join(d, "lighttpd.out"))
    s.wait_ready()
    s.offers = set(CODINGS)
    return s


def start_h2o(root, tmp, workers):
    d = os.path.join(tmp, "h2o")
    os.makedirs(d)
    port = hb.free_port()
    conf = f"""
{"user: root" if os.geteuid() == 0 else ""}
pid-file: {d}/h2o.pid
error-log: {d}/error.log
num-threads: {workers}
listen:
  host: 127.0.0.1
  port: {port}
file.send-compressed: ON
hosts:
  default:
    paths:
      /:
        file.dir: {root}/www
      /fragments:
        file.dir: {root}/fragments
      /assets:
        file.dir: {root}/assets
    error-doc:
      status: 404
      url: /404.html
"""
    path = os.path.join(d, "h2o.conf")
    with open(path, "w") as f:
        f.write(conf)
    # h2o 2.2 sends a .br or .gz sidecar (file.send-compressed); it knows no zstd.
    s = hb.Server("h2o", f"h2o, num-threads {workers}, file.send-compressed (.br, .gz)",
                  [hb.tool("h2o"), "-c", path], port, d, os.path.join(d, "h2o.out"))
    s.wait_ready()
    s.offers = {"gzip", "br"}
    return s
