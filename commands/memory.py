"""`provrepair memory|patch|apply`: the task's memory as it stands, the memory patch of its
repair, and carrying that patch to the store the agent reads."""

from __future__ import annotations

from typing import Any

import click

from provrepair.commands.output import emit_json, store


@click.command()
@click.option("--task", "task_id", required=True, help="Task id.")
@click.option("--all", "show_all", is_flag=True,
              help="Every record (deleted, quarantined, superseded too), not only active ones.")
@click.option("--json", "as_json", is_flag=True, help="Print the records as JSON.")
def memory(task_id: str, show_all: bool, as_json: bool) -> None:
    """The task's memory store as it stands after its latest repair: the records the agent
    should retrieve now (with --all, every record and what changed it)."""
    from provrepair.repair.current import current_memories

    with store() as st:
        rows = current_memories(st, task_id)
    if not show_all:
        rows = [r for r in rows if r["status"] == "active"]
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        why = f"  [{r['why']}, run {r['changed_by']}]" if r["changed_by"] else ""
        click.echo(f"{r['memory_id']:<12} {r['status']:<12} {r['content']}{why}")


@click.command()
@click.option("--task", "task_id", help="Task id.")
@click.option("--run", "run_id", help="A repair run (default: the task's latest repair).")
@click.option("--schema", is_flag=True, help="Print the JSON Schema of the patch format.")
def patch(task_id: str | None, run_id: str | None, schema: bool) -> None:
    """Print the memory patch of a repair (JSON): delete, quarantine, restore and add
    operations that turn the agent's memory before the repair into the memory after it."""
    from provrepair.provenance.errors import InputError
    from provrepair.repair.patch import memory_patch, patch_json_schema

    if schema:
        emit_json(patch_json_schema())
        return
    if task_id is None:
        raise InputError("give --task ID (or --schema)")
    with store() as st:
        emit_json(memory_patch(st, task_id, run_id).model_dump(mode="json"))


@click.command()
@click.option("--task", "task_id", required=True, help="Task id.")
@click.option("--to", "target", required=True, metavar="KIND:PATH",
              help="jsonl:PATH (a JSONL memory file) or langgraph-sqlite:PATH (a LangGraph "
                   "SqliteStore; needs the [langgraph] extra).")
@click.option("--namespace", default="memories", show_default=True,
              help="LangGraph namespace of the agent's memories, parts separated by '/'.")
@click.option("--run", "run_id", help="A repair run (default: the task's latest repair).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def apply(task_id: str, target: str, namespace: str, run_id: str | None, as_json: bool) -> None:
    """Apply the task's memory patch to the store the agent reads. Checked first: a store
    whose records changed since the repair is refused and nothing is written; applying again
    changes nothing."""
    from provrepair.repair.appliers import apply_patch, open_memory_store
    from provrepair.repair.patch import memory_patch

    with store() as st:
        the_patch = memory_patch(st, task_id, run_id)
    result = apply_patch(the_patch, open_memory_store(target, tuple(namespace.split("/"))))
    data: dict[str, Any] = {"task_id": task_id, "run_id": the_patch.run_id, "to": target,
                            "applied": result.applied, "already_applied": result.already}
    if as_json:
        emit_json(data)
        return
    click.echo(f"applied {len(result.applied)} operation(s) of run {the_patch.run_id} to "
               f"{target}; {len(result.already)} already in effect")
    for label in result.applied:
        click.echo(f"  {label}")
