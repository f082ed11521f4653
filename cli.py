"""provrepair command line: thin — parse, call the library, print (or --json).

Errors a user can cause print one line `Type: message` on stderr and exit 2; anything else is
a bug in provrepair and shows its traceback.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import click

from provenance.errors import UserError
from provenance.store.base import GraphStore
from provenance.store.embedded import EmbeddedServer, ServerInfo


class Group(click.Group):
    """Maps provrepair's UserError to `Type: message` on stderr, exit code 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except UserError as exc:
            # One line, always: a multi-line detail (a server log tail) is joined with " | ".
            message = " | ".join(line.strip() for line in str(exc).splitlines() if line.strip())
            click.echo(f"{type(exc).__name__}: {message}", err=True)
            ctx.exit(2)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def _announce(info: ServerInfo) -> None:
    click.echo(f"provrepair: started the embedded store ({info.uri}, pid {info.pid}, "
               f"data {info.home})", err=True)


def store() -> GraphStore:
    """The configured store (the embedded one is started on demand)."""
    from provenance.store.config import open_store

    return open_store(on_start=_announce)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="provrepair")
def main() -> None:
    """provrepair: provenance store and repair engine for memory-augmented LLM agents.

    By default the data lives in an embedded FalkorDB under $PROVREPAIR_HOME
    (~/.local/share/provrepair), started on demand. Set PROVREPAIR_URI (bolt://, neo4j://,
    +s/+ssc variants) with PROVREPAIR_USER/PROVREPAIR_PASSWORD to use Neo4j 5 instead.
    """


# -- db ------------------------------------------------------------------------------------

@main.group()
def db() -> None:
    """Start, stop and inspect the embedded FalkorDB store."""


@db.command("start")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def db_start(as_json: bool) -> None:
    """Start the embedded store (a no-op when it already runs)."""
    server = EmbeddedServer()
    info, started = server.start()
    data = {"started": started, "uri": info.uri, "pid": info.pid, "data_dir": str(info.home)}
    if as_json:
        emit_json(data)
    elif started:
        click.echo(f"started the embedded store: {info.uri} (pid {info.pid}, data {info.home})")
    else:
        click.echo(f"already running: {info.uri} (pid {info.pid}, data {info.home}); nothing to do")


@db.command("stop")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def db_stop(as_json: bool) -> None:
    """Stop the embedded store, flushing its data to disk."""
    info = EmbeddedServer().stop()
    if as_json:
        emit_json({"stopped": info is not None, "pid": info.pid if info else None})
    else:
        click.echo(f"stopped the embedded store (pid {info.pid})" if info else "not running")


@db.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def db_status(as_json: bool) -> None:
    """Where the store is, whether it runs, and how many nodes it holds."""

    from provenance.store.config import open_store

    server = EmbeddedServer()
    status: dict[str, Any]
    if os.environ.get("PROVREPAIR_URI"):
        with open_store() as st:
            status = {"running": True, **st.describe(), "nodes": _node_counts(st)}
    else:
        info = server.running()
        status = {"running": info is not None, "engine": "falkordb",
                  "uri": info.uri if info else None, "pid": info.pid if info else None,
                  "data_dir": str(server.home)}
        if info is not None:
            with open_store() as st:
                status["nodes"] = _node_counts(st)
    if as_json:
        emit_json(status)
        return
    for key, value in status.items():
        if key == "nodes":
            counts = ", ".join(f"{k}: {v}" for k, v in value.items()) or "empty"
            click.echo(f"{'nodes':<9} {counts}")
        else:
            click.echo(f"{key:<9} {value}")


def _node_counts(st: GraphStore) -> dict[str, int]:
    counts = {row["kind"]: row["nodes"] for row in st.run("count_nodes")}
    from provenance.ingest import list_tasks

    counts["tasks"] = len(list_tasks(st))
    return counts


# -- ingest / tasks / show / schema ---------------------------------------------------------

