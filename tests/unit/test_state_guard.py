"""Every state rule is used from provenance/state/, never restated: no product file of any
type (Python, Cypher, the view's JavaScript, HTML and CSS, the Browser style) spells a run
status, a memory status where a status is decided, or the node visibility rule (`origin_run
IS NULL`, `committed = true`) outside the homes of those rules. Cypher names a rule
(`@visible(n)`, provenance/state/runs.py CYPHER_RULES) or takes a status as a parameter; the
view gets the statuses it draws from the page data.

The scan is shown to catch a literal planted in each kind of file and folder (a temp copy)."""

from __future__ import annotations

import io
import re
import shutil
import tokenize
from pathlib import Path

import pytest

from provrepair.provenance.state.runs import RunStatus
from provrepair.provenance.store.queries import BROWSER, browser_text, load_registry
from provrepair.provenance.vocab import MemoryStatus

REPO = Path(__file__).resolve().parents[2]
# The product: the engine, the CLI, the view, the Browser files and the benchmark harness.
PRODUCT = ("provenance", "cypher", "loaders", "repair", "commands", "view", "browser",
           "benchmark", "cli.py", "__init__.py")
# Where the rules live, and what is not ours to scan (each with its reason).
EXEMPT = {
    "provenance/state": "the home of the rules",
    "provenance/vocab.py": "the home of the status enums",
    "view/static": "vendored third-party libraries (cytoscape.js), not our code",
    "browser/queries": "generated from cypher/browser/ with the rules filled in (checked below)",
    "benchmark/transfer/cases": "data: case files (a record's status is a field of the format)",
    "benchmark/reference.py": "an independent oracle written from the method alone, sharing "
                              "no code with the engine by design (its module docstring)",
}

RUN_STATUSES = "|".join(s.value for s in RunStatus)
MEMORY_STATUSES = "|".join([*(s.value for s in MemoryStatus), "pending"])
RUN_LITERAL = re.compile(rf"""['"]({RUN_STATUSES})['"]""")
MEMORY_LITERAL = re.compile(rf"""['"]({MEMORY_STATUSES})['"]""")
STATUS_CONTEXT = re.compile(r"status|^\s*[A-Z_]+\s*=", re.I)  # a status decided or named
VISIBILITY = re.compile(
    r"origin_run\s+IS\s+(NOT\s+)?NULL"           # Cypher: recorded / written by a repair
    r"|\bcommitted\s*=\s*(true|false)\b"         # Cypher SET / WHERE; Python keyword
    r"|coalesce\(\s*\w+\.committed"              # Cypher: not committed
    r"|(get\(|\[)\s*['\"]committed['\"]",        # Python: reading the flag
    re.I)
# run_params("writing") names a parameter of the state module, not a status
STATE_CALL = re.compile(r"run_params\([^)]*\)")


def code_lines(path: Path, text: str) -> list[tuple[int, str]]:
    """The lines of `text` that are code: comments and Python docstrings left out."""
    lines = text.splitlines()
    if path.suffix == ".py":
        return [(n, lines[n - 1]) for n in sorted(_python_code_lines(text))]
    comment = "//" if path.suffix in (".cypher", ".js") else None
    return [(n, line) for n, line in enumerate(lines, 1)
            if comment is None or not line.lstrip().startswith(comment)]


def _python_code_lines(text: str) -> set[int]:
    """Line numbers holding code: not comments, and not a string standing as a statement
    of its own (a docstring)."""
    code: set[int] = set()
    statement_start = True  # after NEWLINE, INDENT, DEDENT: a string here is a docstring
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        kind = token.type
        if kind in (tokenize.NL, tokenize.COMMENT, tokenize.ENDMARKER):
            continue
        if kind in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            statement_start = True
            continue
        if not (kind == tokenize.STRING and statement_start):
            first, last = token.start[0], token.end[0]
            code.update(range(first, last + 1) if last > first else (first,))
        statement_start = False
    return code


def offenders(root: Path) -> list[str]:
    """`path:line: text` of every restated state rule in the product files under `root`."""
    found = []
    for path in product_files(root):
        rel = path.relative_to(root).as_posix()
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # not text (no product file is binary today)
        for lineno, line in code_lines(path, text):
            code = STATE_CALL.sub("", line)
            if (status_literal(RUN_LITERAL, code) or VISIBILITY.search(code)
                    or (status_literal(MEMORY_LITERAL, code) and STATUS_CONTEXT.search(code))):
                found.append(f"{rel}:{lineno}: {line.strip()}")
    return found


