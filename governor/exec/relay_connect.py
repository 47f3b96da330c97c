"""How the relay reaches a profile's real upstream: directly, or through the environment's proxy.

Rules (SPEC §13.1; decision record 0027):
    * The upstream is the profile's configured base URL or its vendor's default
      (``Upstream``); the relay keeps its path, so the CLI's path reaches the same place.
    * A proxy is taken from the source environment as the CLI would take it:
      ``HTTPS_PROXY`` / ``https_proxy`` for an ``https`` upstream, ``HTTP_PROXY`` /
      ``http_proxy`` for ``http`` (then ``ALL_PROXY``), unless ``NO_PROXY`` / ``no_proxy``
      names the host. An ``https`` upstream is reached through ``CONNECT``; an ``http`` one
      by sending the absolute URL to the proxy, with the proxy URL's user and password as
      ``Proxy-Authorization``.
    * TLS trusts the system's roots plus the bundles the CLI itself would have trusted:
      ``SSL_CERT_FILE``, ``SSL_CERT_DIR``, ``NODE_EXTRA_CA_CERTS`` (a company that
      inspects TLS).
    * A failure to connect says how (``Unreached``): the name did not resolve (``dns``),
      the TLS handshake failed (``tls``), the connection was refused or timed out or the
      proxy refused the tunnel (``connect``).
    * The connection's reader is ``governor.exec.relay_pieces.Pieces``: each socket read
      handed on whole, not copied through ``StreamReader``'s buffer.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import socket
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal
from urllib.parse import unquote, urlsplit
from urllib.request import proxy_bypass_environment  # type: ignore[attr-defined]

from governor.exec.relay_pieces import open_pieces

CONNECT_TIMEOUT_S: Final = 30.0
"""The longest the relay waits to connect to the upstream (or its proxy)."""
PROXY_HEAD_LIMIT: Final = 64 * 1024


class Unreached(Exception):
    """The upstream could not be reached: how (``dns``, ``tls``, ``connect``) and why."""

    def __init__(self, how: Literal["dns", "tls", "connect"], detail: str) -> None:
        super().__init__(f"{how}: {detail}")
        self.how: Literal["dns", "tls", "connect"] = how
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Upstream:
    """Where the relay forwards: the vendor's base URL, its proxy and its trust."""

    scheme: str
    host: str
    port: int
    base_path: str
    proxy: str | None = None
    """The proxy URL, when the environment names one for this host."""
    ca_files: tuple[str, ...] = ()
    ca_dir: str | None = None

    @property
    def tls(self) -> bool:
        return self.scheme == "https"

    @property
    def authority(self) -> str:
        """``host[:port]`` as the ``Host`` header says it."""
        default = 443 if self.tls else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == default else f"{host}:{self.port}"


def _env(env: Mapping[str, str], *names: str) -> str | None:
    return next((env[n] for n in names if env.get(n)), None)


def upstream_for(base_url: str, env: Mapping[str, str]) -> Upstream:
    """The upstream for ``base_url``, with the proxy and trust ``env`` gives the CLI."""
    parts = urlsplit(base_url.strip())
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) base URL: {parts.scheme or '(no scheme)'}://…")
    port = parts.port or (443 if scheme == "https" else 80)
    names = ("HTTPS_PROXY", "https_proxy") if scheme == "https" else ("HTTP_PROXY", "http_proxy")
    proxy = _env(env, *names, "ALL_PROXY", "all_proxy")
    no_proxy = _env(env, "NO_PROXY", "no_proxy")
    if proxy and no_proxy and proxy_bypass_environment(parts.hostname, {"no": no_proxy}):
        proxy = None
    extra = _env(env, "NODE_EXTRA_CA_CERTS")
    files = tuple(f for f in (_env(env, "SSL_CERT_FILE"), extra) if f)
    return Upstream(
        scheme,
        parts.hostname,
        port,
        parts.path.rstrip("/"),
        proxy=proxy,
        ca_files=files,
        ca_dir=_env(env, "SSL_CERT_DIR"),
    )


