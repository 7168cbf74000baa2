"""Which zip the function is deployed from: the prebuilt ``blog-api:artifactPath``, or one built now."""

from __future__ import annotations

from pathlib import Path

import pulumi

from infra.config import ARTIFACT_PATH_KEY, ConfigError, StackConfig

REPO_ROOT = Path(__file__).resolve().parent.parent


def function_code(config: StackConfig) -> pulumi.FileArchive:
    """The function's code archive.

    With ``artifactPath`` set, that zip is used as it is: nothing is built and nothing is written into
    the checkout (CI and the mocks-based tests rely on it). Otherwise the package is built (or reused,
    when its inputs are unchanged) under ``build/``, so ``pulumi up`` alone deploys.
    """
    if config.artifact_path is not None:
        # Relative to the repository root, not to the working directory (Pulumi runs in infra/).
        path = Path(config.artifact_path)
        path = path if path.is_absolute() else REPO_ROOT / path
        if not path.is_file():
            raise ConfigError([f"blog-api:{ARTIFACT_PATH_KEY} {config.artifact_path!r} is not a file"])
        return pulumi.FileArchive(str(path))

    # Imported here so that a run with artifactPath does not even load the builder.
    from infra.packaging import PackagingError, build_package

    try:
        package = build_package(REPO_ROOT / "build", python_version=config.python_version)
    except PackagingError as exc:
        raise pulumi.RunError(f"the deployment package could not be built: {exc}") from None
    pulumi.log.info(
        f"deployment package {package.path.name}: {package.zipped_bytes / 1e6:.1f} MB"
        + (" (unchanged)" if package.reused else " (built)")
    )
    return pulumi.FileArchive(str(package.path))
