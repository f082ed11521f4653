"""`provrepair plan|repair|history|methods`: parse, call the repair engine, print."""

from __future__ import annotations

import time
from typing import Any

import click

from provrepair.commands.output import emit_json, exit_for, id_list, pending_lines, store
from provrepair.provenance.errors import InputError
from provrepair.provenance.state.runs import ReportStatus, RunStatus
from provrepair.provenance.vocab import MemoryStatus

SCOPE_OPTION = click.option(
    "--scope", type=click.Choice(["task", "namespace"]), default="task", show_default=True,
    help="Where the echo sweep looks for suspected copies: the task, or also every other "
         "task of its memory namespace (the case's memory_namespace).")


NAMESPACE_OPTION = click.option(
    "--namespace", metavar="NS",
    help="A shared agent memory instead of one task: follow the records --faults names (the "
         "agent's ids) into every conversation of the memory namespace that read them.")


@click.command()
@click.option("--task", "task_id", help="Task id.")
@click.option("--faults", help="Comma-separated memory ids overriding the diagnosed faults "
              "(with --namespace: the agent ids of the faulty records).")
@click.option("--explain", "explain_id", metavar="ID",
              help="Explain why one node got its disposition instead of printing the plan "
                   "(with --namespace: TASK or TASK:NODE, the path across conversations).")
@click.option("--no-record", is_flag=True, help="Do not write the plan to the graph as a run.")
@SCOPE_OPTION
@click.option("--method", default="dependency_guided", show_default=True,
              help="Planner: ours (dependency_guided), the paper's (paper: without rule 8), "
                   "or a baseline or ablation (see `provrepair methods`; --explain needs one "
                   "of the first two).")
@NAMESPACE_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the plan (or explanation) as JSON.")
def plan(task_id: str | None, faults: str | None, explain_id: str | None, no_record: bool,
         scope: str, method: str, namespace: str | None, as_json: bool) -> None:
    """Compute the rollback plan of a task (docs/method.md §1-4).

    Seeds, contaminated region, independent support, answer relevance and the replay set are
    computed in the graph store; the plan is recorded as a :RepairRun (unless --no-record)
    so a graph browser can show it. Planning never changes the memory store. With
    --namespace NS (and with --task T --scope namespace, after the task's plan): the plan
    across the conversations of a shared memory (README, "One fault, every conversation").
    """
    if namespace is not None:
        if method != "dependency_guided":
            raise InputError(f"--method {method}: a namespace plan is dependency_guided's "
                             "(plan one task with --task T --method ...)")
        from provrepair.commands.namespace import plan_namespace_command

        return plan_namespace_command(namespace, id_list(faults), explain_id, no_record,
                                      as_json)
    if task_id is None:
        raise InputError("give --task ID (or --namespace NS)")
    from provrepair.repair.methods import get_method
    from provrepair.repair.plan.explain import explain
    from provrepair.repair.plan.scope import task_namespace, with_scope
    from provrepair.repair.runs import record_plan_run

    fault_ids = id_list(faults)
    planner = get_method(method)  # ConfigError naming the known methods
    with store() as st:
        if scope == "namespace":
            task_namespace(st, task_id)  # NoNamespace before planning
        the_plan, trace = _method_plan(st, planner, task_id, fault_ids, explain_id)
        the_plan = with_scope(st, the_plan, "namespace" if scope == "namespace" else "task")
        if explain_id is not None:
            _print_explanation(explain(the_plan, trace, explain_id), as_json)
            return
        run_id = None if no_record else record_plan_run(st, the_plan, method=method)
    if scope == "namespace":  # and the conversations its faults reached (issue 37)
        from provrepair.commands.namespace import namespace_plan_of_task, print_namespace_plan

        nsplan = namespace_plan_of_task(task_id, fault_ids)
        if as_json:
            emit_json({**the_plan.model_dump(), "namespace_plan": nsplan.model_dump(mode="json")})
            return
        _print_plan(the_plan, run_id)
        print_namespace_plan(nsplan, {})
        return
    if as_json:
        emit_json(the_plan.model_dump())
        return
    _print_plan(the_plan, run_id)


