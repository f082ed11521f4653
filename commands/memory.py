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
    from provrepair.provenance.vocab import MemoryStatus
    from provrepair.repair.current import current_memories

    with store() as st:
        rows = current_memories(st, task_id)
    if not show_all:
        rows = [r for r in rows if r["status"] == MemoryStatus.ACTIVE]
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        why = f"  [{r['why']}, run {r['changed_by']}]" if r["changed_by"] else ""
        click.echo(f"{r['memory_id']:<12} {r['status']:<12} {r['content']}{why}")


@click.command()
@click.option("--task", "task_id", help="Task id.")
@click.option("--run", "run_id",
              help="One repair run's change only (default: every committed run of the task, "
                   "from the recorded memory to the memory as it stands).")
@click.option("--schema", is_flag=True, help="Print the JSON Schema of the patch format.")
@click.option("--namespace", metavar="NS",
              help="The shared memory a `repair --namespace` repaired: one operation per "
                   "agent record over every conversation it repaired (--run: its run id).")
def patch(task_id: str | None, run_id: str | None, schema: bool, namespace: str | None) -> None:
    """Print the memory patch of the task's repairs (JSON): delete, quarantine, restore, put
    and add operations, by the agent's own record ids, that turn the agent's memory as
    recorded into the memory as repaired (one apply at the end is always right)."""
    from provrepair.provenance.errors import InputError
    from provrepair.repair.patch import memory_patch, patch_json_schema

    if schema:
        emit_json(patch_json_schema())
        return
    if namespace is not None:
        from provrepair.commands.namespace import patch_namespace_command

        return patch_namespace_command(namespace, run_id)
    if task_id is None:
        raise InputError("give --task ID (or --namespace NS, or --schema)")
    with store() as st:
        emit_json(memory_patch(st, task_id, run_id).model_dump(mode="json"))


@click.command()
@click.option("--task", "task_id", help="Task id (its patch is read from provrepair's store).")
@click.option("--patch", "patch_file", metavar="FILE",
              help="A saved patch (`provrepair patch --task T > FILE`) instead of --task: "
                   "provrepair's store is not reached.")
@click.option("--to", "target", required=True, metavar="KIND:WHERE",
              help="jsonl:PATH (a JSONL memory file), langgraph-sqlite:PATH (a LangGraph "
                   "SqliteStore), langgraph-postgres:CONNINFO (a LangGraph PostgresStore) or "
                   "mem0:CONFIG (mem0's config as JSON); the path must exist. LangGraph needs "
                   "the [langgraph] extra, mem0 the [mem0] extra.")
@click.option("--namespace", default="memories", show_default=True,
              help="The agent's memory: a LangGraph namespace, parts separated by '/'; for "
                   "mem0 its scope, e.g. user_id=alice or user_id=alice/agent_id=shop.")
@click.option("--value-key", default="content", show_default=True,
              help="The key of a record's text in the agent's values (JSONL: in each line).")
@click.option("--index", "index_file", metavar="FILE",
              help="The LangGraph store's embedding index, as JSON {\"embed\": "
                   "\"module:callable\", \"dims\": N, \"fields\": [...]}: what the patch "
                   "writes is embedded, so semantic search finds it.")
@click.option("--run", "run_id", help="One repair run's patch (default: every run's, net).")
@click.option("--allow-other-namespace", is_flag=True,
              help="Apply the patch of a task whose memory namespace is not the target's "
                   "(refused by default: another user's memory).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def apply(task_id: str | None, patch_file: str | None, target: str, namespace: str,
          value_key: str, index_file: str | None, run_id: str | None,
          allow_other_namespace: bool, as_json: bool) -> None:
    """Apply the task's memory patch to the store the agent reads. Checked first, in one
    transaction with the writes: a store of another memory namespace than the task's, one
    that holds none of the patch's records with the content the task recorded (a wrong path,
    namespace, value key or user), or whose records changed since the repair is refused and
    nothing is written; applying again changes nothing."""
    from provrepair.provenance.errors import InputError
    from provrepair.repair.appliers import Target, apply_patch, open_memory_store, split_namespace
    from provrepair.repair.patch import load_patch, memory_patch

    parts = split_namespace(namespace)
    if (task_id is None) == (patch_file is None):
        raise InputError("give --task ID or --patch FILE (one of them)")
    if patch_file is not None:
        if run_id is not None:
            raise InputError("--run goes with --task (a saved patch is one already)")
        the_patch = load_patch(patch_file)
    else:
        assert task_id is not None
        with store() as st:
            the_patch = memory_patch(st, task_id, run_id)
    index = None
    if index_file is not None:
        from provrepair.repair.appliers.langgraph import load_index

        index = load_index(index_file)
    memory = open_memory_store(Target(target, parts, value_key, index))
    try:
        result = apply_patch(the_patch, memory, allow_other_namespace=allow_other_namespace)
    finally:
        memory.close()
    data: dict[str, Any] = {"task_id": the_patch.task_id, "run_id": the_patch.run_id,
                            "runs": the_patch.runs, "to": target,
                            "applied": result.applied, "already_applied": result.already}
    if as_json:
        emit_json(data)
        return
    click.echo(f"applied {len(result.applied)} operation(s) of task {the_patch.task_id} "
               f"(up to run {the_patch.run_id}) to {target}; {len(result.already)} already "
               "in effect")
    for label in result.applied:
        click.echo(f"  {label}")
