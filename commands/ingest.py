"""`provrepair ingest|delete|tasks|show|schema|examples`: getting cases in, taking them out,
and looking at them."""

from __future__ import annotations

import contextlib
import shutil
import sys
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

import click

from provrepair.commands.output import ProgressBar, emit_json, store
from provrepair.provenance.errors import InputError


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--replace", is_flag=True,
              help="Swap a stored task for this version (atomic: the old version stays "
                   "until the new one is written).")
@click.option("--from", "source_format",
              default="case", show_default=True, metavar="case|openai-messages|otel",
              help="Input format: provrepair cases, OpenAI-style chat transcripts (with an "
                   "optional memory log and the requests each call sent), or OpenTelemetry "
                   "GenAI traces (OTLP/JSON or protobuf); see the "
                   "README, \"Recording your agent\". A plugin adds formats through the "
                   "\"provrepair.loaders\" entry points.")
@click.option("--follow", "follow", metavar="FILE|-",
              help="Consume a JSONL event stream (live recording) instead of case files.")
@click.option("--idle-timeout", type=float, default=None, metavar="SECONDS",
              help="With --follow FILE: stop after this long without new events.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def ingest(paths: tuple[Path, ...], replace: bool, source_format: str, follow: str | None,
           idle_timeout: float | None, as_json: bool) -> None:
    """Store case files (.json, .jsonl), or follow a live event stream.

    Every case is validated before anything is written; one bad case writes nothing.
    Re-ingesting an identical case changes nothing; a changed one needs --replace.
    """
    if follow is not None:
        if paths:
            raise InputError("give either case files or --follow, not both")
        if source_format == "otel":
            _follow_otel(follow, idle_timeout, as_json)
        elif source_format == "case":
            _follow(follow, idle_timeout, as_json)
        else:
            raise InputError(f"--follow reads event streams or OTLP/JSON lines, not {source_format}")
        return
    if not paths:
        raise InputError("no case files given (see `provrepair ingest --help`)")
    _ingest_files(list(paths), replace, source_format, as_json)


def _ingest_files(paths: list[Path], replace: bool, source_format: str, as_json: bool) -> None:
    from provrepair.loaders import load
    from provrepair.provenance.gc_pause import gc_paused
    from provrepair.provenance.ingest import ingest_cases
    from provrepair.provenance.store.config import compact_after_write

    with gc_paused():  # millions of short-lived objects: the cyclic GC only slows this down
        cases = load(source_format, paths)
        with store() as st, ProgressBar(quiet=as_json, min_total=5000) as bar:
            results = ingest_cases(st, cases, replace=replace, progress=bar)
    for case in cases:  # what a trace's reading could not see (loaders/agent_run.py)
        for warning in case.world.get("provrepair.warnings", []):
            click.echo(f"warning: task {case.task_id}: {warning}", err=True)
    compact_after_write(sum(r.nodes + r.edges for r in results if r.status != "unchanged"))
    if as_json:
        emit_json([r.__dict__ for r in results])
        return
    for r in results:
        click.echo(f"{r.status:<9} {r.task_id}  ({r.nodes} nodes, {r.edges} edges)")


