"""The agent's own tools, declared once for its repairs: `ToolSet`.

A user fills a ToolSet from what the agent already has, each tool with its side-effect class:

    tools = ToolSet()
    tools.add(get_price, "read_only")                       # a plain Python callable
    tools.add_openai(TOOL_SCHEMAS, {"get_price": "read_only"}, implementations={...})
    tools.add_mcp(["python", "-m", "my_tools"], {"get_price": "read_only"})
    tools.declare("place_order", "irreversible")            # a class only
    run_repair(store, task_id, "openai", tools=tools)

Side-effect classes (docs/case-format.md, "ToolSpec", as one word):
    read_only      re-issued freely
    idempotent     has an effect, but issuing it again changes nothing more
    compensable    has an effect that its `compensate` tool undoes (run first, with the old
                   call's arguments)
    irreversible   never re-issued without a person's approval (`repair --resume --approve`)
A tool nobody declared is irreversible: the repair stops before re-issuing it (needs_human).

A tools file (`repair --tools FILE`, JSON or TOML) says the same:

    {"tools": {"get_price": "read_only",
               "book": {"side_effect": "compensable", "compensate": "cancel"},
               "charge": {"side_effect": "irreversible", "idempotency_key": "request_id"}},
     "openai_tools": [{"type": "function", "function": {"name": ..., "parameters": ...}}],
     "mcp_servers": [{"command": "python", "args": ["-m", "my_tools"], "env": {}}],
     "python": ["my_agent.tools:TOOLS"]}
"""

from __future__ import annotations

import importlib
import inspect
import json
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from provrepair.provenance.errors import ConfigError
from provrepair.provenance.models import ToolSpec
from provrepair.provenance.state.calls import READ_ONLY_CLASS
from provrepair.repair.tools.base import Runner, ToolCallRejected, ToolFailed, ToolResult

if TYPE_CHECKING:
    from provrepair.repair.tools.mcp import McpServer


class SideEffect(StrEnum):
    READ_ONLY = READ_ONLY_CLASS  # the call log's home of the name (provenance/state/calls.py)
    IDEMPOTENT = "idempotent"
    COMPENSABLE = "compensable"
    IRREVERSIBLE = "irreversible"


def spec_of(name: str, side_effect: SideEffect | str, compensate: str | None = None) -> ToolSpec:
    """The case format's ToolSpec of a class."""
    try:
        cls = SideEffect(side_effect)
    except ValueError:
        raise ConfigError(f"tool {name!r}: unknown side-effect class {side_effect!r}; one of "
                          f"{', '.join(c.value for c in SideEffect)}") from None
    if (cls is SideEffect.COMPENSABLE) != bool(compensate):
        raise ConfigError(f"tool {name!r}: a compensable tool names its compensating tool "
                          "(compensate), and only a compensable one does")
    return ToolSpec(name=name, side_effect=cls is not SideEffect.READ_ONLY,
                    compensate=compensate, idempotent=cls in (SideEffect.READ_ONLY,
                                                              SideEffect.IDEMPOTENT))


def class_of(spec: ToolSpec) -> SideEffect:
    if not spec.side_effect:
        return SideEffect.READ_ONLY
    if spec.idempotent:
        return SideEffect.IDEMPOTENT
    return SideEffect.COMPENSABLE if spec.compensate else SideEffect.IRREVERSIBLE


@dataclass
class DeclaredTool:
    spec: ToolSpec | None                 # None: known (listed by a server), class undeclared
    run: Runner | None = None
    parameters: dict[str, Any] | None = None  # JSON Schema of the arguments, when known
    idempotency_key: str | None = None    # the argument that carries an idempotency key


