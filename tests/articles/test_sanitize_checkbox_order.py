"""An author's raw ``<input>`` gets the checkbox's forced attributes in one order in every process.

nh3 adds them in the order of a hash map seeded per process, so without a fixed order the same article
rendered in two processes (the render processes of a first sync, a later rebuild) stored different bytes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROCESSES = 8  # the old behaviour gave one order in all of them about once in 128 runs
SNIPPET = (
    "from function.articles.sanitize import sanitize\n"
    "print(sanitize('<input>'), sanitize('<input disabled>'), sanitize('<p><input checked></p>'))\n"
)


def test_every_process_writes_the_same_checkbox() -> None:
    # WHEN a raw <input> is sanitized in several fresh interpreters
    outputs = {
        subprocess.run(
            [sys.executable, "-c", SNIPPET], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60
        ).stdout
        for _ in range(PROCESSES)
    }

    # THEN every one wrote the same bytes, the order a Markdown task list's box has
    assert len(outputs) == 1, outputs
    assert outputs.pop().split() == [
        "<input",
        'type="checkbox"',
        'disabled="">',
        "<input",
        'type="checkbox"',
        'disabled="">',
        "<p><input",
        'checked=""',
        'type="checkbox"',
        'disabled=""></p>',
    ]
