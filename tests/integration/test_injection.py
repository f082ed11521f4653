"""The embedded engine's client puts parameters into the query text (`CYPHER k=v ...`).

Prove that no value can escape its literal: hostile strings stored and read back verbatim,
no extra node created, no other data touched, on the real server.
"""

from __future__ import annotations

import pytest
from falkordb import FalkorDB

from provrepair.provenance.store.base import GraphStore

ESCAPES = [
    '"', '\\', '\\"', '"\\', '\\\\"', "'", "`", "x\" }) MATCH (n) DETACH DELETE n //",
    "\\\" RETURN 1 //", "\" CYPHER evil=1 \"", "\n\r\t", "} RETURN 1", "$rows",
    "\\u0022 injected", "/* comment */", "); DROP", "\u2028\u2029", "😀\\",
]


@pytest.mark.parametrize("value", ESCAPES)
def test_hostile_parameter_is_data_not_code(falkordb_store: GraphStore, value: str) -> None:
    rows = [{"uid": "~t/a", "props": {"task_key": "~t", "task_id": "t", "id": "a",
                                      "kind": "user_input", "content": value}}]
    falkordb_store.run("merge_user_inputs", {"rows": rows})
    falkordb_store.run("merge_user_inputs", {"rows": [{"uid": "~t/b", "props": {
        "task_key": "~t", "task_id": "t", "id": value, "kind": "user_input", "content": "b"}}]})
    stored = falkordb_store.run("list_task_nodes", {"task_key": "~t"})
    assert len(stored) == 2
    assert {r["props"]["content"] for r in stored} == {value, "b"}
    assert {r["props"]["id"] for r in stored} == {"a", value}


def test_client_header_quoting_is_what_we_rely_on() -> None:
    """The quoting rule that makes the proof hold: only \\ and \" are escaped, and the
    server's parser reads no other escape (a literal \\u0041 stays six characters)."""
    from falkordb.helpers import stringify_param_value

    assert stringify_param_value('a"b\\c') == '"a\\"b\\\\c"'
    assert stringify_param_value("\\u0041") == '"\\\\u0041"'


def test_nul_cannot_travel_and_is_refused_before_sending(server_home, server) -> None:  # type: ignore[no-untyped-def]
    """NUL ends the command on the wire; the validator refuses it so it never gets there."""
    from provrepair.provenance.errors import CaseError
    from provrepair.provenance.validate import check_storable_text

    with pytest.raises(CaseError, match="NUL"):
        check_storable_text({"content": "a\x00b"}, "t")
    from provrepair.provenance.store.embedded import EmbeddedServer

    db = FalkorDB(host=server.host, port=server.port, password=EmbeddedServer(server_home).password())
    with pytest.raises(Exception):  # noqa: B017 - the engine's own parse error
        db.select_graph("nul_probe").query("RETURN $v", {"v": "a\x00b"})
