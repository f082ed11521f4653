"""The import graph against the layer order written in the README ("### Layers").

Every `provrepair.*` import — at module level, inside a function or under TYPE_CHECKING,
absolute or relative (`from ..plan import x`), or named by a string (`importlib.import_module(
"provrepair.benchmark.run")`) — must point to the importer's own layer or one below it; no two
packages may import each other; click is imported only by the CLI; no file imports the
repository folders by their bare names (`import provenance`): installed, only `provrepair`
exists; the engine
(provenance, cypher, loaders, repair) imports nothing of the research harness (`benchmark`);
the benchmark scripts import the installed library (no sys.path edits, no tests, no private
modules).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE_DIRS = ("provenance", "repair", "loaders", "commands", "cypher", "view", "benchmark",
                "integrations")
ENGINE = ("provrepair.provenance", "provrepair.cypher", "provrepair.loaders", "provrepair.repair")
BARE = re.compile(r"^(provenance|repair|loaders|cypher|cli|commands|view|benchmark|integrations)"
                  r"(\.|$)")
# Calls that import the module named by their first argument ("pkg.mod" or "pkg.mod:attr").
STRING_IMPORTERS = frozenset({"import_module", "__import__", "import_string", "EntryPoint"})
MODULE_STRING = re.compile(r"provrepair(\.[A-Za-z_][A-Za-z0-9_]*)+(:[A-Za-z_][A-Za-z0-9_.]*)?")


def module_files(root: Path = REPO) -> dict[str, Path]:
    files = {"provrepair": root / "__init__.py", "provrepair.cli": root / "cli.py"}
    for folder in PACKAGE_DIRS:
        for path in (root / folder).rglob("*.py"):
            files[module_name(path, root)] = path
    return files


def module_name(path: Path, root: Path = REPO) -> str:
    """The installed name of a file under the repository root (`repair/plan/seeds.py` →
    `provrepair.repair.plan.seeds`; a package's `__init__.py` → the package)."""
    if not path.is_relative_to(root):  # a script outside the package: its own top level
        return path.stem
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(("provrepair", *parts)).removesuffix(".__init__")


def imported(path: Path, root: Path = REPO) -> Iterator[tuple[int, str]]:
    """Every module `path` imports: absolute, relative (resolved against its package) and
    named by a string to an importing call (`importlib.import_module("provrepair.x")`)."""
    package = module_name(path, root).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if node.module:
                    yield node.lineno, node.module
                continue
            base = package[:len(package) - node.level + 1]
            if node.module:
                yield node.lineno, ".".join((*base, node.module))
            else:  # from . import a, b: each name may be a module
                yield from ((node.lineno, ".".join((*base, alias.name))) for alias in node.names)
        elif isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.Call) and _callee(node.func) in STRING_IMPORTERS and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and \
                    MODULE_STRING.fullmatch(arg.value):
                yield node.lineno, arg.value.split(":", 1)[0]


