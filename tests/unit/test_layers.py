"""The layers of docs/architecture.md, enforced on the import graph.

Every ``import`` of every module of the package is read from the source (function-local ones
included, the way tests/kernels/test_kernels_jit.py reads the kernels), resolved to the nnsim
module it names, and checked against LAYERS: a module may import its own layer and the layers
below it, never one above. The graph must have no cycle, and a function-local import is allowed
only for an optional dependency (an extra of pyproject.toml), with a comment saying why.

Importing ``a.b.c`` also runs ``a/__init__.py`` and ``a/b/__init__.py``; those implicit parent
imports are not edges here (package ``__init__`` modules are checked by what they import).
"""
from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCE_DIRS = {"nnsim": "nnsim", "drivers": "nnsim.drivers", "kernels": "nnsim.kernels"}

# Bottom to top. A module belongs to the layer of its longest matching prefix.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("nnsim.types", "nnsim.errors", "nnsim.limits")),
    ("platform", ("nnsim.platform",)),          # properties, logcat, sysfs
    ("common", ("nnsim.common",)),              # operands, operand validation
    ("kernels", ("nnsim.kernels",)),
    ("ops", ("nnsim.ops",)),                    # operation specs, validation, the CPU executor
    ("drivers", ("nnsim.drivers",)),
    ("runtime", ("nnsim.runtime",)),
    ("api", ("nnsim.nnapi", "nnsim._capi", "nnsim.tflite")),
    ("tools", ("nnsim",)),                      # commands, cli, explain, graph, audit, ...
]

# Function-local imports are allowed only for these optional dependencies (pyproject extras):
# importing them at module level would make them required.
OPTIONAL_DEPENDENCIES = {"PIL", "tqdm", "dask", "distributed", "pyarrow", "playwright"}


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    local: bool

    def __str__(self) -> str:
        return f"{self.source}:{self.line} -> {self.target}{' (function-local)' if self.local else ''}"


def _modules() -> dict[str, Path]:
    found = {}
    for folder, package in SOURCE_DIRS.items():
        for path in (REPO / folder).rglob("*.py"):
            parts = list(path.relative_to(REPO / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


MODULES = _modules()


def _targets(module: str, node: ast.AST, is_package: bool) -> list[str]:
    """The nnsim modules an import statement names (a name imported from a package that is a
    submodule counts as that submodule)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = module.split(".") if is_package else module.split(".")[:-1]
            package = package[: len(package) - (node.level - 1)]
            base = ".".join(package + ([base] if base else []))
        names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                 for alias in node.names]
    out = []
    for name in names:
        while name not in MODULES and "." in name:
            name = name.rsplit(".", 1)[0]
        if name in MODULES and name != module:
            out.append(name)
    return out


def _imports(path: Path):
    """(node, is_function_local) for every import statement of a file."""
    def walk(node, local):
        for child in ast.iter_child_nodes(node):
            inner = local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, inner
            yield from walk(child, inner)
    yield from walk(ast.parse(path.read_text(), filename=str(path)), False)


def _edges() -> list[Edge]:
    edges = []
    for module, path in MODULES.items():
        for node, local in _imports(path):
            for target in _targets(module, node, path.name == "__init__.py"):
                edges.append(Edge(module, target, node.lineno, local))
    return edges


EDGES = _edges()


def layer_of(module: str) -> int:
    best, best_len = None, -1
    for index, (_name, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    return best


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm; components with more than one module (or a self loop)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_every_module_has_a_layer():
    assert all(layer_of(m) is not None for m in MODULES)
    assert len(MODULES) > 100 and len(EDGES) > 500     # the walk found the package


@pytest.mark.parametrize("layer", [name for name, _ in LAYERS])
def test_no_module_imports_a_layer_above_its_own(layer):
    here = [n for n, _ in LAYERS].index(layer)
    upward = [str(e) + f"  [{LAYERS[layer_of(e.target)][0]}]" for e in EDGES
              if layer_of(e.source) == here and layer_of(e.target) > here]
    assert upward == [], f"{layer} imports a higher layer:\n" + "\n".join(upward)


@pytest.mark.parametrize("source, forbidden", [
    ("nnsim.kernels", ("nnsim.",)),                      # kernels: only kernels
    ("nnsim.ops", ("nnsim.drivers", "nnsim.runtime", "nnsim.tflite", "nnsim.nnapi")),
    ("nnsim.drivers", ("nnsim.runtime", "nnsim.tflite", "nnsim.nnapi", "nnsim.commands")),
    ("nnsim.runtime", ("nnsim.tflite", "nnsim.commands", "nnsim.cli", "nnsim.nnapi")),
    ("nnsim.tflite", ("nnsim.commands", "nnsim.cli")),
])
def test_issue_rules(source, forbidden):
    """The rules as the issue states them, so a failure names the rule broken."""
    broken = [str(e) for e in EDGES
              if (e.source == source or e.source.startswith(source + "."))
              and any(e.target.startswith(f) for f in forbidden)
              and not (source == "nnsim.kernels" and e.target.startswith("nnsim.kernels"))]
    assert broken == []


def test_no_import_cycles():
    graph: dict[str, set[str]] = {}
    for e in EDGES:
        graph.setdefault(e.source, set()).add(e.target)
    assert _strongly_connected(graph) == []


def test_cycle_finder_finds_a_cycle():
    # the check above must be able to fail
    assert _strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_function_local_imports_are_optional_dependencies_with_a_reason():
    offenders = []
    for module, path in MODULES.items():
        lines = path.read_text().splitlines()
        for node, local in _imports(path):
            if not local:
                continue
            if isinstance(node, ast.ImportFrom) and node.level:
                top = "nnsim"
            else:
                top = (node.names[0].name if isinstance(node, ast.Import)
                       else node.module).split(".")[0]
            reason = "#" in lines[node.lineno - 1] or lines[node.lineno - 2].strip().startswith("#")
            if top not in OPTIONAL_DEPENDENCIES or not reason:
                offenders.append(f"{module}:{node.lineno}: {ast.unparse(node)}")
    assert offenders == []
