"""The paper's tables from the JSON lines: main results, ablation, per-domain,
per-fault-type, cost breakdown, robustness slices (fault count, store size), and our main
results beside the paper's Table 2 (docs/paper-notes.md §8). Markdown and CSV.

A method whose every line is "not run" gets a "not run" row; "error" lines count as cases
that were not recovered (and add nothing to the micro-averaged memory/replay metrics).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from provrepair.benchmark.cases import STORE_BUCKETS
from provrepair.benchmark.lookalikes import BENIGN_KINDS, COPY_KINDS, KINDS, NAMESPACE_KINDS
from provrepair.benchmark.metrics import SWEEP_COUNTS, mean, summarize
from provrepair.benchmark.pair import SWEEP_METHOD

LABELS = {
    "no_repair": "No repair", "full_reset": "Full memory reset",
    "delete_retrieved": "Delete retrieved memories", "memaudit": "MemAudit-style",
    "memaudit_oracle": "MemAudit-style (oracle-assisted)†", "llm_judge": "LLM-judge repair",
    "agenttrace": "AgentTrace-style", "dependency_guided": "Ours",
    "paper": "Paper's method (w/o rule 8)",
    "no_support_check": "w/o support check", "no_rollback_planner": "w/o rollback planner",
    "no_selective_replay": "w/o selective replay", "replay_everything": "Replay everything",
    "dependency_guided_echo": "Ours + echo sweep",
}
MAIN = ["no_repair", "full_reset", "delete_retrieved", "memaudit", "memaudit_oracle",
        "llm_judge", "agenttrace", "replay_everything", "paper", "dependency_guided",
        "dependency_guided_echo"]
ABLATION = ["paper", "dependency_guided", "no_support_check", "no_rollback_planner",
            "no_selective_replay", "replay_everything"]
# Paper Table 2 / 3 (GPT-4o, N = 150): Rec, Recur, FR, BP, F1, RR, LLM; None = "--".
PAPER: dict[str, tuple[float | None, ...]] = {
    "no_repair": (0.000, None, 0.000, 1.000, 0.000, 0.000, 0.00),
    "full_reset": (0.407, 0.197, 1.000, 0.000, 0.000, 0.061, 4.03),
    "delete_retrieved": (0.340, 0.431, 0.881, 0.789, 0.000, 0.061, 4.05),
    "memaudit_oracle": (0.320, 0.292, 0.311, 0.980, 0.000, 0.051, 10.43),
    "llm_judge": (0.773, 0.121, 1.000, 1.000, 0.946, 0.217, 9.80),
    "agenttrace": (0.607, 0.341, 0.000, 0.997, 0.853, 0.091, 4.69),
    "dependency_guided": (0.853, 0.266, 1.000, 1.000, 0.566, 0.123, 5.70),
    "no_support_check": (0.880, 0.265, 1.000, 0.986, 0.507, 0.154, 6.51),
    "no_rollback_planner": (0.713, 0.430, 1.000, 0.996, 0.507, 0.152, 9.19),
    "no_selective_replay": (0.840, 0.071, 1.000, 1.000, 0.566, 0.755, 24.01),
}
PAPER["paper"] = PAPER["dependency_guided"]  # the paper's "Ours" is its method: ours w/o rule 8
PER_CASE_COLUMNS = frozenset({"LLM", "Calls", "Tokens", "Seconds"})
TEXT_COLUMNS = frozenset({"Method", "Domain", "Fault type", "Slice", "Bucket", "Kind", "Copy",
                          "Rule"})
PAPER_METRICS = ("recovery", "recurrence", "faulty_removal", "benign_preservation",
                 "claim_f1", "replay_ratio", "llm_calls")
FOOTNOTES = [
    "Rec = recovery (the paper's: the answer holds every required fact and, since issue 39, "
    "no wrong one), SRec = state recovery (recovered, and no active record of the repaired "
    "store asserts a wrong value for the case's facts), Recur = recurrence over the decided "
    "probes of recovered cases (-- when none), FR = faulty removal, BP = benign "
    "preservation, F1 = claim-invalidation F1, RR = replay ratio (micro-averaged); LLM = "
    "LLM calls per case (decision + replay; 0 with the offline reasoner); Calls = steps "
    "sent to the reasoner per case (one LLM call each with an LLM reasoner, before "
    "retries); Err = cases where the method raised.",
    "† oracle-assisted: reads the case's evaluation block (required facts, fault manifest) "
    "to score memories, as the paper's MemAudit-style baseline did; `memaudit` is the same "
    "baseline without oracle data.",
]


@dataclass
class Table:
    key: str
    title: str
    columns: list[str]
    rows: list[list[Any]] = field(default_factory=list)

    def markdown(self, level: int = 3) -> str:
        head = "| " + " | ".join(self.columns) + " |"
        align = "|" + "|".join("---" if c in TEXT_COLUMNS else "---:" for c in self.columns) + "|"
        body = ["| " + " | ".join(fmt(v, c) for v, c in zip(row, self.columns, strict=True))
                + " |" for row in self.rows]
        return "\n".join([f"{'#' * level} {self.title}", "", head, align, *body])

    def csv(self) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(self.columns)
        writer.writerows([["" if v is None else v for v in row] for row in self.rows])
        return buffer.getvalue()


def fmt(value: Any, column: str = "") -> str:
    """Ratios with 3 decimals, counts per case (LLM calls, tokens, seconds) with 2."""
    if value is None:
        return "--"
    if isinstance(value, float):
        return f"{value:.2f}" if column.split(" ")[0] in PER_CASE_COLUMNS else f"{value:.3f}"
    return str(value)


def label(method: str) -> str:
    return LABELS.get(method, method)


def scored(lines: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [line for line in lines if line.get("status") != "not_run"]


def by_method(lines: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for line in lines:
        grouped.setdefault(str(line["method"]), []).append(line)
    return grouped


def main_rows(methods: list[str], grouped: dict[str, list[Mapping[str, Any]]]) -> list[list[Any]]:
    rows = []
    for method in methods:
        lines = grouped.get(method, [])
        rows.append(_main_row(method, lines))
    return rows


def _main_row(method: str, lines: list[Mapping[str, Any]]) -> list[Any]:
    done = scored(lines)
    if lines and not done:
        return [label(method), 0, "not run", *[None] * 9]
    s = summarize(done)
    return [label(method), s["n"], s["recovery"], s["state_recovery"], s["recurrence"],
            s["faulty_removal"],
            s["benign_preservation"], s["claim_f1"], s["replay_ratio"], s["llm_calls"],
            mean(float(r.get("reasoner_calls", 0)) for r in done), _errors(done)]


def _errors(lines: list[Mapping[str, Any]]) -> int:
    return sum(1 for line in lines if line.get("status") == "error")


MAIN_COLUMNS = ["Method", "n", "Rec", "SRec", "Recur", "FR", "BP", "F1", "RR", "LLM", "Calls",
                "Err"]
SLICE_COLUMNS = ["n", "Rec", "SRec", "Recur", "F1", "RR", "Tokens", "LLM"]


def slice_rows(methods: list[str], grouped: dict[str, list[Mapping[str, Any]]],
               key: Callable[[Mapping[str, Any]], str], order: list[str] | None = None,
               prefix: list[Any] | None = None) -> list[list[Any]]:
    rows = []
    for method in methods:
        done = scored(grouped.get(method, []))
        buckets: dict[str, list[Mapping[str, Any]]] = {}
        for line in done:
            buckets.setdefault(key(line), []).append(line)
        for bucket in order or sorted(buckets):
            if bucket in buckets:
                s = summarize(buckets[bucket])
                rows.append([label(method), *(prefix or []), bucket, s["n"], s["recovery"],
                             s["state_recovery"], s["recurrence"], s["claim_f1"],
                             s["replay_ratio"], s["tokens"], s["llm_calls"]])
    return rows


def cost_rows(methods: list[str], grouped: dict[str, list[Mapping[str, Any]]]) -> list[list[Any]]:
    rows = []
    for method in methods:
        done = scored(grouped.get(method, []))
        if not done:
            continue
        s = summarize(done)
        decision = mean(float(r.get("decision_llm_calls", 0)) for r in done)
        replay = (s["llm_calls"] or 0.0) - (decision or 0.0)
        rows.append([label(method), s["recovery"], s["state_recovery"], s["tokens"],
                     s["llm_calls"], decision, replay,
                     mean(float(r.get("reasoner_calls", 0)) for r in done), s["replay_ratio"],
                     mean(float(r.get("seconds", 0)) for r in done)])
    return rows


def paper_rows(methods: list[str], grouped: dict[str, list[Mapping[str, Any]]]) -> list[list[Any]]:
    rows = []
    for method in methods:
        done = scored(grouped.get(method, []))
        s = summarize(done) if done else {}
        paper = PAPER.get(method, (None,) * len(PAPER_METRICS))
        cells: list[Any] = [label(method)]
        for metric, theirs in zip(PAPER_METRICS, paper, strict=True):
            cells += [s.get(metric) if done else "not run", theirs]
            if metric == "recovery":  # ours only: the paper scores the answer alone
                cells.append(s.get("state_recovery") if done else "not run")
        rows.append(cells)
    return rows


def case_count(lines: Sequence[Mapping[str, Any]]) -> int:
    return len({line["case"] for line in lines})


def build_tables(lines: Sequence[Mapping[str, Any]]) -> list[Table]:
    grouped = by_method(lines)
    n = f"N = {case_count(lines)}"
    extra = [m for m in grouped if m not in MAIN and m not in ABLATION]
    main = [m for m in MAIN if m in grouped] + extra
    ablation = [m for m in ABLATION if m in grouped]
    every = main + [m for m in ablation if m not in main]
    stores = [b[2] for b in STORE_BUCKETS]
    robustness = (slice_rows(every, grouped, lambda r: str(r["n_faults"]), prefix=["Faulty memories"])
                  + slice_rows(every, grouped, lambda r: str(r["store_bucket"]), stores,
                               prefix=["Memory store size"]))
    return [
        Table("main", f"Main results ({n})", MAIN_COLUMNS, main_rows(main, grouped)),
        Table("ablation", f"Ablations ({n})", MAIN_COLUMNS, main_rows(ablation, grouped)),
        Table("per_domain", f"Per domain ({n})", ["Method", "Domain", *SLICE_COLUMNS],
              slice_rows(every, grouped, lambda r: str(r["domain"]))),
        Table("per_fault_type", f"Per primary fault type ({n})", ["Method", "Fault type", *SLICE_COLUMNS],
              slice_rows(every, grouped, lambda r: str(r["primary_fault_type"]))),
        Table("cost", f"Repair cost breakdown ({n})",
              ["Method", "Rec", "SRec", "Tokens", "LLM", "LLM decision", "LLM replay", "Calls", "RR",
               "Seconds"], cost_rows(every, grouped)),
        Table("robustness", f"Robustness slices ({n})", ["Method", "Slice", "Bucket", *SLICE_COLUMNS],
              robustness),
        Table("vs_paper", f"Ours ({n}) beside the paper (Table 2 / 3, GPT-4o, N = 150)",
              ["Method", "Rec", "Rec (paper)", "SRec",
               *[f"{c}{s}" for c in ("Recur", "FR", "BP", "F1", "RR", "LLM")
                 for s in ("", " (paper)")]], paper_rows(every, grouped)),
        Table("echo_sweep", f"The echo sweep by look-alike kind ({n}; {label(SWEEP_METHOD)})",
              SWEEP_COLUMNS, sweep_rows(lines)),
    ]


SWEEP_COLUMNS = ["Kind", "Copy", "Records", "Issue-31 rule", "Value match", "Reported",
                 "Precision", "Recall"]
# how each column of counts was decided, in the order of the summary rows
RULES = (("sweep", "reported"), ("value match only", "value_match"),
         ("issue-31 rule", "issue31_rule"))


def sweep_counts(lines: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """kind → the lines' `sweep` counts (metrics.sweep_scores), summed."""
    total: dict[str, dict[str, int]] = {}
    for line in lines:
        for kind, counts in (line.get("sweep") or {}).items():
            row = total.setdefault(kind, dict.fromkeys(SWEEP_COUNTS, 0))
            for name in SWEEP_COUNTS:
                row[name] += int(counts.get(name, 0))
    return total


