"""Which upstream an agent profile reaches, what a call said about it, and its health probe.

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
    * A call was ``refused`` when its class is ``upstream``; it made no contact when it
      never started, timed out, or never reached a vendor that has never answered (an
      ``environment`` failure, SPEC §12.7); any other outcome is an answer. A call whose
      relay saw any response byte reached its vendor, whatever followed (SPEC §13.4).
    * The probe is one bounded, cheap call with the profile's own credentials: codex and
      claude run the profile itself on ``PROBE_PROMPT`` (codex in a read-only sandbox
      unless the profile chooses one); ``command``, ``python`` and ``scripted`` agents
      run their profile's ``probe`` arguments instead of ``args``. A profile without a
      way to probe is never parked: its goals meet an outage on their own.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit, urlunsplit

from governor.core.classify import SpawnResult
from governor.core.event_fields import Profile
from governor.core.upstream import Seen, Upstream, model_family

PROBE_PROMPT: Final = (
    "role: probe\n"
    "This is a health check of the model endpoint. Do not use any tool. "
    "Reply with the single word: ok"
)
"""What a probe asks (``role: probe`` lets a scripted or command agent recognise it)."""
PROBE_TIMEOUT_S: Final = 60.0
"""The longest a probe may run, whatever the profile's own ``timeout_s``."""
OPENAI_URL: Final = "https://api.openai.com/v1"
ANTHROPIC_URL: Final = "https://api.anthropic.com"
GOOGLE_URL: Final = "https://generativelanguage.googleapis.com"
SELF_PROBING: Final = frozenset({"codex", "claude", "gemini"})
"""Harnesses whose probe is the profile itself; the others need ``probe`` arguments."""
_SANDBOX: Final = frozenset({"-s", "--sandbox", "--dangerously-bypass-approvals-and-sandbox"})


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


def named(upstream: Upstream, name: str | None) -> Upstream:
    """The upstream a failure names instead (a command envelope's ``upstream``), if it does."""
    return (
        upstream if name is None or name == upstream.declared else replace(upstream, declared=name)
    )


def seen(result: SpawnResult) -> Seen:
    """What one call's result says about its upstream (a response byte on the relay's wire
    says the vendor answered, whatever the CLI did after: reached is reached, SPEC §13.4)."""
    if result.ok:
        return Seen("answered")
    reached = result.wire is not None and result.wire.responded
    unreachable = result.connection == "unreachable" and not reached
    if result.failure_class == "upstream":
        return Seen("refused", result.vendor_status, result.retry_after_s, unreachable)
    if not reached and (result.timed_out or result.spawn_errno is not None or unreachable):
        return Seen("none", unreachable=unreachable)
    return Seen("answered")


def probe_profile(profile: Profile) -> Profile | None:
    """The profile a probe runs (one try, bounded), or None when it cannot be probed."""
    bounded = {"max_attempts": 1, "timeout_s": min(profile.timeout_s, PROBE_TIMEOUT_S)}
    if profile.probe:
        return profile.model_copy(update={**bounded, "args": profile.probe})
    if profile.harness not in SELF_PROBING:
        return None
    args = profile.args
    if profile.harness == "codex" and not _SANDBOX & set(args):
        args = (*args, "--sandbox", "read-only")
    return profile.model_copy(update={**bounded, "args": args})
