"""`provrepair db start|stop|status|migrate`: the embedded FalkorDB store (or the configured
one). The schema (indexes, constraints) and data migrations run at `db start` and
`db migrate` only, so every other read command writes nothing (provenance/store/config.py,
`migrate_store`)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import click

from provrepair.commands.output import emit_json
from provrepair.provenance.store.base import GraphStore

if TYPE_CHECKING:  # loads redis: imported by the commands that need it (not `--help`)
    from provrepair.provenance.store.embedded import EmbeddedServer


def _embedded() -> EmbeddedServer:
    from provrepair.provenance.store.embedded import EmbeddedServer

    return EmbeddedServer()


@click.group()
def db() -> None:
    """Start, stop and inspect the embedded FalkorDB store."""


@db.command("start")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def db_start(as_json: bool) -> None:
    """Start the embedded store (a no-op when it already runs) and migrate its graph."""
    from provrepair.provenance.store.config import open_store

    server = _embedded()
    info, started = server.start()
    if not os.environ.get("PROVREPAIR_URI"):  # the embedded graph (PROVREPAIR_GRAPH) is the store
        with open_store(migrate=True):
            pass
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
    info = _embedded().stop()
    if as_json:
        emit_json({"stopped": info is not None, "pid": info.pid if info else None})
    else:
        click.echo(f"stopped the embedded store (pid {info.pid})" if info else "not running")


@db.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def db_status(as_json: bool) -> None:
    """Where the store is, whether it runs, and how many nodes it holds."""
    from provrepair.provenance.store.config import open_store

    server = _embedded()
    status: dict[str, Any]
    if os.environ.get("PROVREPAIR_URI"):
        with open_store() as st:
            status = {"running": True, **st.describe(), "nodes": _node_counts(st)}
    else:
        info = server.running()
        status = {"running": info is not None, "engine": "falkordb",
                  "uri": info.uri if info else None, "pid": info.pid if info else None,
                  "data_dir": str(server.home)}
        share = server.loading(info) if info is not None else None
        if share is not None:  # found by its lock, loading its data (or not answering yet)
            status["state"] = f"loading {max(share, 0)}%"
        elif info is not None:
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


@db.command("migrate")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def db_migrate(as_json: bool) -> None:
    """Create the schema (indexes, constraints) and run the data migrations on the configured
    store; idempotent. Needs schema rights (Neo4j: an admin or architect role): run it once
    per database, after which a read-only user can run every read command."""
    from provrepair.provenance.store.config import open_store

    with open_store(migrate=True) as st:
        where = st.describe()
        statements = len(st.registry.schema[st.engine])
    if as_json:
        emit_json({"migrated": True, **where, "schema_statements": statements})
        return
    shown = ", ".join(f"{k} {v}" for k, v in where.items() if k != "engine")
    click.echo(f"migrated {where['engine']} ({shown}): {statements} schema statements, "
               "data migrations done")


def _node_counts(st: GraphStore) -> dict[str, int]:
    from provrepair.provenance.ingest import list_tasks
    from provrepair.provenance.keys import LIVE_PREFIX

    counts = {row["kind"]: row["nodes"]
              for row in st.run("count_nodes", {"live_prefix": LIVE_PREFIX})}
    counts["tasks"] = len(list_tasks(st))
    return counts


@db.command("check")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def db_check(as_json: bool) -> None:
    """Scan every label and relationship type and read every attribute; one line: clean
    (exit 0) or damaged with the reason (exit 1)."""
    from provrepair.provenance.check import check_store
    from provrepair.provenance.store.config import open_store

    with open_store() as st:
        report = check_store(st)
    if as_json:
        emit_json(report.to_json())
    else:
        click.echo(report.line())
    if not report.clean:
        sys.exit(1)
