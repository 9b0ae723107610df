"""A throwaway certificate authority for one simulator run, and the X.509 helpers the tests use too.

Each start makes a fresh CA and a server certificate for 127.0.0.1/localhost, so clients verify the
server with the CA from the kubeconfig exactly as against a real cluster (no insecure flag), and
tests can be issued client certificates (CN = user, O = groups) for certificate authentication.
`make_ca`, `issue`, `cert_pem` and `key_pem` are the one implementation of this material in the
repository (tests/data/certs.py builds on them).
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_VALIDITY = datetime.timedelta(days=2)
_BACKDATE = datetime.timedelta(minutes=5)

Pair = tuple[x509.Certificate, ec.EllipticCurvePrivateKey]


def cert_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def make_ca(common_name: str = "kube-rehash-simulator-ca") -> Pair:
    """A self-signed CA certificate (it signs leaf certificates only) and its key (EC P-256: fast)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert, key


def issue(
    ca: Pair, common_name: str, *, organizations: Iterable[str] = (), server_hosts: Iterable[str] = ()
) -> Pair:
    """A leaf certificate signed by `ca`, and its key: a server certificate valid for `server_hosts`
    (IP addresses or DNS names) when any are given, else a client certificate (CN = common_name,
    O = each of `organizations`, as Kubernetes reads user and groups)."""
    ca_cert, ca_key = ca
    sans: list[x509.GeneralName] = []
    for host in server_hosts:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            sans.append(x509.DNSName(host))
    usage = ExtendedKeyUsageOID.SERVER_AUTH if sans else ExtendedKeyUsageOID.CLIENT_AUTH
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, org) for org in organizations]
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name(attrs))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return builder.sign(ca_key, hashes.SHA256()), key


@dataclass(frozen=True)
class Authority:
    """The CA plus the server certificate it signed, all PEM-encoded."""

    ca_cert: x509.Certificate
    ca_key: ec.EllipticCurvePrivateKey
    ca_pem: bytes
    server_cert_pem: bytes
    server_key_pem: bytes

    @classmethod
    def create(cls, hosts: Iterable[str] = ("127.0.0.1", "localhost")) -> Authority:
        ca_cert, ca_key = make_ca()
        server_cert, server_key = issue((ca_cert, ca_key), "kube-apiserver", server_hosts=hosts)
        return cls(ca_cert, ca_key, cert_pem(ca_cert), cert_pem(server_cert), key_pem(server_key))

    def issue_client_cert(self, user: str, groups: Iterable[str] = ()) -> tuple[bytes, bytes]:
        """A client certificate (CN = user, O = each group) and its key, both PEM."""
        cert, key = issue((self.ca_cert, self.ca_key), user, organizations=groups)
        return cert_pem(cert), key_pem(key)
