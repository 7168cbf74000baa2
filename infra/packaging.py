"""The Lambda deployment zip: ``function/``, ``shared/`` and the runtime dependencies, built reproducibly.

Dependencies are the ``[project] dependencies`` of ``pyproject.toml`` (never the dev extra), installed
as wheels for Lambda's platform and Python version whatever machine builds the zip. Entries are sorted,
timestamps and permissions fixed and caches left out, so the same inputs give the same bytes and Pulumi
sees no change. The zip is named after a digest of its inputs and reused while they are unchanged.

``python -m infra.packaging --out build`` (``make package``) builds it from the command line.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SOURCE_PACKAGES = ("function", "shared")
PLATFORM = "manylinux2014_x86_64"
DEFAULT_PYTHON_VERSION = "3.12"
ARCHIVE_PREFIX = "blog-api-"
# Bump to invalidate every cached zip when the layout below changes.
FORMAT_VERSION = "1"
# The earliest time a zip entry can carry; any fixed value makes the bytes reproducible.
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
# Lambda's limits for a zip uploaded directly, and for its unpacked size.
MAX_ZIPPED_BYTES = 50 * 1024 * 1024
MAX_UNZIPPED_BYTES = 250 * 1024 * 1024

_EXCLUDED_DIRS = frozenset({"__pycache__", "tests", ".pytest_cache", ".mypy_cache"})
_EXCLUDED_SUFFIXES = (".pyc", ".pyo")
# Top-level entries of the pip target that Lambda never uses. ``bin/`` holds console scripts whose
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


def runtime_requirements(pyproject: Path) -> list[str]:
    """The ``[project] dependencies`` of ``pyproject``: what the function needs at run time."""
    with pyproject.open("rb") as handle:
        project = tomllib.load(handle)["project"]
    return sorted(str(requirement) for requirement in project.get("dependencies", []))


def source_entries(root: Path) -> list[tuple[str, Path]]:
    """``(name in the zip, file)`` for every file of the project's own packages, caches and tests left out."""
    entries: list[tuple[str, Path]] = []
    for package in SOURCE_PACKAGES:
        entries.extend(_tree_entries(root / package, prefix=f"{package}/"))
    return entries


def input_digest(root: Path, requirements: Sequence[str], python_version: str) -> str:
    """A SHA-256 over everything the zip is built from: sources, requirements, target and this module."""
    digest = hashlib.sha256()
    for part in (FORMAT_VERSION, PLATFORM, python_version, *requirements):
        digest.update(part.encode() + b"\0")
    digest.update(hashlib.sha256(Path(__file__).read_bytes()).digest())
    for name, path in sorted(source_entries(root)):
        digest.update(name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def install_dependencies(requirements: Sequence[str], target: Path, python_version: str) -> None:
    """Install ``requirements`` into ``target`` as wheels for Lambda's Linux x86_64 and ``python_version``."""
    command = [
        sys.executable, "-m", "pip", "install",
        "--quiet", "--disable-pip-version-check", "--no-warn-script-location",
        # Binary wheels only, for Lambda's platform: an sdist would be built for this machine instead.
        "--platform", PLATFORM, "--only-binary=:all:",
        "--python-version", python_version, "--implementation", "cp",
        # Lambda compiles on import into /tmp anyway; .pyc files would only make the zip larger and
        # the bytes depend on the build.
        "--no-compile",
        "--target", str(target),
        *requirements,
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise PackagingError(f"pip could not install the runtime dependencies:\n{result.stderr.strip()}")
    leaked = sorted(module for module in DEV_ONLY_MODULES if (target / module).exists())
    if leaked:
        raise PackagingError(f"development-only packages ended up in the package: {', '.join(leaked)}")


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
    requirements = runtime_requirements(root / "pyproject.toml")
    digest = input_digest(root, requirements, python_version)
    destination = out_dir / f"{ARCHIVE_PREFIX}{digest[:16]}.zip"
    if destination.is_file():
        with zipfile.ZipFile(destination) as archive:
            unzipped = sum(info.file_size for info in archive.infolist())
        return PackageInfo(destination, destination.stat().st_size, unzipped, reused=True)

    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="blog-api-package-") as scratch:
        target = Path(scratch) / "site"
        install_dependencies(requirements, target, python_version)
        entries = _dependency_entries(target) + source_entries(root)
        # Write next to the destination, then rename: a half-written zip is never taken for a cached one.
        partial = out_dir / f".{destination.name}.partial"
        unzipped = write_zip(entries, partial)
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


def _dependency_entries(target: Path) -> list[tuple[str, Path]]:
    entries: list[tuple[str, Path]] = []
    for child in sorted(target.iterdir()):
        if child.name in _EXCLUDED_TOP_LEVEL or child.name in _EXCLUDED_DIRS:
            continue
        if child.is_dir():
            entries.extend(_tree_entries(child, prefix=f"{child.name}/"))
        elif not child.name.endswith(_EXCLUDED_SUFFIXES):
            entries.append((child.name, child))
    # RECORD lists the console scripts left out above, with hashes of their machine-specific shebangs;
    # nothing at run time reads it.
    return [(name, path) for name, path in entries if not _is_record(name)]


def _is_record(name: str) -> bool:
    parent, _, leaf = name.rpartition("/")
    return leaf == "RECORD" and parent.endswith(".dist-info") and "/" not in parent


def _tree_entries(directory: Path, prefix: str) -> list[tuple[str, Path]]:
    entries: list[tuple[str, Path]] = []
    for current, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d not in _EXCLUDED_DIRS)
        base = Path(current)
        relative = base.relative_to(directory).as_posix()
        for file_name in sorted(files):
            if file_name.endswith(_EXCLUDED_SUFFIXES):
                continue
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
        help="Lambda's Python version (default %(default)s)",
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