def _method_plan(st: Any, planner: Any, task_id: str, faults: list[str] | None,
                 explain_id: str | None) -> tuple[Any, Any]:
    """(plan, planner trace): the engine's planners give their trace (for --explain); any
    other method plans from the stored case, without its evaluation block."""
    if hasattr(planner, "compute"):
        found: tuple[Any, Any] = planner.compute(st, task_id, faults)
        return found
    if explain_id is not None:
        raise InputError(f"--explain {explain_id}: method {planner.name!r} has no planner "
                         "trace to explain; use --method dependency_guided or paper")
    from provrepair.provenance.readback import read_case
    from provrepair.repair.methods import MethodContext
    from provrepair.repair.reasoners.offline import OfflineReasoner

    case = read_case(st, task_id, with_evaluation=False)
    return planner.plan(MethodContext(st, task_id, case, faults, OfflineReasoner())).plan, None


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
    for copy, fault in the_plan.suspected_copies.items():
        click.echo(f"  suspected copy: {copy} asserts {fault}'s value, no recorded edge reaches "
                   "it (repair --quarantine-copies quarantines it)")
    if the_plan.scope == "namespace":
        click.echo(f"  scope: memory namespace {the_plan.memory_namespace!r}, "
                   f"{len(the_plan.namespace_copies)} suspected copies in its other tasks")
    for c in the_plan.namespace_copies:
        what = ("is the fault's own record of the shared memory (deleted there" if c.same_record
                else f"asserts {c.fault_id}'s value (quarantined there")
        click.echo(f"  suspected copy in task {c.task_id}: {c.memory_id} {what} by repair "
                   "--scope namespace --quarantine-copies)")


def _print_explanation(info: dict[str, Any], as_json: bool) -> None:
    if as_json:
        emit_json(info)
        return
    click.echo(f"{info['id']} ({info['kind']}): {', '.join(info['dispositions']) or 'untouched'}")
    for key in ("affected", "support", "answer_relevance", "replay"):
        click.echo(f"  {key.replace('_', ' ')}: {info[key]}")


@click.command()
@click.option("--task", "task_id", help="Task id.")
@click.option("--reasoner", default="offline", show_default=True,
              help="offline: deterministic, from each step's derivation; openai: any "
              "OpenAI-compatible endpoint (OPENAI_API_KEY, OPENAI_BASE_URL); or a plugin's "
              "reasoner (provrepair.reasoners entry points). An unknown name is refused.")
@click.option("--model", default=None, help="Model name for --reasoner openai.")
@click.option("--max-calls", type=int, default=None,
              help="At most this many model calls; steps left then stay unresolved (partial).")
@click.option("--budget", type=int, default=None, metavar="TOKENS",
              help="At most this many model tokens; steps left then stay unresolved (partial).")
@click.option("--tools", "tool_refs", multiple=True, metavar="FILE|MODULE:OBJECT",
              help="The agent's tools and their side-effect classes: a JSON/TOML tools file "
              "(Python callables, OpenAI tool schemas, MCP servers) or a ToolSet object. "
              "An undeclared tool is irreversible: the repair stops before re-issuing it.")
@click.option("--faults", help="Comma-separated memory ids overriding the diagnosed faults.")
@click.option("--dry-run", is_flag=True, help="Plan and replay, but write nothing.")
@click.option("--no-early-cutoff", is_flag=True,
              help="Replay every selected step even when its inputs came out unchanged.")
@click.option("--method", default="dependency_guided", show_default=True,
              help="Repair method: ours (dependency_guided), the paper's (paper: without "
                   "rule 8), a baseline or an ablation (see `provrepair methods`).")
@click.option("--resume", is_flag=True,
              help="Continue a repair that stopped with needs_human (exit 3), after a person "
                   "decided about the side-effecting step it names.")
@click.option("--approve", multiple=True, metavar="STEP[:HASH]",
              help="With --resume: issue exactly the call the stop showed at this step (with "
                   ":HASH, only if that call's hash starts so); a different call there is not "
                   "issued: the repair stops again, showing it. Approvals accumulate. With "
                   "--namespace: TASK:STEP[:HASH], without --resume.")
