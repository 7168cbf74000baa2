"""Running ``blog-api`` in-process exactly as the console script does (``function.cli.main``), so moto's
in-process mocks apply and the one-line error handling is what is tested."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from click.testing import CliRunner

from function.cli.main import main


@dataclass(frozen=True)
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


def run_cli(*argv: str, env: Mapping[str, str | None] | None = None) -> CliResult:
    """``blog-api *argv`` with ``env`` laid over the environment; SystemExit becomes the exit code."""
    runner = CliRunner()
    with runner.isolation(env=env) as (out, err, _):
        try:
            main(list(argv))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        return CliResult(code, out.getvalue().decode(), err.getvalue().decode())
