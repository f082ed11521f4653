"""The cypher/ registry: every query the product runs, loaded once from package files.

Each file holds one query and an aiosql-like header::

    // name: merge_memories     (must equal the file name without .cypher)
    // mode: write              (read | write)
    // params: rows, task_id    (comma separated; empty when none)

Loading rejects a file whose declared and used `$params` differ, a missing or malformed
header, a name that is not the file's, or a duplicate name; the message starts with
`cypher/<path>:<line>:`. Files under `cypher/schema/<engine>/` are DDL, kept per engine
(the one place where FalkorDB and Neo4j differ) and run in file-name order.
Files under `cypher/vault/` run against the evaluation vault, never the planner's graph, and
so does the DDL under `cypher/schema/<engine>/vault/` (the vault's own indexes).

A state rule is never spelled in a file: `@visible(n)` names one of provenance/state/runs.py's
`CYPHER_RULES` (arguments are Cypher expressions), and loading puts its text in, on the
same line (an unknown rule or a wrong number of arguments is refused with file:line). The
texts with the rules in are what runs, what `make lint-cypher` lints (`python -m
provrepair.provenance.store.queries build/cypher` writes them) and what browser/queries/
holds for Neo4j Browser (`... --browser browser/queries`).
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from functools import cache, partial
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from provrepair.provenance.errors import QueryFileError
from provrepair.provenance.state.runs import CYPHER_RULES

HEADER = re.compile(r"^//\s*(name|mode|params)\s*:(.*)$")
PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
# String literals, quoted identifiers and comments, which may contain `$` harmlessly.
NOT_CODE = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`|//[^\n]*|/\*.*?\*/", re.S)
ENGINES = ("falkordb", "neo4j")
# A state rule named in a query: `@name(arg, ...)` (provenance/state/runs.py CYPHER_RULES).
RULE = re.compile(r"@([A-Za-z_]\w*)\(([^()]*)\)")


@dataclass(frozen=True)
class Query:
    name: str
    mode: str               # "read" | "write"
    params: frozenset[str]
    text: str
    path: str               # "cypher/ingest/merge_memories.cypher"
    target: str             # "graph" | "vault"


@dataclass(frozen=True)
class QueryRegistry:
    queries: dict[str, Query]
    schema: dict[str, tuple[Query, ...]]  # engine → DDL statements in order

    def __getitem__(self, name: str) -> Query:
        try:
            return self.queries[name]
        except KeyError:
            raise QueryFileError(f"no query named {name!r} under cypher/") from None


def parse_query(text: str, path: str, target: str = "graph") -> Query:
    """Parse and check one query file's text."""
    header: dict[str, tuple[int, str]] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        match = HEADER.match(line.strip())
        if match:
            header[match.group(1)] = (lineno, match.group(2).strip())
    for key in ("name", "mode", "params"):
        if key not in header:
            raise QueryFileError(f"{path}:1: header line '// {key}:' is missing")
    name_line, name = header["name"]
    stem = path.rsplit("/", 1)[-1].removesuffix(".cypher")
    if name != stem:
        raise QueryFileError(f"{path}:{name_line}: name {name!r} differs from the file name {stem!r}")
    mode_line, mode = header["mode"]
    if mode not in ("read", "write"):
        raise QueryFileError(f"{path}:{mode_line}: mode must be read or write, not {mode!r}")
    params_line, params_text = header["params"]
    declared = {p.strip() for p in params_text.split(",") if p.strip()}
    text = expand_rules(text, path)
    _check_params(text, path, params_line, declared)
    return Query(name, mode, frozenset(declared), text, path, target)


def expand_rules(text: str, path: str) -> str:
    """The text with each `@rule(args)` of its code (not of comments or strings) replaced by
    the rule's Cypher; any other `@` in code is refused."""
    pieces, start = [], 0
    for match in [*NOT_CODE.finditer(text), None]:
        end = match.start() if match else len(text)
        code = text[start:end]
        for at in re.finditer("@", code):
            if not RULE.match(code, at.start()):
                line = text.count("\n", 0, start + at.start()) + 1
                raise QueryFileError(f"{path}:{line}: '@' must name a state rule: @name(args)")
        pieces.append(RULE.sub(partial(_rule, text=text, offset=start, path=path), code))
        if match:
            pieces.append(match.group(0))
            start = match.end()
    return "".join(pieces)