@click.option("--skip", multiple=True, metavar="STEP",
              help="With --resume: do not issue this step's call; it stays unresolved (with "
                   "--namespace: TASK:STEP).")
@click.option("--continue", "continue_partial", is_flag=True,
              help="Finish a partial repair (exit 4): regenerate what it left unresolved, "
                   "e.g. with --reasoner openai or --tools, as one more run.")
@click.option("--quarantine-copies", is_flag=True,
              help="Also quarantine the plan's suspected copies: records asserting a "
                   "diagnosed fault's value that no recorded edge reaches (`plan` lists them); "
                   "with --scope namespace, those of the namespace's other tasks too, each in "
                   "its own task.")
@SCOPE_OPTION
@NAMESPACE_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the full report as JSON.")
def repair(task_id: str | None, reasoner: str, model: str | None, max_calls: int | None,
           budget: int | None, tool_refs: tuple[str, ...], faults: str | None, dry_run: bool,
           no_early_cutoff: bool, method: str, resume: bool, approve: tuple[str, ...],
           skip: tuple[str, ...], continue_partial: bool,
           quarantine_copies: bool, scope: str, namespace: str | None, as_json: bool) -> None:
    """Repair a task: delete and quarantine contaminated memories, replay what the corrected
    answer needs, and write the result back (crash-safe; one writer per task at a time).

    A task version is repaired once; running `repair` again prints that repair. Exit codes:
    0 repaired (or already repaired); 2 an error you can fix (one line on stderr); 3 stopped
    before side-effecting tool calls (an irreversible or undeclared tool, or a call that may
    have been sent by a run that died): the faulty memories are already out of retrieval, the
    pending calls are listed with their arguments and hash (`provrepair pending` shows them
    again), and `--resume --approve STEP` or `--resume --skip STEP` carries on; 4 partial: the
    memory is repaired but some replayed steps are unresolved (listed with their reasons):
    `--continue` with what they need (`--reasoner openai`, `--tools`) regenerates them.
    Every tool call is logged in the store before and after it is sent: no run sends a call
    an earlier one already sent (`history` lists them).
    """
    from provrepair.repair.reasoners import make_reasoner
    from provrepair.repair.service import Resume, repair_task
    from provrepair.repair.tools.declared import ToolSet, load_tools

    if namespace is None and task_id is None:
        raise InputError("give --task ID (or --namespace NS)")
    if namespace is not None:  # never silently ignored: --dry-run would repair for real
        unsupported = {"--task": task_id is not None, "--dry-run": dry_run, "--resume": resume,
                       "--continue": continue_partial, "--no-early-cutoff": no_early_cutoff,
                       "--method": method != "dependency_guided",
                       "--quarantine-copies": quarantine_copies, "--scope": scope != "task"}
        given = [name for name, on in unsupported.items() if on]
        if given:
            raise InputError(f"repair --namespace {namespace}: {given[0]} is not supported with "
                             "--namespace (`plan --namespace` shows what it would do without "
                             "acting; after a stop, --approve/--skip TASK:STEP)")
    if (approve or skip) and not resume and namespace is None:
        raise InputError("--approve and --skip go with --resume")
    if (resume or continue_partial) and (dry_run or faults):
        raise InputError("--resume and --continue carry on the earlier repair's own plan: no "
                         "--dry-run or --faults")
    if resume and continue_partial:
        raise InputError("--resume (after needs_human) or --continue (after partial), not both")
    decided = Resume(frozenset(approve), frozenset(skip)) if resume else None
    fault_ids = id_list(faults)
    brain = make_reasoner(reasoner, model, max_calls=max_calls, budget=budget)
    tools = None
    if tool_refs:
        tools = ToolSet()
        for ref in tool_refs:
            tools.update(load_tools(ref))
    if namespace is not None:  # the conversations of a shared memory (issue 37)
        from provrepair.commands.namespace import repair_namespace_command

        return repair_namespace_command(namespace, fault_ids, brain, tools, approve, skip,
                                        as_json)
    assert task_id is not None
    with store() as st:
        report = repair_task(st, task_id, brain, faults=fault_ids, dry_run=dry_run,
                             early_cutoff=not no_early_cutoff, method=method, resume=decided,
                             tools=tools, continue_partial=continue_partial,
                             quarantine_copies=quarantine_copies,
                             scope="namespace" if scope == "namespace" else "task")
        patch = _patch_of(st, report) if as_json else None
    if as_json:
        emit_json({**report.to_json(), "memory_patch": patch})
    else:
        _print_report(report)
    exit_for(report.status)


