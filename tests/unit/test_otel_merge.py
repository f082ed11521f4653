"""loaders/otel_merge.py without a server: a conversation's reading merged into its stored,
repaired task. The stored task is what ingest writes of an earlier reading (the same rows),
then changed as a repair changes it: a record deleted (its audit fields set) and nodes the
repair wrote (`origin_run`)."""

from __future__ import annotations

import json
from typing import Any

from provrepair.loaders.otel import RunReading, Span
from provrepair.loaders.otel_extend import CapturedRun
from provrepair.loaders.otel_merge import REPLAN, Merge, Stored, merge_reading
from provrepair.provenance.edges import derive_edges
from provrepair.provenance.ingest import node_rows
from provrepair.provenance.keys import task_key
from provrepair.provenance.rows import task_props

TASK = "conv-merge"
KEY = task_key(TASK)


def span(n: int, op: str, at: int | None = None, **attrs: Any) -> Span:
    return Span("ab" * 16, f"{n:016x}", 1000 * n if at is None else at,
                {"gen_ai.operation.name": op, "gen_ai.conversation.id": TASK, **attrs})


def search(n: int, *records: str, at: int | None = None,
           contents: dict[str, str] | None = None) -> Span:
    return span(n, "search_memory", at, **{"gen_ai.memory.records": json.dumps(
        [{"id": r, "content": (contents or {}).get(r, f"note {r}")} for r in records])})


def chat(n: int, question: str, answer: str, at: int | None = None) -> Span:
    return span(n, "chat", at, **{
        "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": question}]}]),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}])})


def write(n: int, op: str, record: str, content: str) -> Span:
    return span(n, op, **{"gen_ai.memory.records": json.dumps(
        [{"id": record, "content": content}])})


FIRST = [search(1, "m_a"), chat(2, "Q1?", "A1."), search(3, "m_b"), chat(4, "Q2?", "A2.")]


def repaired(spans: list[Span]) -> Stored:
    """The task ingest stores for a reading of `spans`, after a repair deleted `m_a` and
    replayed the first answer (s_002@r1) with a regenerated record (`m_b~2`: a version id
    a later update of m_b would otherwise be given)."""
    case = RunReading(TASK).read(spans).case()
    nodes = [row["props"] for row in node_rows(KEY, case.model_dump(mode="json"))]
    for props in nodes:
        if props["id"] == "m_a":
            props.update(status="deleted", status_before="active", status_recorded="active",
                         status_run="r1")
    nodes += [{"id": "s_002@r1", "kind": "step", "step_type": "final_answer",
               "origin_run": "r1", "content": "A1 (repaired)", "position": 4},
              {"id": "m_b~2", "kind": "memory", "origin_run": "r1", "record_id": "m_b",
               "content": "note m_b (repaired)", "position": 2}]
    edges = {(e.label.value, e.src, e.dst) for e in derive_edges(case)}
    return Stored(task_props(case, None, complete=True), nodes, edges)


def applied(stored: Stored, merge: Merge) -> Stored:
    """The stored task once the merge is written (as loaders/otel_runs.py writes it; a
    repaired record's status is left as the repair set it)."""
    nodes = {p["id"]: dict(p) for p in stored.nodes}
    for row in merge.nodes + merge.grown:
        nodes.setdefault(row["props"]["id"], {}).update(row["props"])
    for row in merge.changed:
        node = nodes[row["props"]["id"]]
        node.update({**row["props"], "status": node["status"]} if "status_run" in node
                    else row["props"])
    edges = {(e["label"], e["src"].split("/")[-1], e["dst"].split("/")[-1])
             for e in merge.edges}
    return Stored({**stored.task, **merge.task}, list(nodes.values()), stored.edges | edges)


def merged(stored: Stored, spans: list[Span]) -> tuple[Any, dict[str, dict[str, Any]]]:
    """The reading of `spans` (in reading order, as the journal gives them) merged."""
    reading = RunReading(TASK).read(sorted(spans, key=lambda s: s.order))
    merge = merge_reading(KEY, stored, reading, [])
    return merge, {r["props"]["id"]: r["props"] for r in merge.nodes}


