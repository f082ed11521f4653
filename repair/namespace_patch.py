"""`provrepair patch --namespace NS`: one memory patch for the shared store a namespace repair
repaired (issue 37), in the format every applier takes (`provrepair.memory-patch/2`,
repair/patch.py).

It merges the memory patch of every conversation the namespace run repaired
(repair/patch.py `memory_patch`, each the net change of its committed runs) into ONE operation
per agent record, whatever order the conversations were repaired in: the merge depends only
on which conversation's patch holds which operation and on the conversations' time order.

- A record some repair rewrote (`put`, `add`, `restore`) ends as the latest conversation (in
  time order) rewrote it: later conversations read the earlier rewrites (the namespace repair
  carries them, repair/namespace_repair.py), so theirs is the newest state; its
  `expected_content` is what that conversation recorded the store holding.
- A later conversation that deleted the record as an earlier one rewrote it (its replay
  deleted the rewrite it read) deletes it.
- Else a record one conversation deletes is deleted (the fault itself: deleted wherever a
  conversation recorded it), else a quarantined one is quarantined.
- `kept`: the records some patch keeps and none changes.

A run not finished (a conversation waits for a person, or was not reached yet) is refused,
naming the conversations not repaired: their patches would be missing from the merge.

`task_id` names the namespace (`namespace:<NS>`), `runs` every conversation's repair run, and
`run_id` the namespace run. Apply it like a task's patch: `provrepair patch --namespace NS >
patch.json; provrepair apply --patch patch.json --to langgraph-sqlite:agent.db --namespace NS`.
"""

from __future__ import annotations

from typing import Any

from provrepair.provenance.errors import NotRepaired
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.namespace_repair import GOES_ON, list_namespace_runs
from provrepair.repair.patch import OP_ORDER, MemoryPatch, memory_patch
from provrepair.repair.plan.model import NamespacePlan

REWRITES = ("put", "add", "restore")
REMOVALS = ("delete", "quarantine")  # the stronger first


def namespace_patch(store: GraphStore, namespace: str, run_id: str | None = None) -> MemoryPatch:
    """The merged patch of the namespace's latest repair run (or of `run_id`)."""
    runs = list_namespace_runs(store, namespace)
    if run_id is not None:
        runs = [r for r in runs if r["run_id"] == run_id]
    repaired = [r for r in runs if r["conversations"]]
    if not repaired:
        which = f"run {run_id!r}" if run_id else "namespace repair"
        raise NotRepaired(f"memory namespace {namespace!r} has no {which} that repaired a "
                          f"conversation: run `provrepair repair --namespace {namespace} "
                          "--faults ...` first")
    run = repaired[-1]
    plan = NamespacePlan.model_validate(run["plan"])
    waiting = [c.task_id for c in plan.conversations
               if (run["conversations"].get(c.task_id) or {}).get("status") not in GOES_ON]
    if waiting:  # a patch of part of the run would carry the fault on in the others
        raise NotRepaired(
            f"memory namespace {namespace!r}: run {run['run_id']} is {run['status']}: "
            f"conversation(s) {', '.join(waiting)} not repaired yet; finish it (`provrepair "
            f"repair --namespace {namespace} --faults {','.join(run['faults'])}`, with "
            "--approve/--skip for a conversation waiting for a person) before patching")
    patches = [memory_patch(store, c.task_id) for c in plan.conversations
               if (run["conversations"].get(c.task_id) or {}).get("run_id")]
    return merge_patches(f"namespace:{namespace}", run["run_id"], patches, namespace)


def merge_patches(name: str, run_id: str, patches: list[MemoryPatch],
                  namespace: str | None = None) -> MemoryPatch:
    """One operation per agent record from per-conversation patches given in time order."""
    chosen: dict[str, Any] = {}
    for patch in patches:  # time order: a later rewrite replaces an earlier one
        for op in patch.operations:
            old = chosen.get(op.memory_id)
            if old is None or _wins(op, old):
                chosen[op.memory_id] = op
    # a record no patch changes, with the content the latest conversation recorded it holding
    kept_by_id = {k.memory_id: k for p in patches for k in p.kept if k.memory_id not in chosen}
    kept = [kept_by_id[k] for k in sorted(kept_by_id)]
    operations = sorted(chosen.values(), key=lambda o: (OP_ORDER.index(o.op), o.memory_id))
    runs = list(dict.fromkeys(r for p in patches for r in p.runs))
    return MemoryPatch(task_id=name, run_id=run_id, runs=runs, kept=kept,
                       memory_namespace=namespace, operations=operations)


def _wins(new: Any, old: Any) -> bool:
    """Whether a later conversation's op replaces the one chosen so far for a record."""
    if new.op == "delete" and old.op in REWRITES and new.expected_content == _content(old):
        return True  # it read the earlier rewrite (carried) and its replay deleted it
    if new.op in REWRITES:  # the latest rewrite is the record's state; one with the content
        # chosen already is the record a later conversation carried: the writer's op names it
        return old.op not in REWRITES or _content(new) != _content(old)
    if old.op in REWRITES:
        return False
    return REMOVALS.index(new.op) < REMOVALS.index(old.op)


def _content(op: Any) -> str | None:
    return getattr(op, "content", None) or getattr(op, "expected_content", None)
