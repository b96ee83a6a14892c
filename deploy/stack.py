"""Daedalus behind nginx: several server processes on one Redis, TLS, no sticky sessions.

    python deploy/stack.py [--servers 2] [--port 8443] [--redis-url URL] [--dir DIR]

Starts, on loopback:
- a `redis-server` (AOF, `appendfsync always`) in the working directory, unless
  `--redis-url` names one;
- `--servers` `daedalus serve` processes on that Redis, each on a port of its own;
- nginx (Debian's package) in front of them on `--port`: TLS with a certificate made for
  the run (its CA file is printed: give it to clients as SSL_CERT_FILE), websocket
  upgrade, and round-robin over the servers with no sticky sessions. Any server can serve
  any match, because every server folds the same Redis stream.

Then it prints `ready https://127.0.0.1:PORT ca=FILE` and runs until interrupted. It is the
configuration `tests/test_proxy.py` plays matches through while it kills a server, and the
one `deploy/nginx.conf` and `deploy/README.md` describe for production.

Health: open-source nginx checks upstreams passively: a server that refuses a connection or
answers 502/503/504 is skipped (`proxy_next_upstream`) and left out for `fail_timeout`,
after which nginx tries it again. Active checks of `GET /health` belong to the process
supervisor or orchestrator (the systemd unit restarts a dead server; Kubernetes' readiness
probe takes a server whose Redis does not answer out of its Service); this script itself
waits for every server's `/health` before it starts nginx and reports `ready`.
"""

from __future__ import annotations

import argparse
import datetime
import ipaddress
import os
import pwd
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

NGINX_CONF = """\
# Written by deploy/stack.py: Daedalus behind nginx (see deploy/nginx.conf).
{user}worker_processes 1;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/nginx-error.log warn;

events {{
    worker_connections 4096;
}}

http {{
    access_log off;
    client_body_temp_path {dir}/client_body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;

{body}
}}
"""

# The part shared with deploy/nginx.conf (which has the production paths and names).
HTTP_BODY = """\
    # A websocket upgrade is passed on as one; other requests keep the upstream
    # connection alive (an empty Connection header).
    map $http_upgrade $connection_upgrade {{
        default upgrade;
        ''      '';
    }}

    upstream daedalus {{
        # No sticky sessions: any server serves any match.
{servers}
        keepalive 32;
    }}

    server {{
        listen {listen} ssl;
        server_name {server_name};
        ssl_certificate     {cert};
        ssl_certificate_key {key};
        ssl_protocols TLSv1.2 TLSv1.3;

        # The servers' metrics are for the monitoring system, which scrapes each server
        # directly: not served to the public.
        location = /metrics {{
            return 404;
        }}

        location / {{
            proxy_pass http://daedalus;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header Host $host;
            # The server takes the client's address from here (uvicorn's proxy headers,
            # trusted from FORWARDED_ALLOW_IPS), for its per-address limits.
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            # A websocket lives as long as its player: the server pings it, so nginx
            # only needs to outlast the pings.
            proxy_read_timeout 1h;
            proxy_send_timeout 1h;
            # A server that is down or answers "unavailable" is skipped. A request that
            # reached a server is never sent to another one unless it is idempotent;
            # creating a match and claiming a seat carry idempotency keys anyway.
            proxy_next_upstream error timeout http_502 http_503 http_504;
            proxy_next_upstream_tries 3;
            proxy_connect_timeout 2s;
        }}
    }}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for localhost and 127.0.0.1 (cert, key), valid a week."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Daedalus test stack")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=7))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    key_path.chmod(0o600)
    return cert_path, key_path


def nginx_conf(directory: Path, listen: str, ports: list[int], cert: Path, key: Path) -> str:
    servers = "\n".join(
        f"        server 127.0.0.1:{p} max_fails=1 fail_timeout=3s;" for p in ports
    )
    body = HTTP_BODY.format(
        servers=servers, listen=listen, server_name="localhost", cert=cert, key=key
    )
    # Run as root (as in a container or this test machine), nginx's workers would switch
    # to `nobody`, who cannot read the run's private directory: keep them as this user.
    user = ""
    if os.geteuid() == 0:
        user = f"user {pwd.getpwuid(os.geteuid()).pw_name};\n"
    return NGINX_CONF.format(user=user, dir=directory, body=body)


PRODUCTION_HEAD = """\
# Daedalus behind nginx: the configuration deploy/stack.py runs in tests/test_proxy.py,
# with production names. Include it in the http block of nginx.conf
# (e.g. /etc/nginx/conf.d/daedalus.conf); list every `daedalus serve` process under
# `upstream daedalus`, set server_name and the certificate paths.
# Regenerate with: python deploy/stack.py --production-conf > deploy/nginx.conf