def _rule(match: re.Match[str], *, text: str, offset: int, path: str) -> str:
    name, args = match.group(1), [a.strip() for a in match.group(2).split(",")]
    line = text.count("\n", 0, offset + match.start()) + 1
    template = CYPHER_RULES.get(name)
    if template is None:
        raise QueryFileError(f"{path}:{line}: no state rule @{name} (provenance/state/runs.py "
                             f"CYPHER_RULES: {', '.join(sorted(CYPHER_RULES))})")
    wanted = len(set(re.findall(r"\{(\d+)\}", template)))
    if len(args) != wanted or not all(args):
        raise QueryFileError(f"{path}:{line}: @{name} takes {wanted} argument(s), "
                             f"not {match.group(2)!r}")
    return template.format(*args)


def _check_params(text: str, path: str, params_line: int, declared: set[str]) -> None:
    code = NOT_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    used: dict[str, int] = {}
    for match in PARAM.finditer(code):
        used.setdefault(match.group(1), code.count("\n", 0, match.start()) + 1)
    for name, line in sorted(used.items(), key=lambda kv: kv[1]):
        if name not in declared:
            raise QueryFileError(f"{path}:{line}: ${name} is used but not declared in '// params:'")
    for name in sorted(declared - used.keys()):
        raise QueryFileError(f"{path}:{params_line}: ${name} is declared but never used")


def _walk(folder: Traversable, prefix: str) -> list[tuple[str, Traversable]]:
    found: list[tuple[str, Traversable]] = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        rel = f"{prefix}/{entry.name}"
        if entry.is_dir():
            found.extend(_walk(entry, rel))
        elif entry.name.endswith(".cypher"):
            found.append((rel, entry))
    return found


@cache
def load_registry(package: str = "provrepair.cypher") -> QueryRegistry:
    """Load and check every query file once per process."""
    queries: dict[str, Query] = {}
    schema: dict[str, list[Query]] = {engine: [] for engine in ENGINES}
    for rel, entry in _walk(resources.files(package), package.rsplit(".", 1)[-1]):
        parts = rel.split("/")
        vault_ddl = parts[1] == "schema" and len(parts) == 5 and parts[3] == "vault"
        target = "vault" if parts[1] == "vault" or vault_ddl else "graph"
        query = parse_query(entry.read_text(encoding="utf-8"), rel, target)
        if parts[1] == "schema":
            if parts[2] not in ENGINES or not (len(parts) == 4 or vault_ddl):
                raise QueryFileError(f"{rel}:1: schema files live in cypher/schema/<engine>/ "
                                     "(vault DDL in cypher/schema/<engine>/vault/)")
            schema[parts[2]].append(query)
        elif query.name in queries:
            raise QueryFileError(f"{rel}:1: name {query.name!r} is also used by {queries[query.name].path}")
        else:
            queries[query.name] = query
    return QueryRegistry(queries, {e: tuple(q) for e, q in schema.items()})


BROWSER = "cypher/browser/"


def browser_text(query: Query) -> str:
    """A saved Neo4j Browser query as it ships in browser/queries/: its rules in, and a first
    line saying where it comes from (Browser runs the file as it is)."""
    return (f"// generated from {query.path} by `python -m provrepair.provenance.store.queries "
            f"--browser browser/queries`: edit that file\n{query.text}")


def write_texts(out: Path, *, browser: bool = False) -> list[Path]:
    """Write every query's text as it runs (rules in) under `out`, as laid out under cypher/;
    with `browser`, only the saved Browser queries, flat, as browser/queries/ holds them."""
    registry = load_registry()
    everything = [*registry.queries.values(), *(q for e in ENGINES for q in registry.schema[e])]
    written = []
    for query in everything:
        if browser and not query.path.startswith(BROWSER):
            continue
        target = out / (Path(query.path).name if browser else Path(query.path).relative_to("cypher"))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(browser_text(query) if browser else query.text, encoding="utf-8")
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m provrepair.provenance.store.queries",
        description="Write the cypher/ queries as they run (state rules in): for the Cypher "
                    "linter, or (--browser) the saved Neo4j Browser queries of browser/queries/.")
    parser.add_argument("out", type=Path)
    parser.add_argument("--browser", action="store_true")
    args = parser.parse_args(argv)
    if args.browser:
        for stale in args.out.glob("*.cypher"):
            stale.unlink()
    write_texts(args.out, browser=args.browser)


if __name__ == "__main__":  # pragma: no cover - make lint-cypher, browser/queries/
    main()
