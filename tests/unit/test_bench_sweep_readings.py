"""bench/sweep_readings.py on a tiny sweep folder: what it sums and how it names causes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "sweep_readings.py"


def test_readings_sum_over_seeds_and_name_the_cause(tmp_path: Path) -> None:
    lines = [
        {"method": "dependency_guided", "recovered": True, "recurred": True,
         "probe": "fault_value_active: m_e000", "primary_fault_type": "wrong_user"},
        {"method": "dependency_guided", "recovered": True, "recurred": True,
         "probe": "unresolved_answer", "primary_fault_type": "poisoned"},
        {"method": "dependency_guided", "recovered": False, "recurred": None,
         "probe": "not_recovered", "primary_fault_type": "poisoned"},
        {"method": "no_repair", "recovered": False, "primary_fault_type": "poisoned"},
    ]
    for seed, chunk in (("1", lines[:2]), ("2", lines[2:])):
        folder = tmp_path / f"seed-{seed}" / "results-0.8-noise-0.05"
        folder.mkdir(parents=True)
        (folder / "results.jsonl").write_text("".join(json.dumps(x) + "\n" for x in chunk))
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    ours = json.loads(done.stdout)["noise 0.05 @0.8"]["dependency_guided"]
    assert (ours["cases"], ours["recovered"], ours["recurrences"]) == (3, 2, 2)
    assert (ours["recurrence: echo"], ours["recurrence: question"]) == (1, 1)
    assert (ours["poisoned cases"], ours["poisoned recovered"]) == (2, 1)