def test_a_later_request_is_added_with_the_reading_ids_never_a_repairs() -> None:
    stored = repaired(FIRST)
    merge, new = merged(stored, [*FIRST, search(5, "m_a", "m_b"), chat(6, "Q3?", "A3."),
                                 write(7, "update_memory", "m_b", "A3.")])
    # the repair's m_b~2 is taken: the update's version is m_b~3; nothing stored is kept
    assert sorted(new) == ["m_b~3", "s_005", "s_006", "s_007", "u_003"]
    assert merge.kept == [] and not merge.exact  # an id differs from a reading alone
    assert new["s_007"]["generated_memory_ids"] == ["m_b~3"]
    # the fault a search returned again, m_b superseded: rows the repair's status survives
    changed = {r["props"]["id"]: r["props"]["status"] for r in merge.changed}
    assert changed == {"m_b": "superseded"}  # m_a read active again: as recorded, no row
    assert ("SUPPORT", "m_a", "s_005") in {(e["label"], e["src"].split("/")[-1],
                                            e["dst"].split("/")[-1]) for e in merge.edges}
    assert all(e["label"] != "CHAIN" or "s_004" not in e["dst"] for e in merge.edges)
    assert merge.task["content_hash"] is None and merge.task["warnings"] is None


def test_a_request_without_a_repaired_id_is_exact() -> None:
    merge, new = merged(repaired(FIRST), [*FIRST, chat(5, "Q3?", "A3.")])
    assert sorted(new) == ["s_005", "u_003"] and merge.exact and merge.changed == []


def test_a_span_older_than_those_stored_is_merged_beside_them_with_a_warning() -> None:
    stored = repaired(FIRST)
    older = search(9, "m_c", at=2500)  # between the first answer and the second search
    merge, new = merged(stored, [*FIRST, older, chat(5, "Q3?", "A3.")])
    # the reading alone names the older search s_003 (a stored id): it gets the next free
    # one; the stored steps keep theirs
    assert sorted(new) == ["m_c", "s_005", "s_006", "u_003"]
    assert new["s_005"]["content"].startswith("Retrieved: m_c")
    grown = {r["props"]["id"]: r["props"] for r in merge.grown}
    assert {"s_005", "m_c"} <= set(grown["s_004"]["used_ids"])  # the stored answer read it
    assert grown["s_003"]["prev_step_ids"] == ["s_002", "s_005"]  # kept, and added to
    assert merge.kept and not merge.exact
    warnings = json.loads(merge.task["world_json"])["provrepair.warnings"]
    assert warnings == merge.task["warnings"] and warnings[-1].startswith(REPLAN)
    # merged again (the next trace): nothing doubled, the note said once (the journal
    # cannot say it again)
    again, new = merged(applied(stored, merge), [*FIRST, older, chat(5, "Q3?", "A3."),
                                                 chat(6, "Q4?", "A4.")])
    assert sorted(new) == ["s_007", "u_004"] and again.task["warnings"] == warnings


def test_a_record_the_agent_names_like_a_stored_step_is_moved_to_a_version_id() -> None:
    spans = [*FIRST, write(5, "create_memory", "s_001", "A2."),
             search(6, "s_001", contents={"s_001": "A2."}), chat(7, "Q3?", "A3.")]
    stored = repaired(FIRST)
    merge, new = merged(stored, spans)
    assert new["s_001~2"]["record_id"] == "s_001"  # the agent's id, kept
    reads = [p for p in new.values() if p.get("step_type") == "memory_read"]
    assert reads and reads[0]["used_ids"] == ["s_001~2"]
    assert "s_001" not in new and not merge.exact  # the stored step stays what it is
    assert {("PRODUCE", "s_001~2")} <= {(e["label"], e["dst"].split("/")[-1])
                                        for e in merge.edges}
    again, new = merged(applied(stored, merge), [*spans, chat(8, "Q4?", "A4.")])
    assert sorted(new) == ["s_009", "u_004"]  # the moved record is found again, not doubled
    assert again.changed == [] and again.kept == []


def test_an_extension_after_a_repair_never_takes_a_repairs_id() -> None:
    """A conversation extended trace by trace (loaders/otel_extend.py) after a repair wrote
    nodes: their ids are reserved (the capture reads them when the task's repair runs
    changed), so a later update's version is not the repair's `m_b~2`, and a record the
    agent names like a repair's node is read again whole (and merged, moved)."""
    run = CapturedRun.stored(KEY, RunReading(TASK).read(FIRST), "token")
    run.reserve({p["id"] for p in repaired(FIRST).nodes}, 1)
    extension = run.extend([write(5, "update_memory", "m_b", "A2.")])
    assert extension is not None
    assert [r["props"]["id"] for r in extension.nodes if r["type"] == "memories"] == ["m_b~3"]
    assert run.extend([write(6, "create_memory", "s_002@r1", "odd")]) is None
