"""`provrepair bench report --out DIR`: the readings of a `bench sweep`, from its result files,
in a form BENCHMARKS.md quotes and a test checks (issue 39).

    outcomes.json     per setting (replay noise, fidelity), seed and method: which cases
                      were recovered, state recovered, recurred — one character per case
                      ("1", "0", "-" undecided), in the order of the setting's case list.
                      Small enough to commit; every comparison below is computed from it.
    readings.json     per setting and method, summed over the seeds: cases, recovered,
                      state recovered, recurrences and their cause (an echo record m_e…,
                      another active fault value, the re-asked question), recovery per
                      primary fault type; and every comparison of `PAIRS`.
    comparisons.md    the comparisons at every setting, as Markdown; headline.md, those at
                      the headline setting (BENCHMARKS.md's page of current results).

A comparison of methods A and B on a metric (recovery, state recovery) pairs their cases
(same seed, same case): N pairs; the metric per seed, mean ± sd over the seeds; how many
cases differ (A only, B only); and the verdict of a two-sided exact sign test on the cases
that differ: "A > B" when p < 0.05, else "tie" — one case of 450 is a tie, however the means
round. `compare_text` writes it out; BENCHMARKS.md embeds `comparisons.md` between markers,
and tests/unit/test_benchmarks_readings.py recomputes it from the committed outcomes.json.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from provrepair.benchmark.results import RESULTS, latest, read_lines
from provrepair.benchmark.tables import label
from provrepair.provenance.errors import InputError

OUTCOMES = "outcomes.json"
READINGS = "readings.json"
COMPARISONS = "comparisons.md"
HEADLINE_FILE = "headline.md"
METRICS = {"recovered": "Rec", "state_recovered": "SRec"}
# (A, B): what each comparison asks
PAIRS = (
    ("dependency_guided", "paper"),                   # rule 8, beyond the paper
    ("dependency_guided", "no_selective_replay"),     # what selective replay buys
    ("dependency_guided", "replay_everything"),       # provenance against none
    ("dependency_guided", "no_support_check"),        # the support check
    ("dependency_guided", "agenttrace"),              # the strongest trace baseline
    ("dependency_guided_echo", "dependency_guided"),  # the echo sweep acting
)
HEADLINE = "noise 0.05 @0.8"  # the issue-31 targets' setting
ALPHA = 0.05


def setting_name(rate: str, level: str) -> str:
    return f"noise {rate} @{level}"


def result_files(out: Path) -> list[Path]:
    """Each run's results.jsonl in a sweep folder. Refuses (before anything is written) a
    folder without them, or with a run folder missing its file: a committed sweep folder keeps
    only its tables and outcomes.json, and a report from it would overwrite good readings
    with empty ones."""
    runs = sorted(p for p in out.glob("seed-*/results-*-noise-*") if p.is_dir())
    missing = [run for run in sorted({*runs, *_grid_runs(out)})
               if not (run / RESULTS).is_file()]
    if not runs or missing:
        where = (f"{missing[0].relative_to(out)} has no {RESULTS}" if missing
                 else f"no seed-*/results-*-noise-*/{RESULTS}")
        raise _no_results(out, where)
    return [run / RESULTS for run in runs]


def _no_results(out: Path, where: str) -> InputError:
    return InputError(f"bench report --out {out}: {where}; a report reads each run's results, "
                      f"which a committed sweep folder does not keep (rerun `bench sweep --out "
                      f"{out}` with its options to make them); nothing written")


def _grid_runs(out: Path) -> list[Path]:
    """The run folders the sweep.json of an earlier sweep in `out` names (none without it)."""
    try:
        grid = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
        return [out / f"seed-{seed}" / f"results-{float(level)}-noise-{float(rate):g}"
                for seed in grid["seeds"] for level in grid["levels"]
                for rate in grid["replay_noise"]]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def collect(out: Path) -> dict[str, Any]:
    """The outcomes of a sweep folder, from each run's results.jsonl (newest line per pair)."""
    settings: dict[str, Any] = {}
    for path in result_files(out):
        seed = path.parent.parent.name.removeprefix("seed-")
        level, _, rate = path.parent.name.removeprefix("results-").partition("-noise-")
        every = latest(read_lines(path.parent))
        if not every:
            raise _no_results(out, f"{path.relative_to(out)} holds no result")
        lines = [x for x in every if x.get("status") != "not_run"]
        cases = sorted({x["case"] for x in lines})
        by_method: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
        for line in lines:
            by_method[line["method"]][line["case"]] = line
        settings.setdefault(setting_name(rate, level), {})[seed] = {
            "cases": cases,
            "methods": {m: {key: "".join(_bit(found.get(c, {}).get(key)) for c in cases)
                            for key in (*METRICS, "recurred")}
                        | {"kinds": "".join(_kind(found.get(c, {})) for c in cases)}
                        for m, found in sorted(by_method.items())}}
    return {"settings": settings}