def tls_context(upstream: Upstream) -> ssl.SSLContext:
    """The system's roots plus the bundles the CLI would have trusted."""
    context = ssl.create_default_context()
    for ca in upstream.ca_files:
        try:
            context.load_verify_locations(cafile=ca)
        except (OSError, ssl.SSLError):
            continue  # the CLI would not have trusted an unreadable bundle either
    if upstream.ca_dir:
        with contextlib.suppress(OSError, ssl.SSLError):
            context.load_verify_locations(capath=upstream.ca_dir)
    return context


def proxy_authorization(proxy: str) -> str | None:
    """The ``Proxy-Authorization`` value of a proxy URL with a user, else None."""
    parts = urlsplit(proxy)
    if parts.username is None:
        return None
    pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
    return "Basic " + base64.b64encode(pair.encode()).decode()


Streams = tuple[asyncio.StreamReader, asyncio.StreamWriter]


async def _open(host: str, port: int, context: ssl.SSLContext | None, name: str | None) -> Streams:
    try:
        return await asyncio.wait_for(
            open_pieces(host, port, limit=1 << 20, context=context, server_hostname=name),
            CONNECT_TIMEOUT_S,
        )
    except socket.gaierror as exc:
        raise Unreached("dns", f"{host}: {exc.strerror or exc}") from exc
    except ssl.SSLError as exc:
        raise Unreached("tls", exc.reason or type(exc).__name__) from exc
    except TimeoutError as exc:
        raise Unreached("connect", "connect timed out") from exc
    except ConnectionRefusedError as exc:
        raise Unreached("connect", "ECONNREFUSED") from exc
    except OSError as exc:
        raise Unreached("connect", _errno(exc)) from exc


def _errno(exc: OSError) -> str:
    import errno  # noqa: PLC0415 - only on a failure

    return errno.errorcode.get(exc.errno or 0, type(exc).__name__)


async def connect(upstream: Upstream) -> Streams:
    """A connection to the upstream (through its proxy, TLS when it is ``https``)."""
    context = tls_context(upstream) if upstream.tls else None
    if upstream.proxy is None:
        return await _open(
            upstream.host, upstream.port, context, upstream.host if context else None
        )
    proxy = urlsplit(upstream.proxy)
    if not proxy.hostname:
        raise Unreached("connect", "the proxy URL names no host")
    reader, writer = await _open(proxy.hostname, proxy.port or 80, None, None)
    if not upstream.tls:
        return reader, writer  # the request goes to the proxy with its absolute URL
    await _tunnel(reader, writer, upstream)
    try:
        await asyncio.wait_for(
            writer.start_tls(
                context or ssl.create_default_context(), server_hostname=upstream.host
            ),
            CONNECT_TIMEOUT_S,
        )
    except ssl.SSLError as exc:
        writer.close()
        raise Unreached("tls", exc.reason or type(exc).__name__) from exc
    except (TimeoutError, OSError) as exc:
        writer.close()
        raise Unreached("tls", type(exc).__name__) from exc
    return reader, writer


async def _tunnel(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, upstream: Upstream
) -> None:
    """Ask the proxy for a tunnel to the upstream (``CONNECT``)."""
    target = f"{upstream.host}:{upstream.port}"
    auth = proxy_authorization(upstream.proxy or "")
    head = f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n"
    if auth:
        head += f"Proxy-Authorization: {auth}\r\n"
    writer.write((head + "\r\n").encode())
    try:
        answer = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), CONNECT_TIMEOUT_S)
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, OSError) as exc:
        writer.close()
        raise Unreached("connect", "the proxy closed the tunnel request") from exc
    status = answer.split(b" ", 2)[1:2]
    if status != [b"200"]:
        writer.close()
        code = status[0].decode("ascii", "replace") if status else "?"
        raise Unreached("connect", f"the proxy answered {code} to CONNECT")
