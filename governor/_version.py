"""The package's version string (dependency-free: the facade, the CLI, spans and metrics
read it here, so nothing below the facade imports the facade)."""

from __future__ import annotations

from typing import Final

__version__: Final = "0.1.0"
