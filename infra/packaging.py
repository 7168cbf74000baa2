"""The Lambda deployment zip: ``function/``, ``shared/`` and the locked runtime dependencies, precompiled.

Of the checkout, only what git tracks goes in: the ``*.py`` files under ``function/`` and ``shared/`` and
the data files ``DATA_FILES`` declares, never a dotfile or anything under a dot folder (``.env``), a test,
a cache or the local-only parts (``LOCAL_ONLY_SOURCES``: the author's preview). A file left in the work
tree, tracked or not, cannot ship by accident.

Dependencies are exactly the runtime part of ``uv.lock`` (never the dev extra), exported with their
hashes and installed by uv as wheels for Lambda's platform, whatever machine builds the zip. A lock that
no longer matches ``pyproject.toml`` stops the build (``make lock`` refreshes it).

Everything is compiled to hash-based ``.pyc`` (``compileall --invalidation-mode unchecked-hash``) by an
interpreter of the runtime's Python version: ``/var/task`` is read-only, so without bytecode every cold
start compiles every imported module again (measured: accept-path imports 2.5-2.7 s without, 0.8-1.1 s
with). Unchecked hashes are never compared with the source, so the bytes depend only on the sources,
and file names inside are ``/var/task/...``, where Lambda unpacks the zip.

Entries are sorted, timestamps and permissions fixed, so the same inputs give the same bytes and Pulumi
sees no change. The zip is named after a digest of its inputs (the locked versions and hashes included)
and reused while they are unchanged. ``python -m infra.packaging --out build`` (``make package``).
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SOURCE_PACKAGES = ("function", "shared")
# uv's name for the platform of Lambda's x86_64 runtimes: python3.12 and python3.13 run on Amazon Linux
# 2023 (glibc 2.34), so manylinux_2_28 wheels (numpy's oldest since 2.3) run there.
PLATFORM = "x86_64-manylinux_2_28"
DEFAULT_PYTHON_VERSION = "3.12"
ARCHIVE_PREFIX = "blog-api-"
# Where Lambda unpacks the zip: the file names compiled into the bytecode (tracebacks show them).
TASK_ROOT = "/var/task"
# An explicit interpreter for the bytecode, when none of the usual places has the runtime's version.
BUILD_PYTHON_ENV = "BLOG_API_BUILD_PYTHON"
# Bump to invalidate every cached zip when the layout below changes.
FORMAT_VERSION = "4"
# The earliest time a zip entry can carry; any fixed value makes the bytes reproducible.
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
# Lambda's limits for a zip uploaded directly, and for its unpacked size.
MAX_ZIPPED_BYTES = 50 * 1024 * 1024
MAX_UNZIPPED_BYTES = 250 * 1024 * 1024

# Files of the project's packages that are not Python but are read at run time, by their path in the
# checkout (they must be tracked by git too). A new one is declared here.
DATA_FILES: frozenset[str] = frozenset(
    {
        # GET /static/content.css: the hand-written part of the stylesheet (function.api.content_css).
        "function/api/content.css",
    }
)
# Parts of the project that never run on Lambda: the author's local preview (blog-api preview), whose
# folder watcher is an optional dependency the package does not carry.
LOCAL_ONLY_SOURCES = ("function/preview/",)
# Never shipped from the sources, tracked or not; the package's own __pycache__ is written fresh.
_SOURCE_EXCLUDED_DIRS = frozenset({"__pycache__", "tests"})
_EXCLUDED_DIRS = frozenset({"tests", ".pytest_cache", ".mypy_cache"})
# Top-level entries of the install target that Lambda never uses. ``bin/`` holds console scripts whose
# shebang is the build machine's interpreter; they would make the zip differ between machines.
_EXCLUDED_TOP_LEVEL = frozenset({"bin"})
# Development-only distributions: finding one in the package means the dev extra leaked in.
DEV_ONLY_MODULES = ("pulumi", "pulumi_aws", "pytest", "_pytest", "moto", "hypothesis", "mypy", "ruff")


class PackagingError(RuntimeError):
    """The package could not be built, or the result breaks one of Lambda's limits."""


