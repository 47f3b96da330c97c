"""Which upstream an agent profile reaches: the vendor endpoint its CLI calls, or its identity.

Rules (SPEC §11.10, §12.9; docs/fleet-outages.md):
    * A profile's upstream is its harness, its endpoint and its model family
      (``governor.core.upstream.Upstream``). The endpoint is the vendor's base URL as the
      CLI would use it — codex: ``OPENAI_BASE_URL``, else the ``base_url`` of the model
      provider its ``config.toml`` selects (``$CODEX_HOME``, else ``~/.codex``), else
      OpenAI's; claude: ``ANTHROPIC_BASE_URL``, else Anthropic's; gemini:
      ``GOOGLE_GEMINI_BASE_URL``, else Google's — and for the
      ``command``, ``python`` and ``scripted`` harnesses the agent's whole identity: its
      full argument list (a command), its callable (python) or its scenario (scripted),
      with the folder relative names resolve against. That identity is shown as a short
      readable name and a digest of all of it (``python3 plan.py#3f2a9c1d0e``): two
      different scripts never share a record, and no absolute path is shown. A URL is
      shown without its user, password, query or fragment: no secret reaches a record or
      a log.
    * A profile's ``upstream`` setting names its record instead, whatever its harness:
      profiles that declare the same name share it (and park together).

The adapters read their vendor's base URL here too (the relay forwards to it); what a
call says about its upstream, and the probe, are the core's (``governor.core.upstream``),
and the record is kept by ``governor.drive.health``.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit, urlunsplit

from governor.core.event_fields import Profile
from governor.core.upstream import Upstream, model_family

OPENAI_URL: Final = "https://api.openai.com/v1"
ANTHROPIC_URL: Final = "https://api.anthropic.com"
GOOGLE_URL: Final = "https://generativelanguage.googleapis.com"


def public_url(url: str) -> str:
    """A URL without user, password, query or fragment, and without a trailing slash."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return "(unreadable URL)"
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def codex_config(env: Mapping[str, str]) -> dict[str, object]:
    """Codex's ``config.toml`` (``$CODEX_HOME``, else ``~/.codex``), or {} when unreadable."""
    home = env.get("CODEX_HOME") or (f"{env['HOME']}/.codex" if env.get("HOME") else None)
    if home is None:
        return {}
    try:
        with (Path(home) / "config.toml").open("rb") as file:
            return tomllib.load(file)
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def _codex(profile: Profile, env: Mapping[str, str]) -> tuple[str, str | None]:
    config = codex_config(env)
    model = profile.model or (str(config["model"]) if "model" in config else None)
    if env.get("OPENAI_BASE_URL"):
        return public_url(env["OPENAI_BASE_URL"]), model
    provider = str(config.get("model_provider", "openai"))
    providers = config.get("model_providers")
    chosen = providers.get(provider) if isinstance(providers, dict) else None
    base = chosen.get("base_url") if isinstance(chosen, dict) else None
    return (public_url(base) if isinstance(base, str) else OPENAI_URL), model


DIGEST_CHARS: Final = 10
"""Hex digits of the digest that tells two agents with the same short name apart."""
SHORT_CHARS: Final = 60


def agent_identity(parts: Sequence[str], base_dir: Path) -> str:
    """An agent's identity as a record names it: each part without its folders, cut to
    ``SHORT_CHARS``, then ``#`` and a digest of every part and ``base_dir`` (SPEC §12.9)."""
    short = " ".join(part.rsplit("/", 1)[-1] or part for part in parts)[:SHORT_CHARS]
    whole = "\0".join((str(base_dir), *parts)).encode("utf-8", "surrogateescape")
    return f"{short or '(none)'}#{hashlib.sha256(whole).hexdigest()[:DIGEST_CHARS]}"


def upstream_of(profile: Profile, env: Mapping[str, str], base_dir: Path) -> Upstream:
    """The upstream a profile's calls reach, read from the source environment ``env``."""
    model = profile.model
    match profile.harness:
        case "codex":
            endpoint, model = _codex(profile, env)
        case "claude":
            base = env.get("ANTHROPIC_BASE_URL")
            endpoint = public_url(base) if base else ANTHROPIC_URL
            model = model or env.get("ANTHROPIC_MODEL")
        case "gemini":
            base = env.get("GOOGLE_GEMINI_BASE_URL")
            endpoint = public_url(base) if base else GOOGLE_URL
            model = model or env.get("GEMINI_MODEL")
        case "scripted":
            endpoint = agent_identity(profile.args or ("default",), base_dir)
        case _:
            endpoint = agent_identity(profile.args, base_dir)
    return Upstream(profile.harness, endpoint, model_family(model), declared=profile.upstream)
