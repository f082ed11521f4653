"""A transfer sweep in the paper's Table 3 form: every method's metrics (mean ± sd over the
seeds) beside the paper's numbers, and how each compares with ours case by case.

`bench sweep --set transfer` puts these tables in sweep.md and sweep.csv where a controlled
sweep puts the paper's Table 2 (`paper_tables`: one per replay-noise rate and fidelity
level). The comparison columns come from the sweep's outcomes.json (benchmark/report.py):
per method, the cases it recovered (or state recovered) and ours did not, the other way
round, and the sign test's verdict — "tie" unless p < 0.05.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from provrepair.benchmark.report import compare, setting_name
from provrepair.benchmark.sweep import cell, settings
from provrepair.benchmark.tables import PAPER_METRICS, Table, label

# Table 3's rows in the paper's order ("Ours" is the paper's method: `paper`; shown beside
# `dependency_guided` too); the sweep's other methods follow with no paper number.
METHODS = ("no_repair", "full_reset", "delete_retrieved", "memaudit", "memaudit_oracle",
           "llm_judge", "agenttrace", "paper", "dependency_guided")
METRICS = ("recovery", "state_recovery", "recurrence", "faulty_removal", "benign_preservation",
           "claim_f1", "replay_ratio", "llm_calls")
SHORT = {"recovery": "Rec", "state_recovery": "SRec", "recurrence": "Recur",
         "faulty_removal": "FR", "benign_preservation": "BP", "claim_f1": "F1",
         "replay_ratio": "RR", "llm_calls": "LLM"}
# The paper's Table 3 (adapted LongMemEval-V2 subset, GPT-4o, N = 50), in the order of its
# columns (`tables.PAPER_METRICS`: every metric above but state recovery, which it lacks).
PAPER_TABLE3: dict[str, tuple[float | None, ...]] = {
    "no_repair": (0.000, None, 0.000, 1.000, 0.000, 0.000, 0.00),
    "full_reset": (0.060, 0.000, 1.000, 0.000, 0.000, 0.062, 4.84),
    "delete_retrieved": (0.100, 0.400, 0.949, 0.466, 0.000, 0.062, 4.26),
    "memaudit_oracle": (0.260, 0.231, 0.577, 0.969, 0.000, 0.062, 16.52),
    "llm_judge": (0.260, 0.077, 0.613, 0.983, 0.369, 0.244, 10.64),
    "agenttrace": (0.540, 0.037, 0.000, 0.997, 0.603, 0.123, 6.98),
    "paper": (0.680, 0.059, 1.000, 0.993, 0.669, 0.179, 8.22),
}
PAPER_TABLE3["dependency_guided"] = PAPER_TABLE3["paper"]  # its "Ours", beside ours too
REFERENCE = "dependency_guided"   # the method every other one is compared with, case by case
VERSUS = {"recovered": "Rec", "state_recovered": "SRec"}


def paper_tables(sweep: Mapping[str, Any], outcomes: Mapping[str, Any]) -> list[Table]:
    """The Table 3 form at every setting of the sweep (replay noise, then fidelity)."""
    return [table3(sweep, outcomes, rate, level) for rate, level in settings(dict(sweep))]


def ordered(methods: Mapping[str, Any]) -> list[str]:
    return [*[m for m in METHODS if m in methods], *[m for m in methods if m not in METHODS]]


def table3(sweep: Mapping[str, Any], outcomes: Mapping[str, Any], rate: str, level: str) -> Table:
    """The Table 3 form at one setting: `rate` and `level` as sweep.json's keys ("0.0",
    "0.8"); outcomes.json names the setting as its run folders do ("noise 0 @0.8")."""
    noise = f"{float(rate):g}"
    columns = ["Method", *[f"{SHORT[m]}{s}" for m in METRICS
                           for s in ("", *([" (paper)"] if m in PAPER_METRICS else []))],
               *[f"{short} vs {label(REFERENCE)}" for short in VERSUS.values()]]
    rows: list[list[Any]] = []
    for name in ordered(sweep["methods"]):
        stats = sweep["methods"][name][rate][level]
        paper = dict(zip(PAPER_METRICS, PAPER_TABLE3.get(name, (None,) * len(PAPER_METRICS)),
                         strict=True))
        cells: list[Any] = [label(name)]
        for metric in METRICS:
            stat = stats.get(metric, {"mean": None, "sd": None, "values": []})
            cells.append(_calls(stat) if metric == "llm_calls" else cell(stat))
            if metric in PAPER_METRICS:
                cells.append(paper[metric])
        rows.append([*cells, *[versus(outcomes, setting_name(noise, level), name, metric)
                               for metric in VERSUS]])
    seeds = ", ".join(map(str, sweep["seeds"]))
    return Table(f"table3-noise-{noise}-{level}",
                 f"Transfer set, replay noise {noise}, fidelity {level} (N = {sweep['cases']} "
                 f"τ²-bench retail trajectories × seeds {seeds}; mean ± sd over seeds) beside "
                 "the paper's Table 3 (adapted LongMemEval-V2 subset, GPT-4o, N = 50)",
                 columns, rows)


def versus(outcomes: Mapping[str, Any], setting: str, name: str, metric: str) -> str:
    """`a / b: verdict` — cases only `name` recovered, cases only ours did (summed over the
    seeds, paired by case), and the sign test's verdict; empty for ours or a method not run."""
    if name == REFERENCE:
        return ""
    found = compare(outcomes, setting, name, REFERENCE, metric)
    if found is None:
        return ""
    return f"{found.a_only} / {found.b_only}: {found.verdict}"


def _calls(stat: Mapping[str, Any]) -> str:
    """LLM calls per case: two decimals, no spread (offline: 0 for every method)."""
    if not stat["values"]:
        return "not run"
    return "--" if stat["mean"] is None else f"{stat['mean']:.2f}"
