"""``python -m infra.coldstart``: imports from the unpacked zip, once as built and once without bytecode."""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest

from infra import coldstart, packaging


@pytest.fixture
def small_zip(tmp_path: Path) -> Path:
    source = tmp_path / "src" / "pkg"
    source.mkdir(parents=True)
    (source / "__init__.py").write_text("")
    (source / "mod.py").write_text("VALUE = sum(range(10))\n")
    interpreter = packaging.find_interpreter("3.12").path
    subprocess.run([interpreter, "-m", "compileall", "-q", str(source)], check=True)
    path = tmp_path / "small.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for file in sorted(source.rglob("*")):
            if file.is_file():
                archive.write(file, file.relative_to(tmp_path / "src").as_posix())
    return path


def test_the_copy_without_bytecode_has_none(small_zip: Path, tmp_path: Path) -> None:
    with_code = coldstart.unpack(small_zip, tmp_path / "a", keep_bytecode=True)
    without = coldstart.unpack(small_zip, tmp_path / "b", keep_bytecode=False)
    assert list(with_code.rglob("*.cpython-312.pyc"))
    assert not list(without.rglob("*.pyc")) and (without / "pkg" / "mod.py").is_file()


def test_measure_times_both_variants_in_the_runtime_python(small_zip: Path) -> None:
    timings = coldstart.measure(small_zip, modules=("pkg.mod",), runs=2)
    assert [t.label for t in timings] == ["with bytecode", "without bytecode"]
    assert all(len(t.seconds) == 2 and all(s > 0 for s in t.seconds) for t in timings)


def test_a_module_that_fails_to_import_is_reported(small_zip: Path) -> None:
    with pytest.raises(packaging.PackagingError, match=r"pkg\.missing"):
        coldstart.measure(small_zip, modules=("pkg.missing",), runs=1)