@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--replace", is_flag=True,
              help="Swap a stored task for this version (atomic: the old version stays "
                   "until the new one is written).")
@click.option("--follow", "follow", metavar="FILE|-",
              help="Consume a JSONL event stream (live recording) instead of case files.")
@click.option("--idle-timeout", type=float, default=None, metavar="SECONDS",
              help="With --follow FILE: stop after this long without new events.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def ingest(paths: tuple[Path, ...], replace: bool, follow: str | None,
           idle_timeout: float | None, as_json: bool) -> None:
    """Store case files (.json, .jsonl), or follow a live event stream.

    Every case is validated before anything is written; one bad case writes nothing.
    Re-ingesting an identical case changes nothing; a changed one needs --replace.
    """
    from provenance.errors import InputError

    if follow is not None:
        if paths:
            raise InputError("give either case files or --follow, not both")
        _follow(follow, idle_timeout, as_json)
        return
    if not paths:
        raise InputError("no case files given (see `provrepair ingest --help`)")
    _ingest_files(list(paths), replace, as_json)


def _ingest_files(paths: list[Path], replace: bool, as_json: bool) -> None:
    from loaders.case_files import load_cases
    from provenance.ingest import element_count, ingest_cases

    cases = load_cases(paths)
    with store() as st, _progress(element_count(cases), "ingesting", as_json) as bar:
        results = ingest_cases(st, cases, replace=replace, progress=bar.update)
    if as_json:
        emit_json([r.__dict__ for r in results])
        return
    for r in results:
        click.echo(f"{r.status:<9} {r.task_id}  ({r.nodes} nodes, {r.edges} edges)")


def _follow(source: str, idle_timeout: float | None, as_json: bool) -> None:
    from loaders.case_files import iter_lines
    from loaders.events import EventStream, consume, tail_lines

    with store() as st:
        stream = EventStream(st)
        if source == "-":
            consume(stream, iter_lines(sys.stdin.buffer, "<stdin>"), "<stdin>")
            result = stream.finish(close_open=True)
        else:
            with open(source, "rb") as handle:
                seen = stream.result
                lines = tail_lines(handle, idle_timeout=idle_timeout, on_idle=stream.flush,
                                   done=lambda: bool(seen.closed) and not stream.recorders)
                with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: flush, leave open
                    consume(stream, lines, source)
                result = stream.finish(close_open=False)
    data = {"events": result.events, "closed_tasks": result.closed, "open_tasks": result.open}
    if as_json:
        emit_json(data)
    else:
        click.echo(f"{result.events} events; complete: {', '.join(result.closed) or '-'}; "
                   f"still open: {', '.join(result.open) or '-'}")


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def _progress(total: int, label: str, quiet: bool) -> Any:
    """A progress bar on stderr for long work, unless output is for a script."""
    if quiet or not sys.stderr.isatty() or total < 5000:
        return _NoBar()
    return click.progressbar(length=total, label=label, file=sys.stderr)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def tasks(as_json: bool) -> None:
    """List stored tasks with their node counts."""
    from provenance.ingest import list_tasks

    with store() as st:
        rows = list_tasks(st)
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo("no tasks stored (see `provrepair ingest`)")
    for r in rows:
        state = "" if r["complete"] else "  [incomplete: recording or interrupted]"
        click.echo(f"{r['task_id']}  {r['domain']}  inputs={r['user_inputs']} "
                   f"memories={r['memories']} steps={r['steps']}{state}")


@main.command()
@click.option("--task", "task_id", required=True, help="Task id.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole case (graph → case JSON).")
def show(task_id: str, as_json: bool) -> None:
    """Read a task back from the store as a case."""
    from provenance.readback import read_case

    with store() as st:
        case = read_case(st, task_id)
    if as_json:
        emit_json(case.model_dump(mode="json"))
        return
    click.echo(f"task {case.task_id} ({case.domain}): {len(case.session)} inputs, "
               f"{len(case.memory_store)} memories, {len(case.trace)} steps; "
               f"diagnosed faults: {', '.join(case.diagnosed_faults) or '-'}")
    for step in case.trace:
        click.echo(f"  [{step.turn}] {step.step_id:<12} {step.step_type.value:<18} "
                   f"{_short(step.content)}")


