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
     "diagnosed_faults": ["m1"],
     "memory_namespace": "user-42"}                    # optional: the memory it shares

or a bare list of messages. `after` is the index of the message a memory event followed (-1:
before the first). Messages carry no clock, so message i is at time 1000·(i+1) and the k-th
memory event after it at 1000·(i+1)+k+1: an order, not a time (the case's world says so; in a
shared memory the conversation has no absolute time, provenance/agent_records.py). Tool calls
and results pair by `tool_call_id` (a
call without an id pairs with the next tool message without one); arguments may be a JSON
string or an object. An assistant message may name its evidence (`"evidence": [...]` on the
message, or a JSON content object with an `evidence` list): those become its dependencies. A memory
write may name what it stores the same way (`"evidence"`: record ids, tool call ids,
`messages[i]`, `memory_events[k]`); without, it depends on the latest assistant message and
what came since (loaders/agent_run.py).
Otherwise, what each assistant message was shown:
- **requests given** (`"requests": [{"messages": [...]}, ...]`, one per assistant message, in
  order: the messages exactly as sent for the call that produced it, as a chat-completions
  request log or a proxy such as LiteLLM records them; other keys of an entry, such as the
  model, are ignored): it depends on what its request carries and nothing else, read as the
  OpenTelemetry loader reads a request (loaders/otel.py `input_context`, the same matching:
  user turns by text in order, earlier outputs by text, tool calls and results by id,
  records shown by content in a system or tool message or named by a `memory_record_id` key
  on a text part), plus what a search returned since the previous assistant message (it may
  have been put in the request out of band). Messages a request repeats are matched to the
  conversation, not stored again; a user message or tool result only a request shows is
  added at that point. So a record a search returned in turn 1 is context of a later turn
  only through what carries it: the output it went into (re-sent), a system message showing
  it, its id, a tool result;
- **no requests** (the conservative reading, the default): the transcript's messages ARE its
  context: an assistant message depends on every earlier message and memory event
  (loaders/agent_run.py, written as the previous assistant message plus what came since),
  and on the records whose content a system message shows.
