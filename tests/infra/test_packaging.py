"""The deployment zip: exactly the locked versions, precompiled, reproducible, cached, within Lambda's limits.

The zip is built from a snapshot of the checkout, once per session (uv fetches Lambda's wheels, or takes
them from its cache; 15-45 s a build), so edits other people make in the tree meanwhile cannot make two
builds differ.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
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


PLANTED = ("function/.env", "shared/.env.local", "function/untracked_scratch.py")


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
        shutil.copytree(REPO_ROOT / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(REPO_ROOT / "pyproject.toml", root / "pyproject.toml")
    shutil.copy2(REPO_ROOT / "uv.lock", root / "uv.lock")
    subprocess.run(["git", "-C", str(root), "init", "-q"], check=True)
    subprocess.run(["git", "-C", str(root), "add", "."], check=True)
    # Planted after the snapshot was tracked: a local secret and a module nobody committed.
    for planted in PLANTED:
        (root / planted).write_text("AWS_SECRET_ACCESS_KEY=planted\n")
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
            if "__pycache__" not in path.parts
            and "tests" not in path.parts
            and not path.relative_to(built.source_root).as_posix().startswith(packaging.LOCAL_ONLY_SOURCES)
        } - set(PLANTED)
        assert expected and expected <= set(built.names)
    assert not [n for n in built.names if "/tests/" in n or n.startswith(("bin/", "tests/"))]
    # Files planted in the work tree are not part of it: no dotfile, nothing untracked.
    ours = [n for n in built.names if n.startswith(tuple(f"{p}/" for p in packaging.SOURCE_PACKAGES))]
    assert not [n for n in ours if n.startswith(PLANTED) or "/." in n]
    # The checkout's own caches (this machine's Python) never get in: only the runtime's bytecode.
    assert not [n for n in built.names if n.endswith(".pyc") and ".cpython-312." not in n]


def test_every_module_has_hash_based_bytecode_for_the_runtime(built: Built) -> None:
    sources = [n for n in built.names if n.endswith(".py")]
    assert len(sources) > 300
    names = set(built.names)
    missing = []
    for source in sources:
        folder, _, leaf = source.rpartition("/")
        compiled = (
            f"{folder}/__pycache__/{leaf[:-3]}.cpython-312.pyc"
            if folder
            else f"__pycache__/{leaf[:-3]}.cpython-312.pyc"
        )
        if compiled not in names:
            missing.append(source)
    assert missing == []
    with zipfile.ZipFile(built.first.path) as archive:
        data = archive.read("function/__pycache__/handler.cpython-312.pyc")
    # PEP 552: flags 0b01 = hash-based, not checked against the source (read-only /var/task).
    assert int.from_bytes(data[4:8], "little") == 0b01
    assert len(data) > 16


# Run by the runtime's interpreter: the file name compiled in, and the source hash in the header.
PROBE = """
import importlib.util, marshal, sys
data = open(sys.argv[1], "rb").read()
print(marshal.loads(data[16:]).co_filename)
print(data[8:16] == importlib.util.source_hash(open(sys.argv[2], "rb").read()))
"""


def test_bytecode_loads_in_the_runtime_python_and_names_var_task(built: Built, tmp_path: Path) -> None:
    interpreter = packaging.find_interpreter("3.12")
    with zipfile.ZipFile(built.first.path) as archive:
        archive.extract("function/__pycache__/handler.cpython-312.pyc", tmp_path)
        archive.extract("function/handler.py", tmp_path)
    pyc = tmp_path / "function/__pycache__/handler.cpython-312.pyc"
    probe = subprocess.run(
        [interpreter.path, "-c", PROBE, str(pyc), str(tmp_path / "function/handler.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert probe.stdout.split() == ["/var/task/function/handler.py", "True"]


def test_zip_holds_exactly_the_locked_versions(built: Built) -> None:
    locked = {}
    for line in packaging.locked_requirements(built.source_root).splitlines():
        match = re.match(r"^([A-Za-z0-9_.-]+)==([^ ;\\]+)", line)
        if match:
            locked[_normal(match.group(1))] = match.group(2)
    installed = {}
    for name in built.names:
        match = re.match(r"^([^/]+)-([^-/]+)\.dist-info/METADATA$", name)
        if match:
            installed[_normal(match.group(1))] = match.group(2)
    assert installed == locked
    assert "peewee" in installed and int(installed["peewee"].split(".")[0]) < 5


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_zip_holds_the_runtime_dependencies(built: Built) -> None:
    assert set(RUNTIME_MODULES) <= top_level(built.names)


def test_zip_holds_every_third_party_module_the_code_imports(built: Built) -> None:
    imported: set[str] = set()
    for package in packaging.SOURCE_PACKAGES:
        for path in (built.source_root / package).rglob("*.py"):
            if path.relative_to(built.source_root).as_posix().startswith(packaging.LOCAL_ONLY_SOURCES):
                continue  # left out of the zip (test_zip_leaves_the_local_preview_out)
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


def test_zip_leaves_the_local_preview_out(built: Built) -> None:
    # The author's preview never runs on Lambda, and its watcher is not a runtime dependency.
    assert not [name for name in built.names if name.startswith("function/preview/")]
    assert "watchfiles" not in top_level(built.names)
    assert "function/cli/preview.py" in built.names


def test_zip_holds_the_data_files_the_code_reads(built: Built) -> None:
    # The content stylesheet is read beside its module at run time (GET /static/content.css).
    assert "function/api/content.css" in packaging.DATA_FILES
    assert packaging.DATA_FILES <= set(built.names)


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
    shared_objects = [n for n in built.names if n.endswith(".so") or ".so." in n]
    # A wheel's own C libraries (auditwheel puts them in <package>.libs/, e.g. numpy's OpenBLAS) are not
    # Python extensions: they carry no interpreter tag, so their ELF header says what machine they are for.
    bundled = [n for n in shared_objects if n.split("/", 1)[0].endswith(".libs")]
    extensions = [n for n in shared_objects if n not in bundled]
    assert extensions
    for name in extensions:
        assert "darwin" not in name and "win" not in name.rsplit("/", 1)[-1]
        assert "cpython-312-x86_64-linux-gnu" in name or "abi3" in name, name
    with zipfile.ZipFile(built.first.path) as archive:
        for name in bundled:
            header = archive.read(name)[:20]
            # ELF, 64-bit, little-endian, e_machine 62: x86-64.
            assert header[:5] == b"\x7fELF\x02" and header[18:20] == (62).to_bytes(2, "little"), name


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


def test_inputs_digest_follows_sources_locked_versions_and_python(tmp_path: Path) -> None:
    for package in packaging.SOURCE_PACKAGES:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    subprocess.run(["git", "-C", str(tmp_path), "init", "-q"], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "."], check=True)
    locked = "flask==3.1.3 --hash=sha256:aa\n"
    base = packaging.input_digest(tmp_path, locked, "3.12", "3.12.1")
    assert packaging.input_digest(tmp_path, locked, "3.12", "3.12.1") == base
    assert packaging.input_digest(tmp_path, "flask==3.1.4 --hash=sha256:aa\n", "3.12", "3.12.1") != base
    assert packaging.input_digest(tmp_path, "flask==3.1.3 --hash=sha256:bb\n", "3.12", "3.12.1") != base
    assert packaging.input_digest(tmp_path, locked, "3.13", "3.13.0") != base
    (tmp_path / "function" / "__pycache__").mkdir()
    (tmp_path / "function" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    assert packaging.input_digest(tmp_path, locked, "3.12", "3.12.1") == base
    (tmp_path / "function" / "handler.py").write_text("def handler(event, context): ...\n")
    assert packaging.input_digest(tmp_path, locked, "3.12", "3.12.1") == base  # not tracked: not an input
    subprocess.run(["git", "-C", str(tmp_path), "add", "function/handler.py"], check=True)
    assert packaging.input_digest(tmp_path, locked, "3.12", "3.12.1") != base


def test_locked_requirements_are_pinned_hashed_and_leave_the_dev_extra_out() -> None:
    requirements = packaging.locked_requirements(REPO_ROOT)
    pins = [line for line in requirements.splitlines() if line and not line.startswith((" ", "#"))]
    assert any(p.startswith("flask==") for p in pins)
    assert all("==" in p for p in pins)
    assert "--hash=sha256:" in requirements
    assert not any(p.startswith(("pulumi", "pytest", "moto", "uv==")) for p in pins)


def test_a_lock_that_no_longer_matches_pyproject_stops_the_build(tmp_path: Path) -> None:
    shutil.copy2(REPO_ROOT / "uv.lock", tmp_path / "uv.lock")
    pyproject = (REPO_ROOT / "pyproject.toml").read_text()
    (tmp_path / "pyproject.toml").write_text(pyproject.replace('"flask>=3.0"', '"flask>=3.0", "six>=1.16"'))
    with pytest.raises(packaging.PackagingError, match="make lock"):
        packaging.locked_requirements(tmp_path)


def test_a_missing_runtime_interpreter_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # An empty PATH and pyenv root: no python3.12 anywhere.
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    monkeypatch.delenv(packaging.BUILD_PYTHON_ENV, raising=False)
    with pytest.raises(packaging.PackagingError) as info:
        packaging.find_interpreter("3.12")
    message = str(info.value)
    assert (
        "Python 3.12" in message and packaging.BUILD_PYTHON_ENV in message and "pyenv install 3.12" in message
    )


def test_an_interpreter_of_another_version_is_not_taken(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # This interpreter named as one of another minor version: refused, not silently used.
    other = "3.13" if sys.version_info[:2] == (3, 12) else "3.12"
    monkeypatch.setenv(packaging.BUILD_PYTHON_ENV, sys.executable)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    with pytest.raises(packaging.PackagingError, match=re.escape(sys.executable)):
        packaging.find_interpreter(other)


def test_command_line_reports_the_zip_and_its_size(built: Built, capsys: pytest.CaptureFixture[str]) -> None:
    # The entry point `make package` runs; the snapshot's zip is reused, so this is quick.
    out_dir = built.first.path.parent
    assert packaging.main(["--out", str(out_dir), "--root", str(built.source_root)]) == 0
    printed = capsys.readouterr().out
    assert str(built.first.path) in printed and "reused" in printed and "MB zipped" in printed
