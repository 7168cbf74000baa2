"""The deployment zip: complete, free of dev-only packages, reproducible, cached, within Lambda's limits.

The zip is built from a snapshot of the checkout, once per session (pip fetches Lambda's wheels; about
15 s a build), so edits other people make in the tree meanwhile cannot make two builds differ.
"""

from __future__ import annotations

import ast
import shutil
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from infra import packaging

REPO_ROOT = Path(__file__).resolve().parents[2]
# What the handler's dependencies are imported as.
RUNTIME_MODULES = (
    "flask",
    "serverless_wsgi",
    "peewee",
    "pymysql",
    "jwt",
    "cryptography",
    "markdown_it",
    "mdit_py_plugins",
    "yaml",
    "urllib3",
    # Bundled rather than taken from the Lambda runtime, so the version is the one pyproject asks for.
    "boto3",
    "botocore",
)


@dataclass(frozen=True)
class Built:
    first: packaging.PackageInfo
    second: packaging.PackageInfo
    source_root: Path
    names: list[str]


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    root = tmp_path_factory.mktemp("checkout")
    for package in packaging.SOURCE_PACKAGES:
        shutil.copytree(REPO_ROOT / package, root / package)
    shutil.copy2(REPO_ROOT / "pyproject.toml", root / "pyproject.toml")
    first = packaging.build_package(tmp_path_factory.mktemp("build-a"), root=root)
    second = packaging.build_package(tmp_path_factory.mktemp("build-b"), root=root)
    with zipfile.ZipFile(first.path) as archive:
        names = archive.namelist()
    return Built(first, second, root, names)


def top_level(names: list[str]) -> set[str]:
    return {name.split("/", 1)[0].removesuffix(".py") for name in names}


def test_zip_holds_the_project_packages_without_caches_or_tests(built: Built) -> None:
    for package in packaging.SOURCE_PACKAGES:
        expected = {
            path.relative_to(built.source_root).as_posix()
            for path in (built.source_root / package).rglob("*.py")
            if "__pycache__" not in path.parts and "tests" not in path.parts
        }
        assert expected and expected <= set(built.names)
    assert not [n for n in built.names if "__pycache__" in n or n.endswith(".pyc") or "/tests/" in n]
    assert not [n for n in built.names if n.startswith(("bin/", "tests/"))]


def test_zip_holds_the_runtime_dependencies(built: Built) -> None:
    assert set(RUNTIME_MODULES) <= top_level(built.names)


def test_zip_holds_every_third_party_module_the_code_imports(built: Built) -> None:
    imported: set[str] = set()
    for package in packaging.SOURCE_PACKAGES:
        for path in (built.source_root / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    imported.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    imported.add(node.module.split(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - set(packaging.SOURCE_PACKAGES) - {"__future__"}
    # The Lambda runtime itself provides SnapStart's hook registry (function/handler.py imports it only
    # when it is there).
    third_party -= {"snapshot_restore_py"}
    assert third_party <= top_level(built.names), third_party - top_level(built.names)


def test_zip_leaves_development_packages_out(built: Built) -> None:
    modules = top_level(built.names)
    for dev_only in (
        "pulumi",
        "pulumi_aws",
        "pytest",
        "_pytest",
        "moto",
        "hypothesis",
        "mypy",
        "ruff",
        "grpc",
    ):
        assert dev_only not in modules


def test_wheels_are_for_lambdas_linux_and_python(built: Built) -> None:
    extensions = [n for n in built.names if n.endswith(".so")]
    assert extensions
    for name in extensions:
        assert "darwin" not in name and "win" not in name.rsplit("/", 1)[-1]
        assert "cpython-312-x86_64-linux-gnu" in name or "abi3" in name, name


def test_two_builds_give_the_same_bytes(built: Built) -> None:
    assert built.first.path.read_bytes() == built.second.path.read_bytes()
    with zipfile.ZipFile(built.first.path) as archive:
        infos = archive.infolist()
    assert [i.filename for i in infos] == sorted(i.filename for i in infos)
    assert {i.date_time for i in infos} == {packaging.ZIP_EPOCH}


def test_zip_fits_lambdas_limits(built: Built) -> None:
    # Direct upload: 50 MB zipped; unpacked (code and layers): 250 MB.
    assert built.first.zipped_bytes == built.first.path.stat().st_size < 50 * 1024 * 1024
    assert built.first.unzipped_bytes < 250 * 1024 * 1024


def test_unchanged_inputs_reuse_the_zip(built: Built) -> None:
    mtime = built.first.path.stat().st_mtime_ns
    again = packaging.build_package(built.first.path.parent, root=built.source_root)
    assert again.reused and again.path == built.first.path
    assert built.first.path.stat().st_mtime_ns == mtime


def test_inputs_digest_follows_sources_requirements_and_python(tmp_path: Path) -> None:
    for package in packaging.SOURCE_PACKAGES:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    base = packaging.input_digest(tmp_path, ["flask>=3.0"], "3.12")
    assert packaging.input_digest(tmp_path, ["flask>=3.0"], "3.12") == base
    assert packaging.input_digest(tmp_path, ["flask>=3.1"], "3.12") != base
    assert packaging.input_digest(tmp_path, ["flask>=3.0"], "3.13") != base
    (tmp_path / "function" / "__pycache__").mkdir()
    (tmp_path / "function" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    assert packaging.input_digest(tmp_path, ["flask>=3.0"], "3.12") == base
    (tmp_path / "function" / "handler.py").write_text("def handler(event, context): ...\n")
    assert packaging.input_digest(tmp_path, ["flask>=3.0"], "3.12") != base


def test_runtime_requirements_leave_the_dev_extra_out() -> None:
    requirements = packaging.runtime_requirements(REPO_ROOT / "pyproject.toml")
    assert any(r.startswith("flask") for r in requirements)
    assert not any(r.startswith(("pulumi", "pytest", "moto")) for r in requirements)


def test_command_line_reports_the_zip_and_its_size(built: Built, capsys: pytest.CaptureFixture[str]) -> None:
    # The entry point `make package` runs; the snapshot's zip is reused, so this is quick.
    out_dir = built.first.path.parent
    assert packaging.main(["--out", str(out_dir), "--root", str(built.source_root)]) == 0
    printed = capsys.readouterr().out
    assert str(built.first.path) in printed and "reused" in printed and "MB zipped" in printed