def _bit(value: Any) -> str:
    return "-" if value is None else "1" if value else "0"


KIND_CODES = {"poisoned": "p", "stale": "s", "wrong_user": "w", "summary_drift": "d"}
CAUSE_CODES = {"echo": "e", "fault value": "f", "question": "q"}


def _kind(line: Mapping[str, Any]) -> str:
    """The case's primary fault type, then the recurrence's cause (or "."), one char each."""
    kind = KIND_CODES.get(str(line.get("primary_fault_type")), "?")
    return kind + (CAUSE_CODES[cause(line)] if line.get("recurred") else ".")


def cause(line: Mapping[str, Any]) -> str:
    """What a recurrence probe found: an echo record, another active fault value, or the
    re-asked question failing."""
    probe = str(line.get("probe") or "")
    if "fault_value_active: m_e" in probe:
        return "echo"
    return "fault value" if "fault_value_active" in probe else "question"


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    metric: str
    setting: str
    n: int
    a_rates: tuple[float, ...]     # per seed
    b_rates: tuple[float, ...]
    a_only: int
    b_only: int

    @property
    def p_value(self) -> float:
        return sign_test(self.a_only, self.b_only)

    @property
    def verdict(self) -> str:
        if self.a_only + self.b_only == 0:
            return "tie (no case differs)"
        if self.p_value >= ALPHA:
            return f"tie (p = {self.p_value:.2f})"
        first, second = (self.a, self.b) if self.a_only > self.b_only else (self.b, self.a)
        return f"{label(first)} > {label(second)} (p = {self.p_value:.3g})"

    def as_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "metric": self.metric, "setting": self.setting,
                "n": self.n, "a_mean": _mean(self.a_rates), "a_sd": _sd(self.a_rates),
                "b_mean": _mean(self.b_rates), "b_sd": _sd(self.b_rates),
                "a_only": self.a_only, "b_only": self.b_only,
                "p_value": round(self.p_value, 6), "verdict": self.verdict}


def sign_test(a_only: int, b_only: int) -> float:
    """Two-sided exact sign test: the chance of a split at least this uneven among the cases
    that differ, if either method were as likely to win each."""
    n = a_only + b_only
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(a_only, b_only) + 1)) / 2 ** n
    return float(min(1.0, 2 * tail))


def _mean(values: Iterable[float]) -> float | None:
    items = list(values)
    return statistics.fmean(items) if items else None


def _sd(values: Iterable[float]) -> float | None:
    items = list(values)
    return statistics.stdev(items) if len(items) > 1 else None


def compare(outcomes: Mapping[str, Any], setting: str, a: str, b: str,
            metric: str) -> Comparison | None:
    """A against B on `metric` at `setting`, paired by (seed, case); None if either was
    not run there."""
    seeds = outcomes["settings"].get(setting, {})
    a_rates, b_rates, a_only, b_only, n = [], [], 0, 0, 0
    for seed in sorted(seeds, key=int):
        methods = seeds[seed]["methods"]
        if a not in methods or b not in methods:
            return None
        x, y = methods[a][metric], methods[b][metric]
        a_rates.append(x.count("1") / len(x))
        b_rates.append(y.count("1") / len(y))
        a_only += sum(1 for i, j in zip(x, y, strict=True) if i == "1" and j != "1")
        b_only += sum(1 for i, j in zip(x, y, strict=True) if j == "1" and i != "1")
        n += len(x)
    if not n:
        return None
    return Comparison(a, b, metric, setting, n, tuple(a_rates), tuple(b_rates), a_only, b_only)


def comparisons(outcomes: Mapping[str, Any]) -> list[Comparison]:
    out = []
    for setting in _ordered(outcomes["settings"]):
        for a, b in PAIRS:
            for metric in METRICS:
                found = compare(outcomes, setting, a, b, metric)
                if found is not None:
                    out.append(found)
    return out


def _ordered(settings: Iterable[str]) -> list[str]:
    """Settings by noise rate, then fidelity from the highest."""
    def key(name: str) -> tuple[float, float]:
        rate, _, level = name.removeprefix("noise ").partition(" @")
        return float(rate), -float(level)
    return sorted(settings, key=key)


def cell(mean: float | None, sd: float | None) -> str:
    if mean is None:
        return "--"
    return f"{mean:.3f}" + (f" ± {sd:.3f}" if sd is not None else "")


def compare_rows(found: Iterable[Comparison], *, with_setting: bool) -> list[str]:
    rows = []
    for c in found:
        d = c.as_dict()
        head = [f"{label(c.a)} vs {label(c.b)}", *([c.setting] if with_setting else []),
                METRICS[c.metric]]
        rows.append("| " + " | ".join([*head, str(c.n), cell(d["a_mean"], d["a_sd"]),
                                        cell(d["b_mean"], d["b_sd"]),
                                        f"{c.a_only} / {c.b_only}", c.verdict]) + " |")
    return rows


