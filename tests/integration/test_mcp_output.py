"""An MCP server whose answer is not UTF-8 (tests/mcp_bad_server.py) is one clear error at
once: the call reached the server, and the step is unresolved saying why, not after a
timeout (this test's timeout is a minute: an error naming it would mean the call waited)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from provrepair.repair.tools.base import ToolFailed
from provrepair.repair.tools.declared import ToolSet
from tests.conftest import REPO


@pytest.mark.parametrize("mode", ["string", "line"])
def test_undecodable_output_is_one_error_at_once(tmp_path: Path, mode: str) -> None:
    log = tmp_path / "calls.jsonl"
    tools = ToolSet().add_mcp([sys.executable, "-m", "tests.mcp_bad_server", mode],
                              {"echo": "read_only"}, timeout=60,
                              env={"PYTHONPATH": str(REPO), "PROVREPAIR_TEST_MCP_LOG": str(log)})
    try:
        run = tools.runner("echo")
        assert run is not None
        with pytest.raises(ToolFailed) as failed:
            run({"text": "hi"})
    finally:
        tools.close()
    assert str(failed.value).startswith("echo: the MCP server ")
    assert str(failed.value).endswith("answered bytes that are not UTF-8 (its answer cannot be "
                                      "read)")
    assert len(log.read_text().splitlines()) == 1  # it reached the server, once
