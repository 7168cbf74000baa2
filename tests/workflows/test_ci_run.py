"""CI's own run (``.ci/run``): the suite on the Python of the stack's default Lambda runtime, and property
tests that draw the same inputs on every run, so a random draw can never block a landing."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys

from infra.config import StackConfig
from tests.workflows import REPO

# A property test run in a fresh interpreter under the suite's conftest: it prints every value drawn.
DRAWS = """
import tests.conftest
from hypothesis import given, settings, strategies as st

drawn = []

@settings(max_examples=30)
@given(st.lists(st.integers(), min_size=3))
def record(values):
    drawn.append(values)

record()
print(drawn)
"""


def _draws(profile: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_PROFILE"}
    if profile is not None:
        env["HYPOTHESIS_PROFILE"] = profile
    done = subprocess.run(
        [sys.executable, "-c", DRAWS],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout


def test_ci_draws_the_same_property_inputs_on_every_run() -> None:
    run = (REPO / ".ci" / "run").read_text()
    # .ci/run chooses the profile before it runs the tests
    assert re.search(r"^export HYPOTHESIS_PROFILE=ci$", run, re.MULTILINE)
    assert run.index("HYPOTHESIS_PROFILE=ci") < run.index("make test")

    first, second = _draws("ci"), _draws("ci")

    assert first == second
    assert first.count("[") > 10  # the examples were drawn and printed


def test_make_runs_the_suite_on_the_default_lambda_runtime() -> None:
    (runtime,) = [f.default for f in dataclasses.fields(StackConfig) if f.name == "runtime"]
    makefile = (REPO / "Makefile").read_text()
    found = re.search(r"^RUNTIME_PYTHON \?= (\S+)$", makefile, re.MULTILINE)
    assert found is not None
    assert f"python{found[1]}" == runtime
    # the venv and the package are both made with it
    assert "$(PYTHON) -m venv --clear $(VENV)" in makefile
    assert "PYTHON_VERSION ?= $(RUNTIME_PYTHON)" in makefile