def _patch_of(st: Any, report: Any) -> dict[str, Any] | None:
    """The memory patch of the committed run (repair/patch.py), for scripts to carry on."""
    if report.run_id is None or report.status == ReportStatus.DRY_RUN:
        return None
    from provrepair.repair.patch import memory_patch

    return memory_patch(st, report.task_id).model_dump(mode="json")  # cumulative: every run


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
    if report.plan.get("scope") == "namespace":
        copies = report.plan.get("namespace_copies") or []
        done = {(c["task_id"], c["memory_id"]) for c in report.namespace_quarantined}
        click.echo(f"  namespace {report.plan.get('memory_namespace')!r}: "
                   f"{len(copies)} suspected copies in other tasks, "
                   f"{len(report.namespace_quarantined)} quarantined now")
        for c in copies:
            state = "reported" if (c["task_id"], c["memory_id"]) not in done \
                else MemoryStatus.DELETED.value if c.get("same_record") else MemoryStatus.QUARANTINED.value
            click.echo(f"    {c['task_id']}: {c['memory_id']} echoes {c['fault_id']} ({state})")
    for step_id, why in report.unresolved.items():
        click.echo(f"  unresolved {step_id}: {why}")
    if report.status == ReportStatus.PARTIAL:
        click.echo(f"  PARTIAL: the memory is repaired, {len(report.unresolved)} replayed "
                   "step(s) are unresolved; finish with: provrepair repair --task "
                   f"{report.task_id} --continue (with --reasoner openai and/or --tools)")
    if report.needs_human:
        click.echo("  NEEDS A HUMAN: the faulty memories are already out of retrieval; "
                   f"{len(report.pending) or 1} call(s) wait for your decision:")
        for line in pending_lines(report.pending or [report.needs_human]):
            click.echo("    " + line)
        steps = list(dict.fromkeys(p["step_id"] for p in report.pending or [report.needs_human]))
        click.echo(f"  then run: provrepair repair --task {report.task_id} --resume "
                   + " ".join(f"--approve {s}" for s in steps)
                   + f"  (or --skip {steps[0]}; approve or skip each step)")
    used = report.reasoner
    if used.get("model"):
        click.echo(f"  reasoner:    {used['reasoner']} {used['model']} "
                   f"({used.get('prompt_contract')}), {used.get('calls', 0)} calls, "
                   f"{used.get('total_tokens', 0)} tokens"
                   + (f"; stopped: {used['exhausted']}" if used.get("exhausted") else ""))
    c = report.counts
    click.echo(f"  cost: {c.get('llm_calls', 0)} LLM calls, {c.get('tokens', 0)} tokens, "
               f"{c.get('replayed_steps', 0)}/{c.get('original_steps', 0)} steps replayed, "
               f"{c.get('early_cutoff_steps', 0)} cut off early, {c.get('tool_calls', 0)} tool calls")


def side_effect_lines(calls: list[Any]) -> list[str]:
    """Calls that may have acted in the world (repair/tools/calllog.py LoggedCall): what was
    sent, when, how it ended, and the approval that allowed it."""
    from provrepair.provenance.state.calls import canonical_args

    lines = []
    for call in calls:
        when = _time(call.issued_at) if call.issued_at else "?"
        outcome = (f"-> {_short(call.result or '')!r}" if call.status == "done"
                   else f"-> {call.status}: {_short(call.error or 'no answer recorded')}")
        allowed = (f"approved {_time(call.approved_at)}, run {call.approved_run}"
                   if call.approved_run else f"allowed: {call.side_effect}")
        lines.append(f"{call.step_id}  {call.tool} {canonical_args(call.args)}  "
                     f"#{call.call_id}  sent {when}"
                     + (f" ({call.attempts} attempts)" if call.attempts > 1 else "")
                     + f"  {outcome}  [{allowed}]")
    return lines


