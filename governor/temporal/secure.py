"""Reaching a secured Temporal server: TLS, mTLS, API keys, Temporal's profiles.

Rules (issue 34, docs/deployment.md "Secured clusters"):
    * What the command line gives (``names.Security``) wins; what it leaves out comes
      from the Temporal profile (``temporalio.envconfig``: ``--profile``, else
      ``$TEMPORAL_PROFILE``, from ``$TEMPORAL_CONFIG_FILE`` or Temporal's default file)
      and Temporal's own variables (``TEMPORAL_API_KEY``, ``TEMPORAL_TLS``,
      ``TEMPORAL_TLS_CLIENT_CERT_PATH``, ``TEMPORAL_TLS_CLIENT_KEY_PATH``,
      ``TEMPORAL_TLS_SERVER_CA_CERT_PATH``, ``TEMPORAL_TLS_SERVER_NAME``), so a
      worker configured like Temporal's CLI needs no governor flag.
    * A client certificate, a CA or ``--tls`` turn TLS on; an API key turns it on
      unless ``--no-tls`` said otherwise (Temporal Cloud's rule).
    * A key is a secret: it is sent as the ``authorization`` header only, never logged,
      stored or put in a lease holder; a file that cannot be read is one line naming
      the flag.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from temporalio.envconfig import ClientConfig
from temporalio.service import TLSConfig

from governor.errors import InputError
from governor.temporal.names import Security


def profile_config(profile: str | None) -> dict[str, Any]:
    """What the Temporal profile and variables say (``InputError`` when they cannot be read)."""
    try:
        return dict(ClientConfig.load_client_connect_config(profile=profile))
    except Exception as exc:  # the SDK's ConfigError (a missing profile, a bad file), OSError
        where = f"Temporal profile '{profile}'" if profile else "Temporal's configuration"
        raise InputError(f"{where} cannot be read: {exc}") from None


def _read(path: str | None, flag: str) -> bytes | None:
    if path is None:
        return None
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"{flag}: cannot read {path} ({exc.strerror or exc})") from None


def connect_options(security: Security) -> dict[str, Any]:
    """``Client.connect``'s security keywords for ``security`` (the module rules)."""
    loaded = profile_config(security.profile)
    options: dict[str, Any] = {}
    api_key = security.api_key or loaded.get("api_key")
    if api_key:
        options["api_key"] = api_key
    if loaded.get("rpc_metadata"):
        options["rpc_metadata"] = loaded["rpc_metadata"]
    given = any((security.cert, security.key, security.ca, security.server_name))
    if security.tls is False:
        options["tls"] = False
    elif given:
        if bool(security.cert) != bool(security.key):
            raise InputError(
                "--tls-cert and --tls-key go together (a client certificate and its key)"
            )
        options["tls"] = TLSConfig(
            server_root_ca_cert=_read(security.ca, "--tls-ca"),
            client_cert=_read(security.cert, "--tls-cert"),
            client_private_key=_read(security.key, "--tls-key"),
            domain=security.server_name,
        )
    elif security.tls or loaded.get("tls"):
        options["tls"] = loaded.get("tls") or True
    if security.identity:
        options["identity"] = security.identity
    return options
