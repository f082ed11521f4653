"""Running the transfer set: every method over the committed cases at each seed, then the
paper's Table 3 (transfer results) with mean ± sd over the seeds beside the paper's numbers.

    for each seed S:  bench run --cases <transfer cases> --replay-noise R --noise-seed S
                      → <out>/seed-S/ (results.jsonl, tables, plot: benchmark/run.py)
    <out>/transfer.md, transfer.csv, transfer.json

The cases are fixed (committed, like the paper's 50-case subset); the seed draws the replay
noise (benchmark/noise.py: the offline reasoner disagrees with its earlier self on a
regenerated step with chance R, the same draws for every method). At R = 0 the seeds give the
same numbers. Methods run through `run_benchmark` exactly as on the controlled set (same
store isolation, same scoring, same recurrence probes); a rerun resumes.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from provrepair.benchmark.cases import load_cases
from provrepair.benchmark.noise import check_noise
from provrepair.benchmark.run import current_lines, parse_methods, run_benchmark
from provrepair.benchmark.sweep import DEFAULT_SEEDS, cell
from provrepair.benchmark.tables import Table, label
from provrepair.benchmark.transfer.build import CASES_DIR, read_manifest
from provrepair.benchmark.workers import Brain, check_jobs, worker_pool
from provrepair.provenance.errors import ConfigError, InputError
from provrepair.provenance.progress import NO_PROGRESS, Progress
from provrepair.repair.methods import get_method

NOISE = 0.05
# Table 3's rows: the paper's method and ours, then its baselines (MemAudit-style as the
# paper ran it, oracle-assisted, and without oracle data); `paper` joins when registered.
METHODS = ("no_repair", "full_reset", "delete_retrieved", "memaudit", "memaudit_oracle",
           "llm_judge", "agenttrace", "paper", "dependency_guided")
METRICS = ("recovery", "recurrence", "faulty_removal", "benign_preservation", "claim_f1",
           "replay_ratio", "llm_calls")
SHORT = {"recovery": "Rec", "recurrence": "Recur", "faulty_removal": "FR",
         "benign_preservation": "BP", "claim_f1": "F1", "replay_ratio": "RR", "llm_calls": "LLM"}
# The paper's Table 3 (adapted LongMemEval-V2 subset, GPT-4o, N = 50), in METRICS order;
# "Ours" is the paper's method (`paper`), shown beside `dependency_guided` too.
PAPER_TABLE3: dict[str, tuple[float | None, ...]] = {
    "no_repair": (0.000, None, 0.000, 1.000, 0.000, 0.000, 0.00),
    "full_reset": (0.060, 0.000, 1.000, 0.000, 0.000, 0.062, 4.84),
    "delete_retrieved": (0.100, 0.400, 0.949, 0.466, 0.000, 0.062, 4.26),
    "memaudit_oracle": (0.260, 0.231, 0.577, 0.969, 0.000, 0.062, 16.52),
    "llm_judge": (0.260, 0.077, 0.613, 0.983, 0.369, 0.244, 10.64),
    "agenttrace": (0.540, 0.037, 0.000, 0.997, 0.603, 0.123, 6.98),
    "paper": (0.680, 0.059, 1.000, 0.993, 0.669, 0.179, 8.22),
    "dependency_guided": (0.680, 0.059, 1.000, 0.993, 0.669, 0.179, 8.22),
}
REFERENCE = "dependency_guided"   # the method every other one is compared with, case by case


def default_methods() -> str:
    """Table 3's methods that this installation has (`paper` once it is registered)."""
    names = []
    for name in METHODS:
        try:
            get_method(name)
        except ConfigError:
            continue
        names.append(name)
    return ",".join(names)


def run_transfer(methods: str | None, seeds: tuple[int, ...], out: Path, *,
                 replay_noise: float = NOISE, reasoner: str = "offline", model: str | None = None,
                 cases: Path = CASES_DIR, jobs: int = 1, limit: int | None = None,
                 progress: Progress = NO_PROGRESS) -> tuple[dict[str, Any], str]:
    """Run, aggregate, write; returns (the aggregate, its Markdown). `methods` None: Table 3's
    (`default_methods`); `reasoner`/`model` as `bench run --reasoner/--model` (LLM-judge runs
    only with an LLM); `limit`: a sample of the cases (`bench run --limit`)."""
    chosen = methods or default_methods()
    names = parse_methods(chosen)
    check_noise(replay_noise)
    check_jobs(jobs)
    if not seeds:
        raise InputError("--seeds: give at least one seed")
    source = read_manifest(cases)
    runs: dict[int, dict[str, Any]] = {}
    with worker_pool(jobs) as pool:
        for seed in seeds:
            summary, _ = run_benchmark(cases, ",".join(names), reasoner, model, out / f"seed-{seed}",
                                       limit=limit, replay_noise=replay_noise, noise_seed=seed,
                                       pool=pool,
                                       tag=f"transfer, replay noise {replay_noise:g}, seed {seed}",
                                       progress=progress)
            runs[seed] = summary
    brains = {seed: Brain(reasoner, model, replay_noise, seed) for seed in seeds}
    recovered = {seed: _recovered(out / f"seed-{seed}", cases, brains[seed]) for seed in seeds}
    result = aggregate(names, seeds, runs, recovered, replay_noise, source)
    result["reasoner"] = reasoner + (f" (model {model})" if model else "")
    text = transfer_text(result)
    out.mkdir(parents=True, exist_ok=True)
    (out / "transfer.md").write_text(text, encoding="utf-8")
    (out / "transfer.csv").write_text(transfer_table(result).csv(), encoding="utf-8")
    (out / "transfer.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n",
                                       encoding="utf-8")
    return result, text


