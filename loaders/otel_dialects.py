"""Two other attribute sets for LLM spans, mapped to the OpenTelemetry GenAI attributes
loaders/otel.py reads: OpenInference (Arize Phoenix's instrumentations) and OpenLLMetry
(Traceloop's). A span in neither is left exactly as it is; a mapped span keeps every attribute
it had, and a GenAI attribute it already carries wins over the mapped one. The README
("Other attribute sets") lists what each dialect reads.

OpenInference (`openinference.span.kind`): LLM → chat, with `llm.input_messages.N.message.*`
and `llm.output_messages.N.message.*` (role, content, contents.K.message_content.text,
tool_calls.K.tool_call.{id, function.name, function.arguments}, tool_call_id) as
`gen_ai.input/output.messages`; TOOL → execute_tool (`tool.name`, `tool.id` or
`tool_call.id`, `input.value` arguments, `output.value` result); AGENT → invoke_agent;
RETRIEVER → search_memory (`retrieval.documents.N.document.{id, content, metadata}`,
`input.value` the query); `session.id` → the conversation. Other kinds (CHAIN, EMBEDDING, …) are not steps.

OpenLLMetry (`traceloop.span.kind`, `llm.request.type`, `gen_ai.prompt.N.*`): an LLM span →
chat (text_completion for `llm.request.type` completion), with `gen_ai.prompt.N.{role, content,
tool_call_id, tool_calls.K.{id, name, arguments}}` and `gen_ai.completion.N.*` as messages;
`traceloop.span.kind` agent or workflow → invoke_agent, tool → execute_tool
(`traceloop.entity.name`, `.input`, `.output`); `traceloop.association.properties.session_id`
(or `.conversation_id`) → the conversation.

Neither dialect records a tool span's call id everywhere: a tool span without one takes the id
of the latest earlier tool call of that name in its trace's model outputs not yet taken.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from provrepair.loaders.otlp_json import attributes_json, document_spans, span_attributes

OPENINFERENCE_KIND = "openinference.span.kind"
TRACELOOP_KIND = "traceloop.span.kind"
_INDEXED = re.compile(r"^(\d+)\.(.+)$")


def genai_attributes(attributes: dict[str, Any]) -> dict[str, Any]:
    """One span's attributes with its dialect's mapped to GenAI (unchanged if none)."""
    mapper = _dialect(attributes)
    if mapper is None:
        return attributes
    return {**{k: v for k, v in mapper(attributes).items() if v is not None}, **attributes}


def normalize_document(raw: Any) -> Any:
    """An OTLP/JSON document with every dialect span's attributes mapped (a new document; one
    without dialect spans is returned as it is). Malformed documents pass through untouched
    for loaders/otel.py to refuse."""
    (doc,) = normalize_documents([raw])
    return doc


def normalize_documents(documents: list[Any]) -> list[Any]:
    """`normalize_document` over documents read together (the lines of a file, each an export
    of a few spans): a tool span takes its call id from a model output in another line."""
    if not any(_dialect(span_attributes(s)) for raw in documents for s in document_spans(raw)):
        return documents
    out = []
    for raw in documents:
        doc = json.loads(json.dumps(raw))
        for span in document_spans(doc):
            attributes = span_attributes(span)
            if _dialect(attributes) is not None:
                span["attributes"] = attributes_json(genai_attributes(attributes))
        out.append(doc)
    _link_tool_calls([span for doc in out for span in document_spans(doc)])
    return out


def _dialect(attributes: dict[str, Any]) -> Callable[[dict[str, Any]], dict[str, Any]] | None:
    if OPENINFERENCE_KIND in attributes:
        return _openinference
    if TRACELOOP_KIND in attributes or "llm.request.type" in attributes or any(
            k.startswith(("gen_ai.prompt.", "gen_ai.completion.")) for k in attributes):
        return _openllmetry
    return None


# -- OpenInference ----------------------------------------------------------------------------

def _openinference(a: dict[str, Any]) -> dict[str, Any]:
    kind = str(a[OPENINFERENCE_KIND]).upper()
    out: dict[str, Any] = {"gen_ai.conversation.id": a.get("session.id")}
    if kind == "LLM":
        out.update({"gen_ai.operation.name": "chat", "gen_ai.request.model": a.get("llm.model_name")})
        out.update(_messages_attrs(_oi_messages(a, "llm.input_messages."),
                                   _oi_messages(a, "llm.output_messages.")))
    elif kind == "TOOL":
        out.update({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": a.get("tool.name"),
                    "gen_ai.tool.call.id": a.get("tool.id", a.get("tool_call.id")),
                    "gen_ai.tool.call.arguments": a.get("input.value"),
                    "gen_ai.tool.call.result": a.get("output.value")})
    elif kind == "AGENT":
        out.update({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": a.get("agent.name")})
    elif kind == "RETRIEVER":
        documents = _indexed(a, "retrieval.documents.")
        out.update({"gen_ai.operation.name": "search_memory",
                    "gen_ai.memory.query.text": a.get("input.value"),
                    "gen_ai.memory.records": json.dumps(
                        [_record(d.get("document.id"), d.get("document.content", ""),
                                 d.get("document.metadata")) for d in documents],
                        ensure_ascii=False)})
    return out


def _oi_messages(a: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    messages = []
    for fields in _indexed(a, prefix):
        role = str(fields.get("message.role", "user"))
        texts = [str(fields["message.content"])] if fields.get("message.content") is not None else []
        texts += [str(c.get("message_content.text")) for c in _indexed(fields, "message.contents.")
                  if c.get("message_content.type", "text") == "text"
                  and c.get("message_content.text") is not None]
        calls = [(c.get("tool_call.id"), c.get("tool_call.function.name"),
                  c.get("tool_call.function.arguments"))
                 for c in _indexed(fields, "message.tool_calls.")]
        messages.append(_message(role, texts, calls, fields.get("message.tool_call_id")))
    return messages


# -- OpenLLMetry ------------------------------------------------------------------------------

def _openllmetry(a: dict[str, Any]) -> dict[str, Any]:
    kind = str(a.get(TRACELOOP_KIND, "")).lower()
    out: dict[str, Any] = {"gen_ai.conversation.id": a.get(
        "traceloop.association.properties.session_id",
        a.get("traceloop.association.properties.conversation_id"))}
    request = str(a.get("llm.request.type", "chat")).lower()
    prompts = _tl_messages(a, "gen_ai.prompt.")
    completions = _tl_messages(a, "gen_ai.completion.")
    if kind in ("agent", "workflow"):
        out.update({"gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": a.get("traceloop.entity.name")})
    elif kind == "tool":
        out.update({"gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": a.get("traceloop.entity.name"),
                    "gen_ai.tool.call.arguments": a.get("traceloop.entity.input"),
                    "gen_ai.tool.call.result": a.get("traceloop.entity.output")})
    elif request in ("chat", "completion") and (prompts or completions or "llm.request.type" in a):
        out["gen_ai.operation.name"] = "chat" if request == "chat" else "text_completion"
        out.update(_messages_attrs(prompts, completions))
    return out


def _tl_messages(a: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    messages = []
    for fields in _indexed(a, prefix):
        content = fields.get("content")
        texts = [_tl_text(content)] if content not in (None, "") else []
        calls = [(c.get("id"), c.get("name"), c.get("arguments"))
                 for c in _indexed(fields, "tool_calls.")]
        messages.append(_message(str(fields.get("role", "user")), texts, calls,
                                 fields.get("tool_call_id")))
    return messages


def _tl_text(content: Any) -> str:
    """OpenLLMetry writes a list content (text and image parts) as its JSON: the text parts."""
    if isinstance(content, str) and content.startswith("["):
        try:
            parts = json.loads(content)
        except json.JSONDecodeError:
            return content
        if isinstance(parts, list) and all(isinstance(p, dict) for p in parts):
            return " ".join(str(p.get("text", "")) for p in parts if p.get("type") == "text")
    return str(content)


# -- shared -----------------------------------------------------------------------------------

def _indexed(a: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """`prefix.N.rest` keys → one dict of `rest` keys per N, in index order."""
    groups: dict[int, dict[str, Any]] = defaultdict(dict)
    for key, value in a.items():
        if key.startswith(prefix):
            match = _INDEXED.match(key[len(prefix):])
            if match:
                groups[int(match.group(1))][match.group(2)] = value
    return [groups[i] for i in sorted(groups)]


def _message(role: str, texts: list[str], calls: list[tuple[Any, Any, Any]],
             tool_call_id: Any) -> dict[str, Any]:
    """A message in the GenAI shape (`{role, parts}`) loaders/otel.py reads."""
    if role in ("tool", "function") and tool_call_id is not None:
        return {"role": "tool", "parts": [{"type": "tool_call_response", "id": str(tool_call_id),
                                           "response": " ".join(texts)}]}
    parts: list[dict[str, Any]] = [{"type": "text", "content": t} for t in texts]
    parts += [{"type": "tool_call", **({"id": str(i)} if i is not None else {}), "name": n,
               "arguments": arguments} for i, n, arguments in calls]
    return {"role": role, "parts": parts}


def _messages_attrs(inputs: list[dict[str, Any]], outputs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if inputs:
        out["gen_ai.input.messages"] = json.dumps(inputs, ensure_ascii=False)
    if outputs:
        out["gen_ai.output.messages"] = json.dumps(outputs, ensure_ascii=False)
    return out


def _record(record_id: Any, content: Any, metadata: Any = None) -> dict[str, Any]:
    """A retrieved document as a memory record (its metadata kept: `derived_from`,
    `supersedes` are read from it); one without an id is named by its content."""
    text = str(content)
    rid = record_id if record_id not in (None, "") else \
        "doc-" + hashlib.sha256(text.encode()).hexdigest()[:16]
    return {"id": str(rid), "content": text, **({"metadata": metadata} if metadata else {})}


def _link_tool_calls(spans: list[dict[str, Any]]) -> None:
    """A tool span without a call id takes the first untaken call of its name in the latest
    model output of its trace that has one (both dialects often record the id only on the
    model's side); earlier outputs are searched only after later ones."""
    outputs: dict[str, list[list[tuple[str, str]]]] = defaultdict(list)  # trace → calls made
    taken: set[tuple[str, str]] = set()
    for span in sorted(spans, key=_start):
        attributes = span_attributes(span)
        trace = str(span.get("traceId"))
        if attributes.get("gen_ai.operation.name") == "execute_tool":
            call_id = attributes.get("gen_ai.tool.call.id")
            if call_id is None:
                name = str(attributes.get("gen_ai.tool.name"))
                call_id = next((i for calls in reversed(outputs[trace]) for n, i in calls
                                if n == name and (trace, i) not in taken), None)
                if call_id is not None:
                    span["attributes"] = attributes_json(
                        {**attributes, "gen_ai.tool.call.id": call_id})
            if call_id is not None:
                taken.add((trace, str(call_id)))
        calls = [(str(p.get("name")), str(p["id"]))
                 for message in _json_list(attributes.get("gen_ai.output.messages"))
                 for p in message.get("parts", [])
                 if isinstance(p, dict) and p.get("type") == "tool_call" and "id" in p]
        if calls:
            outputs[trace].append(calls)


def _start(span: dict[str, Any]) -> int:
    try:
        return int(span.get("startTimeUnixNano", 0))
    except (TypeError, ValueError):
        return 0


def _json_list(raw: Any) -> list[dict[str, Any]]:
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return []
    return [m for m in value if isinstance(m, dict)] if isinstance(value, list) else []
