"""Throwaway X.509 material for tests: the API simulator's CA code (rehash_simulator.tls, the one
implementation), plus writing a certificate and its key to files."""

from __future__ import annotations

from pathlib import Path

from rehash_simulator import tls
from rehash_simulator.tls import Pair, cert_pem, key_pem, make_ca

__all__ = ["Pair", "cert_pem", "issue", "key_pem", "make_ca", "write_pair"]


def issue(ca: Pair, name: str, *, server_ip: str | None = None) -> Pair:
    """A leaf certificate signed by `ca`: a server cert for `server_ip`, else a client cert for `name`."""
    return tls.issue(ca, name, server_hosts=[server_ip] if server_ip else [])


def write_pair(directory: Path, stem: str, pair: Pair) -> tuple[Path, Path]:
    """Write `<stem>.crt` and `<stem>.key` into `directory`; return both paths."""
    cert_path, key_path = directory / f"{stem}.crt", directory / f"{stem}.key"
    cert_path.write_bytes(cert_pem(pair[0]))
    key_path.write_bytes(key_pem(pair[1]))
    return cert_path, key_path
