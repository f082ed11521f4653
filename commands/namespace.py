"""`plan|repair|patch|view --namespace NS`: a fault followed across the conversations of a
shared agent memory (issue 37). The commands of commands/repair.py, memory.py and view.py hand
over here when given `--namespace`; parse, call the library, print."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from provrepair.commands.output import emit_json, exit_for, pending_lines, store
from provrepair.provenance.errors import InputError
from provrepair.provenance.vocab import MemoryStatus


def plan_namespace_command(namespace: str, faults: list[str] | None, explain_id: str | None,
                           no_record: bool, as_json: bool) -> None:
    """`plan --namespace NS --faults R,...` (agent ids); each reached conversation's plan is
    recorded as a run of it (unless --no-record)."""
    from provrepair.repair.plan.explain import explain
    from provrepair.repair.plan.namespace import conversation_path, plan_namespace
    from provrepair.repair.runs import record_plan_run

    if not faults:
        raise InputError(f"plan --namespace {namespace}: give --faults with the agent ids of "
                         "the faulty records")
    with store() as st:
        nsplan, trace = plan_namespace(st, namespace, faults)
        if explain_id is not None:
            _explain(nsplan, trace, explain_id, as_json, explain, conversation_path)
            return
        runs = {} if no_record else {
            c.task_id: record_plan_run(st, c.plan, method="dependency_guided")
            for c in nsplan.conversations}
    if as_json:
        emit_json({**nsplan.model_dump(mode="json"), "runs": runs})
        return
    print_namespace_plan(nsplan, runs)


def namespace_plan_of_task(task_id: str, faults: list[str] | None) -> Any:
    """The namespace plan of one task's faults (`plan --task T --scope namespace`)."""
    from provrepair.repair.plan.namespace import plan_from_task

    with store() as st:
        return plan_from_task(st, task_id, faults)[0]


def _explain(nsplan: Any, trace: Any, target: str, as_json: bool, explain: Any,
             conversation_path: Any) -> None:
    """`--explain TASK` (how the fault came to it) or `--explain TASK:NODE` (and why that node
    of it got its disposition)."""
    task_id, _, node_id = target.partition(":")
    path = conversation_path(nsplan, task_id)
    if not path:
        raise InputError(f"--explain {target}: the plan of namespace {nsplan.namespace!r} did "
                         f"not reach task {task_id!r}")
    conversation = next(c for c in nsplan.conversations if c.task_id == task_id)
    info: dict[str, Any] = {"task_id": task_id,
                            "path": [{"task_id": t, **h.model_dump()} for t, h in path]}
    if node_id:
        info["node"] = explain(conversation.plan, trace.traces[task_id], node_id)
    if as_json:
        emit_json(info)
        return
    click.echo(f"how the fault reached {task_id}:")
    for task, hop in path:
        if hop.from_task is None:
            click.echo(f"  {task}: holds the diagnosed fault {hop.record_id} ({hop.memory_id})")
        else:
            click.echo(f"  {task}: read record {hop.record_id} ({hop.memory_id}) after "
                       f"{hop.from_task}'s plan {_REACH[hop.reach]} it ({hop.from_memory})")
    if node_id:
        node = info["node"]
        click.echo(f"{node['id']} ({node['kind']}): {', '.join(node['dispositions']) or 'untouched'}")
        for key in ("affected", "support", "answer_relevance", "replay"):
            click.echo(f"  {key.replace('_', ' ')}: {node[key]}")


_REACH = {"fault": MemoryStatus.DELETED.value, "removed": MemoryStatus.QUARANTINED.value,
          "affected": "found affected (kept with support)"}


def print_namespace_plan(nsplan: Any, runs: dict[str, str]) -> None:
    click.echo(f"namespace {nsplan.namespace}: faults {', '.join(nsplan.faults)}; "
               f"{len(nsplan.conversations)} of {nsplan.conversations_in_namespace} "
               "conversations reached")
    click.echo(f"answers affected ({len(nsplan.affected_answers)}):")
    for a in nsplan.affected_answers:
        click.echo(f"  {a.task_id} (t={a.started_at}) {a.final_answer_id}: {a.answer}")
    click.echo("records:")
    for r in nsplan.records:
        click.echo(f"  {r.record_id:<20} {r.disposition:<10} (first reached in {r.task_id})")
    for c in nsplan.conversations:
        reached = ", ".join(f"{link.record_id} ({link.reach}" +
                            (f" from {link.from_task})" if link.from_task else ")")
                            for link in c.reached_by)
        run = f" (run {runs[c.task_id]})" if c.task_id in runs else ""
        click.echo(f"conversation {c.task_id} t={c.started_at}{run}: reached by {reached}")
        p = c.plan
        click.echo(f"  delete {p.delete_memory_ids or '-'}  quarantine "
                   f"{p.quarantine_memory_ids or '-'}  invalidate {len(p.invalidate_claim_ids)}"
                   f"  replay {len(p.replay_step_ids)}"
                   + ("  ANSWER AFFECTED" if c.answer_affected else ""))


