"""A throwaway certificate authority for one simulator run.

Each start makes a fresh CA and a server certificate for 127.0.0.1/localhost, so clients verify the
server with the CA from the kubeconfig exactly as against a real cluster (no insecure flag), and
tests can be issued client certificates (CN = user, O = groups) for certificate authentication.
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


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


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
        now = datetime.datetime.now(datetime.UTC)
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-rehash-simulator-ca")])
        ca_cert = (
            x509.CertificateBuilder()
            .subject_name(ca_name)
            .issuer_name(ca_name)
            .public_key(ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
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
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        sans: list[x509.GeneralName] = []
        for host in hosts:
            try:
                sans.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                sans.append(x509.DNSName(host))
        server_key = ec.generate_private_key(ec.SECP256R1())
        server_cert = cls._issue(
            ca_cert,
            ca_key,
            server_key,
            common_name="kube-apiserver",
            organizations=(),
            usage=ExtendedKeyUsageOID.SERVER_AUTH,
            sans=sans,
        )
        return cls(
            ca_cert,
            ca_key,
            ca_cert.public_bytes(serialization.Encoding.PEM),
            server_cert.public_bytes(serialization.Encoding.PEM),
            _key_pem(server_key),
        )

    @staticmethod
    def _issue(
        ca_cert: x509.Certificate,
        ca_key: ec.EllipticCurvePrivateKey,
        key: ec.EllipticCurvePrivateKey,
        *,
        common_name: str,
        organizations: Iterable[str],
        usage: x509.ObjectIdentifier,
        sans: list[x509.GeneralName],
    ) -> x509.Certificate:
        now = datetime.datetime.now(datetime.UTC)
        attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, org) for org in organizations]
        attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name(attrs))
            .issuer_name(ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
            )
        )
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        return builder.sign(ca_key, hashes.SHA256())

    def issue_client_cert(self, user: str, groups: Iterable[str] = ()) -> tuple[bytes, bytes]:
        """A client certificate (CN = user, O = each group) and its key, both PEM."""
        key = ec.generate_private_key(ec.SECP256R1())
        cert = self._issue(
            self.ca_cert,
            self.ca_key,
            key,
            common_name=user,
            organizations=groups,
            usage=ExtendedKeyUsageOID.CLIENT_AUTH,
            sans=[],
        )
        return cert.public_bytes(serialization.Encoding.PEM), _key_pem(key)
