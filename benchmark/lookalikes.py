"""What the echo sweep must tell apart (issue 39): copies of a fault's value, and benign
records that look like them. Added to every generated case after its gold labels, so the
sweep's precision and recall are measured per kind, and a sweep that took a look-alike for a
copy would quarantine a benign record (benign preservation can fall below 1).

Per diagnosed fault, each with its own id prefix and labelled in the fault's manifest entry
(`copies` and `lookalikes`: [{"id", "kind"}]; `metrics.sweep_kinds` reads them):

copies (the sweep should report them; none is reachable by a recorded edge)
    exact          the fault's record copied whole, m_e… (fidelity.py's echoes: chance 1 − F)
    case_variant   half of those echoes (drawn per echo), in other letter case and spacing:
                   "SAVED  OPTION  F0710:  $348.92" — the same number of echoes as before,
                   so the benchmark is no harder for methods without the sweep
    free_text      the fault's content as a note with no structured fact, m_t… (chance 1 − F;
                   the reasoner looks values up by entity and key, so it never reads one)
benign look-alikes (the sweep should not; always present)
    independent    the fault's content as the user stated it: a memory write in turn 1 cites
                   a user input saying so, m_i… (u_i…, s_i…); at F < 1 the recorder loses that
                   citation with chance 1 − F, as fidelity.py's recall errors do
    substring      the fault's content with its last token run on ("$500" → "$5000",
                   "economy" → "economyish"): contains it, but not as whole tokens, m_s…
another conversation of the same memory namespace (`sibling_case`, built at run time)
    namespace_echo         the fault's record copied there (report it), m_o…
    namespace_independent  the fault's content stated by that conversation's user (do not)

Every record added is active (a copy of a superseded fault still carries its value).
Copies and look-alikes are memory records the agent never reads at generation time; replay
reads what the recorded steps read (a copy the reasoner finds by entity and key is read
again, as fidelity.py's echoes are). Draws come from the case's own "lookalikes" stream, so
the other draws of a case are those of earlier releases.
"""

from __future__ import annotations

import random
import re
from typing import Any

from provrepair.provenance.models import Case, ExecutionStep, FaultManifestEntry, MemoryRecord, UserInput
from provrepair.provenance.vocab import MemorySource, MemoryStatus, StepType

COPY_KINDS = ("exact", "case_variant", "free_text")
BENIGN_KINDS = ("independent", "substring")
NAMESPACE_KINDS = ("namespace_echo", "namespace_independent")
KINDS = (*COPY_KINDS, *BENIGN_KINDS, *NAMESPACE_KINDS)
ECHO_PREFIX = "m_e"  # fidelity.py's exact echoes
SAY = "For the record: {}"


def with_lookalikes(case: Case, faults: list[str], fidelity: float, rng: random.Random) -> Case:
    """The case with the copies and look-alikes of each fault, labelled in its manifest;
    the benign ones join `benign_memory_ids`."""
    assert case.evaluation is not None
    p = 1.0 - fidelity
    records = {m.memory_id: m for m in case.memory_store}
    echoes = {m.content: m.memory_id for m in case.memory_store
              if m.memory_id.startswith(ECHO_PREFIX)}
    variants: dict[str, MemoryRecord] = {}
    added: list[MemoryRecord] = []
    inputs: list[UserInput] = []
    steps: list[ExecutionStep] = []
    labels: dict[str, dict[str, list[dict[str, str]]]] = {}
    turn_end = max(s.timestamp for s in case.trace if s.turn == 1)
    for i, fault_id in enumerate(f for f in faults if f in records):
        fault = records[fault_id]
        u_variant, u_text, u_cite = rng.random(), rng.random(), rng.random()
        copies = []
        echo = records.get(echoes.get(fault.content, ""))
        if echo is not None and echo.status is MemoryStatus.ACTIVE:  # an inactive one is inert
            if u_variant < 0.5:
                variants[echo.memory_id] = echo.model_copy(update={
                    "content": _variant(echo.content), "fact_value": _variant(echo.fact_value)})
            copies.append({"id": echo.memory_id,
                           "kind": "case_variant" if u_variant < 0.5 else "exact"})
        if u_text < p:
            added.append(_copy(fault, f"m_t{i:03d}", entity_id=None, fact_key=None,
                               fact_value=None))
            copies.append({"id": added[-1].memory_id, "kind": "free_text"})
        said = UserInput(input_id=f"u_i{i:03d}", task_id=case.task_id, turn=1,
                         content=SAY.format(fault.content), timestamp=turn_end + 2 * i + 1)
        statement = _statement(fault, f"m_i{i:03d}", said, cited=u_cite >= p)
        inputs.append(said)
        steps.append(statement[0])
        added += [statement[1], _copy(fault, f"m_s{i:03d}", content=run_on(fault.content),
                                      entity_id=None, fact_key=None, fact_value=None)]
        labels[fault_id] = {"copies": copies, "lookalikes": [
            {"id": statement[1].memory_id, "kind": "independent"},
            {"id": added[-1].memory_id, "kind": "substring"}],
            "namespace": [{"id": f"m_o{2 * i:03d}", "kind": "namespace_echo"},
                          {"id": f"m_o{2 * i + 1:03d}", "kind": "namespace_independent"}]}
    benign = [m.memory_id for m in added if any(m.memory_id == x["id"] for v in labels.values()
                                                for x in v["lookalikes"])]
    evaluation = case.evaluation.model_copy(update={
        "benign_memory_ids": [*case.evaluation.benign_memory_ids, *benign],
        "fault_manifest": [_labelled(e, labels) for e in case.evaluation.fault_manifest]})
    last = max(i for i, s in enumerate(case.trace) if s.turn == 1)
    trace = [*case.trace[:last + 1], *steps, *case.trace[last + 1:]]
    session = sorted([*case.session, *inputs], key=lambda u: (u.turn, u.timestamp))
    store = [variants.get(m.memory_id, m) for m in case.memory_store]
    return case.model_copy(update={"memory_store": [*store, *added], "trace": trace,
                                   "session": session, "evaluation": evaluation})


