"""Finding a python agent: the object ``module:name`` names, imported once per process.

Rules:
    * ``path/to/file.py:name`` imports the file as the module its folders make it: a file
      inside packages (folders with ``__init__.py``) is imported by its dotted name from
      the folder above the outermost package, so relative imports work; a loose file is
      imported under a name derived from its path. The folder it is imported from joins
      ``sys.path`` (at the end, never shadowing an installed module), so its siblings
      import too.
    * ``package.module:name`` is imported as is; when it is not importable, it is looked
      for in the given folders (the working directory, the goal file's folder) before
      giving up — no ``PYTHONPATH`` needed.
    * A module is imported once per process and kept (``sys.modules``): its state lives
      as long as the process, as any Python module's does. Two different files that
      claim the same module name are refused, naming both.
    * Anything that goes wrong — no such file, module or name, a syntax error, an
      exception while importing — is a ``LookupError`` with one line saying what.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from governor.exec.harness import ARGS_NEEDED

_lock = threading.RLock()


def load_target(target: str, *, folders: Sequence[Path]) -> object:
    """The object ``module:name`` (or ``file.py:name``) names.

    Args:
        target: the profile's ``args[0]``.
        folders: where a relative file, or a module not importable as is, is looked for.

    Raises:
        LookupError: one line naming what could not be found or imported.
    """
    where, sep, attr = target.rpartition(":")
    if not sep or not where or not attr:
        raise LookupError(ARGS_NEEDED["python"])
    with _lock:
        module = _file_module(where, folders) if where.endswith(".py") else _module(where, folders)
    found: object = module
    for part in attr.split("."):
        found = getattr(found, part, None)
        if found is None:
            raise LookupError(f"{where} has no attribute '{attr}'")
    return found


def module_file(name: str, folders: Sequence[Path]) -> Path | None:
    """The file of module ``name`` under one of ``folders``, if it lives there."""
    relative = Path(*name.split("."))
    for folder in folders:
        for candidate in (folder / relative.with_suffix(".py"), folder / relative / "__init__.py"):
            if candidate.is_file():
                return candidate.resolve()
    return None


def _module(name: str, folders: Sequence[Path]) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if not (name == missing or name.startswith(f"{missing}.")):
            raise LookupError(f"cannot import {name}: {exc}") from exc  # a dependency of it
    except Exception as exc:
        raise LookupError(f"cannot import {name}: {type(exc).__name__}: {exc}") from exc
    path = module_file(name, folders)
    if path is None:
        shown = ", ".join(str(f) for f in folders) or "nowhere"
        raise LookupError(f"cannot import {name}: not installed, nor found in {shown}")
    return _file_module(str(path), folders)


def _file_module(where: str, folders: Sequence[Path]) -> ModuleType:
    path = Path(where)
    if not path.is_absolute():
        found = [f / path for f in folders if (f / path).is_file()]
        path = found[0] if found else (folders[0] / path if folders else path)
    path = path.resolve()
    if not path.is_file():
        raise LookupError(f"no such file: {path}")
    root, name, packaged = _package_root(path)
    top = name.split(".")[0]
    for claimed in {name, top}:
        loaded = sys.modules.get(claimed)
        origin = Path(getattr(loaded, "__file__", None) or "/").resolve()
        if loaded is not None and not origin.is_relative_to(root):
            raise LookupError(f"{path} would be module {claimed}, already imported from {origin}")
    if name in sys.modules:
        return sys.modules[name]
    if str(root) not in sys.path:
        sys.path.append(str(root))
    try:
        return importlib.import_module(name) if packaged else _exec_file(name, path)
    except Exception as exc:
        raise LookupError(f"cannot import {path}: {type(exc).__name__}: {exc}") from exc


def _package_root(path: Path) -> tuple[Path, str, bool]:
    """The folder to import ``path`` from, its module name there, and whether it is in a
    package (a loose file gets a name derived from its path)."""
    parts = [] if path.name == "__init__.py" else [path.stem]
    folder = path.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    if len(parts) > 1 or path.name == "__init__.py":
        return folder, ".".join(parts), True
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:10]
    return folder, f"governor_agent_{path.stem}_{digest}", False


def _exec_file(name: str, path: Path) -> ModuleType:
    """Import a loose file under ``name`` (registered before it runs, as imports are)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError("not a Python source file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
