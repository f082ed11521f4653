"""provrepair.provenance.registry: names are exact, a miss lists the known names, plugins come in
through entry points (a real installed distribution's metadata, made in a temporary folder)
and never replace a built-in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from provrepair.provenance.errors import ConfigError
from provrepair.provenance.registry import GROUPS, Registry
from provrepair.repair.reasoners import REASONERS, make_reasoner
from provrepair.repair.tools.packs import TOOL_PACKS, domain_tools


def install_plugin(root: Path, name: str, group: str, entries: dict[str, str],
                   module: str) -> None:
    """A distribution as pip leaves it: a module and its dist-info with entry_points.txt."""
    (root / f"{name}.py").write_text(module)
    info = root / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in entries.items()))


def test_an_unknown_reasoner_is_refused_whatever_the_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-set")
    with pytest.raises(ConfigError, match=r"unknown reasoner 'ofline'; known: offline, openai"):
        make_reasoner("ofline")
    assert make_reasoner("offline").name == "offline"


def test_a_plugin_adds_a_reasoner_and_cannot_replace_a_built_in(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_plugin(tmp_path, "probe_reasoner", "provrepair.reasoners",
                   {"echo": "probe_reasoner:Echo", "offline": "probe_reasoner:Echo"},
                   "class Echo:\n    name = 'echo'\n"
                   "    def __init__(self, **limits):\n        self.limits = limits\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "echo" in REASONERS.names()
    echo = make_reasoner("echo", "m", max_calls=3)
    assert echo.name == "echo" and echo.limits == {"model": "m", "max_calls": 3,  # type: ignore[attr-defined]
                                                   "budget": None}
    assert type(make_reasoner("offline")).__name__ == "OfflineReasoner"


def test_a_plugin_adds_a_tool_pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_plugin(tmp_path, "probe_pack", "provrepair.tool_packs", {"weather": "probe_pack:pack"},
                   "from provrepair.repair.tools.packs import ToolPack\n"
                   "from provrepair.repair.tools.declared import spec_of\n"
                   "def pack():\n"
                   "    return ToolPack({'forecast': lambda args, world: None},\n"
                   "                    [spec_of('forecast', 'read_only')])\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "weather" in TOOL_PACKS.names()
    assert domain_tools("weather").specs["forecast"].side_effect is False
    assert dict(domain_tools("no-such-domain")) == {}  # a domain without a pack has no tools
    with pytest.raises(ConfigError, match="unknown tool pack 'no-such-domain'; known: "
                                          "customer_support, shopping, travel"):
        TOOL_PACKS.get("no-such-domain")


def test_register_and_the_kinds_later_registries_take() -> None:
    registry: Registry[object] = Registry("engine", {"falkordb": "collections:OrderedDict"})
    registry.register("memory", dict)
    assert registry.names() == ["falkordb", "memory"] and registry.create("memory") == {}
    assert registry.create("falkordb") == {}
    with pytest.raises(ConfigError, match="built in"):
        registry.register("falkordb", dict)
    assert set(GROUPS) >= {"reasoner", "tool pack", "loader", "applier", "engine", "method"}
    with pytest.raises(ValueError, match="no entry-point group"):
        Registry("gadget", {})


def test_entries_say_where_each_name_comes_from_and_register_refuses_a_plugins_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_plugin(tmp_path, "probe_engine", "provrepair.engines",
                   {"memory": "probe_engine:open", "falkordb": "probe_engine:open"},
                   "def open(uri):\n    return uri\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry: Registry[object] = Registry("engine", {"falkordb": "collections:OrderedDict"})
    registry.register("scratch", dict)
    by_name = {(e.name, e.source): e for e in registry.entries()}
    assert by_name[("falkordb", "built-in")].target == "collections:OrderedDict"
    assert by_name[("memory", "probe_engine 0.1")].target == "probe_engine:open"
    assert by_name[("falkordb", "probe_engine 0.1")].shadowed  # listed, never used
    assert by_name[("scratch", "registered from Python")].target == "builtins:dict"
    assert registry.entries()[0].source == "built-in"
    assert registry.create("memory", "x") == "x" and registry.create("falkordb") == {}
    with pytest.raises(ConfigError, match=r"'memory' is provided by the installed package "
                                          r"probe_engine 0\.1 and cannot be replaced"):
        registry.register("memory", dict)


def test_plugins_lists_every_kind_with_its_source() -> None:
    from click.testing import CliRunner

    from provrepair.commands.plugins import REGISTRIES, plugins

    done = CliRunner().invoke(plugins, ["--json"])
    assert done.exit_code == 0, done.output
    rows = json.loads(done.output)
    assert {r["kind"] for r in rows} == set(REGISTRIES) == set(GROUPS)
    methods = {r["name"]: r["source"] for r in rows if r["kind"] == "method"}
    assert methods["dependency_guided"] == methods["paper"] == "built-in"
    assert methods["no_selective_replay"].startswith("provrepair ")  # the benchmark's entry point
    text = CliRunner().invoke(plugins, ["--kind", "method"]).output
    assert text.startswith("methods:\n  dependency_guided ") and "reasoners:" not in text
