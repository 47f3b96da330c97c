"""The governor service: workers that tick every due goal of a store, one step at a time.

``serve(settings)`` runs it (``governor serve``); ``service_status(store, now)`` reports
on it (``governor service status``). See ``docs/deployment.md``. ``serve`` is imported
on first use, so the CLI does not pay for multiprocessing and http.server on every call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from governor.service.settings import ErrorBackoff, ServiceSettings
from governor.service.status import ServiceStatus, service_status

if TYPE_CHECKING:
    from governor.service.supervisor import serve

__all__ = ["ErrorBackoff", "ServiceSettings", "ServiceStatus", "serve", "service_status"]


def __getattr__(name: str) -> Any:
    if name == "serve":
        from governor.service.supervisor import serve  # noqa: PLC0415 - lazy on purpose

        return serve
    raise AttributeError(f"module 'governor.service' has no attribute {name!r}")