"""

COMPOSE_HEAD = """\
# nginx in deploy/compose/compose.yaml: the configuration deploy/stack.py runs in
# tests/test_proxy.py, in front of the compose file's two servers.
# Regenerate with: python deploy/stack.py --compose-conf > deploy/compose/nginx.conf

"""


def production_conf(compose: bool = False) -> str:
    """deploy/nginx.conf (or, `compose`, deploy/compose/nginx.conf): the tested
    configuration with production names and paths."""
    if compose:
        upstreams, server_name = ["server-1:8000", "server-2:8000"], "localhost"
        cert, key = "/etc/ssl/daedalus/cert.pem", "/etc/ssl/daedalus/key.pem"
        head = COMPOSE_HEAD
    else:
        upstreams, server_name = ["10.0.0.11:8000", "10.0.0.12:8000"], "games.example.org"
        cert, key = "/etc/ssl/daedalus/fullchain.pem", "/etc/ssl/daedalus/privkey.pem"
        head = PRODUCTION_HEAD
    servers = "\n".join(f"        server {u} max_fails=1 fail_timeout=3s;" for u in upstreams)
    body = HTTP_BODY.format(
        servers=servers, listen="443", server_name=server_name, cert=cert, key=key
    )
    return head + body


class Stack:
    """Redis, `servers` Daedalus processes and nginx in front, on loopback.

    `url` is the proxy's https URL and `ca_file` the certificate to trust. `kill_server`
    and `start_server` stop and start one server process (same port), as a crash and a
    supervisor's restart would."""

    def __init__(
        self,
        servers: int = 2,
        port: int = 0,
        redis_url: str | None = None,
        directory: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        if servers < 1:
            raise ValueError("at least one server")
        nginx = shutil.which("nginx") or (
            "/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None
        )
        if nginx is None:
            raise FileNotFoundError("nginx")
        self.nginx_bin: str = nginx
        self.own_dir = directory is None
        self.dir = Path(directory or tempfile.mkdtemp(prefix="daedalus-stack-"))
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.redis_url = redis_url
        self.server_ports = [free_port() for _ in range(servers)]
        self.env = dict(os.environ, **(env or {}))
        self.redis: subprocess.Popen[bytes] | None = None
        self.servers: list[subprocess.Popen[bytes] | None] = [None] * servers
        self.nginx: subprocess.Popen[bytes] | None = None
        self.ca_file = self.dir / "cert.pem"

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    # --- parts -------------------------------------------------------------------------

    def _start_redis(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise FileNotFoundError("redis-server")
        port = free_port()
        data = self.dir / "redis"
        data.mkdir(exist_ok=True)
        self.redis = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "yes", "--appendfsync", "always", "--dir", str(data)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        self.redis_url = f"redis://127.0.0.1:{port}/0"
        _wait(lambda: _connects(port), 10, "redis-server did not start")

    def start_server(self, index: int) -> None:
        """Start server `index` (again) on its port, and wait until it is healthy."""
        port = self.server_ports[index]
        log = open(self.dir / f"server-{index}.log", "ab")  # noqa: SIM115 (the process keeps it)
        env = dict(self.env, REDIS_URL=self.redis_url or "", DAEDALUS_LOG_LEVEL=self.env.get(
            "DAEDALUS_LOG_LEVEL", "info"), DAEDALUS_KEY_FILE=str(self.dir / "server-key.pem"))
        self.servers[index] = subprocess.Popen(
            [sys.executable, "-m", "clients.cli", "serve", "--host", "127.0.0.1",
             "--port", str(port)],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
        log.close()
        _wait(lambda: _healthy(f"http://127.0.0.1:{port}/health"), 30,
              f"server {index} did not become healthy (see {self.dir}/server-{index}.log)")

    def kill_server(self, index: int, sig: int = signal.SIGKILL) -> None:
        proc = self.servers[index]
        if proc is not None:
            proc.send_signal(sig)
            proc.wait(timeout=30)
            self.servers[index] = None

    def _start_nginx(self) -> None:
        cert, key = make_certificate(self.dir)
        conf = self.dir / "nginx.conf"
        conf.write_text(
            nginx_conf(self.dir, f"127.0.0.1:{self.port}", self.server_ports, cert, key)
        )
        self.nginx = subprocess.Popen(
            [self.nginx_bin, "-p", str(self.dir), "-c", str(conf)],
            stdout=subprocess.DEVNULL, stderr=open(self.dir / "nginx-start.log", "wb"),  # noqa: SIM115
        )
        context = ssl.create_default_context(cafile=str(self.ca_file))
        _wait(lambda: _healthy(f"{self.url}/health", context), 15,
              f"nginx did not come up (see {self.dir}/nginx-error.log)")

    # --- all ---------------------------------------------------------------------------

    def start(self) -> Stack:
        try:
            if self.redis_url is None:
                self._start_redis()
            for i in range(len(self.servers)):
                self.start_server(i)
            self._start_nginx()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        procs = [self.nginx, *self.servers, self.redis]
        for proc in procs:
            if proc is not None and proc.poll() is None:
                proc.terminate()
        for proc in procs:
            if proc is not None:
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self.nginx, self.redis = None, None
        self.servers = [None] * len(self.servers)
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> Stack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _connects(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def _healthy(url: str, context: ssl.SSLContext | None = None) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1, context=context) as r:
            return bool(r.status == 200)
    except (OSError, ValueError):
        return False


def _wait(ok: object, seconds: float, message: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ok():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise RuntimeError(message)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--servers", type=int, default=2, help="server processes (default: %(default)s)")
    p.add_argument("--port", type=int, default=8443, help="nginx's TLS port (default: %(default)s)")
    p.add_argument("--redis-url", default=None, help="a Redis to use (default: start one)")
    p.add_argument("--dir", default=None, help="working directory, kept (default: a temporary one)")
    p.add_argument("--production-conf", action="store_true",
                   help="print deploy/nginx.conf (the same proxy settings, production names) and exit")
    p.add_argument("--compose-conf", action="store_true",
                   help="print deploy/compose/nginx.conf and exit")
    p.add_argument("--make-cert", metavar="DIR", default=None,
                   help="write a self-signed cert.pem and key.pem for localhost into DIR and exit")
    args = p.parse_args(argv)
    if args.production_conf or args.compose_conf:
        print(production_conf(compose=args.compose_conf), end="")
        return 0
    if args.make_cert:
        target = Path(args.make_cert)
        target.mkdir(parents=True, exist_ok=True)
        cert, key = make_certificate(target)
        print(f"wrote {cert} and {key}")
        return 0
    try:
        stack = Stack(args.servers, args.port, args.redis_url, args.dir).start()
    except (FileNotFoundError, RuntimeError) as exc:
        print(f"stack: {exc}", file=sys.stderr)
        return 1
    print(f"ready {stack.url} ca={stack.ca_file} servers="
          + ",".join(str(p) for p in stack.server_ports) + f" dir={stack.dir}", flush=True)
    try:
        signal.sigwait({signal.SIGINT, signal.SIGTERM})
    except KeyboardInterrupt:
        pass
    finally:
        stack.stop()
    return 0


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    raise SystemExit(main())