@dataclass
class ToolSet:
    """The tools a repair may re-issue, with their classes and implementations."""

    tools: dict[str, DeclaredTool] = field(default_factory=dict)
    servers: list[McpServer] = field(default_factory=list)

    def declare(self, name: str, side_effect: SideEffect | str,
                compensate: str | None = None, *, idempotency_key: str | None = None) -> ToolSet:
        """A class for a tool, whatever implements it. `idempotency_key`: the argument through
        which the tool accepts an idempotency key (as Stripe's API does): every call is sent
        with a key of its own there, the same key for every attempt, so a call whose outcome
        is unknown (a crash, no answer) can be sent again without acting twice."""
        tool = self.tools.setdefault(name, DeclaredTool(None))
        tool.spec = spec_of(name, side_effect, compensate)
        tool.idempotency_key = idempotency_key
        return self

    def add(self, fn: Callable[..., Any], side_effect: SideEffect | str, *,
            compensate: str | None = None, name: str | None = None,
            idempotency_key: str | None = None) -> ToolSet:
        """A plain Python callable, called with the call's arguments as keywords; it returns
        the observation (text, or anything JSON shows); an exception leaves the step
        unresolved."""
        tool_name = name or fn.__name__
        self.declare(tool_name, side_effect, compensate, idempotency_key=idempotency_key)
        self.tools[tool_name].run = callable_runner(tool_name, fn)
        return self

    def add_openai(self, schemas: Iterable[Mapping[str, Any]],
                   side_effects: Mapping[str, SideEffect | str] | None = None, *,
                   implementations: Mapping[str, Callable[..., Any]] | None = None,
                   compensations: Mapping[str, str] | None = None) -> ToolSet:
        """OpenAI function-tool schemas (`{"type": "function", "function": {...}}`, as passed
        to `chat.completions.create(tools=...)`): arguments are checked against each schema
        before a call. A tool without a class in `side_effects` stays irreversible."""
        side_effects, implementations = side_effects or {}, implementations or {}
        for schema in schemas:
            function = schema.get("function", schema)
            name = function.get("name") if isinstance(function, Mapping) else None
            if not isinstance(name, str):
                raise ConfigError(f"not an OpenAI function-tool schema (no function name): "
                                  f"{json.dumps(schema)[:120]}")
            tool = self.tools.setdefault(name, DeclaredTool(None))
            tool.parameters = dict(function.get("parameters") or {})
            if name in side_effects:
                self.declare(name, side_effects[name], (compensations or {}).get(name))
            if name in implementations:
                tool.run = callable_runner(name, implementations[name])
        return self

    def add_mcp(self, command: list[str], side_effects: Mapping[str, SideEffect | str] | None
                = None, *, env: Mapping[str, str] | None = None,
                compensations: Mapping[str, str] | None = None,
                trust_annotations: bool = False, timeout: float = 60.0) -> ToolSet:
        """The tools of an MCP server started with `command` (stdio transport; needs the
        `mcp` extra). The server starts on the first call that needs it. Its tools' own
        annotations (readOnlyHint, idempotentHint) are used only with `trust_annotations`."""
        from provrepair.repair.tools.mcp import McpServer

        for name, side_effect in (side_effects or {}).items():
            self.declare(name, side_effect, (compensations or {}).get(name))
        self.servers.append(McpServer(list(command), dict(env or {}), trust_annotations,
                                      timeout))
        return self

    def update(self, other: ToolSet) -> ToolSet:
        for name, tool in other.tools.items():
            mine = self.tools.setdefault(name, DeclaredTool(None))
            mine.spec = tool.spec or mine.spec
            mine.run = tool.run or mine.run
            mine.parameters = tool.parameters or mine.parameters
            mine.idempotency_key = tool.idempotency_key or mine.idempotency_key
        self.servers.extend(other.servers)
        return self

    # -- used by the repair (repair/tools/registry.py) -------------------------------------

    def names(self) -> list[str]:
        """Every tool declared or served (starting the MCP servers to list theirs)."""
        return sorted({*self.tools, *(n for server in self.servers for n in server.tool_names())})

    def spec(self, name: str) -> ToolSpec | None:
        tool = self.tools.get(name)
        if tool is not None and tool.spec is not None:
            return tool.spec
        for server in self.servers:
            if name in server.tool_names():
                return server.annotated_spec(name)
        return None

    def serves(self, name: str) -> bool:
        """The user's own implementation runs this tool (a callable, an MCP server's)."""
        tool = self.tools.get(name)
        return (tool is not None and tool.run is not None) or \
            any(name in server.tool_names() for server in self.servers)

    def idempotency_key(self, name: str) -> str | None:
        tool = self.tools.get(name)
        return tool.idempotency_key if tool is not None else None

    def runner(self, name: str) -> Runner | None:
        tool = self.tools.get(name)
        run = tool.run if tool is not None else None
        if run is None:
            run = next((server.runner(name) for server in self.servers
                        if name in server.tool_names()), None)
        if run is None:
            down = [server for server in self.servers if server.failure() is not None]
            # a server that did not start may be the one that has it: say so, not "unknown"
            return down[0].runner(name) if down else None
        schema = tool.parameters if tool is not None else None
        return run if not schema else _checked_against(name, schema, run)

    def close(self) -> None:
        for server in self.servers:
            server.close()


def callable_runner(name: str, fn: Callable[..., Any]) -> Runner:
    try:
        signature: inspect.Signature | None = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without one: arguments checked by the call
        signature = None

    def run(args: dict[str, Any]) -> ToolResult:
        # arguments the function cannot take reject the call before it runs (nothing sent);
        # once it runs, any exception (a TypeError inside it too) may come after it acted
        if signature is not None:
            try:
                signature.bind(**args)
            except TypeError as exc:
                raise ToolCallRejected(f"{name} cannot run with arguments {sorted(args)}: "
                                       f"{exc}") from exc
        try:
            value = fn(**args)
        except Exception as exc:
            raise ToolFailed(f"{name} failed: {type(exc).__name__}: {exc}") from exc
        if isinstance(value, ToolResult):
            return value
        return ToolResult(value if isinstance(value, str) else json.dumps(value, default=str))
    return run


