"""Could this binary start now? Answered by looking at the file, never by running it.

Rules:
    * A binary is found as ``PATH`` lookup finds it (``shutil.which``): a regular file
      the caller may execute (a name with a ``/`` is checked where it points).
    * ``ENOEXEC`` (the kernel refused the file's format, e.g. a script without ``#!``)
      needs more than the execute bit: the file must open with a format the kernel
      starts (``#!``, ELF, Mach-O). Anything else would fail the same way again.
    * Nothing here spawns a process: ``governor doctor`` and the runner's re-probe ask
      it about agents, and an agent is only ever run to do its work.
"""

from __future__ import annotations

import shutil
from typing import Final

MAGICS: Final = (
    b"#!",  # a script with its interpreter
    b"\x7fELF",  # Linux, the BSDs
    b"\xfe\xed\xfa\xce",  # Mach-O, 32 and 64 bit, both byte orders, and universal
    b"\xfe\xed\xfa\xcf",
    b"\xce\xfa\xed\xfe",
    b"\xcf\xfa\xed\xfe",
    b"\xca\xfe\xba\xbe",
)
"""How a file the kernel knows how to start begins."""


def executable(binary: str, path: str | None) -> str | None:
    """Where ``binary`` is found on ``path`` as an executable regular file, else None."""
    return shutil.which(binary, path=path)


def has_start_format(found: str) -> bool:
    """Whether the file at ``found`` begins as a script or a binary the kernel starts."""
    try:
        with open(found, "rb") as handle:
            head = handle.read(4)
    except OSError:
        return False
    return head.startswith(MAGICS)


def startable(binary: str, path: str | None, *, errno: str = "ENOENT") -> str | None:
    """Where ``binary`` is, when what kept it from starting (``errno``) is gone, else None.

    ``ENOENT`` and ``EACCES`` are gone once the file is there and executable; ``ENOEXEC``
    also needs a format the kernel starts.
    """
    found = executable(binary, path)
    if found is None or (errno == "ENOEXEC" and not has_start_format(found)):
        return None
    return found
