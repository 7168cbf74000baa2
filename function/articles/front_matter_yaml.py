"""The front matter block: found between its ``---`` lines, and read with YAML's safe loader.

The C loader (libyaml, ~10x faster) is used when PyYAML has it, made to give the pure loader's results
(see ``function.articles.parse``'s module docstring and ``yaml_loaders``).
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from function.articles.front_matter_fields import kind_of
from function.errors import ArticleParseError

MAX_FRONT_MATTER_CHARS = 64 * 1024

YamlLoader = type[yaml.SafeLoader] | type[yaml.CSafeLoader]


if yaml.__with_libyaml__:

    class _CLoaderLikePure(yaml.CSafeLoader):
        """libyaml's safe loader, resolving as the pure one does where they differ."""

        def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
            # The C parser reports an empty node tagged "!" as not implicit, so it would become ''
            # where the pure loader resolves it like a plain scalar (null). (False, False) reaches
            # resolve only for a "!" tag: untagged scalars are always plain or quoted implicit.
            if kind is yaml.ScalarNode and implicit == (False, False):
                implicit = (True, False)
            return super().resolve(kind, value, implicit)


def yaml_loaders() -> dict[str, YamlLoader]:
    """The front matter loaders this PyYAML has, fastest first: "libyaml" (when built with it), "pure"."""
    loaders: dict[str, YamlLoader] = {}
    if yaml.__with_libyaml__:
        loaders["libyaml"] = _CLoaderLikePure
    loaders["pure"] = yaml.SafeLoader
    return loaders


FASTEST_LOADER: YamlLoader = next(iter(yaml_loaders().values()))


_COMMENT_AFTER_BLOCK_HEADER = re.compile(r"[|>][-+0-9]*#")


def load_yaml(source: str, loader: YamlLoader) -> Any:
    if loader is yaml.SafeLoader or "\t" in source or _COMMENT_AFTER_BLOCK_HEADER.search(source):
        # libyaml accepts what the pure scanner refuses in two places: tabs ("t\t", a tab before a
        # value) and a comment right after a block scalar header ("|#"). Front matter with either is
        # rare enough to be read the pure way only.
        return yaml.load(source, Loader=yaml.SafeLoader)
    try:
        return yaml.load(source, Loader=loader)  # noqa: S506 - one of yaml_loaders(), both safe
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError):
        # The two parsers word their errors differently and disagree on a few corner cases of
        # invalid YAML; reading the text again with the pure loader makes its verdict the one that
        # counts. Only invalid files pay for the second read.
        return yaml.load(source, Loader=yaml.SafeLoader)


_OPENING_RE = re.compile(r"---[ \t]*")
_CLOSING_RE = re.compile(r"(?:---|\.\.\.)[ \t]*")


def split_front_matter(text: str, loader: YamlLoader) -> tuple[dict[Any, Any], str]:
    lines = text.split("\n")
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start == len(lines) or not _OPENING_RE.fullmatch(lines[start]):
        raise ArticleParseError(
            "no front matter: the file must start with a '---' line (a title is required)"
        )
    end = next((i for i in range(start + 1, len(lines)) if _CLOSING_RE.fullmatch(lines[i])), None)
    if end is None:
        raise ArticleParseError("front matter is not closed: no '---' line after the opening one")
    source = "\n".join(lines[start + 1 : end])
    if len(source) > MAX_FRONT_MATTER_CHARS:
        raise ArticleParseError(
            f"front matter is {len(source)} characters; at most {MAX_FRONT_MATTER_CHARS} are allowed"
        )
    try:
        meta = load_yaml(source, loader)
    except yaml.YAMLError as exc:
        raise ArticleParseError(f"front matter is not valid YAML: {_one_line(exc)}") from None
    except (ValueError, TypeError, OverflowError) as exc:
        # PyYAML's constructors raise these for values that match a pattern but do not exist
        # (e.g. the date 2024-13-45).
        raise ArticleParseError(f"front matter has an invalid value: {_one_line(exc)}") from None
    except RecursionError:
        raise ArticleParseError("front matter is nested too deeply") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise ArticleParseError(f"front matter must be a mapping of keys to values, not {kind_of(meta)}")
    return meta, "\n".join(lines[end + 1 :])


def _one_line(exc: BaseException) -> str:
    message = " ".join(str(exc).split())
    return message if len(message) <= 300 else message[:297] + "..."
