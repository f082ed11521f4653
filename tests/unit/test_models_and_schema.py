"""The models as the single definition of the format, and the exported JSON Schema."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from provrepair.provenance.models import FORMAT, case_json_schema
from provrepair.provenance.validate import parse_case
from tests.helpers import example_case, example_raw


def test_schema_is_exported_from_the_models() -> None:
    schema = case_json_schema()
    assert schema["properties"]["format"]["const"] == FORMAT
    assert schema["additionalProperties"] is False
    step = schema["$defs"]["ExecutionStep"]
    assert set(step["required"]) >= {"step_id", "task_id", "step_type", "turn", "timestamp"}
    assert "sufficient_ids" not in step["required"]


def test_schema_command_prints_the_same_schema() -> None:
    exe = Path(sys.executable).with_name("provrepair")
    out = subprocess.run([str(exe), "schema"], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == json.loads(json.dumps(case_json_schema()))


def test_dump_and_parse_are_inverse() -> None:
    case = example_case()
    again = parse_case(json.loads(json.dumps(case.model_dump(mode="json"))))
    assert again == case
    raw = example_raw()
    assert again.trace[0].tool_args is None and raw["trace"][2]["tool_args"] == again.trace[2].tool_args