@click.command()
@click.option("--task", "task_id", help="The task to remove (with --prune: to clean).")
@click.option("--prune", is_flag=True,
              help="Keep the tasks; remove only what died half-way: nodes of repairs killed "
                   "before their commit, staging copies of interrupted ingests.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def delete(task_id: str | None, prune: bool, as_json: bool) -> None:
    """Remove a task from the store (its recorded graph, repair runs and evaluation data;
    the log of the tool calls its repairs issued that may have acted stays, so a task
    ingested again under this id never sends them again), or with --prune the leftovers of
    interrupted work (one task, or every task).

    Refused while another process repairs or ingests the task (it holds the task's lock).
    """
    if prune:
        _prune(task_id, as_json)
        return
    if task_id is None:
        raise InputError("give --task ID (or --prune to clean leftovers)")
    from provrepair.provenance.ingest import delete_task

    with store() as st:
        nodes = delete_task(st, task_id)
    if as_json:
        emit_json({"task_id": task_id, "deleted": True, "nodes": nodes})
    else:
        click.echo(f"deleted   {task_id}  ({nodes} nodes)")


def _prune(task_id: str | None, as_json: bool) -> None:
    from provrepair.provenance.ingest import list_tasks
    from provrepair.provenance.keys import STAGING_PREFIX
    from provrepair.repair.runs import prune_task

    with store() as st:
        if task_id is not None:
            targets = [task_id]
        else:
            staged = st.run("list_staged_tasks", {"staging_prefix": STAGING_PREFIX})
            targets = sorted({r["task_id"] for r in [*list_tasks(st), *staged]})
        results = [prune_task(st, t) for t in targets]
    if as_json:
        emit_json(results)
        return
    for r in results:
        if r["aborted_runs"] or r["staged_nodes_removed"]:
            click.echo(f"pruned    {r['task_id']}  (aborted runs: "
                       f"{', '.join(r['aborted_runs']) or '-'}; staged nodes removed: "
                       f"{r['staged_nodes_removed']})")
    click.echo(f"{len(targets)} task(s) checked")


def _follow_otel(source: str, idle_timeout: float | None, as_json: bool) -> None:
    """OTLP/JSON lines as a file exporter writes them, captured as the live exporter does
    (loaders/otel_runs.py): each line journaled, a conversation's task stored again as each of
    its traces ends; runs still open are stored at the end of the input (stdin's end,
    --idle-timeout, or Ctrl-C)."""
    from provrepair.loaders.case_files import iter_lines
    from provrepair.loaders.events import decode_event, tail_lines
    from provrepair.loaders.otel import otlp_spans
    from provrepair.loaders.otel_runs import LiveRuns
    from provrepair.loaders.otlp_json import document_spans

    _require_file(source)
    with store() as st, contextlib.ExitStack() as stack:
        collector = LiveRuns(st)
        lines: Iterable[bytes]
        if source == "-":
            lines = iter_lines(sys.stdin.buffer, "<stdin>")
        else:
            handle = stack.enter_context(open(source, "rb"))
            lines = tail_lines(handle, idle_timeout=idle_timeout, on_idle=lambda: None,
                               done=lambda: False)
        with contextlib.suppress(KeyboardInterrupt):
            for n, line in enumerate(lines, 1):
                if line.strip():
                    where = f"{source}:{n}"
                    raw = decode_event(line, where)
                    otlp_spans(raw, where)  # the document's shape, checked as a file's is
                    collector.add(document_spans(raw), where)
        collector.finish()
    if as_json:
        emit_json({"stored_tasks": collector.stored})
    else:
        click.echo(f"stored: {', '.join(collector.stored) or '-'}")


def _require_file(source: str) -> None:
    if source != "-" and not Path(source).is_file():
        what = "is a directory" if Path(source).is_dir() else "does not exist"
        raise InputError(f"{source}: {what}; --follow takes an event file (JSONL) or -")


def _follow(source: str, idle_timeout: float | None, as_json: bool) -> None:
    from provrepair.loaders.case_files import iter_lines
    from provrepair.loaders.events import EventStream, consume, tail_lines

    with store() as st:
        stream = EventStream(st)
        if source == "-":
            consume(stream, iter_lines(sys.stdin.buffer, "<stdin>"), "<stdin>")
            result = stream.finish(close_open=True)
        else:
            _require_file(source)
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


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def tasks(as_json: bool) -> None:
    """List stored tasks with their recorded node counts (nodes written by repairs apart)."""
    from provrepair.provenance.ingest import list_tasks

    with store() as st:
        rows = list_tasks(st)
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo("no tasks stored (see `provrepair ingest`)")
    for r in rows:
        state = "" if r["complete"] else "  [incomplete: recording or interrupted]"
        if r["pending_nodes"]:
            state += f"  [{r['pending_nodes']} nodes of an unfinished repair: `delete --prune`]"
        click.echo(f"{r['task_id']}  {r['domain']}  inputs={r['user_inputs']} "
                   f"memories={r['memories']} steps={r['steps']} "
                   f"repair_nodes={r['repair_nodes']}"
                   + (f" namespace={r['memory_namespace']}" if r.get("memory_namespace") else "")
                   + state)
        for warning in r.get("warnings") or []:  # what the capture could not read
            click.echo(f"  warning: {warning}")


@click.command()
@click.option("--task", "task_id", required=True, help="Task id.")
@click.option("--original", is_flag=True,
              help="The case as recorded (its evaluation block included), not as repaired.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole case (graph → case JSON).")
def show(task_id: str, original: bool, as_json: bool) -> None:
    """Show a task as it stands after its latest repair: replayed steps in the place of the
    ones they replaced, the memory with the records the repair wrote and every status it
    changed (--original: the recorded case, exactly as ingested)."""
    from provrepair.commands.repair import side_effect_lines
    from provrepair.provenance.readback import read_case
    from provrepair.repair.current import current_case
    from provrepair.repair.runs import latest_repair
    from provrepair.repair.tools.calllog import side_effects

    with store() as st:
        raw = (read_case(st, task_id, as_recorded=True).model_dump(mode="json") if original
               else current_case(st, task_id))
        repair = latest_repair(st, task_id)
        issued = side_effects(st, task_id)
    if as_json:
        emit_json(raw)
        return
    click.echo(f"task {raw['task_id']} ({raw['domain']}): {len(raw['session'])} inputs, "
               f"{len(raw['memory_store'])} memories, {len(raw['trace'])} steps; "
               f"diagnosed faults: {', '.join(raw['diagnosed_faults']) or '-'}")
    if repair is not None:
        shown = "the recorded steps" if original else "steps as repaired"
        click.echo(f"{repair['status']} by run {repair['run_id']}: answer now "
                   f"{_short(repair.get('answer') or '(none)')!r} ({shown} follow)")
    for step in raw["trace"]:
        click.echo(f"  [{step['turn']}] {step['step_id']:<14} {step['step_type']:<18} "
                   f"{_short(step['content'])}")
    if issued:
        click.echo("side effects issued by its repairs (`history` for each run's):")
        for line in side_effect_lines(issued):
            click.echo("  " + line)


def _json_names(folder: Any) -> list[str]:
    if not folder.is_dir():
        return []
    return sorted(entry.name for entry in folder.iterdir()
                  if entry.name.endswith((".json", ".jsonl")))


def _short(text: str, width: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


@click.command()
def schema() -> None:
    """Print the JSON Schema of the case format (provrepair.case/1)."""
    from provrepair.provenance.models import case_json_schema

    emit_json(case_json_schema())


@click.command()
@click.option("--copy-to", "copy_to", type=click.Path(path_type=Path, file_okay=False),
              default=None, help="Copy the bundled example cases into this directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def examples(copy_to: Path | None, as_json: bool) -> None:
    """List the examples that ship with provrepair (and copy them with --copy-to): case
    files; under transcripts/ OpenAI-style transcripts (`ingest --from openai-messages`);
    under otel/ an OTLP/JSON trace of an instrumented agent (`ingest --from otel`); under
    events/ a live event stream (`ingest --follow`); under
    namespace/ three conversations sharing one agent memory (`plan --namespace`).

    `provrepair examples --copy-to ex && provrepair ingest ex/*.json` works from any
    install, not only from a clone of the repository.
    """
    folder = resources.files("provrepair").joinpath("examples")
    names = [(name, "case") for name in _json_names(folder)]
    names += [(f"transcripts/{name}", "openai-messages")
              for name in _json_names(folder.joinpath("transcripts"))]
    names += [(f"otel/{name}", "otel") for name in _json_names(folder.joinpath("otel"))]
    names += [(f"events/{name}", "events") for name in _json_names(folder.joinpath("events"))]
    names += [(f"namespace/{name}", "case")  # three conversations of one memory (issue 37)
              for name in _json_names(folder.joinpath("namespace"))]
    rows = []
    for name, source_format in names:
        path = Path(str(folder.joinpath(name)))
        if copy_to is not None:
            (copy_to / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy_to / name)
            path = copy_to / name
        rows.append({"name": name, "path": str(path), "format": source_format})
    if as_json:
        emit_json(rows)
        return
    for row in rows:
        click.echo(row["path"])