@dataclass(frozen=True)
class PackageInfo:
    """A built (or reused) deployment zip."""

    path: Path
    zipped_bytes: int
    unzipped_bytes: int
    reused: bool


def uv_command() -> list[str]:
    """How to run uv: the module beside this interpreter (the dev extra has it), else ``uv`` on PATH."""
    if importlib.util.find_spec("uv") is not None:
        return [sys.executable, "-m", "uv"]
    found = shutil.which("uv")
    if found is None:
        raise PackagingError("uv is needed to read uv.lock: pip install uv (it is in the dev extra)")
    return [found]


def locked_requirements(root: Path) -> str:
    """The runtime dependencies of ``root/uv.lock`` as pinned, hashed requirements (no dev extra).

    ``--locked`` refuses a lock that no longer matches ``pyproject.toml``; nothing is resolved anew. uv is
    given this interpreter (the project's ``requires-python``): the checkout has no venv for it to find,
    and a ``python3`` of another version on ``PATH`` would send it to download one.
    """
    if not (root / "uv.lock").is_file():
        raise PackagingError(f"{root / 'uv.lock'} is missing: run `make lock`")
    command = [
        *uv_command(), "export", "--locked", "--project", str(root), "--format", "requirements-txt",
        "--no-emit-project", "--no-header", "--no-annotate", "--quiet", "--python", sys.executable,
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise PackagingError(
            f"uv.lock does not match pyproject.toml (run `make lock`): {result.stderr.strip()}"
        )
    return result.stdout


@dataclass(frozen=True)
class Interpreter:
    path: str
    version: str  # sys.version of that interpreter, e.g. "3.12.1 (main, ...)"


def find_interpreter(python_version: str) -> Interpreter:
    """An interpreter of ``python_version`` (``3.12``) to compile the bytecode; a clear error if none.

    Bytecode is only valid for the minor version that wrote it, so an interpreter of another version
    (the venv's, for a python3.13 stack) cannot stand in. Tried in order: ``$BLOG_API_BUILD_PYTHON``,
    ``python3.12`` on PATH (a pyenv shim counts only if it runs), and pyenv's versions directory.
    """
    name = f"python{python_version}"
    pyenv_root = os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))
    candidates = [os.environ.get(BUILD_PYTHON_ENV, ""), shutil.which(name) or ""]
    candidates += sorted(glob.glob(f"{pyenv_root}/versions/{python_version}.*/bin/{name}"), reverse=True)
    tried = []
    for candidate in filter(None, candidates):
        probe = subprocess.run(
            [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2]); print(sys.version)"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        lines = probe.stdout.splitlines()
        if probe.returncode == 0 and lines and lines[0] == python_version:
            return Interpreter(candidate, lines[1] if len(lines) > 1 else python_version)
        tried.append(candidate)
    raise PackagingError(
        f"the bytecode for Lambda's {name} must be compiled by Python {python_version}, and none was "
        f"found (tried: {', '.join(tried) or name + ' on PATH'}). Install it (pyenv install "
        f"{python_version}, apt-get install {name}, or actions/setup-python) or set "
        f"{BUILD_PYTHON_ENV}=/path/to/{name}"
    )


def source_entries(root: Path) -> list[tuple[str, Path]]:
    """``(name in the zip, file)`` for the project's own files: the Python files (and ``DATA_FILES``) git
    tracks under ``SOURCE_PACKAGES``, present in the work tree, no dotfile, test or cache among them."""
    entries: list[tuple[str, Path]] = []
    for name in tracked_files(root, SOURCE_PACKAGES):
        parts = name.split("/")
        if any(part.startswith(".") for part in parts) or _SOURCE_EXCLUDED_DIRS.intersection(parts[:-1]):
            continue
        if not (name.endswith(".py") or name in DATA_FILES) or name.startswith(LOCAL_ONLY_SOURCES):
            continue
        path = root / name
        if path.is_file() and not path.is_symlink():
            entries.append((name, path))
    return sorted(entries)


