"""One fault across conversations recorded by the agent itself (issue 37): a real LangGraph
store read and written through the recording wrapper (integrations/langgraph.py), each
conversation its own Recorder (two of them open at once) or its own OpenTelemetry trace into
the live capture; and a transcript reading what a recorded conversation wrote. The namespace
plan tells which version each conversation read by its content, whatever clock each
recording stamps its reads with: an ordinary write-then-read is followed, a snapshot read
before another conversation's fresh re-write is reached through the version it read, and
what read the re-write is not. On both engines."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from langgraph.store.memory import InMemoryStore

from provrepair import Recorder
from provrepair.integrations.langgraph import RecordingStore
from provrepair.loaders.openai_messages import transcript_case
from provrepair.loaders.otel_live import ProvrepairSpanExporter
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.plan.namespace import plan_namespace

NS = ("memories", "alice")


class Conversation:
    """One conversation of the agent: its Recorder, its recorded view of the shared store."""

    def __init__(self, rec: Recorder, agent_store: Any, asked: int):
        self.rec, self.store = rec, RecordingStore(agent_store, rec, namespace=NS)
        rec.user_input(input_id="u1", turn=1, content="plan my trip", timestamp=asked)

    def read(self, key: str) -> str:
        item = self.store.get(NS, key)
        assert item is not None
        return str(item.value["content"])

    def write(self, key: str, content: str, evidence: list[str]) -> None:
        with self.store.evidence(evidence):
            self.store.put(NS, key, {"content": content})

    def think(self, at: int) -> None:
        """A step of the agent's own at `at` (its clock: what the wrapper stamps after)."""
        self.rec.step(step_id=f"plan_{at}", step_type="plan", content="think",
                      used_ids=["u1"], prev_step_ids=[], next_step_ids=[],
                      invalidated_memory_ids=[], generated_memory_ids=[], timestamp=at,
                      turn=1)

    def answer(self, text: str) -> None:
        cited = self.store.last_step_id
        assert cited is not None
        self.rec.step(step_id="answer", step_type="final_answer", content=text,
                      used_ids=[cited], prev_step_ids=[cited], next_step_ids=[],
                      invalidated_memory_ids=[], generated_memory_ids=[],
                      timestamp=(self.rec.clock or 0) + 1, turn=1)


@contextmanager
def conversations(store: GraphStore, asked: dict[str, int]) -> Iterator[dict[str, Conversation]]:
    """Conversations open at once over one agent store, each asked at its time."""
    agent_store = InMemoryStore()
    with ExitStack() as stack:
        yield {task: Conversation(stack.enter_context(Recorder(store, task)), agent_store, t)
               for task, t in asked.items()}


def test_a_snapshot_read_before_a_fresh_rewrite_is_reached(store: GraphStore) -> None:
    times = {"c1": 100, "c2": 200, "c3": 300, "c4": 400, "c6": 410, "c7": 500}
    with conversations(store, times) as c:
        c["c1"].write("home", "home city: Lyon", [])          # the fault
        c["c1"].answer("noted")
        c["c2"].write("trip", f"fly to {c['c2'].read('home')[11:]}", ["home"])
        c["c2"].answer("booked")
        c["c3"].answer(c["c3"].read("trip"))                  # an ordinary write-then-read
        # c6 (asked after c4 started) read the trip before c4 wrote it afresh
        stale = c["c6"].read("trip")
        c["c4"].write("trip", "fly to Lisbon", [])            # from nothing it read
        c["c4"].answer("rebooked")
        c["c6"].answer(stale)
        c["c7"].answer(c["c7"].read("trip"))                  # the re-write: clean
    plan, _ = plan_namespace(store, "memories/alice", ["home"])
    assert [x.task_id for x in plan.conversations] == ["c1", "c2", "c3", "c6"]
    assert [a.task_id for a in plan.affected_answers] == ["c1", "c2", "c3", "c6"]
    assert [(x.from_task, x.record_id) for x in plan.conversations[3].reached_by] == [
        ("c2", "trip")]
    assert plan_namespace(store, "memories/alice", ["home"], speculate=False)[0] == plan


def test_a_conversation_asked_before_the_writer_is_reached(store: GraphStore) -> None:
    # c0 was asked first and read the trip after c2 wrote it from the fault
    with conversations(store, {"c0": 50, "c1": 100, "c2": 200}) as c:
        c["c1"].write("home", "home city: Lyon", [])
        c["c1"].answer("noted")
        c["c2"].write("trip", f"fly to {c['c2'].read('home')[11:]}", ["home"])
        c["c2"].answer("booked")
        c["c0"].think(300)  # its read came after c2's write
        c["c0"].answer(c["c0"].read("trip"))
    plan, trace = plan_namespace(store, "memories/alice", ["home"])
    assert [x.task_id for x in plan.conversations] == ["c0", "c1", "c2"]
    assert [a.task_id for a in plan.affected_answers] == ["c0", "c1", "c2"]
    assert trace.walks == 2


def test_a_traced_conversation_reading_a_record_rewritten_since_it_read_it_is_reached(
        store: GraphStore) -> None:
    # OpenTelemetry spans into the live capture: c wrote the note clean; r read it; a wrote
    # it again from the fault; r read it again (a's version: its trace holds the text it
    # got, not its earlier copy) and built a plan on it; d read the plan.
    agent_store = InMemoryStore()
    agent_store.put(NS, "home", {"content": "home city: Lyon"})
    exporter = ProvrepairSpanExporter(store)
    c, r, a, d = (RecordingStore(agent_store, exporter, namespace=NS, conversation_id=t)
                  for t in "crad")
    c.put(NS, "note", {"content": "note: clean"})
    r.get(NS, "note")
    home = a.get(NS, "home")
    assert home is not None
    a.put(NS, "note", {"content": "note from " + home.value["content"]})
    again = r.get(NS, "note")
    assert again is not None
    r.put(NS, "plan", {"content": "plan for " + again.value["content"]})
    d.get(NS, "plan")
    exporter.shutdown()
    assert exporter.errors == []
    plan, _ = plan_namespace(store, "memories/alice", ["home"])
    assert {x.task_id for x in plan.conversations} == {"a", "r", "d"}


def test_a_transcript_reading_what_a_recorded_conversation_wrote_is_reached(
        store: GraphStore) -> None:
    # a (the Recorder, an epoch clock) writes a structured note from the fault; t, a
    # transcript (no clock: its messages only ordered), read it: one version, whatever
    # rendering or clock each recording has.
    agent_store = InMemoryStore()
    agent_store.put(NS, "home", {"content": "home city: Lyon"})
    with Recorder(store, "a") as rec:
        rec.user_input(input_id="u1", turn=1, content="note it", timestamp=1_700_000_000_000)
        recorded = RecordingStore(agent_store, rec, namespace=NS)
        home = recorded.get(NS, "home")
        assert home is not None
        recorded.put(NS, "note", {"content": {"city": home.value["content"][11:], "n": 1}})
    note = agent_store.get(NS, "note")
    assert note is not None
    ingest_case(store, transcript_case({
        "task_id": "t", "memory_namespace": "memories/alice",
        "messages": [{"role": "user", "content": "where do I live?"},
                     {"role": "assistant", "content": "Lyon"}],
        "memory_events": [{"after": -1, "op": "search",
                           "records": [{"id": "note", "content": note.value["content"]}]}]},
        "t"))
    plan, _ = plan_namespace(store, "memories/alice", ["home"])
    assert [(x.task_id, x.started_at, x.answer_affected) for x in plan.conversations] == [
        ("a", 1_700_000_000_000, False), ("t", None, True)]