def _short(text: str, width: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


# -- plan / history -------------------------------------------------------------------------

@main.command()
@click.option("--task", "task_id", required=True, help="Task id.")
@click.option("--faults", help="Comma-separated memory ids overriding the diagnosed faults.")
@click.option("--explain", "explain_id", metavar="ID",
              help="Explain why one node got its disposition instead of printing the plan.")
@click.option("--no-record", is_flag=True, help="Do not write the plan to the graph as a run.")
@click.option("--json", "as_json", is_flag=True, help="Print the plan (or explanation) as JSON.")
def plan(task_id: str, faults: str | None, explain_id: str | None, no_record: bool,
         as_json: bool) -> None:
    """Compute the rollback plan of a task (repair-semantics.md §1-4).

    Seeds, contaminated region, independent support, answer relevance and the replay set are
    computed in the graph store; the plan is recorded as a :RepairRun (unless --no-record)
    so a graph browser can show it. Planning never changes the memory store.
    """
    from repair.plan import compute_plan
    from repair.plan.explain import explain
    from repair.runs import record_plan_run

    fault_ids = [f.strip() for f in faults.split(",") if f.strip()] if faults is not None else None
    with store() as st:
        the_plan, trace = compute_plan(st, task_id, fault_ids)
        if explain_id is not None:
            _print_explanation(explain(the_plan, trace, explain_id), as_json)
            return
        run_id = None if no_record else record_plan_run(st, the_plan, method="dependency_guided")
    if as_json:
        emit_json(the_plan.model_dump())
        return
    _print_plan(the_plan, run_id)


def _print_plan(the_plan: Any, run_id: str | None) -> None:
    counts = [("delete", the_plan.delete_memory_ids), ("quarantine", the_plan.quarantine_memory_ids),
              ("affected", the_plan.affected_ids), ("supported", the_plan.supported_ids),
              ("invalidate", the_plan.invalidate_claim_ids),
              ("answer-relevant", the_plan.answer_relevant_ids),
              ("replay", the_plan.replay_step_ids), ("preserve", the_plan.preserve_step_ids),
              ("suspicious", the_plan.suspicious_step_ids)]
    click.echo(f"plan for task {the_plan.task_id}" + (f" (run {run_id})" if run_id else ""))
    click.echo("  seeds:      " + ", ".join(f"{m} <- {s}" for m, s in the_plan.seeds.items()))
    for name, ids in counts:
        shown = ", ".join(ids) if len(ids) <= 12 else ", ".join(ids[:12]) + ", …"
        click.echo(f"  {name + ':':<17}{len(ids):>4}  {shown}")
    click.echo("  replay order: " + (" -> ".join(the_plan.replay_step_ids) or "-"))


def _print_explanation(info: dict[str, Any], as_json: bool) -> None:
    if as_json:
        emit_json(info)
        return
    click.echo(f"{info['id']} ({info['kind']}): {', '.join(info['dispositions']) or 'untouched'}")
    for key in ("affected", "support", "answer_relevance", "replay"):
        click.echo(f"  {key.replace('_', ' ')}: {info[key]}")


@main.command()
@click.option("--task", "task_id", required=True, help="Task id.")
@click.option("--reasoner", type=click.Choice(["offline", "openai"]), default="offline",
              show_default=True, help="offline: deterministic, from each step's derivation; "
              "openai: any OpenAI-compatible endpoint (OPENAI_API_KEY, OPENAI_BASE_URL).")
@click.option("--model", default=None, help="Model name for --reasoner openai.")
@click.option("--faults", help="Comma-separated memory ids overriding the diagnosed faults.")
@click.option("--dry-run", is_flag=True, help="Plan and replay, but write nothing.")
@click.option("--no-early-cutoff", is_flag=True,
              help="Replay every selected step even when its inputs came out unchanged.")
@click.option("--method", default="dependency_guided", show_default=True,
              help="Repair method: ours (dependency_guided), a baseline or an ablation "
                   "(see `provrepair methods`).")
@click.option("--json", "as_json", is_flag=True, help="Print the full report as JSON.")
def repair(task_id: str, reasoner: str, model: str | None, faults: str | None, dry_run: bool,
           no_early_cutoff: bool, method: str, as_json: bool) -> None:
    """Repair a task: delete and quarantine contaminated memories, replay what the corrected
    answer needs, and write the result back (crash-safe; one repair per task at a time)."""
    from repair.reasoners import make_reasoner
    from repair.service import repair_task

    fault_ids = [f.strip() for f in faults.split(",") if f.strip()] if faults is not None else None
    with store() as st:
        report = repair_task(st, task_id, make_reasoner(reasoner, model), faults=fault_ids,
                             dry_run=dry_run, early_cutoff=not no_early_cutoff, method=method)
    if as_json:
        emit_json(report.to_json())
    else:
        _print_report(report)
    if report.status == "needs_human":
        sys.exit(3)


def _print_report(report: Any) -> None:
    click.echo(f"task {report.task_id}: {report.status}" +
               (f" (run {report.run_id})" if report.run_id else ""))
    click.echo(f"  answer:      {report.answer or '(none)'}")
    click.echo(f"  deleted:     {', '.join(report.deleted) or '-'}")
    click.echo(f"  quarantined: {', '.join(report.quarantined) or '-'}")
    click.echo(f"  restored:    {', '.join(report.restored) or '-'}")
    click.echo("  replayed:    " + (", ".join(f"{o}->{n}" for o, n in report.replayed.items())
                                     or "-"))
    click.echo(f"  new memories: {', '.join(report.new_memory_ids) or '-'}")
    for step_id, why in report.unresolved.items():
        click.echo(f"  unresolved {step_id}: {why}")
    if report.needs_human:
        click.echo(f"  NEEDS A HUMAN at {report.needs_human['step_id']}: "
                   f"{report.needs_human['reason']}")
    c = report.counts
    click.echo(f"  cost: {c.get('llm_calls', 0)} LLM calls, {c.get('tokens', 0)} tokens, "
               f"{c.get('replayed_steps', 0)}/{c.get('original_steps', 0)} steps replayed, "
               f"{c.get('early_cutoff_steps', 0)} cut off early, {c.get('tool_calls', 0)} tool calls")


@main.command()
@click.option("--task", "task_id", required=True, help="Task id.")
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON.")
def history(task_id: str, as_json: bool) -> None:
    """List the repair runs (plans and repairs) recorded for a task."""
    from provenance.readback import get_task_props
    from repair.runs import list_runs

    with store() as st:
        get_task_props(st, task_id)
        runs = list_runs(st, task_id)
    if as_json:
        emit_json(runs)
        return
    if not runs:
        click.echo(f"no repair runs for task {task_id}")
    for run in runs:
        created = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(run["created"] / 1000))
        replay = len((run.get("plan") or {}).get("replay_step_ids", []))
        click.echo(f"{run['run_id']}  {created}Z  {run['method']:<18} {run['status']:<9} "
                   f"replay={replay}")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def methods(as_json: bool) -> None:
    """List the repair methods: ours, the baselines and the ablations."""
    from repair.methods import METHODS

    rows = [{"name": m.name, "description": m.description} for m in METHODS.values()]
    if as_json:
        emit_json(rows)
        return
    for row in rows:
        click.echo(f"{row['name']:<22} {row['description']}")


@main.command()
def schema() -> None:
    """Print the JSON Schema of the case format (provrepair.case/1)."""
    from provenance.models import case_json_schema

    emit_json(case_json_schema())


def _register_extensions() -> None:
    from repair.bench.commands import bench

    main.add_command(bench)


_register_extensions()

if __name__ == "__main__":
    main()
