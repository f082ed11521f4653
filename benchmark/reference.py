"""Reference repair planner: docs/method.md §1-§4 in plain Python sets and BFS, in memory.

An independent oracle for the real (Cypher) planner, shipped so that tests and benchmarks
(and users who want to cross-check a plan) can run it: written straight from the method,
without reading the rest of `repair/plan/`, and sharing no code with it. Every step names the
clause it implements; every ambiguity the method leaves open is resolved in a `# CHOICE:`
comment with its reason.

Conventions: ts(v) is a step's `timestamp`, a memory's `created_at`, a user input's `timestamp`;
"trace position" is the index in `case.trace`; "earliest" orders steps by (ts, trace position).
"""

from __future__ import annotations

from collections import defaultdict, deque
from typing import Any

from provrepair.provenance.edges import derive_edges
from provrepair.provenance.errors import CaseError
from provrepair.provenance.models import Case
from provrepair.provenance.vocab import EdgeLabel as L

# Preamble: E_prop; CHAIN is deliberately absent ("coming later is not evidence").
E_PROP = frozenset({L.INITIATE, L.CITE, L.SUPPORT, L.PRODUCE, L.DELETE, L.UPDATE, L.CONSOLIDATE,
                    L.SUPERSEDE, L.DERIVE})
MUTATION_LABELS = frozenset({L.DELETE, L.UPDATE, L.CONSOLIDATE})      # §1.1
SUPPORT_LABELS = frozenset({L.SUPPORT, L.CITE, L.DERIVE, L.SUPERSEDE})  # §3 Pred_sup
MUTATION_STEPS = frozenset({"memory_write", "memory_delete", "memory_update", "memory_consolidate"})
CHECKABLE_STEPS = frozenset({"claim", "plan", "final_answer"}) | MUTATION_STEPS  # §3


