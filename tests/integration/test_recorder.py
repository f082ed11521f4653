"""The live recorder and event streams produce the same graph as ingesting the file."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from provrepair.provenance.errors import CaseError, TaskConflict
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.keys import task_key
from provrepair.provenance.lock import lock_holder, release
from provrepair.provenance.models import Case, ToolSpec
from provrepair.provenance.readback import read_case
from provrepair.provenance.recorder import Recorder
from provrepair.provenance.state.calls import kept_call_params
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.validate import parse_case
from tests.conftest import Cli
from tests.helpers import canonical, example_raw
from tests.integration.test_store_roundtrip import graph_snapshot


def case_without_evaluation() -> Case:
    """The example as a recording would list it: each kind in arrival (time) order."""
    raw = example_raw()
    raw.pop("evaluation")
    raw["memory_store"].sort(key=lambda m: m["created_at"])
    return parse_case(raw)


def events_in_time_order(case: Case) -> list[dict[str, Any]]:
    """The case as an agent runtime would emit it: records by time, mutations before products."""
    timed: list[tuple[int, int, dict[str, Any]]] = []
    for u in case.session:
        timed.append((u.timestamp, 0, {"kind": "user_input", **u.model_dump(mode="json")}))
    for m in case.memory_store:
        timed.append((m.created_at, 2, {"kind": "memory", **m.model_dump(mode="json")}))
    for s in case.trace:
        timed.append((s.timestamp, 1, {"kind": "step", **s.model_dump(mode="json", exclude_none=True)}))
    events = [{"kind": "task", "task_id": case.task_id, "domain": case.domain,
               "tools": [t.model_dump(mode="json") for t in case.tools], "world": case.world}]
    events += [e for _, _, e in sorted(timed, key=lambda t: (t[0], t[1]))]
    events.append({"kind": "faults", "task_id": case.task_id, "diagnosed_faults": case.diagnosed_faults})
    return events


def record(store: GraphStore, events: list[dict[str, Any]], batch_size: int = 3) -> Recorder:
    head = events[0]
    rec = Recorder(store, head["task_id"], domain=head["domain"], world=head["world"],
                   tools=[ToolSpec(**t) for t in head["tools"]],
                   batch_size=batch_size, memory_namespace=head.get("memory_namespace"))
    for event in events[1:]:
        fields = {k: v for k, v in event.items() if k != "kind"}
        if event["kind"] == "faults":
            rec.faults(fields["diagnosed_faults"])
        else:
            getattr(rec, event["kind"])(**fields)
    return rec


def test_recorded_graph_equals_ingested_graph(store: GraphStore) -> None:
    case = case_without_evaluation()
    ingest_case(store, case)
    from_file = graph_snapshot(store, case.task_id)
    task_from_file = store.run("get_task", {"task_key": task_key(case.task_id)})
    store.run("delete_task", {"task_key": task_key(case.task_id), **kept_call_params()})
    with record(store, events_in_time_order(case)):
        pass
    assert graph_snapshot(store, case.task_id) == from_file
    assert store.run("get_task", {"task_key": task_key(case.task_id)}) == task_from_file
    assert canonical(read_case(store, case.task_id)) == canonical(case)


def test_bad_event_is_refused_and_leaves_no_trace(store: GraphStore) -> None:
    case = case_without_evaluation()
    events = events_in_time_order(case)
    rec = record(store, events[:4])
    bad = dict(events[4])
    bad["timestamp"] = 1.5
    with pytest.raises(CaseError, match="timestamp"):
        getattr(rec, bad.pop("kind"))(**{k: v for k, v in bad.items()})
    dangling = {k: v for k, v in events[5].items() if k != "kind"}
    with pytest.raises(CaseError):
        rec.step(**{**dangling, "step_id": "s_x", "prev_step_ids": [], "next_step_ids": [],
                    "used_ids": ["u_1"], "sufficient_ids": ["nope"]})
    for event in events[4:]:  # the stream continues as if nothing happened
        fields = {k: v for k, v in event.items() if k != "kind"}
        if event["kind"] == "faults":
            rec.faults(fields["diagnosed_faults"])
        else:
            getattr(rec, event["kind"])(**fields)
    rec.close()
    assert canonical(read_case(store, case.task_id)) == canonical(case)


def test_dangling_reference_is_reported_at_close(store: GraphStore) -> None:
    rec = Recorder(store, "t-dangling")
    rec.user_input(input_id="u", turn=1, content="hi", timestamp=1)
    rec.step(step_id="s", step_type="claim", content="c", prev_step_ids=[], next_step_ids=["s9"],
             invalidated_memory_ids=[], generated_memory_ids=[], used_ids=["u"], timestamp=2, turn=1)
    with pytest.raises(CaseError, match="s9"):
        rec.close()
    assert store.run("get_task", {"task_key": task_key("t-dangling")})[0]["props"]["complete"] is False


def test_crash_loses_at_most_the_unflushed_batch_and_replay_resumes(store: GraphStore) -> None:
    case = case_without_evaluation()
    events = events_in_time_order(case)
    rec = record(store, events[:10], batch_size=4)  # flushed after events 4 and 8
    flushed = len(store.run("list_task_nodes", {"task_key": task_key(case.task_id)}))
    del rec  # crash: the buffered events are gone...
    release(store, case.task_id, owner_of(store, case.task_id))  # ...and its process with them
    assert 0 < flushed < 9
    with record(store, events, batch_size=4):  # replay the whole stream
        pass
    assert canonical(read_case(store, case.task_id)) == canonical(case)


def owner_of(store: GraphStore, task_id: str) -> str:
    """The recording that holds the task lock. A crash here is simulated in this process,
    whose pid stays alive, so the test frees the lock as the death of a recorder's process
    does for the next one (tests/integration/test_resume_cli.py kills real processes)."""
    holder = lock_holder(store, task_id)
    assert holder is not None and holder["purpose"] == "record"
    return str(holder["holder"])


class FailingWrites:
    """The real store, except that one `query` statement (after `succeed` good ones) fails:
    a crash inside a flush. Fault injection, not a mock: every other statement runs on the
    real engine."""

    def __init__(self, store: GraphStore, query: str, succeed: int):
        self.store, self.query, self.succeed = store, query, succeed

    def prepare_for_writes(self) -> None:
        self.store.prepare_for_writes()

    def run(self, name: str, params: Any = None) -> Any:
        if name == self.query:
            self.succeed -= 1
            if self.succeed == -1:
                raise ConnectionError("killed inside a flush")
        return self.store.run(name, params)


@pytest.mark.parametrize(("query", "succeed"), [
    ("merge_edges", 0), ("merge_edges", 1), ("merge_edges", 2),  # nodes stored, edges not
    ("merge_nodes", 0), ("merge_nodes", 1), ("merge_nodes", 3)])  # a flush's nodes not stored
def test_a_crash_inside_a_flush_loses_nothing_on_resume(store: GraphStore, query: str,
                                                       succeed: int) -> None:
    case = case_without_evaluation()
    ingest_case(store, case)
    reference = graph_snapshot(store, case.task_id)
    store.run("delete_task", {"task_key": task_key(case.task_id), **kept_call_params()})
    events = events_in_time_order(case)
    with pytest.raises(ConnectionError):
        record(FailingWrites(store, query, succeed), events, batch_size=4)  # type: ignore[arg-type]
    release(store, case.task_id, owner_of(store, case.task_id))  # the crashed process's lock
    nodes, edges = graph_snapshot(store, case.task_id)
    assert len(nodes) < len(reference[0]) or len(edges) < len(reference[1])
    with record(store, events, batch_size=4):  # replay the same stream
        pass
    assert graph_snapshot(store, case.task_id) == reference


def test_an_end_event_alone_is_refused(cli: Cli) -> None:
    result = cli("ingest", "--follow", "-", input=b'{"kind": "end", "task_id": "never"}\n')
    assert result.returncode == 2 and "no recorded events" in result.stderr
    assert all(r["task_id"] != "never" for r in json.loads(cli("tasks", "--json").stdout))


def test_an_unfinished_recording_is_not_repaired(cli: Cli, tmp_path: Path) -> None:
    events = events_in_time_order(case_without_evaluation())  # no `end` event
    stream = tmp_path / "events.jsonl"
    stream.write_text("".join(json.dumps(e) + "\n" for e in events))
    followed = cli("ingest", "--follow", str(stream), "--idle-timeout", "0.2")
    assert followed.returncode == 0 and "still open: shopping_task_014" in followed.stdout
    result = cli("repair", "--task", events[0]["task_id"])
    assert result.returncode == 2
    assert result.stderr.startswith("TaskIncomplete: ") and "still being recorded" in result.stderr


def test_complete_task_cannot_be_recorded_again(store: GraphStore) -> None:
    case = case_without_evaluation()
    ingest_case(store, case)
    with pytest.raises(TaskConflict, match="complete"):
        Recorder(store, case.task_id)


def test_memory_lifecycle_update_is_allowed_but_content_is_frozen(store: GraphStore) -> None:
    rec = Recorder(store, "t-life", batch_size=1)
    base = dict(memory_id="m", content="x", source="user_input", last_modified_by=None,
                created_at=1, last_modified_at=1, derived_from=[], supersedes=None, status="active")
    rec.memory(**base)
    rec.memory(**{**base, "status": "superseded", "last_modified_at": 5})
    with pytest.raises(CaseError, match="content"):
        rec.memory(**{**base, "content": "changed"})
    rec.close()
    assert read_case(store, "t-life").memory_store[0].status == "superseded"


def test_event_stream_on_stdin(cli: Cli, tmp_path: Path) -> None:
    case = case_without_evaluation()
    lines = "\n".join(json.dumps(e) for e in events_in_time_order(case)) + "\n"
    result = cli("ingest", "--follow", "-", "--json", input=lines.encode())
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["closed_tasks"] == [case.task_id]
    shown = cli("show", "--task", case.task_id, "--json")
    assert json.loads(shown.stdout) == case.model_dump(mode="json")


def test_event_stream_bad_line_names_the_line(cli: Cli) -> None:
    lines = (b'{"kind": "user_input", "task_id": "t", "input_id": "u", "turn": 1, "content": "c",'
             b' "timestamp": 1}\n{"kind": "step", "task_id": "t"\n')
    result = cli("ingest", "--follow", "-", input=lines)
    assert result.returncode == 2
    assert result.stderr.startswith("InputError: <stdin>:2:")
    assert len(result.stderr.strip().splitlines()) == 1


def test_follow_a_growing_file(cli: Cli, falkordb_store: GraphStore, tmp_path: Path) -> None:
    case = case_without_evaluation()
    events = [*events_in_time_order(case), {"kind": "end", "task_id": case.task_id}]
    stream = tmp_path / "events.jsonl"
    half = len(events) // 2
    stream.write_text("".join(json.dumps(e) + "\n" for e in events[:half]))
    exe = Path(sys.executable).with_name("provrepair")
    proc = subprocess.Popen([str(exe), "ingest", "--follow", str(stream), "--idle-timeout", "60",
                             "--json"], env=cli.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    # the follower has read the first half (its first flush is stored) and waits for more
    deadline = time.monotonic() + 60
    while not falkordb_store.run("get_task", {"task_key": task_key(case.task_id)}):
        assert time.monotonic() < deadline and proc.poll() is None, "the follow never flushed"
        time.sleep(0.05)
    with stream.open("a") as handle:
        for event in events[half:]:
            handle.write(json.dumps(event) + "\n")
            handle.flush()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert json.loads(out)["closed_tasks"] == [case.task_id]
    shown = cli("show", "--task", case.task_id, "--json")
    assert json.loads(shown.stdout) == case.model_dump(mode="json")


def test_a_recording_keeps_its_memory_namespace(store: GraphStore) -> None:
    """The Recorder's `memory_namespace` (a stream's `task` event) is stored on the task and
    read back; the recording then equals the ingested case that names it."""
    case = case_without_evaluation().model_copy(update={"memory_namespace": "user-42"})
    events = events_in_time_order(case)
    events[0]["memory_namespace"] = "user-42"
    with record(store, events):
        pass
    task = store.run("get_task", {"task_key": task_key(case.task_id)})[0]["props"]
    assert task["memory_namespace"] == "user-42"
    assert canonical(read_case(store, case.task_id)) == canonical(case)
    with pytest.raises(CaseError, match="memory_namespace"):
        Recorder(store, "t-empty", memory_namespace="")