HEAD = ["| Comparison (A vs B) | Metric | N | A (mean ± sd over seeds) | B | "
        "cases differ (A only / B only) | verdict |",
        "|---|---|---:|---:|---:|---:|---|"]


def _legend(outcomes: Mapping[str, Any]) -> str:
    seeds = sorted({s for by in outcomes["settings"].values() for s in by}, key=int)
    cases = sorted({len(v["cases"]) for by in outcomes["settings"].values() for v in by.values()})
    return (f"N = {' or '.join(map(str, cases))} cases × {len(seeds)} seeds "
            f"({', '.join(seeds)}) paired by case; verdict: two-sided exact sign test on the "
            f"cases that differ, \"tie\" unless p < {ALPHA}.")


def headline_text(outcomes: Mapping[str, Any]) -> str:
    """The comparisons at the headline setting (BENCHMARKS.md's page of current results)."""
    found = [c for c in comparisons(outcomes) if c.setting == HEADLINE]
    return "\n".join([f"At {HEADLINE} (replay noise 0.05, fidelity 0.8). {_legend(outcomes)}",
                      "", *HEAD, *compare_rows(found, with_setting=False)]) + "\n"


def comparisons_text(outcomes: Mapping[str, Any]) -> str:
    """The comparisons at every setting, as Markdown."""
    return "\n".join([f"{_legend(outcomes)}", "",
                      HEAD[0].replace("| Metric |", "| Setting | Metric |"),
                      HEAD[1].replace("|---|---|", "|---|---|---|", 1),
                      *compare_rows(comparisons(outcomes), with_setting=True)]) + "\n"


def readings(outcomes: Mapping[str, Any]) -> dict[str, Any]:
    """Per setting and method, summed over the seeds: cases, recovered, state recovered,
    recurrences by cause, recovery per primary fault type; and the comparisons."""
    found: dict[str, Any] = {}
    names = {v: k for k, v in KIND_CODES.items()}
    causes = {v: k for k, v in CAUSE_CODES.items()}
    for setting in _ordered(outcomes["settings"]):
        tally: dict[str, Counter[str]] = defaultdict(Counter)
        for data in outcomes["settings"][setting].values():
            for method, bits in data["methods"].items():
                t = tally[method]
                t["cases"] += len(bits["recovered"])
                t["recovered"] += bits["recovered"].count("1")
                t["state recovered"] += bits["state_recovered"].count("1")
                for i, rec in enumerate(bits["recovered"]):
                    kind, why = names.get(bits["kinds"][2 * i], "?"), bits["kinds"][2 * i + 1]
                    t[f"{kind} cases"] += 1
                    t[f"{kind} recovered"] += rec == "1"
                    if why != ".":
                        t["recurrences"] += 1
                        t[f"recurrence: {causes[why]}"] += 1
        found[setting] = {m: dict(sorted(t.items())) for m, t in sorted(tally.items())}
    return {"settings": found, "comparisons": [c.as_dict() for c in comparisons(outcomes)]}


def write_report(out: Path) -> dict[str, Any]:
    """Collect the sweep folder's outcomes and write outcomes.json, readings.json,
    comparisons.md and headline.md into it; returns the readings."""
    outcomes = collect(out)
    (out / OUTCOMES).write_text(json.dumps(outcomes, indent=0, sort_keys=True) + "\n",
                                encoding="utf-8")
    result = readings(outcomes)
    (out / READINGS).write_text(json.dumps(result, indent=1, sort_keys=True) + "\n",
                                encoding="utf-8")
    (out / COMPARISONS).write_text(comparisons_text(outcomes), encoding="utf-8")
    (out / HEADLINE_FILE).write_text(headline_text(outcomes), encoding="utf-8")
    return result


QUOTE = re.compile(r"(<!-- quote: (\S+) -->\n)(.*?)(<!-- end quote -->)", re.S)


def requote(markdown: Path) -> list[str]:
    """Rewrite every `<!-- quote: PATH -->` … `<!-- end quote -->` block of `markdown` with
    the file at PATH (relative to the markdown file's folder); returns the paths quoted.
    BENCHMARKS.md quotes its result files this way (tests/unit/test_benchmarks_readings.py)."""
    original = markdown.read_text(encoding="utf-8")
    quoted = [m.group(2) for m in QUOTE.finditer(original)]
    absent = [path for path in quoted if not (markdown.parent / path).is_file()]
    if absent:
        raise InputError(f"bench report --quote-into {markdown}: quoted file {absent[0]} "
                         f"does not exist; nothing rewritten")

    def fill(match: re.Match[str]) -> str:
        text = (markdown.parent / match.group(2)).read_text(encoding="utf-8")
        return match.group(1) + text + match.group(4)

    text = QUOTE.sub(fill, original)
    markdown.write_text(text, encoding="utf-8")
    return quoted
