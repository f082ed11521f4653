"""The echo sweep over a memory namespace (repair/plan/scope.py, repair/scope_sweep.py): two
conversations of one agent memory, stored as two tasks; a copy of the first one's wrong value
sits in the second's records. `--scope namespace` finds it (plain plans do not),
`--quarantine-copies` quarantines it in its own task, whose patch then carries it to the
agent's store; a third conversation of another memory is never touched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import provrepair
from provrepair.provenance.errors import TaskConflict
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.lock import acquire, release
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.validate import parse_case
from provrepair.repair.appliers import apply_patch
from provrepair.repair.appliers.jsonl import JsonlMemory
from provrepair.repair.current import current_memories
from provrepair.repair.patch import memory_patch
from provrepair.repair.plan import compute_plan
from provrepair.repair.plan.model import NamespaceCopy
from provrepair.repair.plan.scope import with_scope
from provrepair.repair.runs import latest_repair, list_runs
from provrepair.repair.scope_sweep import quarantine_namespace_copies
from provrepair.view.graph import view_data
from tests.conftest import Cli
from tests.helpers import example_raw, retask
from tests.integration.test_recorder import case_without_evaluation, events_in_time_order

TRAVEL = Path(__file__).resolve().parents[1] / "cases" / "replay" / "paper_travel_wrong_user.json"
NAMESPACE = "user-42"
ECHO = {"task_id": "conv_b", "memory_id": "m_e000", "fault_id": "m_f000", "same_record": False}


def conversation_a() -> dict[str, Any]:
    """The travel case (fault m_f000: airline of F0028 is Qantas), in the shared memory."""
    raw = retask(json.loads(TRAVEL.read_text(encoding="utf-8")), "conv_a")
    raw.pop("evaluation")
    return {**raw, "memory_namespace": NAMESPACE}


def conversation(task_id: str, namespace: str | None) -> dict[str, Any]:
    """Another conversation (the shopping example) holding m_e000, a copy of conv_a's wrong
    value with no edge to it, and m_e001, the same value under another key (no copy)."""
    raw = retask(example_raw(), task_id)
    raw.pop("evaluation", None)
    fault = next(m for m in json.loads(TRAVEL.read_text(encoding="utf-8"))["memory_store"]
                 if m["memory_id"] == "m_f000")
    echo = {**fault, "task_id": task_id, "memory_id": "m_e000", "derived_from": [],
            "sufficient_from": [], "last_modified_by": None, "supersedes": None}
    echo.pop("fault_type", None)
    other = {**echo, "memory_id": "m_e001", "fact_key": "other_key"}
    raw["memory_store"] = [*raw["memory_store"], echo, other]
    return {**raw, "memory_namespace": namespace} if namespace else raw


def jsonl_store(path: Path, records: list[dict[str, Any]]) -> Path:
    """The agent's memory as a JSONL file holding `records`, all active."""
    path.write_text("".join(json.dumps({"id": m["memory_id"], "content": m["content"],
                                        "status": "active"}) + "\n" for m in records))
    return path


def ingest_all(store: GraphStore) -> None:
    for raw in (conversation_a(), conversation("conv_b", NAMESPACE),
                conversation("conv_c", "user-7")):
        ingest_case(store, parse_case(raw))


def statuses(store: GraphStore, task_id: str) -> dict[str, str]:
    return {r["memory_id"]: r["status"] for r in current_memories(store, task_id)}


def test_the_namespace_sweep_finds_and_quarantines_the_copy_in_its_own_task(
        store: GraphStore) -> None:
    ingest_all(store)
    plan, _ = compute_plan(store, "conv_a")
    assert plan.suspected_copies == {} and plan.namespace_copies == []
    assert with_scope(store, plan, "task").namespace_copies == []
    scoped = with_scope(store, plan, "namespace")
    assert (scoped.scope, scoped.memory_namespace) == ("namespace", NAMESPACE)
    assert provrepair.plan(store, "conv_a", scope="namespace") == scoped  # the public API
    assert scoped.namespace_copies == [NamespaceCopy(**ECHO)]  # not conv_c's: user-7
    before_c = statuses(store, "conv_c")

    acquire(store, "conv_b", "record-other", "record")  # another writer holds conv_b
    with pytest.raises(TaskConflict, match=r"stopped at task 'conv_b'.*run the same command"):
        quarantine_namespace_copies(store, scoped, "run-x")
    assert statuses(store, "conv_b")["m_e000"] == "active" and list_runs(store, "conv_b") == []
    release(store, "conv_b", "record-other")
    done = quarantine_namespace_copies(store, scoped, "run-x")
    assert done == [NamespaceCopy(**ECHO)]
    after_b = statuses(store, "conv_b")
    assert after_b["m_e000"] == "quarantined" and after_b["m_e001"] == "active"
    assert statuses(store, "conv_c") == before_c and before_c["m_e000"] == "active"
    assert quarantine_namespace_copies(store, scoped, "run-x") == []  # idempotent
    assert with_scope(store, plan, "namespace").namespace_copies == []  # no longer active

    # conv_b: one swept run (not a repair of it), a patch carrying the quarantine and why
    runs = list_runs(store, "conv_b")
    assert [(r["run_id"], r["status"], r["method"]) for r in runs] == [
        ("run-x", "swept", "echo_sweep")]
    assert latest_repair(store, "conv_b") is None
    page = view_data(store, "conv_b")  # the view shows the sweep as conv_b's latest run
    assert (page["run"]["status"], page["run"]["repaired"]) == ("swept", False)
    node = next(n for n in page["nodes"] if n["id"] == "m_e000")
    assert (node["status_before"], node["status_after"]) == ("active", "quarantined")
    patch = memory_patch(store, "conv_b")
    assert [(o.op, o.memory_id) for o in patch.operations] == [("quarantine", "m_e000")]
    reason = patch.operations[0].reason
    assert "suspected copy of m_f000 of task conv_a (repair run run-x)" in reason
    # conv_b still plans over what is visible now: its own fault, the copy out of it
    own, _ = compute_plan(store, "conv_b")
    assert own.delete_memory_ids == ["m_f003"] and "m_e000" not in own.quarantine_memory_ids


