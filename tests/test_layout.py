"""The layout's rules that import-linter's contracts do not state: no import cycle between modules."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import textwrap
from pathlib import Path

import grimp
import pytest

# The calls that import a module by its name at run time, as ``import`` statements do.
_DYNAMIC_IMPORTS = {"import_module", "__import__"}


def _literals(node: ast.expr) -> list[str]:
    """The strings of a string literal, or of a tuple or list of them."""
    items = node.elts if isinstance(node, ast.Tuple | ast.List) else [node]
    return [item.value for item in items if isinstance(item, ast.Constant) and isinstance(item.value, str)]


def _dynamic_imports(source: str) -> set[str]:
    """Module names given as literals to ``importlib.import_module(...)`` or ``__import__(...)``: written
    in the call, or through a variable bound to literals (``for module in ("a.b",): import_module(module)``,
    the form that once hid a cycle)."""
    tree = ast.parse(source)
    bound: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            bound.setdefault(node.target.id, []).extend(_literals(node.iter))
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).extend(_literals(node.value))
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name not in _DYNAMIC_IMPORTS:
            continue
        first = node.args[0]
        found.update(bound.get(first.id, []) if isinstance(first, ast.Name) else _literals(first))
    return found


def import_graph(*packages: str) -> grimp.ImportGraph:
    """The packages' import graph, with the imports made by name at run time added to grimp's own."""
    # Imports inside functions count (they used to hide a models / sweep state / redelivery cycle);
    # imports for type annotations only never run, so they do not.
    graph = grimp.build_graph(*packages, exclude_type_checking_imports=True, cache_dir=None)
    for module in sorted(graph.modules):
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            continue
        for name in _dynamic_imports(Path(spec.origin).read_text(encoding="utf-8")):
            # A name below a module grimp knows (a class path, say) counts as an import of that module.
            target = name
            while target and target not in graph.modules:
                target = target.rpartition(".")[0]
            if target:
                graph.add_import(importer=module, imported=target)
    return graph


def _cycle_from(graph: grimp.ImportGraph, start: str, modules: set[str]) -> list[str] | None:
    """A path start -> ... -> start through the project's own modules, if there is one."""
    stack = [(start, [start])]
    seen: set[str] = set()
    while stack:
        module, path = stack.pop()
        for imported in graph.find_modules_directly_imported_by(module):
            if imported == start:
                return [*path, start]
            if imported in modules and imported not in seen:
                seen.add(imported)
                stack.append((imported, [*path, imported]))
    return None


def cycles(*packages: str) -> list[list[str]]:
    graph = import_graph(*packages)
    modules = {m for m in graph.modules if m.startswith(packages)}
    return [cycle for m in sorted(modules) if (cycle := _cycle_from(graph, m, modules))]


def test_no_module_imports_itself_through_others_not_even_inside_a_function() -> None:
    assert cycles("function", "shared") == []


def test_a_cycle_closed_through_importlib_or_dunder_import_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a package whose modules import each other, the way back by name inside a function
    package = tmp_path / "planted_cycle"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "core.py").write_text("from planted_cycle import extra\n")
    (package / "extra.py").write_text(
        textwrap.dedent(
            """
            import importlib

            def load():
                for module in ("planted_cycle.core",):
                    importlib.import_module(module)
            """
        )
    )
    (package / "other.py").write_text("def load():\n    return __import__('planted_cycle.alone')\n")
    (package / "alone.py").write_text("from planted_cycle import other\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()

    # WHEN the layout test looks at it, THEN both cycles are named
    found = {tuple(cycle) for cycle in cycles("planted_cycle")}
    assert ("planted_cycle.core", "planted_cycle.extra", "planted_cycle.core") in found
    assert ("planted_cycle.other", "planted_cycle.alone", "planted_cycle.other") in found


def test_only_names_written_as_literals_are_followed() -> None:
    source = textwrap.dedent(
        """
        import importlib
        from importlib import import_module

        importlib.import_module("a.one")
        __import__("a.two")
        named = "a.three"
        import_module(named)
        importlib.import_module(computed())
        importlib.import_module(f"a.{suffix}")
        """
    )
    assert _dynamic_imports(source) == {"a.one", "a.two", "a.three"}
