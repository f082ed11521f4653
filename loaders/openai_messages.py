"""OpenAI-style chat transcripts → cases (`provrepair ingest --from openai-messages`).

A transcript file is a JSON object (one per line in `.jsonl`):

    {"task_id": "t1", "domain": "shopping",            # task_id defaults to the file name
     "messages": [{"role": "user", "content": "..."},
                  {"role": "assistant", "content": null,
                   "tool_calls": [{"id": "call_1", "type": "function",
                                   "function": {"name": "search", "arguments": "{...}"}}]},
                  {"role": "tool", "tool_call_id": "call_1", "content": "..."}, ...],
     "memory_events": [{"after": 0, "op": "search", "query": "...",
                        "records": [{"id": "m1", "content": "..."}]},
                       {"after": 3, "op": "create", "id": "m2", "content": "..."}],
     "diagnosed_faults": ["m1"]}

or a bare list of messages. `after` is the index of the message a memory event followed (-1:
before the first). Messages carry no clock, so message i is at time 1000·(i+1) and the k-th
memory event after it at 1000·(i+1)+k+1. Tool calls and results pair by `tool_call_id`. An
assistant message may name its evidence (`"evidence": [...]` on the message, or a JSON
content object with an `evidence` list): those become its dependencies; otherwise every
earlier item of the conversation is (loaders/agent_run.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from provrepair.loaders.agent_run import (
    Event,
    MemorySearch,
    MemoryWrite,
    ModelOutput,
    RunBuilder,
    ToolCall,
    ToolResult,
    UserMessage,
)
from provrepair.loaders.case_files import read_json_records
from provrepair.provenance.errors import CaseError
from provrepair.provenance.models import Case

OPS = ("search", "create", "update", "upsert", "delete")


def load_transcripts(paths: list[Path]) -> list[Case]:
    """Every transcript of every file, as validated cases (nothing is written here)."""
    return [transcript_case(raw, Path(where.split(":")[0]).stem)
            for path in paths for where, raw in read_json_records(path)]


def transcript_case(raw: Any, default_task: str) -> Case:
    data = {"messages": raw} if isinstance(raw, list) else raw
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise CaseError(None, "messages", None, "a transcript is a list of messages, or an "
                        "object with a `messages` list")
    task_id = str(data.get("task_id") or default_task)
    builder = RunBuilder(task_id, str(data.get("domain") or "agent"))
    for event in sorted(_events(task_id, data), key=lambda e: e.ts):
        builder.add(event)
    return builder.case([str(f) for f in data.get("diagnosed_faults") or []])


def _events(task_id: str, data: dict[str, Any]) -> list[Event]:
    events: list[Event] = []
    for i, message in enumerate(data["messages"]):
        events.extend(_message_events(task_id, i, message))
    counts: dict[int, int] = {}
    for event in data.get("memory_events") or []:
        after = event.get("after", -1) if isinstance(event, dict) else None
        if not isinstance(after, int):
            raise CaseError(task_id, "memory_events.after", None, "expected a message index")
        counts[after] = counts.get(after, 0) + 1
        events.append(_memory_event(task_id, event, 1000 * (after + 1) + counts[after]))
    return events


def _message_events(task_id: str, i: int, message: Any) -> list[Event]:
    ts = 1000 * (i + 1)
    role = message.get("role") if isinstance(message, dict) else None
    where = f"messages[{i}]"
    if role == "user":
        return [UserMessage(_text(message.get("content")), ts)]
    if role == "assistant":
        calls = tuple(_tool_call(task_id, where, c) for c in message.get("tool_calls") or [])
        text = _text(message.get("content"))
        return [ModelOutput(text or "(tool calls)", ts, calls, _evidence(message, text))]
    if role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str):
            raise CaseError(task_id, f"{where}.tool_call_id", None, "a tool message needs one")
        return [ToolResult(call_id, _text(message.get("content")), ts)]
    if role in ("system", "developer"):
        return []  # instructions, not evidence of this run's facts
    raise CaseError(task_id, f"{where}.role", None, f"unknown role {role!r}")


def _tool_call(task_id: str, where: str, call: Any) -> ToolCall:
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict) or not isinstance(call.get("id"), str):
        raise CaseError(task_id, f"{where}.tool_calls", None, "expected {id, function}")
    try:
        arguments = json.loads(function.get("arguments") or "{}")
    except json.JSONDecodeError as exc:
        raise CaseError(task_id, f"{where}.tool_calls", call["id"],
                        f"arguments are not JSON: {exc.msg}") from exc
    return ToolCall(call["id"], str(function.get("name")), arguments)


def _memory_event(task_id: str, event: dict[str, Any], ts: int) -> Event:
    op = event.get("op")
    if op not in OPS:
        raise CaseError(task_id, "memory_events.op", None, f"{op!r} is not one of {OPS}")
    if op == "search":
        records = event.get("records") or []
        if not all(isinstance(r, dict) and isinstance(r.get("id"), str) for r in records):
            raise CaseError(task_id, "memory_events.records", None, "expected [{id, content}]")
        return MemorySearch(tuple((r["id"], str(r.get("content", ""))) for r in records), ts,
                            str(event.get("query") or ""))
    if not isinstance(event.get("id"), str):
        raise CaseError(task_id, "memory_events.id", None, f"a {op} needs the record id")
    return MemoryWrite(op, event["id"], str(event.get("content") or ""), ts,
                       failed=bool(event.get("failed")))


def _text(content: Any) -> str:
    if isinstance(content, list):  # content parts: keep the text ones
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _evidence(message: dict[str, Any], text: str) -> tuple[str, ...] | None:
    evidence = message.get("evidence")
    if evidence is None and text.lstrip().startswith("{"):
        try:
            evidence = json.loads(text).get("evidence")
        except (json.JSONDecodeError, AttributeError):
            evidence = None
    return tuple(str(e) for e in evidence) if isinstance(evidence, list) else None
