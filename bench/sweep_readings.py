"""The numbers behind BENCHMARKS.md's readings of a `bench sweep`: per setting (replay noise,
fidelity), summed over the seeds, for the chosen methods — cases recovered, recurrences and
what the probe found (an echo record m_e…, another active fault value, the re-asked question),
and recovery per primary fault type.

    python bench/sweep_readings.py --out DIR [--methods dependency_guided,dependency_guided_echo]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any


def cause(line: dict[str, Any]) -> str:
    probe = str(line.get("probe") or "")
    if "fault_value_active: m_e" in probe:
        return "echo"
    return "fault value" if "fault_value_active" in probe else "question"


def readings(out: Path, methods: list[str]) -> dict[str, Any]:
    found: dict[str, Any] = defaultdict(lambda: defaultdict(Counter))
    for path in sorted(out.glob("seed-*/results-*-noise-*/results.jsonl")):
        level, _, rate = path.parent.name.removeprefix("results-").partition("-noise-")
        for text in path.read_text(encoding="utf-8").splitlines():
            line = json.loads(text)
            if line.get("method") not in methods or line.get("status") == "not_run":
                continue
            tally = found[f"noise {rate} @{level}"][line["method"]]
            tally["cases"] += 1
            tally["recovered"] += bool(line.get("recovered"))
            kind = line.get("primary_fault_type", "?")
            tally[f"{kind} cases"] += 1
            tally[f"{kind} recovered"] += bool(line.get("recovered"))
            if line.get("recurred"):
                tally["recurrences"] += 1
                tally[f"recurrence: {cause(line)}"] += 1
    return {k: {m: dict(v) for m, v in by.items()} for k, by in found.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the sweep's --out directory")
    parser.add_argument("--methods", default="dependency_guided,dependency_guided_echo")
    args = parser.parse_args()
    print(json.dumps(readings(args.out, args.methods.split(",")), indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
