"""mem0 as a source and a target, with the real `mem0ai` library kept local
(tests/mem0_memory.py: Qdrant on a directory, the OpenAI-compatible double as embedder):

- `RecordingMemory` records the agent's calls as the spans loaders/otel.py reads;
- `Mem0Memory` applies a patch by mem0's own ids, maps the ids mem0 assigns in its metadata,
  quarantines by moving out of the agent's scope, refuses another user's scope, and converges
  when re-run after a kill -9 between two of its writes (mem0 has no transactions)."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from provrepair.integrations.mem0 import RecordingMemory
from provrepair.loaders.otel import cases_from_spans
from provrepair.loaders.otel_live import span_of
from provrepair.provenance.checkpoints import install
from provrepair.provenance.errors import ConfigError, TargetMismatch
from provrepair.repair.appliers import ApplyResult, Target, apply_patch, open_memory_store
from provrepair.repair.appliers.mem0 import QUARANTINE_PREFIX, Mem0Memory, parse_scope
from provrepair.repair.patch import MemoryPatch, parse_patch
from tests.hooked_cli import EnvironmentCheckpoints
from tests.mem0_memory import close_memory, open_memory, scope_records, write_config
from tests.openai_double import ChatDouble, Reply

ALICE = {"user_id": "alice"}
RECORDED = {"bad": "ship to 9 Wrong Rd", "derived": "label for 9 Wrong Rd",
            "upd": "home airport: LAX", "keep": "prefers aisle seats"}


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    double = ChatDouble()
    yield double.start()
    double.stop()


@pytest.fixture
def seeded(tmp_path: Path, endpoint: str) -> Iterator[tuple[Any, dict[str, str]]]:
    """Alice's memory (mem0 numbered each record) and bob's, holding the same texts."""
    memory = open_memory(tmp_path, endpoint)
    ids = {name: memory.add(text, **ALICE, metadata={"topic": name},
                            infer=False)["results"][0]["id"]
           for name, text in RECORDED.items()}
    memory.add(RECORDED["keep"], user_id="bob", infer=False)
    yield memory, ids
    close_memory(memory)


def the_patch(ids: dict[str, str]) -> MemoryPatch:
    """A repair's patch of alice's task, by mem0's ids (what the recording gave the task)."""
    return MemoryPatch.model_validate({
        "task_id": "conv-alice", "run_id": "r", "memory_namespace": "user_id=alice",
        "kept": [{"memory_id": ids["keep"], "content": RECORDED["keep"]}], "operations": [
            {"op": "delete", "memory_id": ids["bad"], "expected_content": RECORDED["bad"]},
            {"op": "quarantine", "memory_id": ids["derived"],
             "expected_content": RECORDED["derived"]},
            {"op": "put", "memory_id": ids["upd"], "expected_content": RECORDED["upd"],
             "content": "home airport: OAK"},
            {"op": "add", "memory_id": "m_n007", "content": "label for 1 Elm St"}]})


def test_a_patch_by_mem0s_ids(seeded: tuple[Any, dict[str, str]]) -> None:
    memory, ids = seeded
    patch = the_patch(ids)
    before = scope_records(memory, user_id="bob")
    with pytest.raises(TargetMismatch, match=r"namespace 'user_id=alice'; the target is "
                                             r"'user_id=bob'.*--allow-other-namespace"):
        apply_patch(patch, Mem0Memory(memory, "user_id=bob"))
    # allowed, bob's scope still holds none of alice's records with alice's content: his
    # record of the same text has its own id
    with pytest.raises(TargetMismatch, match="holds none of the 5 record"):
        apply_patch(patch, Mem0Memory(memory, {"user_id": "bob"}), allow_other_namespace=True)
    assert scope_records(memory, user_id="bob") == before

    result = apply_patch(patch, Mem0Memory(memory, "user_id=alice"))
    assert result.applied == [f"delete {ids['bad']}", f"quarantine {ids['derived']}",
                              f"put {ids['upd']}", "add m_n007"]
    active = scope_records(memory, **ALICE)
    new_id = next(i for i, text in active.items() if text == "label for 1 Elm St")
    assert active == {ids["upd"]: "home airport: OAK", ids["keep"]: RECORDED["keep"],
                      new_id: "label for 1 Elm St"}
    assert memory.get(new_id)["metadata"]["provrepair_id"] == "m_n007"  # the id map
    # the agent's own search no longer returns the fault nor the quarantined record
    found = memory.search("ship label Wrong Rd", filters=ALICE)["results"]
    assert {r["memory"] for r in found} <= {"label for 1 Elm St", "home airport: OAK",
                                            RECORDED["keep"]}
    hidden = scope_records(memory, user_id=QUARANTINE_PREFIX + "alice")
    assert list(hidden.values()) == [RECORDED["derived"]]

    again = apply_patch(patch, Mem0Memory(memory, "user_id=alice"))
    assert (again.applied, len(again.already)) == ([], 4)
    assert scope_records(memory, **ALICE) == active

    restore = MemoryPatch.model_validate({
        "task_id": "conv-alice", "run_id": "r2", "operations": [
            {"op": "restore", "memory_id": ids["derived"],
             "expected_content": RECORDED["derived"]}]})
    assert apply_patch(restore, Mem0Memory(memory, ALICE)).applied == [
        f"restore {ids['derived']}"]
    assert Mem0Memory(memory, ALICE).get(ids["derived"]) == RECORDED["derived"]  # mapped
    restored = memory.get_all(filters={**ALICE, "provrepair_id": ids["derived"]})["results"]
    assert [r["metadata"]["topic"] for r in restored] == ["derived"]  # what the agent filters on
    assert scope_records(memory, user_id=QUARANTINE_PREFIX + "alice") == {}