def status_literal(pattern: re.Pattern[str], code: str) -> bool:
    """A quoted status that is not a mapping key (`{"repaired": flag}`, `summary["pending"]`
    and `summary.get("needs_human")` name a field, not a state; `x == "active":` ends a
    condition)."""
    for match in pattern.finditer(code):
        before, after = code[:match.start()], code[match.end():]
        key = re.match(r"\s*:", after) and re.search(r"(^|[{,(])\s*$", before)
        lookup = (re.search(r"\.get\(\s*$", before) and re.match(r"\s*[,)]", after)) or \
            (re.search(r"\[\s*$", before) and re.match(r"\s*\]", after))
        if not (key or lookup):
            return True
    return False


def product_files(root: Path) -> list[Path]:
    files = []
    for name in PRODUCT:
        top = root / name
        for path in [top] if top.is_file() else sorted(top.rglob("*")):
            rel = path.relative_to(root).as_posix()
            if path.is_file() and "__pycache__" not in path.parts and not any(
                    rel == e or rel.startswith(e + "/") for e in EXEMPT):
                files.append(path)
    return files


def test_no_product_file_restates_a_state_rule() -> None:
    assert offenders(REPO) == []


def test_the_scan_covers_every_kind_of_product_file() -> None:
    suffixes = {p.suffix for p in product_files(REPO)}
    assert {".py", ".cypher", ".js", ".html", ".css", ".grass"} <= suffixes
    folders = {p.relative_to(REPO).parts[0] for p in product_files(REPO)}
    assert set(PRODUCT) <= folders


PLANTS = {
    "view/view.js": "var gone = node.status === 'quarantined';",
    "view/template.html": '<span data-status="deleted">',
    "view/view.css": 'node[status = "deleted"] { border: dashed; }',
    "commands/memory.py": 'ACTIVE = "active"',
    "repair/service.py": 'FINISHED = {"repaired", "partial"}',
    "loaders/agent_run.py": 'visible = props.get("committed")',
    "provenance/readback.py": 'ok = row["status"] == "superseded"',
    "cypher/read/get_task.cypher": "WHERE t.origin_run IS NULL",
    "cypher/read/count_nodes.cypher": "SET n.committed = true",
    "benchmark/metrics.py": 'status = "needs_human"',
    "browser/provrepair.grass": 'node[status = "aborted"] { color: red; }',
}


def test_a_planted_literal_in_any_product_file_fails_the_scan(tmp_path: Path) -> None:
    for name in PRODUCT:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, tmp_path / name)
    for rel, line in PLANTS.items():
        path = tmp_path / rel
        lines = path.read_text(encoding="utf-8").splitlines()
        path.write_text("\n".join([*lines, line]) + "\n", encoding="utf-8")
    found = offenders(tmp_path)
    assert sorted(f.split(":", 1)[0] for f in found) == sorted(PLANTS), found


@pytest.mark.parametrize("line", [
    '"""The run is left \'writing\' (a docstring)."""',
    "# a comment about status 'active'",
    'props = {**run_params("writing", "aborted")}',
    'fields = {"deleted": plan.delete_memory_ids}',
    'Swatch("quarantined", "Quarantined")',
])
def test_what_is_not_a_restated_rule(tmp_path: Path, line: str) -> None:
    (tmp_path / "repair").mkdir()
    (tmp_path / "repair" / "x.py").write_text(line + "\n", encoding="utf-8")
    assert offenders(tmp_path) == []


def test_browser_queries_are_the_registry_texts() -> None:
    """browser/queries/ is what `python -m provrepair.provenance.store.queries --browser
    browser/queries` writes: each saved query with its state rules filled in."""
    queries = [q for q in load_registry().queries.values() if q.path.startswith(BROWSER)]
    shipped = {p.name: p.read_text(encoding="utf-8")
               for p in (REPO / "browser" / "queries").glob("*.cypher")}
    assert shipped == {Path(q.path).name: browser_text(q) for q in queries}, \
        "regenerate: python -m provrepair.provenance.store.queries --browser browser/queries"
    assert all("@" not in text.split("\n", 1)[1] for text in shipped.values())
