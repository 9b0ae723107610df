"""A TLS proxy in front of kube-apiserver that can lose an answer: the lost-answer failpoint on a real server.

Why: a real API server cannot be told to apply a PATCH and then drop the connection, yet that is what a
client sees when the network or a load balancer fails after the server served the request. The proxy
terminates TLS with a certificate of its own CA, forwards each request to kube-apiserver over TLS, and asks
the same fault rules the simulator does (`rehash_simulator.faults.Faults`): `LoseAnswer` forwards the
request, reads the server's whole answer (the write is applied), then resets the client's connection
without a byte; `Reset` resets it before forwarding; `Delay` waits first. kube-rehash authenticates through
it with its own token, so the audit log still tells its requests apart.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import struct
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from rehash_simulator.faults import Delay, Faults, LoseAnswer, Reset
from rehash_simulator.tls import Authority

HOP_HEADERS = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length", "host"})


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, upstream: str, upstream_ca: Path, faults: Faults, context: ssl.SSLContext) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        parts = urlsplit(upstream)
        self.upstream_host, self.upstream_port = parts.hostname or "127.0.0.1", parts.port or 443
        self.upstream_context = ssl.create_default_context(cafile=str(upstream_ca))
        self.faults = faults
        self.context = context
        self.lost: list[tuple[str, str, int]] = []  # (method, path, status) of every answer lost
        self.errors: list[str] = []  # requests kube-apiserver failed to answer the proxy

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Resets and closed connections are the point here: stay quiet."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        self.request = self.server.context.wrap_socket(self.request, server_side=True)
        super().setup()

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self.forward()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def forward(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        split = urlsplit(self.path)
        actions = self.server.faults.pick(self.command, split.path, dict(parse_qsl(split.query)))
        for action in actions:
            if isinstance(action, Delay):
                time.sleep(action.seconds)
            elif isinstance(action, Reset):
                self.reset()
                return
            elif not isinstance(action, LoseAnswer):
                raise AssertionError(f"the proxy cannot inject {action!r}")
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_HEADERS}
        # One upstream connection per request: nothing stale to resend on, every failure is the server's.
        upstream = http.client.HTTPSConnection(
            self.server.upstream_host, self.server.upstream_port, context=self.server.upstream_context
        )
        try:
            upstream.request(self.command, self.path, body=body, headers=headers)
            answer = upstream.getresponse()
            payload = answer.read()
        except OSError as exc:  # kube-apiserver itself failed: said, never passed off as a failpoint
            self.server.errors.append(f"{self.command} {split.path}: {exc!r}")
            raise
        finally:
            upstream.close()
        if any(isinstance(a, LoseAnswer) for a in actions):
            self.server.lost.append((self.command, split.path, answer.status))
            self.reset()
            return
        self.send_response(answer.status, answer.reason)
        for key, value in answer.getheaders():
            if key.lower() not in HOP_HEADERS:
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def reset(self) -> None:
        """Close the client's connection with an RST and no answer."""
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        except OSError:
            pass

    def finish(self) -> None:
        with contextlib.suppress(OSError):  # the connection was reset on purpose
            super().finish()


class LossyProxy:
    """The running proxy: `url`, `ca_pem` (its CA, for a kubeconfig), `faults` (the rules it asks) and
    `lost` (the answers it dropped)."""

    def __init__(self, server: _Server, ca_pem: bytes) -> None:
        self._server = server
        self.ca_pem = ca_pem
        self.faults = server.faults

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self._server.server_address[1]}"

    @property
    def lost(self) -> list[tuple[str, str, int]]:
        return self._server.lost

    @property
    def errors(self) -> list[str]:
        return self._server.errors


@contextmanager
def lossy_proxy(upstream: str, upstream_ca: Path) -> Iterator[LossyProxy]:
    """A proxy to `upstream` (kube-apiserver's URL, verified against `upstream_ca`) for the block."""
    authority = Authority.create(("127.0.0.1", "localhost"))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    with tempfile.TemporaryDirectory(prefix="rehash-proxy-") as tmp:
        cert, key = Path(tmp, "proxy.crt"), Path(tmp, "proxy.key")
        cert.write_bytes(authority.server_cert_pem)
        key.write_bytes(authority.server_key_pem)
        context.load_cert_chain(cert, key)
    server = _Server(upstream, upstream_ca, Faults(), context)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield LossyProxy(server, authority.ca_pem)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
