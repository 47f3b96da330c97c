"""A guard in front of the Temporal dev server (which speaks neither TLS nor API keys).

A real gRPC server on a free loopback port (``grpcio``) that forwards every call, bytes
untouched, to the dev server, and lets a call through only when the client is who it must
be: with ``tls``, a TLS handshake with the test's server certificate (and, with
``client_ca``, a client certificate that CA signed: mTLS); with ``api_key``, the
``authorization: Bearer <key>`` header Temporal Cloud checks. Refused calls are counted.
The certificates are made by the test with ``cryptography``.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc  # type: ignore[import-untyped]
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class Pem:
    cert: Path
    key: Path


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _write(folder: Path, stem: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> Pem:
    pem = Pem(folder / f"{stem}.pem", folder / f"{stem}.key")
    pem.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    pem.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return pem


def certificates(folder: Path) -> dict[str, Pem]:
    """A CA, a server certificate for 127.0.0.1 and a client certificate, both CA-signed."""
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("governor test CA"))
        .issuer_name(_name("governor test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    found = {"ca": _write(folder, "ca", ca, ca_key)}
    for stem, usage in (
        ("server", ExtendedKeyUsageOID.SERVER_AUTH),
        ("client", ExtendedKeyUsageOID.CLIENT_AUTH),
    ):
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(f"governor test {stem}"))
            .issuer_name(ca.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if stem == "server":
            names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        found[stem] = _write(folder, stem, builder.sign(ca_key, hashes.SHA256()), key)
    return found


@dataclass
class Guard:
    """The running guard: its address, and the calls it refused (their reasons)."""

    address: str
    server: grpc.Server
    refused: list[str] = field(default_factory=list)

    def stop(self) -> None:
        self.server.stop(grace=None)


class _Forward(grpc.GenericRpcHandler):  # type: ignore[misc]
    def __init__(
        self,
        upstream: grpc.Channel,
        check: Callable[[dict[str, Any]], str | None],
        refused: list[str],
    ) -> None:
        self.upstream, self.check, self.refused = upstream, check, refused

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        method = details.method
        metadata = dict(details.invocation_metadata or ())
        forward = self.upstream.unary_unary(method)  # bytes in, bytes out
        passed = [(k, v) for k, v in metadata.items() if k != "authorization"]

        def call(request: bytes, context: grpc.ServicerContext) -> bytes:
            why = self.check(metadata)
            if why is not None:
                self.refused.append(why)
                context.abort(grpc.StatusCode.UNAUTHENTICATED, why)
            try:
                answer: bytes = forward(request, metadata=passed, timeout=context.time_remaining())
            except grpc.RpcError as exc:
                context.abort(exc.code(), exc.details() or "")
            return answer

        return grpc.unary_unary_rpc_method_handler(call)


def start_guard(
    upstream: str,
    *,
    tls: dict[str, Pem] | None = None,
    mtls: bool = False,
    api_key: str | None = None,
) -> Guard:
    """A guard forwarding to ``upstream`` (see the module docstring)."""

    def check(metadata: dict[str, Any]) -> str | None:
        if api_key is not None and metadata.get("authorization") != f"Bearer {api_key}":
            return "no valid API key"
        return None

    refused: list[str] = []
    server = grpc.server(
        ThreadPoolExecutor(64), handlers=[_Forward(grpc.insecure_channel(upstream), check, refused)]
    )
    if tls is None:
        port = server.add_insecure_port("127.0.0.1:0")
    else:
        credentials = grpc.ssl_server_credentials(
            [(tls["server"].key.read_bytes(), tls["server"].cert.read_bytes())],
            root_certificates=tls["ca"].cert.read_bytes() if mtls else None,
            require_client_auth=mtls,
        )
        port = server.add_secure_port("127.0.0.1:0", credentials)
    server.start()
    return Guard(f"127.0.0.1:{port}", server, refused)