def _recovered(out: Path, cases: Path, brain: Brain) -> dict[str, set[str]]:
    """Method → the cases it recovered in this seed's run (its current lines only)."""
    items, _ = load_cases(cases)
    per: dict[str, set[str]] = {}
    for line in current_lines(out, items, brain.make()):
        per.setdefault(line["method"], set())
        if line.get("recovered"):
            per[line["method"]].add(line["case"])
    return per


def aggregate(names: list[str], seeds: tuple[int, ...], runs: dict[int, dict[str, Any]],
              recovered: dict[int, dict[str, set[str]]], replay_noise: float,
              source: dict[str, Any]) -> dict[str, Any]:
    methods: dict[str, Any] = {}
    for name in names:
        summaries = [runs[s]["methods"].get(name) for s in seeds]
        ran = [s for s in summaries if s and s.get("status") == "run"]
        methods[name] = {"status": "run" if ran else "not_run",
                         "reason": None if ran else next((s.get("reason") for s in summaries if s),
                                                         None),
                         "metrics": {m: spread([s.get(m) for s in ran]) for m in METRICS},
                         "recovered": [len(recovered[s].get(name, set())) for s in seeds],
                         "differ_from_reference": _differ(name, seeds, recovered)}
    return {"set": "transfer", "cases": runs[seeds[0]]["cases"], "seeds": list(seeds),
            "replay_noise": replay_noise, "reasoner": "offline",
            "source": source.get("source", {}), "fidelity": source.get("fidelity"),
            "answerable_share": source.get("answerable_share"),
            "fault_multiplicity": source.get("fault_multiplicity", {}), "methods": methods}


def spread(values: list[Any]) -> dict[str, Any]:
    known = [float(v) for v in values if v is not None]
    return {"mean": statistics.fmean(known) if known else None,
            "sd": statistics.stdev(known) if len(known) > 1 else None, "values": values}


def _differ(name: str, seeds: tuple[int, ...],
            recovered: dict[int, dict[str, set[str]]]) -> dict[str, list[int]] | None:
    """Per seed: cases `name` recovered and the reference did not, and the other way round."""
    if name == REFERENCE or any(REFERENCE not in recovered[s] for s in seeds):
        return None
    return {"only_this": [len(recovered[s].get(name, set()) - recovered[s][REFERENCE])
                          for s in seeds],
            "only_reference": [len(recovered[s][REFERENCE] - recovered[s].get(name, set()))
                               for s in seeds]}


def transfer_table(result: dict[str, Any]) -> Table:
    columns = ["Method", *[f"{SHORT[m]}{s}" for m in METRICS for s in ("", " (paper)")],
               f"vs {label(REFERENCE)}"]
    rows: list[list[Any]] = []
    for name, data in result["methods"].items():
        paper = PAPER_TABLE3.get(name, (None,) * len(METRICS))
        if data["status"] != "run":
            rows.append([label(name), *[c for theirs in paper for c in ("not run", theirs)], ""])
            continue
        cells: list[Any] = [label(name)]
        for metric, theirs in zip(METRICS, paper, strict=True):
            stat = data["metrics"][metric]
            cells += [cell(stat) if metric != "llm_calls" else _calls(stat), theirs]
        rows.append([*cells, _vs(data["differ_from_reference"])])
    n = result["cases"]
    return Table("transfer", f"Transfer set (N = {n} τ²-bench retail trajectories, replay noise "
                 f"{result['replay_noise']:g}, seeds {', '.join(map(str, result['seeds']))}; "
                 "mean ± sd over seeds) beside the paper's Table 3 (adapted LongMemEval-V2 "
                 "subset, GPT-4o, N = 50)", columns, rows)


def _calls(stat: dict[str, Any]) -> str:
    return "--" if stat["mean"] is None else f"{stat['mean']:.2f}"


def _vs(differ: dict[str, list[int]] | None) -> str:
    """`+a −b`: summed over seeds, cases this method recovered and the reference did not (a),
    and the other way round (b); "tie" when no case differs."""
    if differ is None:
        return ""
    only, ref = sum(differ["only_this"]), sum(differ["only_reference"])
    return "tie" if only == ref == 0 else f"+{only} −{ref}"


def transfer_text(result: dict[str, Any]) -> str:
    spread_text = ", ".join(f"{n} with {k}" for k, n in result["fault_multiplicity"].items())
    src = result["source"]
    recovered = "; ".join(f"{label(m)} {'/'.join(map(str, d['recovered']))}"
                          for m, d in result["methods"].items() if d["status"] == "run")
    head = (f"## Transfer set\n\n{result['cases']} cases from {src.get('repository')} "
            f"@ {str(src.get('commit', ''))[:12]} (`{src.get('path')}`, {src.get('license')}); "
            f"poisoned records per case: {spread_text}; recorded at fidelity "
            f"{result['fidelity']}, answerable share {result['answerable_share']}; reasoner "
            f"`{result['reasoner']}`, replay noise {result['replay_noise']:g}, seeds "
            f"{', '.join(map(str, result['seeds']))}.\n\nRecovered cases per seed: {recovered}.")
    notes = ("- Rec, Recur, FR, BP, F1, RR as in the controlled tables; LLM = LLM calls per case "
             "(0 with the offline reasoner). The paper's numbers are its Table 3 (GPT-4o); its "
             "\"Ours\" is shown beside both `paper` and `dependency_guided`.\n"
             f"- vs {label(REFERENCE)}: summed over the seeds, +a = cases this method recovered "
             f"and {label(REFERENCE)} did not, −b = the other way round; \"tie\" when none differ.")
    return "\n\n".join([head, transfer_table(result).markdown(), notes]) + "\n"


__all__ = ["DEFAULT_SEEDS", "METHODS", "NOISE", "run_transfer"]