def repair_namespace_command(namespace: str, faults: list[str] | None, brain: Any,
                             tools: Any, approve: tuple[str, ...], skip: tuple[str, ...],
                             as_json: bool) -> None:
    """`repair --namespace NS --faults R,...`; `--approve`/`--skip TASK:STEP[:HASH]` after a
    conversation stopped for a person (resolved against the run's conversations)."""
    from provrepair.repair.namespace_repair import repair_namespace

    if not faults:
        raise InputError(f"repair --namespace {namespace}: give --faults with the agent ids of "
                         "the faulty records")
    with store() as st:
        report = repair_namespace(st, namespace, faults, brain, tools=tools, approve=approve,
                                  skip=skip)
    if as_json:
        emit_json(report.to_json())
    else:
        _print_repair(report)
    exit_for(report.status)


def _print_repair(report: Any) -> None:
    from provrepair.provenance.state.runs import ReportStatus

    click.echo(f"namespace {report.namespace}: {report.status} (namespace run {report.run_id}), "
               f"{len(report.conversations)} conversation(s)")
    for c in report.conversations:
        click.echo(f"  {c.task_id}: {c.status}" + (f" (run {c.run_id})" if c.run_id else ""))
        if c.answer_affected:
            click.echo(f"    answer given:     {c.answer_given}")
            corrected = c.corrected_answer or ("(once you decided)" if c.needs_human
                                               else "(none)")
            click.echo(f"    corrected answer: {corrected}")
        for step_id, why in c.unresolved.items():
            click.echo(f"    unresolved {step_id}: {why}")
        if c.needs_human:
            calls = c.pending or [c.needs_human]
            click.echo(f"    NEEDS A HUMAN: {len(calls)} call(s) wait for your decision:")
            for line in pending_lines(calls):
                click.echo("      " + line)
            steps = list(dict.fromkeys(p["step_id"] for p in calls))
            click.echo(f"    then run: provrepair repair --namespace {report.namespace} --faults "
                       f"{','.join(report.faults)} "
                       + " ".join(f"--approve {c.task_id}:{s}" for s in steps)
                       + f"  (or --skip {c.task_id}:{steps[0]}; TASK:STEP:HASH approves only "
                       "the call with that hash)")
    if report.status != ReportStatus.NEEDS_HUMAN:  # decide first: the run is not finished
        click.echo(f"then: provrepair patch --namespace {report.namespace} > patch.json")


def patch_namespace_command(namespace: str, run_id: str | None) -> None:
    from provrepair.repair.namespace_patch import namespace_patch

    with store() as st:
        emit_json(namespace_patch(st, namespace, run_id).model_dump(mode="json"))


def view_namespace_command(namespace: str, faults: list[str] | None, out: Path,
                           as_json: bool) -> None:
    from provrepair.repair.namespace_repair import list_namespace_runs
    from provrepair.repair.plan.model import NamespacePlan
    from provrepair.repair.plan.namespace import plan_namespace
    from provrepair.view.namespace import namespace_view_data
    from provrepair.view.page import render

    with store() as st:
        if faults:
            nsplan, _ = plan_namespace(st, namespace, faults)
        else:  # the latest namespace repair's plan
            runs = list_namespace_runs(st, namespace)
            if not runs:
                raise InputError(f"view --namespace {namespace}: no namespace repair yet; give "
                                 "--faults to draw the plan of those records")
            nsplan = NamespacePlan.model_validate(runs[-1]["plan"])
        data = namespace_view_data(st, nsplan)
    page = render(data)
    try:
        out.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write {out}: {exc.strerror or exc}") from exc
    info = {"namespace": namespace, "out": str(out),
            "conversations": [c.task_id for c in nsplan.conversations],
            "nodes": len(data["nodes"]), "bytes": len(page.encode("utf-8"))}
    if as_json:
        emit_json(info)
        return
    click.echo(f"wrote {out}: namespace {namespace}, {len(nsplan.conversations)} conversations, "
               f"{info['nodes']} nodes")