def _time(ms: int | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime((ms or 0) / 1000))


def _short(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


@click.command()
@click.option("--task", "task_id", required=True, help="Task id.")
@click.option("--json", "as_json", is_flag=True, help="Print the pending calls as JSON.")
def pending(task_id: str, as_json: bool) -> None:
    """The calls a stopped repair waits on (exit 3 of `repair`): step, tool, canonical
    arguments and call hash of each, as the stop showed them, and how to go on."""
    from provrepair.provenance.readback import get_task_props
    from provrepair.repair.runs import latest_repair

    with store() as st:
        get_task_props(st, task_id)
        previous = latest_repair(st, task_id)
    waiting = previous is not None and previous["status"] == RunStatus.NEEDS_HUMAN
    summary = previous["summary"] if waiting and previous is not None else {}
    calls = summary.get("pending") or ([summary["needs_human"]] if summary.get("needs_human")
                                       else [])
    if as_json:
        emit_json(calls)
        return
    if previous is None or not waiting:
        state = "has no repair" if previous is None else f"is {previous['status']}"
        click.echo(f"task {task_id} {state}: no calls wait for a person")
        return
    click.echo(f"task {task_id}: run {previous['run_id']} stopped; {len(calls)} call(s) wait "
               "for your decision:")
    for line in pending_lines(calls):
        click.echo("  " + line)
    steps = list(dict.fromkeys(c["step_id"] for c in calls))
    click.echo(f"approve: provrepair repair --task {task_id} --resume "
               + " ".join(f"--approve {s}" for s in steps) + f"   skip: --skip {steps[0]}")


@click.command()
@click.option("--task", "task_id", required=True, help="Task id.")
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON.")
def history(task_id: str, as_json: bool) -> None:
    """List the repair runs (plans and repairs) recorded for a task, with the side effects
    each repair issued (tool, arguments, result, time, the approval that allowed it) and the
    calls a stop waits on; first, the calls that repairs of an earlier version of the task
    sent (kept by `ingest --replace` and `delete`)."""
    from provrepair.provenance.readback import get_task_props
    from provrepair.repair.runs import list_runs
    from provrepair.repair.tools.calllog import EARLIER_VERSION, issued_calls, side_effects_by_run

    with store() as st:
        get_task_props(st, task_id)
        runs = list_runs(st, task_id)
        by_run = side_effects_by_run(runs, issued_calls(st, task_id))
    earlier = by_run.get(EARLIER_VERSION, [])
    if as_json:  # the calls of dropped versions first, as a run entry without a run id
        emit_json([*([{"run_id": None, "earlier_version": True,
                       "side_effects": [c.public() for c in earlier]}] if earlier else []),
                   *({**run, "side_effects": [c.public() for c in by_run.get(run["run_id"], [])]}
                     for run in runs)])
        return
    if earlier:
        click.echo("sent by a repair of an earlier version (ingest --replace, delete since):")
        for line in side_effect_lines(earlier):
            click.echo("    sent: " + line)
    if not runs:
        click.echo(f"no repair runs for task {task_id}")
    for run in runs:
        created = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(run["created"] / 1000))
        replay = len((run.get("plan") or {}).get("replay_step_ids", []))
        click.echo(f"{run['run_id']}  {created}Z  {run['method']:<18} {run['status']:<9} "
                   f"replay={replay}")
        for line in side_effect_lines(by_run.get(run["run_id"], [])):
            click.echo("    sent: " + line)
        waiting = pending_lines(run["summary"].get("pending") or [])
        if waiting and run["status"] == RunStatus.NEEDS_HUMAN:
            click.echo("    waits on:")
            for line in waiting:
                click.echo("      " + line)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def methods(as_json: bool) -> None:
    """List the repair methods: ours, the baselines and the ablations."""
    from provrepair.repair.methods import get_method, method_names

    rows = [{"name": n, "description": get_method(n).description} for n in method_names()]
    if as_json:
        emit_json(rows)
        return
    for row in rows:
        click.echo(f"{row['name']:<22} {row['description']}")

