"""The table of stack keys in ``docs/deploying.md``, generated from their declarations and the
committed stack files.

``python -m infra.stack_docs --write docs/deploying.md`` (or ``make docs``) writes it; ``--check`` fails
while the committed table differs from the declarations or the stack files.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from infra.config import StackConfig
from infra.stack_keys import Key, keys_of
from shared import names
from shared.doc_tables import main as write_table
from shared.doc_tables import markdown_table
from shared.runtime_settings import RuntimeSettings
from shared.setting import settings_of

COMMAND = "python -m infra.stack_docs"
REPO_ROOT = Path(__file__).resolve().parent.parent
# The committed stacks and their physical prefixes, in the order the table shows their values.
STACKS = {"dev": "d-st", "prod": "p-st"}
# Keys of other namespaces that the stack files set.
PROVIDER_KEYS = {"aws:region": "the region of everything"}


def table(
    declarations: type[Any] = StackConfig,
    runtime: type[Any] = RuntimeSettings,
    stack_files: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """The Markdown table of every key ``declarations`` declares, with the committed stacks' values and
    the variables of ``runtime``'s settings each key sets."""
    stacks = stack_files if stack_files is not None else read_stack_files()
    rows = [(f"`{name}`", _values(name, stacks), doc) for name, doc in PROVIDER_KEYS.items()]
    for _, spec in keys_of(declarations):
        value = _values(f"{names.PROJECT}:{spec.name}", stacks)
        rows.append((f"`{spec.name}`", value, meaning(spec, runtime)))
    return markdown_table(("key", " / ".join(STACKS), "meaning"), rows)


def read_stack_files() -> dict[str, dict[str, Any]]:
    return {
        stack: dict(
            yaml.safe_load((REPO_ROOT / f"Pulumi.{stack}.yaml").read_text(encoding="utf-8"))["config"]
        )
        for stack in STACKS
    }


def meaning(spec: Key, runtime: type[Any] = RuntimeSettings) -> str:
    """The key's doc line, and the function's variables it sets (from the runtime settings)."""
    settings = settings_of(runtime)
    sets = [s.env for s in settings if s.stack_key == spec.name]
    sets += [s.param.env for s in settings if s.param is not None and s.param.stack_key == spec.name]
    return spec.doc + "".join(f"; sets `{variable}`" for variable in sets)


def _values(name: str, stacks: Mapping[str, Mapping[str, Any]]) -> str:
    if not all(name in config for config in stacks.values()):
        return "never committed"
    shown = [_shown(config[name]) for config in stacks.values()]
    if len(set(shown)) == 1:
        return shown[0]
    # The same value but for the stack's prefix (a parameter's name, the deploy role): shown once.
    general = {text.replace(prefix, "<prefix>") for text, prefix in zip(shown, STACKS.values(), strict=True)}
    if len(general) == 1 and general != {"`<prefix>`"}:
        return general.pop()
    return " / ".join(shown)


def _shown(value: Any) -> str:
    if value == "":
        return '`""`'
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, list):
        return f"`{yaml.safe_dump(value, default_flow_style=True).strip()}`"
    return f"`{value}`"


def main(argv: Sequence[str] | None = None) -> int:
    return write_table(argv, COMMAND, table)


if __name__ == "__main__":
    sys.exit(main())
