"""``python -m bench.vectors`` keeps working: a tiny run gives a row per size (figures not asserted)."""

from __future__ import annotations

from pathlib import Path

from bench import vectors


def test_a_tiny_run_measures_each_size(tmp_path: Path) -> None:
    figures = [vectors.measure(chunks, tmp_path, dimensions=8) for chunks in (16, 64)]

    assert [(f.chunks, f.articles) for f in figures] == [(16, 2), (64, 8)]
    assert figures[1].index_mb * 1e6 >= 64 * 8 * 4  # every vector is in the index
    table = vectors.table(figures).splitlines()
    assert len(table) == 4 and table[2].startswith("| 16 (2) |")