def tracked_files(root: Path, folders: Sequence[str]) -> list[str]:
    """The paths (relative to ``root``, with ``/``) git tracks under ``folders`` of the checkout ``root``."""
    command = ["git", "-C", str(root), "ls-files", "-z", "--cached", "--", *folders]
    try:
        result = subprocess.run(command, capture_output=True, check=False)
    except OSError as exc:
        raise PackagingError(f"git is needed to list the files to package: {exc}") from None
    if result.returncode != 0:
        raise PackagingError(
            f"{root} is not a git checkout: the package holds only the files git tracks "
            f"({result.stderr.decode(errors='replace').strip()})"
        )
    return sorted(set(filter(None, result.stdout.decode("utf-8", "surrogateescape").split("\0"))))


def input_digest(root: Path, requirements: str, python_version: str, interpreter_version: str = "") -> str:
    """A SHA-256 over everything the zip is built from: sources, locked requirements, target, this module."""
    digest = hashlib.sha256()
    for part in (FORMAT_VERSION, PLATFORM, python_version, interpreter_version, requirements):
        digest.update(part.encode() + b"\0")
    digest.update(hashlib.sha256(Path(__file__).read_bytes()).digest())
    for name, path in sorted(source_entries(root)):
        digest.update(name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def install_dependencies(requirements: str, target: Path, interpreter: Interpreter) -> None:
    """Install the locked ``requirements`` into ``target`` as wheels for Lambda's Linux x86_64."""
    requirements_file = target.parent / "requirements.txt"
    requirements_file.write_text(requirements)
    command = [
        *uv_command(), "pip", "install", "--quiet",
        # Markers are evaluated for the runtime's interpreter, wheels chosen for Lambda's platform.
        "--python", interpreter.path, "--python-platform", PLATFORM,
        # Binary wheels only: an sdist would be built for this machine instead. Exactly the lock:
        # every file's hash is checked and nothing outside the list is resolved.
        "--only-binary", ":all:", "--require-hashes", "--no-deps",
        "--target", str(target), "-r", str(requirements_file),
    ]  # fmt: skip
    # uv honours UV_OFFLINE / UV_CACHE_DIR from the environment: a warm cache builds without network.
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise PackagingError(f"uv could not install the locked dependencies:\n{result.stderr.strip()}")
    leaked = sorted(module for module in DEV_ONLY_MODULES if (target / module).exists())
    if leaked:
        raise PackagingError(f"development-only packages ended up in the package: {', '.join(leaked)}")


def copy_sources(root: Path, target: Path) -> None:
    for name, path in source_entries(root):
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, destination)


def compile_bytecode(target: Path, interpreter: Interpreter) -> None:
    """Hash-based ``.pyc`` for every module under ``target``, named as Lambda will find them."""
    command = [
        # One process, files in compileall's sorted order: marshal's output depends on which strings
        # earlier compilations interned (reference flags), so parallel workers make bytes vary.
        interpreter.path, "-m", "compileall", "-q", "-j", "1",
        "--invalidation-mode", "unchecked-hash",
        # /tmp/<scratch>/site/function/app.py is compiled as /var/task/function/app.py.
        "-s", str(target), "-p", TASK_ROOT,
        str(target),
    ]  # fmt: skip
    # Frozenset constants (``x in {"a", "b"}``) are marshalled in hash order: fix the seed.
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    result = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if result.returncode != 0:
        raise PackagingError(f"compileall failed:\n{(result.stdout + result.stderr).strip()}")


def write_zip(entries: Iterable[tuple[str, Path]], destination: Path) -> int:
    """Write ``entries`` to ``destination`` reproducibly; return the unzipped size in bytes."""
    unzipped = 0
    with zipfile.ZipFile(destination, "w") as archive:
        for name, path in sorted(entries):
            info = zipfile.ZipInfo(name, date_time=ZIP_EPOCH)
            info.create_system = 3  # Unix, so the permission bits below are honoured
            mode = 0o755 if os.access(path, os.X_OK) else 0o644
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            data = path.read_bytes()
            unzipped += len(data)
            archive.writestr(info, data, compresslevel=9)
    return unzipped


