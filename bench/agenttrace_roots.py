"""Where AgentTrace-style puts the root cause on the controlled benchmark: how often it is the
final answer under the paper's printed f_back = 1 − d/d_max, and under ours (d/d_max,
repair/methods/agenttrace.py). In-memory (the reference planner gives A0 and the seeds).

    python bench/agenttrace_roots.py --seed 42 --fidelity 1.0 [--limit N]
"""

from __future__ import annotations

import argparse

from provrepair.benchmark.generate import generate_cases
from provrepair.benchmark.methods.agenttrace import WEIGHTS, Scorer
from provrepair.benchmark.methods.common import earliest_seed_ts, positions
from provrepair.benchmark.reference import plan_in_memory
from provrepair.provenance.models import Case, ExecutionStep
from provrepair.provenance.order import final_answer_step


def roots(case: Case) -> tuple[str, str, str] | None:
    """(final answer, root under the printed formula, root under ours), None without one."""
    bare = case.model_copy(update={"evaluation": None})
    final = final_answer_step(bare)
    if final is None:
        return None
    plan = plan_in_memory(bare)
    start = earliest_seed_ts(bare, plan["seeds"])
    scorer = Scorer(bare, final, set(plan["affected_ids"]), set(plan["delete_memory_ids"]),
                    final.timestamp if start is None else start)
    candidates = scorer.candidates()
    if not candidates:
        return final.step_id, final.step_id, final.step_id
    d_max = max(scorer.back[s.step_id] for s in candidates)
    pos = positions(bare)

    def printed(step: ExecutionStep) -> float:
        ours = scorer.back[step.step_id] / d_max if d_max else 1.0
        theirs = 1.0 - ours if d_max else 1.0
        return scorer.score(step, d_max) + WEIGHTS["back"] * (theirs - ours)
    old = max(candidates, key=lambda s: (printed(s), -pos[s.step_id]))
    return final.step_id, old.step_id, scorer.root_cause().step_id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--fidelity", type=float, default=1.0)
    parser.add_argument("--answerable", type=float, default=0.5)
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    found = [r for c in generate_cases(args.seed, limit=args.limit, fidelity=args.fidelity,
                                       answerable=args.answerable) if (r := roots(c))]
    printed = sum(final == old for final, old, _ in found)
    ours = sum(final == new for final, _, new in found)
    print(f"seed {args.seed}, fidelity {args.fidelity}: {len(found)} cases; the root cause is "
          f"the final answer in {printed} under the printed formula, {ours} under ours")


if __name__ == "__main__":
    main()
