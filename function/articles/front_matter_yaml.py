"""The front matter block: found between its ``---`` lines, and read with YAML's safe loader.

The C loader (libyaml, ~10x faster) is used when PyYAML has it, made to give the pure loader's results
(see ``function.articles.parse``'s module docstring and ``yaml_loaders``).

Reading YAML is bounded, whatever the author wrote:

* An alias (``*name``, a merge key ``<<: *name`` included) is refused before any value is built or
  checked: through aliases a 78 KB config named one 30,000-character string 6,000 times, and the checks
  of those values took seconds (minutes for 1 MiB). A node reached twice is an alias; an anchor nobody
  refers to is harmless. Both loaders refuse the same way.
* A YAML text is at most ``MAX_FRONT_MATTER_CHARS`` characters (a book's ``config.yaml`` as well).
* Loading runs under the file's CPU budget (``limits``): the pure loader checks it as it composes, both
  as they build values.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from function.articles.front_matter import kind_of
from function.articles.limits import checking_every
from function.errors import ArticleParseError, RenderLimitError

MAX_FRONT_MATTER_CHARS = 64 * 1024

YamlLoader = type[yaml.SafeLoader] | type[yaml.CSafeLoader]


# A YAML integer longer than this is refused, not read: Python will not even turn one of 4,300 digits
# into text, and YAML 1.1's base-60 form ("1:2:3:…") costs quadratic time. No field wants a long number.
MAX_NUMBER_CHARS = 100


class YamlRefused(Exception):
    """What the YAML holds is not read here; the message says what, the caller where (front matter,
    config)."""


_ALIAS = (
    "refers to a value with a YAML alias (*name or <<: *name), which is not read here:"
    " write the value out where it is needed"
)


def _bounded_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    text = loader.construct_scalar(node)
    if isinstance(text, str) and len(text) > MAX_NUMBER_CHARS:
        raise YamlRefused(
            f"holds a number of {len(text)} characters (at most {MAX_NUMBER_CHARS} are read):"
            " put it in quotes if it is text"
        )
    return loader.construct_yaml_int(node)


class _Bounded:
    """What both loaders do before building a document: refuse aliases, keep to the CPU budget; and
    long integers are refused rather than read."""

    yaml_constructors = {**yaml.SafeLoader.yaml_constructors, "tag:yaml.org,2002:int": _bounded_int}

    def __init__(self, stream: str) -> None:
        super().__init__(stream)  # type: ignore[call-arg]
        self.check_budget = checking_every(256)

    def construct_document(self, node: yaml.Node) -> Any:
        seen: set[int] = set()
        todo = [node]
        while todo:
            current = todo.pop()
            if id(current) in seen:
                raise YamlRefused(_ALIAS)  # an alias is given its anchor's node: reached twice
            seen.add(id(current))
            self.check_budget()
            if isinstance(current, yaml.MappingNode):
                todo.extend(part for pair in current.value for part in pair)
            elif isinstance(current, yaml.SequenceNode):
                todo.extend(current.value)
        return super().construct_document(node)  # type: ignore[misc]

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        self.check_budget()
        return super().construct_object(node, deep)  # type: ignore[misc]


class _PureBounded(_Bounded, yaml.SafeLoader):
    """The pure loader, which also checks the budget as it composes (in Python, node by node)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        self.check_budget()
        return super().compose_node(parent, index)


if yaml.__with_libyaml__:

    class _CLoaderLikePure(_Bounded, yaml.CSafeLoader):
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
    loaders["pure"] = _PureBounded
    return loaders


FASTEST_LOADER: YamlLoader = next(iter(yaml_loaders().values()))


_COMMENT_AFTER_BLOCK_HEADER = re.compile(r"[|>][-+0-9]*#")


def load_yaml(source: str, loader: YamlLoader, where: str = "front matter") -> Any:
    """``source`` read by ``loader`` (one of ``yaml_loaders()``); ``ArticleParseError`` for an alias or
    a long number.
    YAML's own errors are raised as they come (``yaml.YAMLError``, or ``ValueError``...)."""
    try:
        return _load(source, loader)
    except YamlRefused as refused:
        raise ArticleParseError(f"{where} {refused}") from None


def _load(source: str, loader: YamlLoader) -> Any:
    if loader is _PureBounded or "\t" in source or _COMMENT_AFTER_BLOCK_HEADER.search(source):
        # libyaml accepts what the pure scanner refuses in two places: tabs ("t\t", a tab before a
        # value) and a comment right after a block scalar header ("|#"). Front matter with either is
        # rare enough to be read the pure way only.
        return yaml.load(source, Loader=_PureBounded)  # noqa: S506 - a SafeLoader
    try:
        return yaml.load(source, Loader=loader)  # noqa: S506 - one of yaml_loaders(), both safe
    except (RenderLimitError, YamlRefused):
        raise
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError):
        # The two parsers word their errors differently and disagree on a few corner cases of
        # invalid YAML; reading the text again with the pure loader makes its verdict the one that
        # counts. Only invalid files pay for the second read.
        return yaml.load(source, Loader=_PureBounded)  # noqa: S506 - a SafeLoader


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
    except RenderLimitError:
        raise  # the file's CPU budget ran out: said by the file's boundary
    except yaml.YAMLError as exc:
        raise ArticleParseError(f"front matter is not valid YAML: {one_line(exc)}") from None
    except (ValueError, TypeError, OverflowError) as exc:
        # PyYAML's constructors raise these for values that match a pattern but do not exist
        # (e.g. the date 2024-13-45).
        raise ArticleParseError(f"front matter has an invalid value: {one_line(exc)}") from None
    except RecursionError:
        raise ArticleParseError("front matter is nested too deeply") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise ArticleParseError(f"front matter must be a mapping of keys to values, not {kind_of(meta)}")
    return meta, "\n".join(lines[end + 1 :])


def one_line(exc: BaseException) -> str:
    message = " ".join(str(exc).split())
    return message if len(message) <= 300 else message[:297] + "..."