def _checked_against(name: str, schema: Mapping[str, Any], run: Runner) -> Runner:
    """Arguments a schema refuses (a required one missing, an unknown one where
    additionalProperties is false) reject the call before it is sent."""
    required = [k for k in schema.get("required") or [] if isinstance(k, str)]
    known = schema.get("properties")
    allowed = set(known) if schema.get("additionalProperties") is False and \
        isinstance(known, Mapping) else None

    def checked(args: dict[str, Any]) -> ToolResult:
        missing = [k for k in required if k not in args]
        unknown = [k for k in args if k not in allowed] if allowed is not None else []
        if missing or unknown:
            raise ToolCallRejected(f"{name}: arguments {sorted(args)} do not fit its schema "
                                   f"(missing {missing}, unknown {unknown})")
        return run(args)
    return checked


# -- loading a declaration (CLI --tools) ----------------------------------------------------

def load_tools(reference: str) -> ToolSet:
    """`--tools` value: a JSON/TOML tools file, or `module:object` naming a ToolSet (or a
    function returning one)."""
    path = Path(reference)
    if path.suffix.lower() in (".json", ".toml") or path.is_file():
        return tools_from_file(path)
    if ":" not in reference:
        raise ConfigError(f"--tools {reference!r}: neither a file nor module:object")
    return tools_from_object(reference)


def tools_from_object(reference: str) -> ToolSet:
    module_name, _, attribute = reference.partition(":")
    try:
        value: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"--tools {reference!r}: cannot load it ({exc})") from exc
    if callable(value) and not isinstance(value, ToolSet):
        value = value()
    if not isinstance(value, ToolSet):
        raise ConfigError(f"--tools {reference!r} is a {type(value).__name__}, not a "
                          "provrepair ToolSet")
    return value


def tools_from_file(path: Path) -> ToolSet:
    try:
        text = path.read_text(encoding="utf-8")
        raw = tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
    except OSError as exc:
        raise ConfigError(f"--tools {str(path)!r}: cannot read it ({exc.strerror})") from exc
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"--tools {str(path)!r}: not valid JSON/TOML ({exc})") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"--tools {str(path)!r}: the file holds an object (tools, "
                          "openai_tools, mcp_servers, python)")
    unknown = sorted(set(raw) - {"tools", "openai_tools", "mcp_servers", "python"})
    if unknown:
        raise ConfigError(f"--tools {str(path)!r}: unknown keys {unknown}")
    return tools_from_mapping(raw, path.parent, str(path))


def tools_from_mapping(raw: Mapping[str, Any], base: Path, where: str) -> ToolSet:
    shapes: dict[str, type | tuple[type, ...]] = {
        "python": list, "openai_tools": (list, str), "mcp_servers": list, "tools": dict}
    for key, shape in shapes.items():
        if key in raw and not isinstance(raw[key], shape):
            raise ConfigError(f"--tools {where!r}: {key} has the wrong shape "
                              f"({type(raw[key]).__name__})")
    tools = ToolSet()
    for entry in raw.get("python") or []:
        tools.update(tools_from_object(str(entry)))
    schemas = raw.get("openai_tools") or []
    if isinstance(schemas, str):  # a file of schemas beside this one
        try:
            schemas = json.loads((base / schemas).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"--tools {where!r}: openai_tools {schemas!r} cannot be read as "
                              f"JSON ({exc})") from exc
        if not isinstance(schemas, list):
            raise ConfigError(f"--tools {where!r}: openai_tools holds a list of schemas")
    tools.add_openai(schemas)
    for server in raw.get("mcp_servers") or []:
        if not isinstance(server, Mapping) or not isinstance(server.get("command"), str):
            raise ConfigError(f"--tools {where!r}: each of mcp_servers has a command")
        tools.add_mcp([server["command"], *map(str, server.get("args") or [])],
                      env=server.get("env"),
                      trust_annotations=bool(server.get("trust_annotations", False)),
                      timeout=float(server.get("timeout", 60.0)))
    for name, declared in (raw.get("tools") or {}).items():
        if isinstance(declared, str):
            tools.declare(name, declared)
        elif isinstance(declared, Mapping) and "side_effect" in declared:
            id_key = declared.get("idempotency_key")
            if id_key is not None and not isinstance(id_key, str):
                raise ConfigError(f"--tools {where!r}: tool {name!r}: idempotency_key names "
                                  "the argument that carries the key (a string)")
            tools.declare(name, declared["side_effect"], declared.get("compensate"),
                          idempotency_key=id_key)
        else:
            raise ConfigError(f"--tools {where!r}: tool {name!r} needs a side-effect class "
                              f"({', '.join(c.value for c in SideEffect)})")
    return tools