def test_recording_memory_records_what_the_loader_reads(
        seeded: tuple[Any, dict[str, str]]) -> None:
    memory, ids = seeded
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    agent = RecordingMemory(memory, provider, scope="user_id=alice")
    with provider.get_tracer("agent").start_as_current_span("invoke_agent") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.conversation.id", "conv-alice")
        hits = agent.search("where to ship", filters=ALICE, top_k=2)["results"]
        added = agent.add("ship the order to 9 Wrong Rd", user_id="alice", infer=False)
        new_id = added["results"][0]["id"]
        agent.update(ids["upd"], text="home airport: SJC")
        agent.delete(ids["keep"])
        assert agent.get(new_id)["memory"] == "ship the order to 9 Wrong Rd"
        assert len(agent.get_all(filters=ALICE)["results"]) == 4
        assert agent.history(new_id)  # not recorded: mem0's own, through the wrapper
    [case] = cases_from_spans([span_of(s) for s in exporter.get_finished_spans()])
    assert case.memory_namespace == "user_id=alice"
    assert [s.step_type for s in case.trace] == [
        "memory_read", "memory_write", "memory_update", "memory_delete", "memory_read",
        "memory_read"]
    assert case.trace[0].used_ids == [h["id"] for h in hits]
    by_agent_id = {m.record_id or m.memory_id: m for m in case.memory_store if m.status == "active"}
    assert by_agent_id[new_id].content == "ship the order to 9 Wrong Rd"
    assert by_agent_id[ids["upd"]].content == "home airport: SJC"
    assert ids["keep"] not in by_agent_id
    provider.shutdown()


def test_an_async_memory_is_recorded_the_same_way(tmp_path: Path, endpoint: str) -> None:
    from mem0 import AsyncMemory

    from tests.mem0_memory import mem0_config

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    memory = AsyncMemory.from_config(mem0_config(tmp_path / "async", endpoint))
    agent = RecordingMemory(memory, provider, conversation_id="conv-async")

    async def run() -> str:
        added = await agent.add("prefers aisle seats", user_id="alice", infer=False)
        found = await agent.search("seats", filters=ALICE)
        assert [r["memory"] for r in found["results"]] == ["prefers aisle seats"]
        return str(added["results"][0]["id"])
    record_id = asyncio.run(run())
    close_memory(memory)
    [case] = cases_from_spans([span_of(s) for s in exporter.get_finished_spans()])
    assert (case.task_id, case.memory_namespace) == ("conv-async", "user_id=alice")
    assert [(s.step_type, s.used_ids[-1:]) for s in case.trace] == [
        ("memory_write", []), ("memory_read", [record_id])]
    provider.shutdown()


def test_scopes_are_checked() -> None:
    assert parse_scope("user_id=alice/agent_id=shop") == {"user_id": "alice", "agent_id": "shop"}
    for bad in ("alice", "user_id=", "user_id=a b", "user_id=a/user_id=b", "org_id=x"):
        with pytest.raises(ConfigError, match="a mem0 scope is user_id=ID"):
            parse_scope(bad)


