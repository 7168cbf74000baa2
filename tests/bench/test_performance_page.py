"""The memory sizing table is modelled from the run's own figures: the render processes' CPU is divided
among the vCPUs a memory size gives, the rest of the parallel sync's wall time is not."""

from __future__ import annotations

import pytest

from bench.measure import Measured
from bench.performance_page import MEMORY_SIZES, sizing
from bench.real_shaped import RealShaped
from bench.runner import Options, Results


def real(n: int, wall_s: float, render_cpu_s: float, processes: int = 2) -> RealShaped:
    return RealShaped(
        n=n,
        earlier=None,
        corpus_mb=21.0,
        sequential=None,
        parallel=Measured(wall_ms=wall_s * 1000),
        processes=processes,
        identical=None,
        peak_pss_bytes=None,
        render_cpu_s=render_cpu_s,
    )


def test_one_vcpu_pays_all_the_render_cpu_and_more_vcpus_divide_it() -> None:
    # GIVEN a 500-article parallel sync: 8 s of wall time, 12 s of CPU in its two render processes
    results = Results(Options(), real=[real(500, wall_s=8.0, render_cpu_s=12.0)])

    # WHEN it is modelled per 1,000 articles
    model = sizing(results)

    # THEN 24 s of render CPU, and 16 - 24/2 = 4 s that more CPUs do not divide
    assert model is not None
    rows, cpu, rest = model
    assert cpu == pytest.approx(24.0)
    assert rest == pytest.approx(4.0)
    by_memory = {row.memory_mb: row for row in rows}
    assert set(by_memory) == set(MEMORY_SIZES)
    # AND at one vCPU (1,769 MB) the sync takes all of it; at 3.0 vCPUs (5,307 MB) a third of the CPU
    assert by_memory[1769].seconds_per_1000 == pytest.approx(28.0)
    assert by_memory[5307].seconds_per_1000 == pytest.approx(4.0 + 24.0 / 3.0)
    # AND the cost is memory x time at the listed price
    row = by_memory[3008]
    assert row.cost_per_1000["arm64"] == pytest.approx(3008 / 1024 * row.seconds_per_1000 * 0.0000133334)


def test_no_model_without_render_processes() -> None:
    # GIVEN a run on one CPU: no render process ran
    results = Results(Options(), real=[real(500, wall_s=20.0, render_cpu_s=0.0, processes=1)])

    # THEN nothing is modelled from it
    assert sizing(results) is None