def _callee(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def readme_layers() -> list[list[str]]:
    """The units of each layer, top first, from the README's ```text block under ### Layers."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("### Layers", 1)[1].split("```text", 1)[1].split("```", 1)[0]
    layers: list[list[str]] = []
    for line in block.splitlines():
        if not line.strip() or line.startswith(" "):  # an indented line continues a comment
            continue
        names = line.split("  ", 1)[0]
        units = [u.strip().split(" ")[0] for u in names.split(",")]
        layers.append(["provrepair" if u == "provrepair" else f"provrepair.{u}" for u in units])
    return layers


def unit_of(module: str, units: list[str]) -> str:
    """The longest listed unit that is `module` or contains it."""
    found = [u for u in units if module == u or module.startswith(u + ".")]
    assert found, f"{module} belongs to no layer of the README: add it there"
    return max(found, key=len)


def test_readme_lists_layers() -> None:
    layers = readme_layers()
    assert len(layers) >= 5 and ["provrepair", "provrepair.cli", "provrepair.commands"] in layers


def test_imports_point_only_down() -> None:
    layers = readme_layers()
    rank = {unit: i for i, layer in enumerate(layers) for unit in layer}
    units = list(rank)
    wrong = []
    for module, path in module_files().items():
        mine = unit_of(module, units)
        for line, target in imported(path):
            if not target.startswith("provrepair"):
                continue
            theirs = unit_of(target, units)
            if rank[theirs] < rank[mine]:
                wrong.append(f"{path.relative_to(REPO)}:{line}: {mine} imports {target} "
                             f"(layer {theirs} is above it)")
    assert not wrong, "\n".join(wrong)


def package_graph() -> dict[str, set[str]]:
    """Imports between packages and modules one level below provrepair.<top>."""
    graph: dict[str, set[str]] = {}
    for module, path in module_files().items():
        src = ".".join(module.split(".")[:3])
        for _, target in imported(path):
            dst = ".".join(target.split(".")[:3])
            if target.startswith("provrepair") and dst != src:
                graph.setdefault(src, set()).add(dst)
    return graph


def test_no_package_cycle() -> None:
    graph = package_graph()
    cycles = []
    for start in graph:
        seen, todo = set(), list(graph.get(start, ()))
        while todo:
            node = todo.pop()
            if node == start:
                cycles.append(start)
                break
            if node not in seen:
                seen.add(node)
                todo.extend(graph.get(node, ()))
    assert not cycles, f"packages on an import cycle: {sorted(cycles)}"


# Packages whose modules import each other in one direction only (a cycle inside one of them
# is reported module by module; add a package here once its cycles are gone).
ACYCLIC_PACKAGES = ("provrepair.repair.tools",)


def module_cycle(package: str, root: Path = REPO) -> list[str]:
    """An import cycle between the modules of `package` (their names, in order), or []."""
    inside = {m: p for m, p in module_files(root).items()
              if m.startswith(package + ".") or m == package}
    graph = {m: {t for _, t in imported(p, root) if t in inside and t != m}
             for m, p in inside.items()}
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> list[str]:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt, [*path, nxt])):
                return found
        state[node] = 2
        return []

    for start in sorted(graph):
        if start not in state and (found := visit(start, [start])):
            return found
    return []


def test_no_module_cycle_inside_the_acyclic_packages() -> None:
    cycles = {package: cycle for package in ACYCLIC_PACKAGES
              if (cycle := module_cycle(package))}
    assert not cycles, "\n".join(f"{p}: {' -> '.join(c)}" for p, c in cycles.items())


def test_a_module_cycle_is_caught(tmp_path: Path) -> None:
    """The checker itself: a cycle through a TYPE_CHECKING import and a lazy one counts."""
    tools = tmp_path / "repair" / "tools"
    tools.mkdir(parents=True)
    for folder in (tmp_path, tmp_path / "repair", tools):
        (folder / "__init__.py").write_text("")
    (tools / "registry.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                       "    from provrepair.repair.tools.declared import X\n")
    (tools / "declared.py").write_text("def f():\n    from . import mcp\n")
    (tools / "mcp.py").write_text("from provrepair.repair.tools.registry import Y\n")
    (tools / "base.py").write_text("")
    assert module_cycle("provrepair.repair.tools", tmp_path) == [
        "provrepair.repair.tools.declared", "provrepair.repair.tools.mcp",
        "provrepair.repair.tools.registry", "provrepair.repair.tools.declared"]
    (tools / "mcp.py").write_text("from provrepair.repair.tools.base import Y\n")
    assert module_cycle("provrepair.repair.tools", tmp_path) == []


def test_click_only_in_the_cli() -> None:
    offenders = [f"{path.relative_to(REPO)}:{line}" for module, path in module_files().items()
                 if not module.startswith(("provrepair.cli", "provrepair.commands"))
                 for line, target in imported(path) if target.split(".")[0] == "click"]
    assert not offenders, f"click outside cli.py/commands/: {offenders}"


def test_no_bare_imports_of_repository_folders() -> None:
    offenders = []
    for path in REPO.rglob("*.py"):
        rel = path.relative_to(REPO)
        if rel.parts[0] in (".venv", "build", "node_modules") or "node_modules" in rel.parts:
            continue
        offenders += [f"{rel}:{line}: {target}" for line, target in imported(path)
                      if BARE.match(target)]
    assert not offenders, "import these as provrepair.<name>:\n" + "\n".join(offenders)


def test_a_layer_violation_is_caught() -> None:
    """The checker itself: provenance importing the planner must be reported."""
    layers = readme_layers()
    rank = {unit: i for i, layer in enumerate(layers) for unit in layer}
    units = list(rank)
    assert rank[unit_of("provrepair.repair.plan.seeds", units)] < rank[
        unit_of("provrepair.provenance.ingest", units)]


BESIDE = ("provrepair.benchmark", "provrepair.view")  # beside the engine, never below it


def engine_to_harness(root: Path = REPO) -> list[str]:
    """Imports from the engine into the research harness or the view: the engine runs
    without them."""
    return [f"{path.relative_to(root)}:{line}: {module} imports {target}"
            for module, path in module_files(root).items() if module.startswith(ENGINE)
            for line, target in imported(path, root)
            if target in BESIDE or target.startswith(tuple(f"{b}." for b in BESIDE))]


def test_the_engine_imports_nothing_of_the_benchmark() -> None:
    offenders = engine_to_harness()
    assert not offenders, ("the engine may not import the benchmark or the view:\n"
                           + "\n".join(offenders))


def empty_tree(root: Path) -> None:
    """The package layout with empty modules, for the checkers' own tests."""
    for folder in (*PACKAGE_DIRS, "repair/plan"):
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "cli.py").write_text("")