def test_a_run_killed_between_two_writes_converges_when_run_again(
        seeded: tuple[Any, dict[str, str]], tmp_path: Path, endpoint: str) -> None:
    """An applier opening the memory from its config as `provrepair apply --to mem0:CONFIG` does
    (a forked process), killed (a real SIGKILL) after a quarantine copied the record and
    before it deleted the original: the fault is gone, the record is in both scopes. The
    next apply finds the delete in effect, finishes the move without a second copy and
    applies the rest: the memory of one clean apply."""
    memory, ids = seeded
    close_memory(memory)  # the agent stopped: a local Qdrant admits one process
    config = write_config(tmp_path, endpoint)
    patch_json = the_patch(ids).model_dump_json()
    child = multiprocessing.get_context("fork").Process(
        target=_apply, args=(str(config), patch_json, "mem0_quarantine_copied"))
    child.start()
    child.join(timeout=120)
    assert child.exitcode == -signal.SIGKILL
    half = open_memory(tmp_path, endpoint)
    assert set(scope_records(half, **ALICE)) == {ids["derived"], ids["upd"], ids["keep"]}
    assert list(scope_records(half, user_id=QUARANTINE_PREFIX + "alice").values()) == [
        RECORDED["derived"]]
    close_memory(half)

    saved = tmp_path / "patch.json"  # the next apply: the console script, as a user runs it
    saved.write_text(patch_json)
    done = subprocess.run([str(Path(sys.executable).with_name("provrepair")), "apply",
                           "--patch", str(saved), "--to", f"mem0:{config}",
                           "--namespace", "user_id=alice", "--json"],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PROVREPAIR_URI": "bolt://127.0.0.1:9"})
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["already_applied"] == [f"delete {ids['bad']}"]
    assert result["applied"] == [f"quarantine {ids['derived']}", f"put {ids['upd']}",
                                 "add m_n007"]
    after = open_memory(tmp_path, endpoint)
    try:
        assert sorted(scope_records(after, **ALICE).values()) == sorted(
            ["home airport: OAK", RECORDED["keep"], "label for 1 Elm St"])
        assert list(scope_records(after, user_id=QUARANTINE_PREFIX + "alice").values()) == [
            RECORDED["derived"]]  # one copy, not two
    finally:
        close_memory(after)


def _apply(config: str, patch_json: str, kill_at: str) -> ApplyResult:
    install(EnvironmentCheckpoints(kill_at, None, None))
    memory = open_memory_store(Target(f"mem0:{config}", ("user_id=alice",)))
    try:
        return apply_patch(parse_patch(patch_json), memory)
    finally:
        memory.close()


def test_the_cli_names_a_bad_mem0_target_in_one_line(tmp_path: Path) -> None:
    saved = tmp_path / "patch.json"
    saved.write_text(the_patch({k: k for k in RECORDED}).model_dump_json())
    exe = str(Path(sys.executable).with_name("provrepair"))
    config = tmp_path / "mem0.json"
    config.write_text(json.dumps({"vector_store": {"provider": "qdrant",
                                                   "config": {"path": str(tmp_path / "no")}}}))
    remote = tmp_path / "remote.json"  # port 9 (discard): nothing listens
    remote.write_text(json.dumps({
        "vector_store": {"provider": "qdrant", "config": {"host": "127.0.0.1", "port": 9}},
        "embedder": {"provider": "openai", "config": {
            "api_key": "k", "openai_base_url": "http://127.0.0.1:9/v1"}}}))
    for args, error in (
            (["--to", f"mem0:{tmp_path / 'none.json'}", "--namespace", "user_id=alice"],
             "ConfigError: mem0:"),
            (["--to", f"mem0:{config}", "--namespace", "alice"],
             "ConfigError: --namespace 'alice': a mem0 scope is user_id=ID"),
            (["--to", f"mem0:{config}", "--namespace", "user_id=alice"],
             "TargetMismatch: mem0:"),
            (["--to", f"mem0:{config}", "--namespace", "user_id=alice//run_id=r"],
             "ConfigError: --namespace 'user_id=alice//run_id=r' has an empty part"),
            # a vector store server that does not answer: qdrant's own exception
            (["--to", f"mem0:{remote}", "--namespace", "user_id=alice"],
             "TargetMismatch: mem0:")):
        done = subprocess.run([exe, "apply", "--patch", str(saved), *args],
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PROVREPAIR_URI": "bolt://127.0.0.1:9"})
        assert done.returncode == 2 and done.stderr.startswith(error), done.stderr
        assert len(done.stderr.splitlines()) == 1


def test_an_inferring_add_depends_on_the_records_mem0_showed_its_model(tmp_path: Path) -> None:
    """mem0's extraction (infer=True, its default) is shown the scope's existing records: the
    record it writes is affected by a poisoned record already there, with the agent's
    evidence (another record) or without."""
    from provrepair.benchmark.reference import plan_in_memory

    double = ChatDouble(script=[Reply(json.dumps({"memory": [{"text": text}]}))
                                for text in ("ships to 9 Wrong Rd", "label: 9 Wrong Rd")])
    memory = open_memory(tmp_path, double.start())
    try:
        bad, keep = (memory.add(RECORDED[k], **ALICE, infer=False)["results"][0]["id"]
                     for k in ("bad", "keep"))
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        agent = RecordingMemory(memory, provider, conversation_id="conv-infer")
        written = [str(agent.add("where do I ship?", **ALICE)["results"][0]["id"])]
        with agent.evidence([keep]):
            written.append(str(agent.add("print a label", **ALICE)["results"][0]["id"]))
        provider.shutdown()
    finally:
        close_memory(memory)
        double.stop()
    [case] = cases_from_spans([span_of(s) for s in exporter.get_finished_spans()])
    assert [s.step_type for s in case.trace] == ["memory_read", "memory_write"] * 2
    hit = set(plan_in_memory(case, [bad])["affected_ids"])
    assert {m.memory_id for m in case.memory_store if m.record_id in written
            or m.memory_id in written} <= hit and len(written) == 2
