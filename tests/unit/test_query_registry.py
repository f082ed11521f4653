"""The cypher/ registry: header checks with file:line, and the real files' vocabulary."""

from __future__ import annotations

import re

import pytest

from provrepair.provenance.errors import QueryFileError
from provrepair.provenance.store.queries import load_registry, parse_query
from provrepair.provenance.vocab import EdgeLabel, NodeLabel, RecordEdge, RepairEdge, RunMark

PATH = "cypher/area/find_thing.cypher"


def test_every_shipped_query_loads() -> None:
    registry = load_registry()
    assert "merge_step_claim" in registry.queries
    assert registry.schema["falkordb"] and registry.schema["neo4j"]


def test_declared_and_used_params_must_match() -> None:
    text = "// name: find_thing\n// mode: read\n// params: a\nMATCH (n:Node {uid: $a})\nRETURN $b"
    with pytest.raises(QueryFileError, match=r"^cypher/area/find_thing.cypher:5: \$b is used"):
        parse_query(text, PATH)
    text = "// name: find_thing\n// mode: read\n// params: a, c\nRETURN $a"
    with pytest.raises(QueryFileError, match=r"find_thing.cypher:3: \$c is declared but never used"):
        parse_query(text, PATH)


def test_dollar_inside_strings_and_comments_is_not_a_param() -> None:
    text = "// name: find_thing\n// mode: read\n// params: a\n// $nope\nRETURN '$x', \"$y\", $a"
    assert parse_query(text, PATH).params == {"a"}


def test_a_state_rule_is_named_and_filled_in_from_provenance_state() -> None:
    text = ("// name: find_thing\n// mode: read\n// params: run_id\n// @visible(x) in a comment\n"
            "MATCH (n:Node) WHERE @visible(n) AND NOT @pending_of(n, $run_id)\n"
            "RETURN '@kept' AS s, n")
    query = parse_query(text, PATH)
    code = query.text.splitlines()[4]
    assert code == ("MATCH (n:Node) WHERE (n.origin_run IS NULL OR n.committed = true) AND NOT "
                    "(n.origin_run = $run_id AND coalesce(n.committed, false) = false)")
    assert "// @visible(x) in a comment" in query.text and "'@kept'" in query.text
    assert query.params == {"run_id"}


@pytest.mark.parametrize("code, message", [
    ("WHERE @nosuch(n)", r"find_thing.cypher:5: no state rule @nosuch"),
    ("WHERE @visible(n, m)", r"find_thing.cypher:5: @visible takes 1 argument"),
    ("WHERE @visible()", r"@visible takes 1 argument"),
    ("WHERE n.x = @y", r"find_thing.cypher:5: '@' must name a state rule"),
])
def test_a_wrong_state_rule_names_file_and_line(code: str, message: str) -> None:
    with pytest.raises(QueryFileError, match=message):
        parse_query(f"// name: find_thing\n// mode: read\n// params:\n\n{code}\nRETURN 1", PATH)


@pytest.mark.parametrize("header, message", [
    ("// mode: read\n// params:\n", "'// name:' is missing"),
    ("// name: other\n// mode: read\n// params:\n", "differs from the file name"),
    ("// name: find_thing\n// mode: maybe\n// params:\n", "mode must be read or write"),
])
def test_malformed_headers(header: str, message: str) -> None:
    with pytest.raises(QueryFileError, match=message):
        parse_query(header + "RETURN 1", PATH)


def test_queries_use_only_the_vocabulary() -> None:
    """Labels and relationship types in every file come from the enums (the linter checks
    this too with the vocabulary; this catches it without Node)."""
    labels = {label.value for label in NodeLabel}
    types = ({label.value for label in EdgeLabel} | {mark.value for mark in RunMark}
             | {edge.value for edge in RepairEdge} | {edge.value for edge in RecordEdge})
    registry = load_registry()
    for query in [*registry.queries.values(), *registry.schema["falkordb"], *registry.schema["neo4j"]]:
        code = re.sub(r"//[^\n]*|'[^']*'", "", query.text)
        for name in re.findall(r"\[\w*:(\w+)", code):
            assert name in types, f"{query.path}: unknown relationship type {name}"
        for name in re.findall(r"\(\w*:(\w+)|\bSET \w+:(\w+)|\b\w+:(\w+)\)", code):
            for part in name:
                if part:
                    assert part in labels, f"{query.path}: unknown label {part}"
