"""Query names are constants a reader can grep: every cypher/ file is named, verbatim, where
the product runs it, every name the product runs is a file, and no name is built at run time
(the write queries of each label set are tables keyed by the vocabulary: provenance/rows.py;
the forms the namespace plan's lockstep merges statements into, one: repair/plan/lockstep.py)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from provrepair.provenance.edges import NodeKind
from provrepair.provenance.rows import (
    CREATE_STAGED_EDGES_QUERY,
    CREATE_STAGED_QUERY,
    CREATE_STAGED_STEP_QUERY,
    MERGE_QUERY,
    MERGE_STEP_QUERY,
)
from provrepair.provenance.store.queries import BROWSER, load_registry
from provrepair.provenance.vocab import EdgeLabel, StepType
from provrepair.repair.plan.lockstep import MERGES

REPO = Path(__file__).resolve().parents[2]
PRODUCT = ("provenance", "loaders", "repair", "commands", "view", "benchmark", "cli.py")
# The calls a query name is passed to (GraphStore.run, ReadAhead.send, the planner's view,
# the write-back and export batches).
QUERY_CALLS = frozenset({"run", "send", "rows", "_task_rows", "_send", "_send_read", "_batched"})
TABLES = (MERGE_QUERY, MERGE_STEP_QUERY, CREATE_STAGED_QUERY, CREATE_STAGED_STEP_QUERY,
          CREATE_STAGED_EDGES_QUERY)


def python_files() -> Iterator[Path]:
    for name in PRODUCT:
        top = REPO / name
        yield from [top] if top.is_file() else sorted(top.rglob("*.py"))


def _callee(node: ast.Call) -> str | None:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)


def _strings(node: ast.AST) -> Iterator[ast.Constant]:
    for child in ast.walk(node):
        if isinstance(child, ast.Constant) and isinstance(child.value, str):
            yield child


def query_references(tree: ast.AST) -> tuple[set[str], list[str]]:
    """(the names passed to a query call as constants, the calls whose name is built at run
    time: an f-string, a concatenation or a format)."""
    named: set[str] = set()
    built: list[str] = []
    loops: dict[str, list[ast.AST]] = {}  # loop variable → the literal tuples/lists it runs over
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and isinstance(node.iter, (ast.Tuple, ast.List)):
            targets = node.target.elts if isinstance(node.target, ast.Tuple) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    loops.setdefault(target.id, []).append(node.iter)
        if isinstance(node, ast.comprehension) and isinstance(node.iter, (ast.Tuple, ast.List)) \
                and isinstance(node.target, ast.Name):
            loops.setdefault(node.target.id, []).append(node.iter)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _callee(node) in QUERY_CALLS):
            continue
        for arg in node.args[:2]:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                named.add(arg.value)
            elif isinstance(arg, ast.Name) and arg.id in loops:
                named.update(c.value for it in loops[arg.id] for c in _strings(it))
            elif isinstance(arg, ast.JoinedStr) or (
                    isinstance(arg, ast.BinOp) and any(True for _ in _strings(arg))) or (
                    isinstance(arg, ast.Call) and _callee(arg) == "format"):
                built.append(f"line {node.lineno}: {ast.unparse(arg)}")
    return named, built


def name_prefixes(tree: ast.AST, names: set[str]) -> list[str]:
    """f-strings and concatenations anywhere whose text starts as a query name does
    (`f"merge_step_{t}"`, `"create_staged_" + kind`): a name being built."""
    found = []
    for node in ast.walk(tree):
        head = None
        if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
            head = node.values[0].value
        elif isinstance(node, ast.BinOp) and isinstance(node.left, ast.Constant):
            head = node.left.value
        if isinstance(head, str) and "_" in head and any(n.startswith(head) for n in names):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


@cache
def references() -> tuple[dict[str, list[str]], list[str]]:
    used: dict[str, list[str]] = {}
    built: list[str] = []
    names = set(load_registry().queries)
    for path in python_files():
        rel = path.relative_to(REPO).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        named, dynamic = query_references(tree)
        dynamic += name_prefixes(tree, names)
        for name in named:
            used.setdefault(name, []).append(rel)
        built += [f"{rel} {d}" for d in dynamic]
    for table in TABLES:
        for name in table.values():
            used.setdefault(name, []).append("provenance/rows.py")
    for merge in MERGES.values():  # the forms a round of plans is sent in (a table too)
        used.setdefault(merge.into, []).append("repair/plan/lockstep.py")
    return used, built


def test_every_query_the_product_runs_is_a_file_and_none_is_built_at_run_time() -> None:
    used, built = references()
    registry = load_registry()
    # a loop's tuples may pair a name with a column (check.py: "label"): names have a "_"
    missing = {name: where for name, where in used.items()
               if name not in registry.queries and "_" in name}
    assert missing == {}
    assert built == []


def test_every_query_file_is_run_by_the_product_or_saved_for_browser() -> None:
    used, _ = references()
    browser_docs = (REPO / "browser" / "README.md").read_text(encoding="utf-8")
    unused = []
    for name, query in load_registry().queries.items():
        if name in used:
            continue
        if query.path.startswith(BROWSER) and f"`{name}.cypher`" in browser_docs:
            continue  # a saved query a person runs in Neo4j Browser (browser/README.md)
        unused.append(query.path)
    assert unused == []


def test_the_write_query_tables_cover_the_vocabulary() -> None:
    assert set(MERGE_STEP_QUERY) == set(CREATE_STAGED_STEP_QUERY) == set(StepType)
    assert set(CREATE_STAGED_EDGES_QUERY) == set(EdgeLabel)
    assert set(MERGE_QUERY) == set(CREATE_STAGED_QUERY) == {NodeKind.MEMORY, NodeKind.USER_INPUT}
    names = [name for table in TABLES for name in table.values()]
    assert len(set(names)) == len(names)


def test_a_name_built_at_run_time_is_caught() -> None:
    f_string = 'f"merge_step_{kind}"'  # kept apart: no line reads as a query run from an f-string
    tree = ast.parse(f'store.run({f_string}, {{}})\nstore.run("merge_" + kind, {{}})\n'
                     'view.rows("list_{}".format(x), {})\nstore.run("merge_task", {})\n'
                     'for q in ("scan_labels", "scan_relationships"):\n    store.run(q, {})\n')
    named, built = query_references(tree)
    assert named == {"merge_task", "scan_labels", "scan_relationships"}
    assert len(built) == 3
    # built anywhere, then passed on: the way 32 names were made before the tables
    helper = ast.parse('def staged(t):\n    return f"create_staged_step_{t}"\n'
                       'def merge(kind):\n    return "merge_" + kind\n')
    assert len(name_prefixes(helper, set(load_registry().queries))) == 2
