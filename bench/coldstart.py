"""Cold start: importing ``function.handler`` in a fresh interpreter, as Lambda does before the first event.

Measured with ``python -X importtime``: the sum of the cumulative times of the top-level imports that
``import function.handler`` triggers (everything the interpreter imports at start-up, before our code runs,
is left out by comparing with ``-c pass``). The median of a few runs, after one run that writes the
bytecode caches (a deployed package ships them or writes them once).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def import_ms(module: str = "function.handler", runs: int = 5) -> float:
    """Median milliseconds to import ``module`` cold (bytecode cached)."""
    startup = _top_level_imports("pass")
    _top_level_imports(f"import {module}")  # writes __pycache__ where missing
    totals = []
    for _ in range(runs):
        imports = _top_level_imports(f"import {module}")
        totals.append(sum(us for name, us in imports.items() if name not in startup) / 1000)
    return statistics.median(totals)


def _top_level_imports(code: str) -> dict[str, int]:
    """Module name -> cumulative microseconds, for the imports at the top of -X importtime's tree."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    found: dict[str, int] = {}
    for line in result.stderr.splitlines():
        # "import time:       self [us] |  cumulative | imported package"; nesting is indentation.
        if not line.startswith("import time:") or "|" not in line:
            continue
        fields = line[len("import time:") :].split("|")
        name = fields[2]
        if not fields[1].strip().isdigit() or name.startswith("  "):
            continue
        found[name.strip()] = found.get(name.strip(), 0) + int(fields[1])
    return found
