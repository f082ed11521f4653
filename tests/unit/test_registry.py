"""provrepair.provenance.registry: names are exact, a miss lists the known names, plugins come in
through entry points (a real installed distribution's metadata, made in a temporary folder)
and never replace a built-in."""

from __future__ import annotations

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
