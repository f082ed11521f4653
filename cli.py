"""provrepair command line: thin — parse, call the library, print (or --json).

Errors a user can cause print one line `Type: message` on stderr and exit 2; anything else is
a bug in provrepair and shows its traceback.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Any

import click

from provenance.cli_support import emit_json, gc_paused, store
from provenance.errors import UserError
from provenance.store.base import GraphStore
from provenance.store.embedded import EmbeddedServer


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
    from provenance.ingest import ingest_cases

    with gc_paused():  # millions of short-lived objects: the cyclic GC only slows this down
        cases = load_cases(paths)
        with store() as st, _Progress("ingesting", quiet=as_json) as bar:
            results = ingest_cases(st, cases, replace=replace, progress=bar.update,
                                   on_total=bar.start)
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


class _Progress:
    """A progress bar on stderr for long work (a TTY, not --json, 5k+ elements)."""

    def __init__(self, label: str, *, quiet: bool):
        self.label, self.quiet = label, quiet or not sys.stderr.isatty()
        self.bar: Any = None

    def start(self, total: int) -> None:
        if not self.quiet and total >= 5000:
            self.bar = click.progressbar(length=total, label=self.label, file=sys.stderr)
            self.bar.__enter__()

    def update(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)


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


@main.command()
def schema() -> None:
    """Print the JSON Schema of the case format (provrepair.case/1)."""
    from provenance.models import case_json_schema

    emit_json(case_json_schema())


def _register_extensions() -> None:
    from repair.bench.commands import bench
    from repair.commands import COMMANDS
    from repair.view.commands import COMMANDS as VIEW_COMMANDS

    for command in [*COMMANDS, *VIEW_COMMANDS, bench]:
        main.add_command(command)


_register_extensions()

if __name__ == "__main__":
    main()
