"""The agent's tools declared once (repair/tools/declared.py, registry.py, mcp.py): classes
from the user, the case and the pack, in that order; an undeclared tool is irreversible; a
call that cannot run or fails raises ToolUnavailable (the step becomes unresolved); tools
files and module:object references (an MCP server over stdio: tests/integration/test_mcp_stdio.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from provrepair.provenance.errors import ConfigError
from provrepair.provenance.models import ToolSpec
from provrepair.repair.tools.declared import SideEffect, ToolSet, class_of, load_tools, spec_of
from provrepair.repair.tools.packs import domain_tools
from provrepair.repair.tools.registry import (
    ToolCallRejected,
    ToolFailed,
    ToolRegistry,
    ToolUnavailable,
)
from tests import mcp_agent


def get_price(store: str) -> dict[str, str]:
    if store == "Nowhere":
        raise LookupError("no such store")
    return {"store": store, "price": "$68.50"}


TOOLS = ToolSet().add(get_price, "read_only")


def test_classes_round_trip_through_the_case_format() -> None:
    for cls in SideEffect:
        spec = spec_of("t", cls, "undo" if cls is SideEffect.COMPENSABLE else None)
        assert class_of(spec) is cls
    with pytest.raises(ConfigError, match="names its compensating tool"):
        spec_of("book", "compensable")
    with pytest.raises(ConfigError, match="unknown side-effect class 'harmless'"):
        spec_of("t", "harmless")


def test_undeclared_is_irreversible_and_the_user_declaration_wins() -> None:
    case_specs = [ToolSpec(name="refund", side_effect=True, compensate=None, idempotent=False)]
    tools = ToolRegistry(case_specs, {}, domain_tools("travel"))
    assert tools.side_effect("place_order") is None  # nobody declared it
    assert "place_order is not declared, so it counts" in tools.refusal("place_order", "s_003")
    assert tools.side_effect("refund") is SideEffect.IRREVERSIBLE
    assert "neither idempotent nor compensable" in tools.refusal("refund", "s_004")
    assert tools.compensation("book_flight") == "cancel_booking"  # the pack says
    assert tools.side_effect("get_flight") is SideEffect.READ_ONLY
    declared = ToolRegistry(case_specs, {}, declared=ToolSet().declare("refund", "idempotent"))
    assert declared.side_effect("refund") is SideEffect.IDEMPOTENT


def test_a_users_undeclared_tool_never_takes_the_packs_class() -> None:
    """The travel pack's book_flight is compensable; the user's own book_flight, served
    without a class, is irreversible (and the pack's class still holds without it)."""
    schema = {"type": "function", "function": {"name": "book_flight", "parameters": {}}}
    own = ToolSet().add_openai([schema], implementations={"book_flight": lambda **a: "ok"})
    assert ToolRegistry([], {}, domain_tools("travel"), declared=own).side_effect(
        "book_flight") is None
    assert ToolRegistry([], {}, domain_tools("travel"), declared=ToolSet()).side_effect(
        "book_flight") is SideEffect.COMPENSABLE


def test_a_call_nothing_can_run_or_that_fails_is_unavailable() -> None:
    tools = ToolRegistry([], {}, declared=TOOLS)
    assert json.loads(tools.call("get_price", {"store": "StoreA"}).result)["price"] == "$68.50"
    with pytest.raises(ToolFailed, match="get_price failed: LookupError: no such store"):
        tools.call("get_price", {"store": "Nowhere"})
    with pytest.raises(ToolCallRejected, match="cannot run with arguments \\['shop'\\]"):
        tools.call("get_price", {"shop": "StoreA"})
    with pytest.raises(ToolUnavailable, match="place_order cannot run here"):
        tools.call("place_order", {"store": "StoreA"})


def test_arguments_are_checked_before_the_call_and_an_error_inside_it_is_a_failure() -> None:
    """A TypeError from inside the function may come after it acted: FAILED (never sent
    again), not REJECTED; arguments its signature refuses are rejected before it runs."""
    ran: list[str] = []

    def charge(amount: str) -> str:
        ran.append(amount)
        return str(len(None))  # type: ignore[arg-type]

    run = ToolSet().add(charge, "irreversible").runner("charge")
    assert run is not None
    with pytest.raises(ToolCallRejected, match="cannot run with arguments \\['sum'\\]"):
        run({"sum": "1"})
    assert ran == []
    with pytest.raises(ToolFailed, match="charge failed: TypeError") as failed:
        run({"amount": "1"})
    assert not isinstance(failed.value, ToolCallRejected) and ran == ["1"]


def test_openai_schemas_check_arguments_before_the_call() -> None:
    schema = {"type": "function", "function": {"name": "get_price", "parameters": {
        "type": "object", "properties": {"store": {"type": "string"}}, "required": ["store"],
        "additionalProperties": False}}}
    tools = ToolSet().add_openai([schema], {"get_price": "read_only"},
                                 implementations={"get_price": get_price})
    run = tools.runner("get_price")
    assert run is not None and "StoreA" in run({"store": "StoreA"}).result
    with pytest.raises(ToolCallRejected, match="missing \\['store'\\], unknown \\['shop'\\]"):
        run({"shop": "StoreA"})
    assert ToolSet().add_openai(mcp_agent.TOOLS).spec("place_order") is None  # no class given
    with pytest.raises(ConfigError, match="not an OpenAI function-tool schema"):
        ToolSet().add_openai([{"type": "function"}])


def test_tools_files_and_objects(tmp_path: Path) -> None:
    toml = tmp_path / "tools.toml"
    toml.write_text('python = ["tests.unit.test_declared_tools:TOOLS"]\n'
                    '[tools]\nplace_order = "irreversible"\n'
                    '[tools.book]\nside_effect = "compensable"\ncompensate = "cancel"\n'
                    '[tools.charge]\nside_effect = "irreversible"\nidempotency_key = "rid"\n')
    tools = load_tools(str(toml))
    assert tools.runner("get_price") is not None
    assert tools.idempotency_key("charge") == "rid" and tools.idempotency_key("book") is None
    assert class_of(tools.spec("book") or spec_of("x", "read_only")) is SideEffect.COMPENSABLE
    assert tools.spec("place_order") == spec_of("place_order", "irreversible")
    schemas = tmp_path / "schemas.json"
    schemas.write_text(json.dumps(mcp_agent.TOOLS))
    listed = tmp_path / "tools.json"
    listed.write_text(json.dumps({"openai_tools": "schemas.json",
                                  "tools": {"get_price": "read_only"}}))
    assert set(load_tools(str(listed)).tools) == {"get_price", "place_order", "send_email"}
    for body, error in (({"tool": {}}, "unknown keys \\['tool'\\]"),
                        ({"tools": {"x": {"compensate": "y"}}}, "needs a side-effect class"),
                        ({"mcp_servers": [{"args": []}]}, "each of mcp_servers has a command"),
                        ({"tools": ["get_price"]}, "tools has the wrong shape"),
                        ({"tools": {"x": {"side_effect": "irreversible", "idempotency_key": 1}}},
                         "idempotency_key names the argument"),
                        ({"openai_tools": "missing.json"}, "cannot be read as JSON")):
        listed.write_text(json.dumps(body))
        with pytest.raises(ConfigError, match=error):
            load_tools(str(listed))
    with pytest.raises(ConfigError, match="not a provrepair ToolSet"):
        load_tools("tests.unit.test_declared_tools:get_price_schema")
    with pytest.raises(ConfigError, match="cannot load it"):
        load_tools("tests.unit.nope:TOOLS")


def get_price_schema() -> dict[str, Any]:
    return {}