def _labelled(entry: FaultManifestEntry, labels: dict[str, dict[str, Any]]) -> FaultManifestEntry:
    fault = entry.model_dump().get("faulty_id") or entry.target
    found = labels.get(str(fault))
    return entry if found is None else FaultManifestEntry.model_validate(
        {**entry.model_dump(), **found})


def _copy(fault: MemoryRecord, memory_id: str, **update: Any) -> MemoryRecord:
    """A record holding (a form of) the fault's value that no recorded edge reaches."""
    return fault.model_copy(update={
        "memory_id": memory_id, "derived_from": [], "sufficient_from": [], "supersedes": None,
        "last_modified_by": None, "fault_type": None, "last_modified_at": fault.created_at,
        "status": MemoryStatus.ACTIVE, **update})


def _statement(fault: MemoryRecord, memory_id: str, said: UserInput,
               cited: bool) -> tuple[ExecutionStep, MemoryRecord]:
    """The user's own statement of the fault's content, written to memory from their message
    (the citation lost when `cited` is False: a recall error of the recorder)."""
    step = ExecutionStep(
        step_id="s_i" + memory_id.removeprefix("m_i"), task_id=said.task_id,
        step_type=StepType.MEMORY_WRITE, content=fault.content, prev_step_ids=[],
        next_step_ids=[], invalidated_memory_ids=[], generated_memory_ids=[memory_id],
        used_ids=[said.input_id] if cited else [], timestamp=said.timestamp + 1, turn=1,
        derivation={"fn": "template", "args": {"text": fault.content, "bind": {}}})
    record = MemoryRecord(
        memory_id=memory_id, task_id=said.task_id, content=fault.content,
        source=MemorySource.USER_INPUT, last_modified_by=step.step_id,
        created_at=step.timestamp, last_modified_at=step.timestamp, derived_from=[],
        supersedes=None, status=MemoryStatus.ACTIVE)
    return step, record


def _variant(text: str | None) -> str | None:
    """The same words in other letter case and spacing ("Seat class: economy" →
    "SEAT CLASS:  ECONOMY"): what a normalised match must still find."""
    return None if text is None else "  ".join(text.upper().split(" "))


def run_on(text: str) -> str:
    """`text` with its last token run on: a number gets one more digit ("$500" → "$5000";
    a decimal "$12.99" → "$12.995"), a word a suffix ("economy" → "economyish")."""
    last = re.search(r"(\w+)\W*$", text)
    if last is None:
        return text + "ish"
    end = last.end(1)
    return text[:end] + ("0" if last.group(1).isdigit() and "." not in text[:end][-4:]
                         else "5" if last.group(1).isdigit() else "ish") + text[end:]


def sibling_case(case: Case, task_id: str) -> Case | None:
    """Another conversation of the case's memory (namespace look-alikes): for each fault
    labelled with them, a copy of its record (namespace_echo) and the fault's content as
    this conversation's user stated it, written from their message (namespace_independent).
    None when no fault is labelled."""
    assert case.evaluation is not None
    records = {m.memory_id: m for m in case.memory_store}
    inputs: list[UserInput] = []
    steps: list[ExecutionStep] = []
    memories: list[MemoryRecord] = []
    for entry in case.evaluation.fault_manifest:
        data = entry.model_dump()
        fault = records.get(str(data.get("faulty_id") or entry.target))
        labels = {x["kind"]: x["id"] for x in data.get("namespace", [])}
        if fault is None or not labels:
            continue
        ts = 10 * (len(inputs) + 1)
        said = UserInput(input_id=f"u_{len(inputs) + 1:03d}", task_id=task_id, turn=1,
                         content=SAY.format(fault.content), timestamp=ts)
        step, record = _statement(fault, labels["namespace_independent"], said, cited=True)
        step = step.model_copy(update={"step_id": f"s_{len(steps) + 1:03d}"})
        record = record.model_copy(update={"last_modified_by": step.step_id})
        echo = _copy(fault, labels["namespace_echo"], created_at=ts + 2, last_modified_at=ts + 2)
        inputs.append(said)
        steps.append(step)
        memories += [r.model_copy(update={"task_id": task_id}) for r in (echo, record)]
    if not memories:
        return None
    return Case(format="provrepair.case/1", task_id=task_id, domain=case.domain,
                session=inputs, memory_store=memories, trace=steps, diagnosed_faults=[])


def labelled(case: Case) -> dict[str, str]:
    """Record id → its kind, for every copy, look-alike and namespace record the case's
    manifest labels (empty for cases generated before issue 39)."""
    if case.evaluation is None:
        return {}
    out: dict[str, str] = {}
    for entry in case.evaluation.fault_manifest:
        data = entry.model_dump()
        for key in ("copies", "lookalikes", "namespace"):
            out.update({str(x["id"]): str(x["kind"]) for x in data.get(key, [])})
    return out
