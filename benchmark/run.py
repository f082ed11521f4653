"""`provrepair bench run`: every method over every case, then the paper's tables and plot.

    for each method (reported to a `Progress`: the command draws a bar):
        for each case not finished yet:   a fresh task copy `<task>::<method>` is ingested,
                                          repaired (repair_task, the method by name),
                                          scored, probed; one JSON line appended
        (`--jobs N`: the pairs of the method in N worker processes, their lines appended in
        this same order; workers.py)
    tables (Markdown + CSV), summary.json, recovery_vs_llm_calls.png

Where it writes: the configured store (PROVREPAIR_URI / the embedded server of
PROVREPAIR_HOME), but on FalkorDB always in its own graph `provrepair_bench_<hash>` (+
`_vault`), hash = the cases directory and every case's content — never the user's
PROVREPAIR_GRAPH, so benchmark tasks never mix with the user's. It is kept so that an
interrupted run resumes; `provrepair bench clean` drops every such graph. On Neo4j there is
no graph name: the tasks `<task>::<method>` go to PROVREPAIR_DATABASE (a scratch database is
best), and `bench clean` deletes them.

Output in `<out>/`: results.jsonl (resumable, see results.py), tables.md, main.csv,
ablation.csv, per_domain.csv, per_fault_type.csv, cost.csv, robustness.csv, vs_paper.csv,
summary.json, recovery_vs_llm_calls.png.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from provrepair.benchmark.cases import BenchCase, graph_name, load_cases, slices
from provrepair.benchmark.metrics import mean, summarize
from provrepair.benchmark.noise import check_noise
from provrepair.benchmark.pair import run_pair
from provrepair.benchmark.plot import plot_recovery, require_matplotlib
from provrepair.benchmark.quotas import stratified
from provrepair.benchmark.results import append_line, finished, latest, pair_key, read_lines
from provrepair.benchmark.store import bench_store
from provrepair.benchmark.tables import (
    ABLATION,
    MAIN,
    build_tables,
    case_count,
    label,
    markdown,
    scored,
    sweep_counts,
)
from provrepair.benchmark.workers import Brain, Job, Pool, check_jobs, worker_pool
from provrepair.provenance.errors import InputError
from provrepair.provenance.lock import new_owner_id, task_lock
from provrepair.provenance.progress import NO_PROGRESS, Progress
from provrepair.provenance.store.base import GraphStore
from provrepair.repair.methods import get_method, method_names
from provrepair.repair.reasoners.base import Reasoner

ORDER = [*MAIN, *[m for m in ABLATION if m not in MAIN]]
# Held in the run's graph for the whole run: `bench clean` keeps a graph whose run is alive.
RUN_LOCK = "provrepair-bench-run"


def run_benchmark(cases_dir: Path, methods: str, reasoner: str, model: str | None, out: Path, *,
                  limit: int | None = None, replay_noise: float = 0.0, noise_seed: int = 0,
                  tag: str = "", jobs: int = 1, pool: Pool | None = None,
                  progress: Progress = NO_PROGRESS) -> tuple[dict[str, Any], str]:
    """Run, score and tabulate; returns (summary, the Markdown tables). `replay_noise`: the
    per-step disagreement rate of the reasoner at repair time (noise.py); `tag` names the run
    (the sweep's fidelity, noise and seed) in progress bars, tables and the plot. `jobs`
    worker processes run the pairs (workers.py; the same results for any number), or `pool`'s
    when given (a sweep's, shared by its runs)."""
    require_matplotlib()  # fail before hours of work, not at the plot
    check_jobs(jobs)
    names = parse_methods(methods)
    items, notes = load_cases(cases_dir)
    graph = graph_name(cases_dir, items)
    items = sample(items, limit)
    if not items:
        raise InputError(f"{cases_dir}: no case with an evaluation block to run")
    for note in notes:
        progress.note(f"note: {note}")
    spec = Brain(reasoner, model, check_noise(replay_noise), noise_seed)
    brain = spec.make()
    with ExitStack() as stack:
        store = stack.enter_context(bench_store(graph))
        stack.enter_context(task_lock(store, RUN_LOCK, new_owner_id("bench"), "bench"))
        pool = pool or stack.enter_context(worker_pool(jobs))
        for name in names:
            _run_method(Method(store, name, brain, spec, cases_dir.resolve(), graph, pool),
                        items, out, progress, tag)
    model_name = getattr(brain, "model", None)
    gold = sum(len(i.case.evaluation.gold_affected_claim_ids) for i in items if i.case.evaluation)
    header = ((f"{tag}: " if tag else "") + f"{len(items)} cases from `{cases_dir}`, "
              f"reasoner `{brain.name}`" + (f" (model `{model_name}`)" if model_name else "")
              + f", store graph `{graph}`; {gold} gold contaminated claims (claim F1's "
              "positives, every turn)")
    return report(current_lines(out, items, brain), out, header, tag,
                  {"cases": len(items), "gold_claims": gold})


def sample(items: list[BenchCase], limit: int | None) -> list[BenchCase]:
    """All cases, or `limit` of them stratified as `bench generate --limit` (quotas.py)."""
    if limit is None:
        return items
    if limit < 1:
        raise InputError(f"--limit {limit}: must be at least 1")

    def stratum(item: BenchCase) -> tuple[Any, ...]:
        cut = slices(item.case)
        return (cut["n_faults"] > 1, cut["domain"], cut["primary_fault_type"])
    return stratified(items, limit, stratum)


def parse_methods(methods: str) -> list[str]:
    if methods.strip() == "all":
        known = method_names()
        return [*[m for m in ORDER if m in known], *[m for m in known if m not in ORDER]]
    names = [m.strip() for m in methods.split(",") if m.strip()]
    for name in names:
        get_method(name)  # ConfigError naming the choices
    return names


@dataclass(frozen=True)
class Method:
    """One method of a run, and where its pairs run: in the parent on `store`, or in `pool`."""

    store: GraphStore
    name: str
    brain: Reasoner
    spec: Brain
    cases_dir: Path
    graph: str
    pool: Pool | None

    def lines(self, todo: list[BenchCase]) -> Iterator[dict[str, Any]]:
        """The line of each pair, in the order of `todo` (one at a time, or from the pool)."""
        if self.pool is None:
            return (run_pair(self.store, item, self.name, self.brain) for item in todo)
        return self.pool.lines([Job(self.cases_dir, self.graph, item.task_id, item.digest,
                                    self.name, self.spec) for item in todo])


def _run_method(method: Method, items: list[BenchCase], out: Path, progress: Progress,
                tag: str = "") -> None:
    name, brain = method.name, method.brain
    done = finished(read_lines(out))
    header = {"method": name, "reasoner": brain.name, "model": getattr(brain, "model", None)}
    todo = [c for c in items
            if pair_key({**header, "case": c.task_id, "digest": c.digest}) not in done]
    progress.start(f"{name:<22}" + (f" ({tag})" if tag else ""), len(todo))
    for item, line in zip(todo, method.lines(todo), strict=True):
        if line["status"] == "error":
            progress.note(f"error: {name} on {item.task_id}: {line['reason']}")
        append_line(out, line)
        progress.advance(1, item.task_id)
    progress.finish()


def current_lines(out: Path, items: list[BenchCase], brain: Reasoner) -> list[dict[str, Any]]:
    """The newest line of each pair for these cases and this reasoner/model."""
    wanted = {(c.task_id, c.digest) for c in items}
    model = str(getattr(brain, "model", None))
    return [line for line in latest(read_lines(out))
            if (line["case"], line["digest"]) in wanted and line["reasoner"] == brain.name
            and str(line.get("model")) == model]


def report(lines: list[dict[str, Any]], out: Path, header: str, tag: str = "",
           extra: dict[str, Any] | None = None) -> tuple[dict[str, Any], str]:
    tables = build_tables(lines)
    out.mkdir(parents=True, exist_ok=True)
    text = markdown(tables, f"## Benchmark results\n\n{header}.")
    (out / "tables.md").write_text(text, encoding="utf-8")
    for table in tables:
        (out / f"{table.key}.csv").write_text(table.csv(), encoding="utf-8")
    summary: dict[str, Any] = {"run": header, **(extra or {}), "methods": method_summaries(lines)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n",
                                      encoding="utf-8")
    plot_recovery({label(m): s for m, s in summary["methods"].items() if s["status"] == "run"},
                  out, case_count(lines), tag)
    return summary, text


def method_summaries(lines: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for line in lines:
        out.setdefault(line["method"], {})
    for method in out:
        mine = [line for line in lines if line["method"] == method]
        done = scored(mine)
        if not done:
            out[method] = {"status": "not_run", "reason": mine[0].get("reason")}
            continue
        out[method] = {"status": "run", **summarize(done),
                       "reasoner_calls": mean(float(r.get("reasoner_calls", 0)) for r in done),
                       "errors": sum(1 for r in done if r.get("status") == "error"),
                       "oracle": any(r.get("oracle_assisted") for r in done)}
        if any("sweep" in r for r in done):
            out[method]["echo_sweep"] = sweep_counts(done)
    return out