def test_an_engine_import_of_the_benchmark_is_caught(tmp_path: Path) -> None:
    """The checker itself, on a tree whose engine reaches the harness three ways."""
    empty_tree(tmp_path)
    (tmp_path / "repair" / "plan" / "relative.py").write_text(
        "from ...benchmark import metrics\nfrom ..plan import seeds\n")
    (tmp_path / "repair" / "by_name.py").write_text(
        "import importlib\n\ndef f():\n    return importlib.import_module('provrepair.benchmark.run')\n")
    (tmp_path / "loaders" / "direct.py").write_text("from provrepair.benchmark.agent import Agent\n")
    (tmp_path / "benchmark" / "fine.py").write_text("from provrepair.repair.plan import seeds\n")
    found = engine_to_harness(tmp_path)
    assert sorted(f.split(":")[0] for f in found) == [
        "loaders/direct.py", "repair/by_name.py", "repair/plan/relative.py"], found
    assert ("provrepair.repair.plan" in
            {t for _, t in imported(tmp_path / "repair" / "plan" / "relative.py", tmp_path)})


def bench_problems(path: Path) -> list[str]:
    """What a benchmark script may not do: edit sys.path, import the tests, import a private
    module of another package (`redis._parsers`); it runs against the installed library."""
    problems = [f"{line}: imports {target}" for line, target in imported(path)
                if target.split(".")[0] == "tests"
                or any(part.startswith("_") and part != "__future__" for part in target.split("."))]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr == "path" and \
                isinstance(node.value, ast.Name) and node.value.id == "sys":
            problems.append(f"{node.lineno}: touches sys.path")
    return problems


def test_benchmarks_import_only_the_installed_library() -> None:
    offenders = [f"{path.relative_to(REPO)}:{problem}" for path in sorted((REPO / "bench").glob("*.py"))
                 for problem in bench_problems(path)]
    assert not offenders, "\n".join(offenders)


def test_a_bench_script_editing_sys_path_is_caught(tmp_path: Path) -> None:
    script = tmp_path / "bad.py"
    script.write_text("import sys\nsys.path.insert(0, '.')\nfrom redis._parsers import x\n"
                      "from tests.strategies import y\n")
    assert len(bench_problems(script)) == 3


# Module cycles still to be broken elsewhere (issue 40 item 5: repair/tools declared ↔ registry ↔
# mcp is that issue's own branch); a new cycle, or a package whose __init__ imports a module
# that imports the package back, fails the test below.
KNOWN_MODULE_CYCLES = [["provrepair.repair.tools.declared", "provrepair.repair.tools.mcp",
                        "provrepair.repair.tools.registry"]]


def module_cycles(root: Path = REPO) -> list[list[str]]:
    """Strongly connected sets of modules (two or more) of the import graph, each sorted. An
    import of a package (`from provrepair.repair.plan import rules`) is an edge to its
    `__init__`: running it runs the package first, so a module its `__init__` imports may not
    import the package back (the planner did: `repair/plan/__init__` ↔ planner)."""
    files = module_files(root)
    graph = {m: {t for _, t in imported(p, root) if t in files and t != m}
             for m, p in files.items()}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm
        order[v] = low[v] = len(order)
        stack.append(v)
        for w in graph[v]:
            if w not in order:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], order[w])
        if low[v] == order[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(graph):
        if module not in order:
            visit(module)
    return sorted(cycles)


def test_no_module_cycle() -> None:
    new = [c for c in module_cycles() if c not in KNOWN_MODULE_CYCLES]
    assert not new, f"modules on an import cycle: {new}"


def test_a_package_init_cycle_is_caught(tmp_path: Path) -> None:
    """The checker itself: a package's __init__ importing a module that imports the package
    back (as `from provrepair.repair.plan import rules` did from the planner)."""
    empty_tree(tmp_path)
    (tmp_path / "repair" / "plan" / "__init__.py").write_text(
        "from provrepair.repair.plan.planner import compute_plan\n")
    (tmp_path / "repair" / "plan" / "rules.py").write_text("")
    (tmp_path / "repair" / "plan" / "planner.py").write_text(
        "from provrepair.repair.plan import rules\n")
    assert module_cycles(tmp_path) == [["provrepair.repair.plan", "provrepair.repair.plan.planner"]]
    (tmp_path / "repair" / "plan" / "planner.py").write_text(
        "import provrepair.repair.plan.rules as rules\n")
    assert module_cycles(tmp_path) == []