def is_copy(kind: str) -> bool:
    return kind in COPY_KINDS or kind == "namespace_echo"


def precision_recall(counts: Mapping[str, Mapping[str, int]], kinds: Iterable[str],
                     column: str) -> tuple[float | None, float | None]:
    """Over `kinds`: (copies reported / all reported, copies reported / copies), as decided
    by `column` (reported, value_match, issue31_rule)."""
    wanted = [k for k in kinds if k in counts]
    hits = sum(counts[k][column] for k in wanted if is_copy(k))
    reported = sum(counts[k][column] for k in wanted)
    total = sum(counts[k]["records"] for k in wanted if is_copy(k))
    return (hits / reported if reported else None), (hits / total if total else None)


def sweep_rows(lines: Sequence[Mapping[str, Any]]) -> list[list[Any]]:
    """One row per kind, then precision and recall per scope: of the sweep, of its value
    match alone (before the independence check), and of the rule before issue 39."""
    counts = sweep_counts(lines)
    rows: list[list[Any]] = [
        [kind, "yes" if is_copy(kind) else "no", c["records"], c["issue31_rule"],
         c["value_match"], c["reported"], None, None]
        for kind in KINDS if (c := counts.get(kind)) is not None]
    for scope, kinds in (("task", (*COPY_KINDS, *BENIGN_KINDS)), ("namespace", NAMESPACE_KINDS)):
        for name, column in RULES:
            p, r = precision_recall(counts, kinds, column)
            if p is not None or r is not None:
                rows.append([f"{scope} scope, {name}", "", None, None, None, None, p, r])
    return rows


def markdown(tables: list[Table], header: str) -> str:
    parts = [header, *[t.markdown() for t in tables], "\n".join(f"- {n}" for n in FOOTNOTES)]
    return "\n\n".join(parts) + "\n"
