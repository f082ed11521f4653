"""`provrepair view|export|browser-style`: looking at a task's graph and its repair."""

from __future__ import annotations

from pathlib import Path

import click

from provrepair.commands.output import emit_json, store
from provrepair.provenance.errors import InputError


@click.command()
@click.option("--task", "task_id", help="Task id.")
@click.option("--run", "run_id", default=None,
              help="Run id (see `provrepair history`); default: the latest committed repair, "
                   "else the latest plan.")
@click.option("--out", "out", required=True, type=click.Path(path_type=Path),
              help="The HTML file to write.")
@click.option("--namespace", metavar="NS",
              help="A shared memory: the conversations a fault reached as groups, and its path "
                   "across them (the latest `repair --namespace`, or the plan of --faults).")
@click.option("--faults", help="With --namespace: the agent ids of the faulty records.")
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
def view(task_id: str | None, run_id: str | None, out: Path, namespace: str | None,
         faults: str | None, as_json: bool) -> None:
    """Write a self-contained HTML page drawing a task's graph, coloured by a run's
    dispositions, with a legend, node details and a before/after-repair toggle.

    The page needs no network: the graph library (cytoscape.js) is inside it.
    """
    if namespace is not None:
        from provrepair.commands.namespace import view_namespace_command
        from provrepair.commands.output import id_list

        return view_namespace_command(namespace, id_list(faults), out, as_json)
    if task_id is None:
        raise InputError("give --task ID (or --namespace NS)")
    from provrepair.view.graph import view_data
    from provrepair.view.page import render

    with store() as st:
        data = view_data(st, task_id, run_id)
    page = render(data)
    try:
        out.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write {out}: {exc.strerror or exc}") from exc
    run = data["run"]
    after = sum(1 for n in data["nodes"] if n["phase"] == "after")
    info = {"task_id": task_id, "run_id": run["run_id"] if run else None, "out": str(out),
            "nodes_before": len(data["nodes"]) - after, "nodes_after": len(data["nodes"]),
            "bytes": len(page.encode("utf-8"))}
    if as_json:
        emit_json(info)
        return
    click.echo(f"wrote {out}: task {task_id}, " +
               (f"run {info['run_id']}" if run else "no run") +
               f", {info['nodes_before']} nodes before / {info['nodes_after']} after the repair")


@click.command()
@click.option("--task", "task_id", required=True, help="Task id.")
@click.option("--to", "uri", required=True, metavar="URI",
              help="bolt://, neo4j:// (+s/+ssc) for Neo4j, or falkordb://HOST:PORT. "
                   "Credentials: PROVREPAIR_EXPORT_USER / PROVREPAIR_EXPORT_PASSWORD.")
@click.option("--database", default="neo4j", show_default=True, help="Neo4j target database.")
@click.option("--graph", default="provrepair", show_default=True,
              help="FalkorDB target graph.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def export(task_id: str, uri: str, database: str, graph: str, as_json: bool) -> None:
    """Copy a task (nodes, edges, repair runs with their marks, repair-written nodes) to
    another store, and label its latest run's dispositions there for Neo4j Browser.

    Idempotent: exporting again updates the copy (MERGE on uids), and prunes what the source
    no longer has.
    """
    from provrepair.provenance.errors import ConfigError
    from provrepair.provenance.store.config import EXPORT_CREDENTIALS, connect
    from provrepair.view.export import export_task

    # the target is written, so it gets its schema first (as `db migrate` would)
    with store() as source, connect(uri, EXPORT_CREDENTIALS, database=database,
                                    graph=graph, migrate=True) as target:
        if source.identity() == target.identity():
            raise ConfigError(f"--to {uri} is the store the task is read from "
                              "(pick another --graph or --database)")
        result = export_task(source, target, task_id)
    if as_json:
        emit_json(result.to_json())
        return
    where = ", ".join(f"{k} {v}" for k, v in result.target.items() if k != "engine")
    click.echo(f"exported {task_id} to {result.target['engine']} ({where}): {result.nodes} "
               f"nodes, {result.edges} edges, {result.runs} run(s), {result.marks} marks; "
               f"Browser labels from run {result.labelled_run or '- (no finished run)'}")
    if result.pruned_nodes or result.pruned_runs or result.replaced_version:
        click.echo(f"  target updated: {result.pruned_nodes} stale nodes and "
                   f"{result.pruned_runs} stale runs removed"
                   + ("; an older recorded version was replaced" if result.replaced_version
                      else ""))



@click.command("browser-style")
def browser_style() -> None:
    """Print the Neo4j Browser style (.grass) that colours nodes by their repair disposition.

    Save it and drag the file onto Neo4j Browser (or run `:style` and paste it); the saved
    queries under browser/queries/ then show each run's dispositions in these colours.
    """
    from provrepair.view.palette import grass_text

    click.echo(grass_text(), nl=False)


@click.command("browser-params")
@click.option("--task", "task_id", help="Task id.")
@click.option("--node", "node_id", default=None, help="Node id (preserving_evidence.cypher).")
@click.option("--namespace", default=None, help="A memory namespace (namespace_path.cypher).")
def browser_params(task_id: str | None, node_id: str | None, namespace: str | None) -> None:
    """Print the `:params` line the saved Neo4j Browser queries (browser/queries/) take: the
    task id (or memory namespace) and the run status sets (provenance/state/runs.py), so no
    query spells them."""
    import json

    from provrepair.provenance.state.runs import run_params

    if task_id is None and namespace is None:
        raise InputError("give --task ID (or --namespace NS)")
    params = {**({"task_id": task_id} if task_id else {}),
              **({"namespace": namespace} if namespace else {}),
              **({"node_id": node_id} if node_id else {}),
              **run_params("finished_statuses", "repair_statuses")}
    body = ", ".join(f"{key}: {json.dumps(value)}" for key, value in params.items())
    click.echo(f":params {{{body}}}")