def conv_files(tmp_path: Path) -> list[str]:
    paths = []
    for raw in (conversation_a(), conversation("conv_b", NAMESPACE),
                conversation("conv_c", "user-7"), conversation("conv_solo", None)):
        path = tmp_path / f"{raw['task_id']}.json"
        path.write_text(json.dumps(raw))
        paths.append(str(path))
    return paths


def test_cli_scope_namespace_plan_repair_patch_and_apply(engine_cli: Cli, tmp_path: Path) -> None:
    cli = engine_cli
    for path in conv_files(tmp_path):
        assert cli("ingest", path).returncode == 0
    listed = {t["task_id"]: t["memory_namespace"]
              for t in json.loads(cli("tasks", "--json").stdout)}
    assert listed == {"conv_a": NAMESPACE, "conv_b": NAMESPACE, "conv_c": "user-7",
                      "conv_solo": None}
    plain = json.loads(cli("plan", "--task", "conv_a", "--no-record", "--json").stdout)
    assert plain["scope"] == "task" and plain["namespace_copies"] == []
    planned = cli("plan", "--task", "conv_a", "--no-record", "--scope", "namespace", "--json")
    assert planned.returncode == 0, planned.stderr
    scoped = json.loads(planned.stdout)
    assert (scoped["scope"], scoped["memory_namespace"]) == ("namespace", NAMESPACE)
    assert scoped["namespace_copies"] == [ECHO]
    text = cli("plan", "--task", "conv_a", "--no-record", "--scope", "namespace").stdout
    assert "suspected copy in task conv_b: m_e000 asserts m_f000's value (quarantined" in text

    dry = json.loads(cli("repair", "--task", "conv_a", "--scope", "namespace",
                         "--quarantine-copies", "--dry-run", "--json").stdout)
    assert dry["status"] == "dry_run" and dry["plan"]["namespace_copies"] == [ECHO]
    assert dry["namespace_quarantined"] == []  # a dry run sweeps nothing
    assert json.loads(cli("history", "--task", "conv_b", "--json").stdout) == []
    done = cli("repair", "--task", "conv_a", "--scope", "namespace", "--quarantine-copies",
               "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["plan"]["namespace_copies"] == [ECHO]
    assert report["namespace_quarantined"] == [ECHO]
    run_id = report["run_id"]
    again = json.loads(cli("repair", "--task", "conv_a", "--scope", "namespace",
                           "--quarantine-copies", "--json").stdout)
    assert again["status"] == "already_repaired" and again["namespace_quarantined"] == []

    memory = {r["memory_id"]: r
              for r in json.loads(cli("memory", "--task", "conv_b", "--all", "--json").stdout)}
    assert memory["m_e000"]["status"] == "quarantined" and memory["m_e001"]["status"] == "active"
    assert memory["m_e000"]["changed_by"] == run_id
    assert memory["m_e000"]["why"].startswith(f"suspected copy of m_f000 of task conv_a (repair "
                                              f"run {run_id})")
    untouched = json.loads(cli("memory", "--task", "conv_c", "--all", "--json").stdout)
    assert all(r["status"] == "active" and r["changed_by"] is None for r in untouched)
    history = json.loads(cli("history", "--task", "conv_b", "--json").stdout)
    assert [(r["run_id"], r["status"]) for r in history] == [(run_id, "swept")]

    # conv_b's patch carries the quarantine to the agent's store
    patch = json.loads(cli("patch", "--task", "conv_b").stdout)
    assert patch["runs"] == [run_id]
    [op] = patch["operations"]
    assert (op["op"], op["memory_id"]) == ("quarantine", "m_e000")
    assert f"m_f000 of task conv_a (repair run {run_id})" in op["reason"]
    store_file = jsonl_store(tmp_path / "conv_b.jsonl",
                             conversation("conv_b", NAMESPACE)["memory_store"])
    applied = cli("apply", "--task", "conv_b", "--to", f"jsonl:{store_file}", "--json")
    assert applied.returncode == 0, applied.stderr
    assert json.loads(applied.stdout)["applied"] == ["quarantine m_e000"]
    lines = {r["id"]: r["status"] for r in map(json.loads, store_file.read_text().splitlines())}
    assert lines["m_e000"] == "quarantined" and lines["m_e001"] == "active"

    # conv_b is still repaired on its own; its patch then covers the sweep and its repair
    own = cli("repair", "--task", "conv_b", "--json")
    assert own.returncode == 0, own.stderr
    own_report = json.loads(own.stdout)
    assert own_report["status"] == "repaired" and own_report["deleted"] == ["m_f003"]
    ops = {(o["op"], o["memory_id"]) for o in own_report["memory_patch"]["operations"]}
    assert {("quarantine", "m_e000"), ("delete", "m_f003")} <= ops
    assert own_report["memory_patch"]["runs"] == [run_id, own_report["run_id"]]


@pytest.mark.parametrize("command", ["plan", "repair"])
def test_scope_namespace_on_a_task_without_one_is_refused(cli: Cli, tmp_path: Path,
                                                          command: str) -> None:
    for path in conv_files(tmp_path):
        assert cli("ingest", path).returncode == 0
    refused = cli(command, "--task", "conv_solo", "--scope", "namespace")
    assert refused.returncode == 2
    assert refused.stderr.startswith("NoNamespace: task 'conv_solo' declares no memory "
                                     "namespace"), refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert json.loads(cli("history", "--task", "conv_solo", "--json").stdout) == []


def test_a_recorded_stream_names_its_namespace_in_its_task_event(cli: Cli) -> None:
    case = case_without_evaluation()
    events = events_in_time_order(case)
    events[0]["memory_namespace"] = NAMESPACE
    events.append({"kind": "end", "task_id": case.task_id})
    stream = "".join(json.dumps(e) + "\n" for e in events).encode()
    done = cli("ingest", "--follow", "-", input=stream)
    assert done.returncode == 0, done.stderr
    listed = {t["task_id"]: t["memory_namespace"]
              for t in json.loads(cli("tasks", "--json").stdout)}
    assert listed == {case.task_id: NAMESPACE}
    assert "namespace=user-42" in cli("tasks").stdout


def test_the_faults_own_record_seen_by_another_conversation_is_deleted_there(
        store: GraphStore, tmp_path: Path) -> None:
    """In a shared memory, conv_b recorded m_f000 itself (it read the record conv_a's repair
    deletes): not a copy but the same record (its agent id), deleted in conv_b too, so the
    two tasks' patches agree on the agent's store in either order."""
    fault = next(m for m in conversation_a()["memory_store"] if m["memory_id"] == "m_f000")
    shared = {**fault, "task_id": "conv_b", "derived_from": [], "sufficient_from": [],
              "last_modified_by": None, "supersedes": None}
    shared.pop("fault_type", None)
    raw_b = conversation("conv_b", NAMESPACE)
    raw_b["memory_store"].append(shared)
    for raw in (conversation_a(), raw_b):
        ingest_case(store, parse_case(raw))
    scoped = provrepair.plan(store, "conv_a", scope="namespace")
    assert scoped.namespace_copies == [
        NamespaceCopy(**ECHO), NamespaceCopy(**{**ECHO, "memory_id": "m_f000",
                                                "same_record": True})]
    quarantine_namespace_copies(store, scoped, "run-y")
    assert {k: v for k, v in statuses(store, "conv_b").items() if k in ("m_e000", "m_f000")} \
        == {"m_e000": "quarantined", "m_f000": "deleted"}
    why = {r["memory_id"]: r["why"] for r in current_memories(store, "conv_b")}
    assert why["m_f000"].startswith("the diagnosed fault m_f000 of task conv_a (repair run "
                                    "run-y) itself")
    patch = memory_patch(store, "conv_b")
    assert [(o.op, o.memory_id) for o in patch.operations] == [("delete", "m_f000"),
                                                               ("quarantine", "m_e000")]
    assert "same record of the shared memory" in patch.operations[0].reason
    # the agent's store before conv_a's patch (m_f000 there) and after it (m_f000 gone)
    for name, records in (("before", raw_b["memory_store"]),
                          ("after", [m for m in raw_b["memory_store"] if m is not shared])):
        memory = JsonlMemory(jsonl_store(tmp_path / f"{name}.jsonl", records))
        try:
            result = apply_patch(patch, memory)
        finally:
            memory.close()
        assert result.applied == (["delete m_f000", "quarantine m_e000"] if name == "before"
                                  else ["quarantine m_e000"]), name
