"""The table of runtime settings in ``docs/configuration.md``, generated from their declarations.

``python -m function.settings_docs --write docs/configuration.md`` (or ``make docs``) writes it;
``--check`` fails while the committed table differs from the declarations.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from shared.doc_tables import main as write_table
from shared.doc_tables import markdown_table
from shared.runtime_settings import RuntimeSettings
from shared.setting import Setting, settings_of

COMMAND = "python -m function.settings_docs"
HEADER = ("variable", "meaning", "default", "on Lambda, set from")


def table(declarations: type[Any] = RuntimeSettings) -> str:
    """The Markdown table of every setting ``declarations`` declares, in their order."""
    return markdown_table(HEADER, [row(spec) for spec in settings_of(declarations)])


def row(spec: Setting[Any]) -> tuple[str, str, str, str]:
    variable = f"`{spec.env}`" + (f" / `{spec.param.env}`" if spec.param is not None else "")
    return variable, spec.doc, spec.default_doc or shown(spec.default_value()), _on_lambda(spec)


def shown(value: object) -> str:
    """A default as the table shows it: "—" for none."""
    if value is None or value == () or value == {}:
        return "—"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def _on_lambda(spec: Setting[Any]) -> str:
    if spec.on_lambda is not None:
        return f"always `{spec.on_lambda}`"
    keys = [key for key in (spec.stack_key, spec.param.stack_key if spec.param else None) if key]
    return " / ".join(f"`{key}`" for key in keys) or "—"


def main(argv: Sequence[str] | None = None) -> int:
    return write_table(argv, COMMAND, table)


if __name__ == "__main__":
    sys.exit(main())
