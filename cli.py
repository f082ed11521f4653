"""provrepair command line: the root group. Commands live in `commands/`, one module per
group, and are imported only when invoked, so `provrepair --help` or `tasks` never loads the
repair engine, the `openai` SDK or matplotlib.

Errors a user can cause print one line `Type: message` on stderr and exit 2; anything else is
a bug in provrepair and shows its traceback.
"""

from __future__ import annotations

import importlib
import json
import logging
import sys
from typing import Any

import click

from provrepair.provenance.errors import CaseError, OutcomeUnknown, UserError

# command name → "module:attribute" under provrepair.commands, in the order --help lists them
COMMANDS = {
    "db": "store:db",
    "ingest": "ingest:ingest",
    "delete": "ingest:delete",
    "tasks": "ingest:tasks",
    "show": "ingest:show",
    "schema": "ingest:schema",
    "examples": "ingest:examples",
    "plan": "repair:plan",
    "repair": "repair:repair",
    "pending": "repair:pending",
    "history": "repair:history",
    "memory": "memory:memory",
    "patch": "memory:patch",
    "apply": "memory:apply",
    "methods": "repair:methods",
    "plugins": "plugins:plugins",
    "view": "view:view",
    "export": "view:export",
    "browser-style": "view:browser_style",
    "browser-params": "view:browser_params",
    "bench": "bench:bench",
}
# Commands that converge when run again after a write whose outcome is unknown: their writes
# are idempotent (MERGE on stable ids; a half-written ingest is completed or swapped again),
# a repair run that never committed is rolled back and redone while a committed one is not
# redone, and no tool call is issued twice (its durable log). Said with OutcomeUnknown.
SAFE_TO_RERUN = frozenset({"db", "ingest", "delete", "plan", "repair", "export"})


class LazyGroup(click.Group):
    """Loads a command's module on first use; maps UserError to `Type: message`, exit 2."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attr = target.split(":")
        command: click.Command = getattr(importlib.import_module(f"provrepair.commands.{module}"),
                                         attr)
        return command

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """Click's usage errors on one line too (`UsageError: ...`, exit 2)."""
        kwargs["standalone_mode"] = False
        try:
            code = super().main(*args, **kwargs)
        except click.UsageError as exc:
            hint = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx else ""
            click.echo(f"UsageError: {exc.format_message()}{hint}", err=True)
            sys.exit(2)
        except click.Abort:
            click.echo("Aborted.", err=True)
            sys.exit(1)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        wants_json = "--json" in ctx.args  # the subcommand's own arguments, not yet parsed
        try:
            return super().invoke(ctx)
        except UserError as exc:
            # One line, always: a multi-line detail (a server log tail) is joined with " | ".
            message = " | ".join(line.strip() for line in str(exc).splitlines() if line.strip())
            if isinstance(exc, OutcomeUnknown) and ctx.invoked_subcommand in SAFE_TO_RERUN:
                message += (f"; `provrepair {ctx.invoked_subcommand}` is safe to re-run: run "
                            "it again and it converges on the same state")
            click.echo(f"{type(exc).__name__}: {message}", err=True)
            if wants_json:  # scripts read stdout: the error as JSON too, every one of them
                click.echo(json.dumps({"error": type(exc).__name__, "message": message,
                                       "errors": exc.to_json() if isinstance(exc, CaseError)
                                       else []}, ensure_ascii=False))
            ctx.exit(2)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="provrepair")
def main() -> None:
    """provrepair: provenance store and repair engine for memory-augmented LLM agents.

    By default the data lives in an embedded FalkorDB under $PROVREPAIR_HOME
    (~/.local/share/provrepair), started on demand. Set PROVREPAIR_URI (bolt://, neo4j://,
    +s/+ssc variants) with PROVREPAIR_USER/PROVREPAIR_PASSWORD to use Neo4j 5 instead.
    """
    # The Neo4j driver logs every retry of a failed transaction as a warning; the error we
    # raise when it gives up is the one line a user needs (and it logs a routing table it
    # could not fetch as an error before raising it).
    logging.getLogger("neo4j").setLevel(logging.CRITICAL)


if __name__ == "__main__":
    main()