def build_package(
    out_dir: Path,
    *,
    root: Path = REPO_ROOT,
    python_version: str = DEFAULT_PYTHON_VERSION,
) -> PackageInfo:
    """Return the deployment zip for the current inputs, building it under ``out_dir`` only if missing.

    The zip is ``out_dir/blog-api-<digest>.zip``; older zips there are removed after a build.
    """
    requirements = locked_requirements(root)
    interpreter = find_interpreter(python_version)
    digest = input_digest(root, requirements, python_version, interpreter.version)
    destination = out_dir / f"{ARCHIVE_PREFIX}{digest[:16]}.zip"
    if destination.is_file():
        with zipfile.ZipFile(destination) as archive:
            unzipped = sum(info.file_size for info in archive.infolist())
        return PackageInfo(destination, destination.stat().st_size, unzipped, reused=True)

    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="blog-api-package-") as scratch:
        target = Path(scratch) / "site"
        install_dependencies(requirements, target, interpreter)
        copy_sources(root, target)
        compile_bytecode(target, interpreter)
        # Write next to the destination, then rename: a half-written zip is never taken for a cached one.
        partial = out_dir / f".{destination.name}.partial"
        unzipped = write_zip(_package_entries(target), partial)
    zipped = partial.stat().st_size
    if zipped > MAX_ZIPPED_BYTES or unzipped > MAX_UNZIPPED_BYTES:
        partial.unlink()
        raise PackagingError(
            f"package is {zipped} bytes zipped, {unzipped} unzipped; Lambda allows "
            f"{MAX_ZIPPED_BYTES} and {MAX_UNZIPPED_BYTES}"
        )
    os.replace(partial, destination)
    for stale in out_dir.glob(f"{ARCHIVE_PREFIX}*.zip"):
        if stale != destination:
            stale.unlink()
    return PackageInfo(destination, zipped, unzipped, reused=False)


def _package_entries(target: Path) -> list[tuple[str, Path]]:
    entries: list[tuple[str, Path]] = []
    for child in sorted(target.iterdir()):
        if child.name in _EXCLUDED_TOP_LEVEL or child.name in _EXCLUDED_DIRS:
            continue
        if child.is_dir():
            entries.extend(_tree_entries(child, f"{child.name}/", _EXCLUDED_DIRS))
        else:
            entries.append((child.name, child))
    # RECORD lists the console scripts left out above, with hashes of their machine-specific shebangs;
    # nothing at run time reads it.
    return [(name, path) for name, path in entries if not _is_record(name)]


def _is_record(name: str) -> bool:
    parent, _, leaf = name.rpartition("/")
    return leaf == "RECORD" and parent.endswith(".dist-info") and "/" not in parent


def _tree_entries(directory: Path, prefix: str, excluded_dirs: frozenset[str]) -> list[tuple[str, Path]]:
    entries: list[tuple[str, Path]] = []
    for current, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d not in excluded_dirs)
        base = Path(current)
        relative = base.relative_to(directory).as_posix()
        for file_name in sorted(files):
            name = file_name if relative == "." else f"{relative}/{file_name}"
            entries.append((prefix + name, base / file_name))
    return entries


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m infra.packaging --out build``: build (or reuse) the zip and print where it is."""
    parser = argparse.ArgumentParser(prog="python -m infra.packaging", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "build", help="directory for the zip")
    parser.add_argument(
        "--python-version",
        default=DEFAULT_PYTHON_VERSION,
        help="Lambda's Python version; an interpreter of it compiles the bytecode (default %(default)s)",
    )
    parser.add_argument("--root", type=Path, default=REPO_ROOT, help="the checkout to package")
    args = parser.parse_args(argv)
    try:
        package = build_package(args.out, root=args.root, python_version=args.python_version)
    except PackagingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    state = "unchanged, reused" if package.reused else "built"
    print(
        f"{package.path} ({state}): {package.zipped_bytes / 1e6:.1f} MB zipped, "
        f"{package.unzipped_bytes / 1e6:.1f} MB unzipped"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
