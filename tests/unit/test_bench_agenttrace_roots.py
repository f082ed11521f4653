"""bench/agenttrace_roots.py runs on a tiny input and counts what it says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "agenttrace_roots.py"


def test_the_script_counts_roots_on_a_small_sample() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--limit", "6"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    found = re.search(r"(\d+) cases; the root cause is the final answer in (\d+) under the "
                      r"printed formula, (\d+) under ours", done.stdout)
    assert found, done.stdout
    cases, printed, ours = map(int, found.groups())
    assert cases == 6 and ours < printed <= cases