A request log alone (`requests` with each call's `response`, no `messages`) is a transcript
too: the responses are its assistant messages (`messages[k]` is response k, and a memory
event's `after` counts responses), user turns and tool results enter with the first request
that carries them; a tool result no later request carries is not in the log, so not in the
run. Requests cover every assistant message or none (a conservative output after a narrow one
would not reach what the narrow one was not shown). Why requests rather than marking memory
events "in this request only": a request log is what proxies already write, and it also
tells which earlier messages and system texts a call carried, not only which retrievals; a
flag alone would narrow little, since in a plain transcript each message is shown the
previous one, which was shown the record (bench/trace_soundness.py measures the readings).
Content must be a string or OpenAI text parts; other shapes (an Anthropic-style list with
`tool_use` / `tool_result` blocks) are refused, naming the message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from provrepair.loaders.agent_run import (
    Context,
    Event,
    MemorySearch,
    MemoryWrite,
    ModelOutput,
    RecordSeen,
    RunBuilder,
    ToolCall,
    ToolResult,
    UserMessage,
    value_text,
)
from provrepair.loaders.case_files import read_json_records
from provrepair.loaders.limits import check_depth, check_id, loads
from provrepair.loaders.otel import input_context
from provrepair.provenance.agent_records import CLOCK, ORDER_ONLY
from provrepair.provenance.errors import CaseError
from provrepair.provenance.models import Case

OPS = ("search", "create", "update", "upsert", "delete")


def load_transcripts(paths: list[Path]) -> list[Case]:
    """Every transcript of every file, as validated cases (nothing is written here)."""
    return [transcript_case(raw, Path(where.split(":")[0]).stem)
            for path in paths for where, raw in read_json_records(path)]


def transcript_case(raw: Any, default_task: str) -> Case:
    data = {"messages": raw} if isinstance(raw, list) else raw
    task_id = (check_id(None, "task_id", data.get("task_id") or default_task)
               if isinstance(data, dict) else None)
    if isinstance(data, dict) and "messages" not in data and isinstance(data.get("requests"),
                                                                        list):
        data = {**data, "messages": _responses(str(task_id), data["requests"])}
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise CaseError(task_id, "messages", None, "a transcript is a list of messages, or an "
                        "object with a `messages` list (or a `requests` log)")
    task_id = str(task_id)
    builder = RunBuilder(task_id, str(data.get("domain") or "agent"))
    namespace = data.get("memory_namespace")
    if namespace is not None and not (isinstance(namespace, str) and namespace):
        raise CaseError(task_id, "memory_namespace", None, "expected the namespace's name "
                        "(a non-empty string)")
    builder.memory_namespace = namespace
    for event in sorted(_events(task_id, data, _requests(task_id, data)), key=lambda e: e.ts):
        builder.add(event)
    case = builder.case([str(f) for f in data.get("diagnosed_faults") or []])
    # its times only order its events: no absolute time across conversations
    return case.model_copy(update={"world": {**case.world, CLOCK: ORDER_ONLY}})


def _responses(task_id: str, requests: list[Any]) -> list[Any]:
    """A request log without the conversation: its responses are the conversation's
    assistant messages; user turns and tool results enter with the first request that
    carries them (the matching of `input_context`). Sources stay `messages[k]`: response k."""
    out = []
    for k, request in enumerate(requests):
        response = request.get("response") if isinstance(request, dict) else None
        if not isinstance(response, dict) or response.get("role", "assistant") != "assistant":
            raise CaseError(task_id, f"requests[{k}].response", None,
                            "a request log without `messages` needs each request's response "
                            "(the assistant message it returned)")
        out.append({**response, "role": "assistant"})
    return out


def _events(task_id: str, data: dict[str, Any], requests: list[Context] | None) -> list[Event]:
    events: list[Event] = []
    reader = _MessageReader(task_id, requests)
    for i, message in enumerate(data["messages"]):
        events.extend(reader.events(i, message))
    counts: dict[int, int] = {}
    for k, event in enumerate(data.get("memory_events") or []):
        after = event.get("after", -1) if isinstance(event, dict) else None
        if not isinstance(after, int):
            raise CaseError(task_id, f"memory_events[{k}].after", None,
                            "expected a message index")
        counts[after] = counts.get(after, 0) + 1
        events.append(_memory_event(task_id, event, 1000 * (after + 1) + counts[after],
                                    f"memory_events[{k}]"))
    return events


class _MessageReader:
    """Messages → events; remembers system texts (shown to every later output without a
    request), the calls still waiting for a result (to pair a call and a result that carry no
    id) and how many assistant messages had their request."""

    def __init__(self, task_id: str, requests: list[Context] | None):
        self.task_id = task_id
        self.requests = requests
        self.answered = 0
        self.system: list[str] = []
        self.named: list[str] = []  # records a message part names (`memory_record_id`)
        self.waiting: list[str] = []

    def events(self, i: int, message: Any) -> list[Event]:
        ts = 1000 * (i + 1)
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise CaseError(self.task_id, where, None, "a message is an object with a role")
        role = message.get("role")
        text = _text(self.task_id, where, message.get("content"))
        # a record a message names by id is context of every later output, whatever the role
        self.named += [p["memory_record_id"] for p in _text_parts(self.task_id, where,
                                                                   message.get("content"))
                       if "memory_record_id" in p]
        if role == "user":
            return [UserMessage(text, ts, where)]
        if role == "assistant":
            calls = tuple(self._tool_call(f"{where}.tool_calls[{j}]", c)
                          for j, c in enumerate(message.get("tool_calls") or []))
            context = Context(records=tuple(dict.fromkeys(self.named)),
                              texts=tuple(self.system), cumulative=True)
            if self.requests is not None:  # counted against the assistant messages before
                context, self.answered = self.requests[self.answered], self.answered + 1
            return [ModelOutput(text or "(tool calls)", ts, calls, _evidence(message, text),
                                context, source=where,
                                reasoning=_reasoning(self.task_id, where, message))]
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id is None and self.waiting:
                call_id = self.waiting[0]
            if not isinstance(call_id, str):
                raise CaseError(self.task_id, f"{where}.tool_call_id", None,
                                "a tool message needs one")
            check_id(self.task_id, f"{where}.tool_call_id", call_id)
            if call_id in self.waiting:
                self.waiting.remove(call_id)
            return [ToolResult(call_id, text, ts, source=where)]
        if role in ("system", "developer"):
            self.system.append(text)  # what it shows (remembered records) is context
            return []
        raise CaseError(self.task_id, f"{where}.role", None, f"unknown role {role!r}")

    def _tool_call(self, where: str, call: Any) -> ToolCall:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            raise CaseError(self.task_id, where, None, "expected {id, function: {name, arguments}}")
        call_id = check_id(self.task_id, f"{where}.id", call["id"]) \
            if isinstance(call.get("id"), str) else where
        raw = function.get("arguments")
        try:
            arguments = loads(raw or "{}", f"task {self.task_id!r}, {where}.function.arguments") \
                if isinstance(raw, str) or raw is None else raw
        except json.JSONDecodeError as exc:
            raise CaseError(self.task_id, where, call_id,
                            f"arguments are not JSON: {exc.msg}") from exc
        check_depth(arguments, f"task {self.task_id!r}, {where}.function.arguments")
        self.waiting.append(call_id)
        return ToolCall(call_id, str(function.get("name")),
                        arguments if isinstance(arguments, dict) else {"arguments": arguments})


def _requests(task_id: str, data: dict[str, Any]) -> list[Context] | None:
    """What each assistant message's request carried, when the transcript says (`requests`)."""
    requests = data.get("requests")
    if requests is None:
        return None
    if not isinstance(requests, list):
        raise CaseError(task_id, "requests", None, "expected a list of {messages: [...]}, one "
                        "per assistant message")
    answers = sum(1 for m in data["messages"] if isinstance(m, dict)
                  and m.get("role") == "assistant")
    if len(requests) != answers:
        raise CaseError(task_id, "requests", None,
                        f"{len(requests)} request(s) for {answers} assistant message(s): give "
                        "one per assistant message, in order, or none")
    return [_request_context(task_id, f"requests[{k}]", r) for k, r in enumerate(requests)]


def _request_context(task_id: str, where: str, request: Any) -> Context:
    messages = request.get("messages") if isinstance(request, dict) else None
    if not isinstance(messages, list):
        raise CaseError(task_id, f"{where}.messages", None,
                        "a request is an object with the `messages` it sent")
    return input_context([_genai_message(task_id, f"{where}.messages[{j}]", m)
                          for j, m in enumerate(messages)], where)


def _genai_message(task_id: str, where: str, message: Any) -> dict[str, Any]:
    """A chat message as sent → the GenAI shape (role + parts) `input_context` reads."""
    if not isinstance(message, dict):
        raise CaseError(task_id, where, None, "a message is an object with a role")
    role = message.get("role")
    if role not in ("user", "assistant", "tool", "system", "developer"):
        raise CaseError(task_id, f"{where}.role", None, f"unknown role {role!r}")
    parts = _text_parts(task_id, where, message.get("content"))
    if role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str):
            raise CaseError(task_id, f"{where}.tool_call_id", None,
                            "a tool message in a request needs one (its result is matched by it)")
        text = " ".join(p["content"] for p in parts)
        return {"role": role, "parts": [{"type": "tool_call_response", "id": call_id,
                                         "response": text},
                                        *(p for p in parts if "memory_record_id" in p)]}
    calls = message.get("tool_calls") or [] if role == "assistant" else []
    if not isinstance(calls, list):
        raise CaseError(task_id, f"{where}.tool_calls", None, "expected a list of tool calls")
    for j, call in enumerate(calls):
        if not isinstance(call, dict) or not isinstance(call.get("id"), str):
            raise CaseError(task_id, f"{where}.tool_calls[{j}].id", None,
                            "a tool call in a request needs its id (it is matched by it)")
        parts.append({"type": "tool_call", "id": call["id"]})
    return {"role": role, "parts": parts}


def _text_parts(task_id: str, where: str, content: Any) -> list[dict[str, Any]]:
    """Content → GenAI text parts, one per text part (joined, the same text `_text` reads),
    each keeping the `memory_record_id` it names."""
    _text(task_id, where, content)  # the same checks as a message of the conversation
    if not content:
        return []
    if isinstance(content, str):
        return [{"type": "text", "content": content}]
    out = []
    for i, part in enumerate(content):
        if part.get("type") not in TEXT_PARTS:
            continue
        record = part.get("memory_record_id")
        if record is not None:
            record = check_id(task_id, f"{where}.content[{i}].memory_record_id", record,
                              integers=False)
        out.append({"type": "text", "content": str(part.get("text", "")),
                    **({"memory_record_id": record} if record is not None else {})})
    return out


def _memory_event(task_id: str, event: dict[str, Any], ts: int, source: str) -> Event:
    op = event.get("op")
    if op not in OPS:
        raise CaseError(task_id, f"{source}.op", None, f"{op!r} is not one of {OPS}")
    if op == "search":
        records = event.get("records") or []
        if not isinstance(records, list) or not all(
                isinstance(r, dict) and isinstance(r.get("id"), str) for r in records):
            raise CaseError(task_id, f"{source}.records", None, "expected [{id, content}]")
        return MemorySearch(tuple(_record(task_id, r, f"{source}.records[{i}]")
                                  for i, r in enumerate(records)), ts,
                            str(event.get("query") or ""), source)
    if isinstance(event.get("records"), list) and "id" not in event:  # several, one operation
        records = event["records"]
        if not records or not all(isinstance(r, dict) and isinstance(r.get("id"), str)
                                  for r in records):
            raise CaseError(task_id, f"{source}.records", None,
                            "expected [{id, content, derived_from, supersedes}]")
        written = tuple(_record(task_id, r, f"{source}.records[{i}]")
                        for i, r in enumerate(records))
    elif isinstance(event.get("id"), str):
        written = (_record(task_id, event, source),)
    else:
        raise CaseError(task_id, f"{source}.id", None,
                        f"a {op} needs the record id (or `records`: [{{id, ...}}])")
    return MemoryWrite(op, written, ts, failed=bool(event.get("failed")),
                       evidence=_id_list(task_id, event, "evidence", source), source=source)


def _record(task_id: str, raw: dict[str, Any], where: str) -> RecordSeen:
    """A record a memory event names: id, content and lineage (`derived_from`, `supersedes`)."""
    return RecordSeen(check_id(task_id, f"{where}.id", raw["id"]),
                      value_text(raw.get("content") or ""),
                      _id_list(task_id, raw, "derived_from", where),
                      _id_list(task_id, raw, "supersedes", where))


def _id_list(task_id: str, event: dict[str, Any], key: str, source: str) -> tuple[str, ...]:
    """`derived_from` / `supersedes` / `evidence` of a memory event: one id or a list."""
    value = event.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CaseError(task_id, f"{source}.{key}", None, "expected an id or a list of ids")
    return tuple(check_id(task_id, f"{source}.{key}", v) for v in value)


TEXT_PARTS = ("text", "input_text", "output_text")


def _text(task_id: str, where: str, content: Any) -> str:
    """A message's content: a string, or OpenAI content parts of which the text ones are
    kept (images and audio carry no text). Anything else is refused, not guessed at."""
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list) or not all(isinstance(p, dict) for p in content):
        raise CaseError(task_id, f"{where}.content", None,
                        "expected a string or a list of content parts")
    for part in content:
        if part.get("type") in ("tool_use", "tool_result"):
            raise CaseError(task_id, f"{where}.content", None,
                            f"a {part['type']!r} block is not an OpenAI chat message "
                            "(an Anthropic-style message list?)")
    return " ".join(str(p.get("text", "")) for p in content if p.get("type") in TEXT_PARTS)


def _reasoning(task_id: str, where: str, message: dict[str, Any]) -> str:
    """What the model thought before answering (`reasoning_content`, or `reasoning`, as
    reasoning models' chat APIs return it): a plan step of its own."""
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise CaseError(task_id, f"{where}.{key}", None, "expected a string")
        return value
    return ""


def _evidence(message: dict[str, Any], text: str) -> tuple[str, ...] | None:
    evidence = message.get("evidence")
    if evidence is None and text.lstrip().startswith("{"):
        try:
            evidence = json.loads(text).get("evidence")
        except (json.JSONDecodeError, AttributeError):
            evidence = None
    return tuple(str(e) for e in evidence) if isinstance(evidence, list) else None
