"""Prompt templates: data with declared variables, rendered strictly.

Rules:
    * A template is a Markdown file in ``prompts/`` whose front matter declares its
      variables (``variables: [a, b]``) and whose body uses them as ``{{name}}``.
    * Rendering fails on a missing variable, an unused (undeclared) one, and a
      placeholder the front matter does not declare: a prompt never silently drops facts.
    * One resolver finds ``prompts/`` both in a checkout and in an installed wheel
      (packaged as ``governor/_prompts``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from governor.errors import GovernorError

_PLACEHOLDER = re.compile(r"\{\{([a-z_][a-z0-9_]*)\}\}")
_FRONT = re.compile(r"\A---\nvariables: \[([^\]]*)\]\n---\n", re.MULTILINE)


class PromptError(GovernorError):
    """A prompt template is missing, malformed, or was rendered with the wrong variables."""


def prompts_dir() -> Path:
    """The folder holding the templates, installed or in a checkout."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "_prompts", package.parent / "prompts"):
        if (candidate / "planner.md").is_file():
            return candidate
    raise PromptError(f"no prompt templates found next to {package}")


@dataclass(frozen=True, slots=True)
class Template:
    name: str
    variables: frozenset[str]
    body: str

    def render(self, values: Mapping[str, str]) -> str:
        """Fill every placeholder; refuse missing or unused variables."""
        missing = sorted(self.variables - values.keys())
        unused = sorted(values.keys() - self.variables)
        if missing or unused:
            raise PromptError(
                f"prompt '{self.name}': missing variables {missing}, unused variables {unused}"
            )
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)], self.body)


@cache
def template(name: str) -> Template:
    """Load and check one template by name (``planner``, ``worker``)."""
    path = prompts_dir() / f"{name}.md"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PromptError(f"prompt '{name}': cannot read {path}: {exc.strerror}") from exc
    front = _FRONT.match(text)
    if front is None:
        raise PromptError(f"prompt '{name}': {path} must start with '---\\nvariables: [...]\\n---'")
    declared = frozenset(v.strip() for v in front.group(1).split(",") if v.strip())
    body = text[front.end() :]
    used = frozenset(_PLACEHOLDER.findall(body))
    if used != declared:
        raise PromptError(
            f"prompt '{name}': declared {sorted(declared)} but the body uses {sorted(used)}"
        )
    return Template(name, declared, body)


def render(name: str, **values: str) -> str:
    """Render template ``name`` with exactly its declared variables."""
    return template(name).render(values)
