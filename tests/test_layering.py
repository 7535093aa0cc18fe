"""Imports only go down the layers of ARCHITECTURE.md; same-layer packages never import each other."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "src" / "perfport"
LAYERS = {
    "_core": 0,
    "devices": 1, "space": 1, "kernels": 1,
    "measure": 2, "store": 2, "features": 2,
    "strategies": 3,
    "tune": 4,
    "wg": 5, "select": 5, "model": 5, "split": 5,
    "service": 6, "report": 6,
    "cli": 7,
}  # fmt: skip


def _imports(path: Path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names)


def _package(module: str) -> str | None:
    parts = module.split(".")
    return (
        parts[1]
        if parts[0] == "perfport" and len(parts) > 1
        else ("" if parts == ["perfport"] else None)
    )


@pytest.mark.parametrize(
    "path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_imports_go_down(path):
    rel = path.relative_to(PACKAGE)
    if len(rel.parts) == 1:
        return  # the package's facade (__init__, __main__) may import anything
    own = rel.parts[0]
    assert own in LAYERS, f"{own} is not in ARCHITECTURE.md's layers"
    for module in _imports(path):
        target = _package(module)
        if target is None or target == own:
            continue
        if target == "":
            assert own == "cli", (
                f"{rel} imports the perfport facade; import the layer module instead"
            )
            continue  # the CLI is a thin layer over the public API
        assert target in LAYERS, f"{rel} imports unknown package {module}"
        assert LAYERS[target] < LAYERS[own] or own == "cli", (
            f"{rel} ({own}) imports {module} ({target}): not downward"
        )


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    """Module -> the perfport modules it imports anywhere in its body (inside functions too:
    an import moved into a function to dodge a circle is still a circle)."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:  # `from pkg import submodule` imports the submodule
                    sub = f"{node.module}.{alias.name}"
                    edges.add(sub if sub in modules else node.module)
            elif isinstance(node, ast.Import):
                edges.update(a.name for a in node.names)
        graph[name] = {m for m in edges if m in modules and m != name}
    return graph


def test_no_circle_between_modules():
    graph = _import_graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                circle = [*path[path.index(target) :], target]
                pytest.fail("modules import each other in a circle: " + " -> ".join(circle))
            if target not in state:
                visit(target)
        path.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)
