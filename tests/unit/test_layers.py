"""The import graph against the layer order written in the README ("### Layers").

Every `provrepair.*` import — at module level, inside a function or under TYPE_CHECKING —
must point to the importer's own layer or one below it; no two packages may import each
other; click is imported only by the CLI; no file imports the repository folders by their
bare names (`import provenance`): installed, only `provrepair` exists; the benchmark scripts
import the installed library (no sys.path edits, no tests, no private modules).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE_DIRS = ("provenance", "repair", "loaders", "commands", "cypher", "view")
BARE = re.compile(r"^(provenance|repair|loaders|cypher|cli|commands)(\.|$)")


def module_files() -> dict[str, Path]:
    files = {"provrepair": REPO / "__init__.py", "provrepair.cli": REPO / "cli.py",
             "provrepair.registry": REPO / "registry.py"}
    for folder in PACKAGE_DIRS:
        for path in (REPO / folder).rglob("*.py"):
            name = ".".join(("provrepair", *path.relative_to(REPO).with_suffix("").parts))
            files[name.removesuffix(".__init__")] = path
    return files


def imported(path: Path) -> Iterator[tuple[int, str]]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module
        elif isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)


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
