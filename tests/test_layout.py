"""The layout's rules that import-linter's contracts do not state: no import cycle between modules."""

from __future__ import annotations

import grimp


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


def test_no_module_imports_itself_through_others_not_even_inside_a_function() -> None:
    # Imports inside functions count (they used to hide a models / sweep state / redelivery cycle);
    # imports for type annotations only never run, so they do not.
    graph = grimp.build_graph("function", "shared", exclude_type_checking_imports=True)
    modules = {m for m in graph.modules if m.startswith(("function", "shared"))}
    cycles = [cycle for m in sorted(modules) if (cycle := _cycle_from(graph, m, modules))]
    assert cycles == []