def plan_in_memory(case: Case, faults: list[str] | None = None) -> dict[str, Any]:
    """The rollback plan of docs/method.md §4 for `case` (F = `faults` if given)."""
    F = set(case.diagnosed_faults if faults is None else faults)
    if not F:  # §4 last line: an empty F is a user error
        raise CaseError(case.task_id, "diagnosed_faults", None, "empty: there is nothing to repair")
    inputs = {u.input_id: u for u in case.session}
    mems = {m.memory_id: m for m in case.memory_store}
    steps = {s.step_id: s for s in case.trace}
    for m in sorted(F):
        if m not in mems:
            raise CaseError(case.task_id, "diagnosed_faults", m, "does not name a memory")
    pos = {s.step_id: i for i, s in enumerate(case.trace)}
    ts = {**{u: x.timestamp for u, x in inputs.items()}, **{m: x.created_at for m, x in mems.items()},
          **{s: x.timestamp for s, x in steps.items()}}

    def earliest(step_ids: set[str]) -> str:
        return min(step_ids, key=lambda s: (ts[s], pos[s]))

    def stype(v: str) -> str | None:
        return steps[v].step_type.value if v in steps else None

    edges = derive_edges(case)
    succ: dict[str, set[str]] = defaultdict(set)               # E_prop, forward
    pred: dict[str, set[tuple[str, L]]] = defaultdict(set)     # E_prop, backward, with label
    sufficient_preds: dict[str, set[str]] = defaultdict(set)   # §3 Pred_sup
    for e in edges:
        if e.label in E_PROP:
            succ[e.src].add(e.dst)
            pred[e.dst].add((e.src, e.label))
        if e.label in SUPPORT_LABELS and e.sufficient:  # SUPERSEDE edges carry sufficient=True
            sufficient_preds[e.dst].add(e.src)

    def producers(m: str) -> set[str]:
        return {p for p, label in pred[m] if label == L.PRODUCE}

    def generating_actions(o: str) -> set[str]:  # §3: actions in prev_step_ids or used_ids
        s = steps[o]
        return {a for a in [*s.prev_step_ids, *s.used_ids] if stype(a) == "tool_action"}

    def controlling_plans(a: str) -> set[str]:  # §3: plan steps in the action's used_ids
        return {p for p in steps[a].used_ids if stype(p) == "plan"}

    # §1 Seed resolution: failed mutation > producer > m itself.
    seeds: dict[str, str] = {}
    for m in sorted(F):
        # m -[DELETE|UPDATE|CONSOLIDATE]-> s exists only for delete/update/consolidate steps
        # (edges.py); the mutation "failed" when m is still active.
        failed = {e.dst for e in edges if e.src == m and e.label in MUTATION_LABELS}
        if failed and mems[m].status == "active":
            # CHOICE: ties on ts broken by trace position (brief; spec says only "by ts").
            seeds[m] = earliest(failed)
        elif producers(m):
            # CHOICE: several producers (spec expects one): the earliest by (ts, position).
            seeds[m] = earliest(producers(m))
        else:
            seeds[m] = m

    # §2 Affected candidates: A0 = ∪_m ({m, r(m)} ∪ Reach_m(r(m)) ∪ Reach_m(m)).
    def reach(start: str, t_r: int) -> set[str]:
        """Forward over E_prop, entering v only if ts(v) >= t_r (earlier nodes are neither
        entered nor traversed through). The start node itself is not filtered."""
        seen: set[str] = set()
        todo = deque([start])
        while todo:
            for v in succ[todo.popleft()]:
                if v not in seen and ts[v] >= t_r:
                    seen.add(v)
                    todo.append(v)
        return seen

    A0: set[str] = set()
    for m, r in seeds.items():
        t_r = ts[r]
        # CHOICE: m and r(m) are in A0 unconditionally, even when ts(m) < t_r (stale record).
        A0 |= {m, r} | reach(r, t_r) | reach(m, t_r)

    # §3 Independent-support check, verdicts computed once against A0 (no mutual validation).
    FA0 = F | A0

    def admissible(p: str, v: str) -> bool:
        if p in inputs:
            # CHOICE: a memory has no turn, so a user input is never admissible for a
            # derived-memory candidate (moot today: no edge type runs input → memory).
            return v in steps and inputs[p].turn == steps[v].turn
        if p in mems:
            return mems[p].status == "active"
        return (stype(p) == "tool_observation" and steps[p].status == "ok") or stype(p) == "claim"

    checkable = {v for v in A0 - F
                 if stype(v) in CHECKABLE_STEPS
                 or (v in mems and mems[v].status == "active" and mems[v].derived_from)}
    # Step candidates: sufficient SUPPORT/CITE preds; derived memories: sufficient DERIVE/
    # SUPERSEDE preds. Only those labels enter steps resp. memories, so one rule covers both.
    supported = {v for v in checkable
                 if any(admissible(p, v) and p not in FA0 for p in sufficient_preds[v])}

    def inherits(v: str, controllers: set[str], verdicts: set[str]) -> bool:
        """§3: every controller in A0 supported, at least one such, and no other used id in F∪A0.
        CHOICE: "at least one is" = at least one controller is in A0 and supported (only A0
        nodes have verdicts), so an affected action with no controlling plan in A0 is
        unsupported."""
        in_a0 = controllers & A0
        direct = {u for u in steps[v].used_ids if u not in controllers}
        return bool(in_a0) and in_a0 <= verdicts and not direct & FA0

    actions_ok = {a for a in A0 if stype(a) == "tool_action"
                  and inherits(a, controlling_plans(a), supported)}
    obs_ok = {o for o in A0 if stype(o) == "tool_observation"
              and inherits(o, generating_actions(o), actions_ok)}
    P_sup = supported | actions_ok | obs_ok
    A = A0 - P_sup

    # §4 Rollback plan.
    M_del = set(F)
    M_quar = {v for v in A if v in mems and mems[v].status == "active"} - F
    removed = M_del | M_quar
    V_inv = {v for v in A if v in steps}
    grew = True
    while grew:  # closed under plan → its actions → their observations
        before = len(V_inv)
        for s in case.trace:
            sid = s.step_id
            if stype(sid) == "tool_action" and controlling_plans(sid) & V_inv:
                V_inv.add(sid)
            if stype(sid) == "tool_observation" and generating_actions(sid) & V_inv:
                V_inv.add(sid)
        grew = len(V_inv) > before

    finals = {s.step_id for s in case.trace if s.step_type == "final_answer"}
    v_final = max(finals, key=lambda s: (ts[s], pos[s])) if finals else None
    A_ans: set[str] = set()
    if v_final is not None:  # reverse BFS from v_final over E_prop in G⁻ (removed nodes cut)
        reaches = {v_final}
        todo = deque([v_final])
        while todo:
            for p, _ in pred[todo.popleft()]:
                if p not in removed and p not in reaches:
                    reaches.add(p)
                    todo.append(p)
        A_ans = V_inv & reaches
    S_seed = {r for r in seeds.values() if r in steps}

    def replayable(v: str) -> set[str]:
        """An observation is never replayed: it stands for its generating action(s).
        CHOICE: all generating actions, whether or not in V_inv (re-running the action is the
        only way to refresh the observation); an observation without one maps to nothing."""
        return generating_actions(v) if stype(v) == "tool_observation" else {v}

    # CHOICE: the start nodes A_ans ∪ {v_final} ∪ S_seed are always replayed (after mapping an
    # observation to its actions), even when supported or outside V_inv (rules 6, 7 beat 3).
    # Rule 8, beyond the spec (docs/method.md §4, "Quarantined records are rewritten"): the
    # producer of every quarantined record is replayed too, so the record is rewritten from
    # the repaired context, not only withdrawn. CHOICE: producers = PRODUCE predecessors.
    rewrite = {p for m in M_quar for p in producers(m)}
    start = A_ans | S_seed | rewrite | ({v_final} if v_final else set())
    todo = deque(sorted(x for v in start for x in replayable(v)))
    V_replay: set[str] = set()
    while todo:
        x = todo.popleft()
        if x in V_replay:
            continue
        V_replay.add(x)
        # Direct predecessors over E_prop. The plan → action link is the CITE edge (controlling
        # plans are in used_ids); the action → observation link is `replayable`.
        for p, label in pred[x]:
            if p in V_inv:
                todo.extend(replayable(p))
            elif p in removed and label == L.SUPPORT:  # (inactive records are not "removed")
                # Pass through a removed memory the closure node reads to its producers in V_inv.
                # CHOICE: "reads" = a SUPPORT edge (used_ids), not DELETE/UPDATE/CONSOLIDATE; one
                # hop only (memory → producer), no walk along DERIVE/SUPERSEDE between memories.
                todo.extend(x2 for q in producers(p) & V_inv for x2 in replayable(q))

    replayed_obs = {o for o in steps if stype(o) == "tool_observation"
                    and generating_actions(o) & V_replay}
    return {
        "delete_memory_ids": sorted(M_del),
        "quarantine_memory_ids": sorted(M_quar),
        "invalidate_claim_ids": sorted(V_inv),
        "replay_step_ids": sorted(V_replay, key=lambda s: pos[s]),
        "preserve_step_ids": sorted(set(steps) - V_inv - V_replay),
        "redundant_step_ids": [],
        "suspicious_step_ids": sorted(V_inv - V_replay - replayed_obs),
        "seeds": dict(sorted(seeds.items())),
        "affected_ids": sorted(A0),
        "supported_ids": sorted(P_sup),
        "answer_relevant_ids": sorted(A_ans),
    }
