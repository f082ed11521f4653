"""Why ours misses a case that "without selective replay" recovers (issue 31): for each such
case of a `bench sweep` run (read from its results.jsonl), the repair is rerun (dry run, the
same noisy reasoner) as ours, ours without early cutoff and the ablation, and the miss is put
down to one of:

    early cutoff      ours without early cutoff recovers it: a step kept unchanged by the
                      cutoff held what the answer needed differently (the steps named, with
                      whether their output asserts a diagnosed fault's value);
    replay set        ours without cutoff still misses it: a step outside ours' plan, which
                      the ablation replays, made the difference (the steps named, and the
                      records ours quarantined without rewriting them, whose writer the
                      ablation replays);
    not reproduced    the rerun does not miss it (ours recovers it, or the ablation does
                      not): the sweep's line came from other code than this.

    python bench/selective_misses.py --out DIR [--level 0.8] [--noise 0.05] [--json]

It works in its own scratch graph of the configured store (`provrepair bench clean` drops it).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from provrepair.benchmark.cases import GRAPH_PREFIX, BenchCase, load_cases, retask
from provrepair.benchmark.metrics import recovered
from provrepair.benchmark.noise import NoisyReasoner
from provrepair.benchmark.run import bench_store, parse_methods
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.models import Case, ExecutionStep
from provrepair.provenance.readback import read_case
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.validate import parse_case
from provrepair.repair.methods import MethodContext, get_method
from provrepair.repair.plan.model import RepairPlan
from provrepair.repair.reasoners import make_reasoner
from provrepair.repair.replay.executor import Executor, ReplayResult
from provrepair.repair.tools.packs import domain_functions, domain_tools
from provrepair.repair.tools.registry import ToolRegistry

OURS, ABLATION = "dependency_guided", "no_selective_replay"
CAUSES = ("early cutoff", "replay set", "not reproduced")


def misses(results: Path) -> list[str]:
    """Cases ours did not recover and the ablation did, in file order."""
    found: dict[str, dict[str, bool]] = {}
    for text in results.read_text(encoding="utf-8").splitlines():
        line = json.loads(text)
        found.setdefault(line["case"], {})[line["method"]] = bool(line.get("recovered"))
    return [c for c, by in found.items() if by.get(OURS) is False and by.get(ABLATION) is True]


def replay(store: GraphStore, item: BenchCase, method: str, reasoner: NoisyReasoner,
           cutoff: bool) -> tuple[RepairPlan, ReplayResult]:
    """(the plan, the dry replay) of `method` on a fresh copy of the case."""
    task_id = f"{item.task_id}::diag-{method}-{cutoff}"
    ingest_case(store, parse_case(retask(item.raw, task_id)), replace=True)
    case = read_case(store, task_id, with_evaluation=False)
    planner = get_method(method)
    plan = planner.plan(MethodContext(store, task_id, case, None, reasoner)).plan
    tools = ToolRegistry(case.tools, case.world, domain_tools(case.domain))
    executor = Executor(case, plan, reasoner.for_case(item.task_id), tools, "diag",
                        early_cutoff=cutoff and planner.early_cutoff,
                        functions=domain_functions(case.domain))
    return plan, executor.run()


def fault_values(case: Case) -> list[tuple[str, str]]:
    """(fault id, the value it asserts) of every diagnosed fault with a structured fact."""
    memories = {m.memory_id: m for m in case.memory_store}
    return [(f, str(memories[f].fact_value)) for f in case.diagnosed_faults
            if f in memories and memories[f].fact_value is not None]


def asserts(step: ExecutionStep, values: list[tuple[str, str]]) -> list[str]:
    return [fault for fault, value in values
            if value in step.content or any(str(f.fact_value) == value for f in step.facts or [])]


def diagnose(store: GraphStore, item: BenchCase, reasoner: NoisyReasoner) -> dict[str, Any]:
    case = item.case
    assert case.evaluation is not None
    need = case.evaluation.required_facts
    ours_plan, ours = replay(store, item, OURS, reasoner, cutoff=True)
    _, uncut = replay(store, item, OURS, reasoner, cutoff=False)
    ablation_plan, ablation = replay(store, item, ABLATION, reasoner, cutoff=False)
    ours_set, ablation_set = set(ours_plan.replay_step_ids), set(ablation_plan.replay_step_ids)
    steps = {s.step_id: s for s in case.trace}
    values = fault_values(case)
    writer = {m: s.step_id for s in case.trace for m in s.generated_memory_ids}
    row: dict[str, Any] = {
        "case": item.task_id, "ours": recovered(ours.answer, need),
        "ours_without_cutoff": recovered(uncut.answer, need),
        "ablation": recovered(ablation.answer, need), "answer": ours.answer,
        "cut": [{"step": s, "type": steps[s].step_type.value, "asserts_fault": asserts(steps[s], values)}
                for s in ours.cutoff],
        "outside_plan": sorted(ablation_set - ours_set),
        # quarantined by ours and never rewritten: their writer is not replayed (rule 8 of
        # repair/plan/rules.py replays it); the ablation replays it
        "withdrawn": {m: writer[m] for m in ours_plan.quarantine_memory_ids
                      if m in writer and writer[m] not in ours_set and writer[m] in ablation_set}}
    row["cause"] = ("not reproduced" if row["ours"] or not row["ablation"] else
                    "early cutoff" if row["ours_without_cutoff"] else "replay set")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the sweep's --out directory")
    parser.add_argument("--level", default="0.8")
    parser.add_argument("--noise", default="0.05")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    parse_methods(OURS)  # registers the benchmark's baselines
    rows: list[dict[str, Any]] = []
    with bench_store(GRAPH_PREFIX + "selective_misses") as store:
        for seed_dir in sorted(args.out.glob("seed-*")):
            seed = int(seed_dir.name.removeprefix("seed-"))
            results = seed_dir / f"results-{args.level}-noise-{args.noise}" / "results.jsonl"
            if not results.exists():
                continue
            wanted = set(misses(results))
            items, _ = load_cases(seed_dir / f"cases-{args.level}")
            reasoner = NoisyReasoner(make_reasoner("offline", None), float(args.noise), seed)
            rows += [{"seed": seed, **diagnose(store, i, reasoner)}
                     for i in items if i.task_id in wanted]
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    for row in rows:
        cut = ", ".join(f"{c['step']} ({c['type']}" + (f", asserts {'/'.join(c['asserts_fault'])})"
                                                         if c["asserts_fault"] else ")")
                        for c in row["cut"]) or "none"
        print(f"seed {row['seed']} {row['case']}: {row['cause']}; ours {row['ours']}, "
              f"without cutoff {row['ours_without_cutoff']}, ablation {row['ablation']}\n"
              f"  kept by early cutoff: {cut}\n  quarantined, never rewritten (its writer "
              f"replayed by the ablation only): " + (", ".join(
                  f"{m} (written by {s})" for m, s in row["withdrawn"].items()) or "none")
              + f"\n  replayed by the ablation only: {', '.join(row['outside_plan']) or 'none'}")
    print(f"{len(rows)} cases: " + ", ".join(
        f"{cause} {sum(r['cause'] == cause for r in rows)}"
        for cause in CAUSES))


if __name__ == "__main__":
    main()
