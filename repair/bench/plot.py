"""`recovery_vs_llm_calls.png`: recovery against LLM calls per case, one point per method
(matplotlib, Agg backend: no display needed). With the offline reasoner every method makes 0
LLM calls; the x axis then shows the steps sent to the reasoner per case instead (what an
LLM reasoner would be called for), and says so."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from provrepair.provenance.errors import ConfigError

PLOT = "recovery_vs_llm_calls.png"


def require_matplotlib() -> ModuleType:
    """matplotlib, or a one-line error naming the extra that installs it (it is optional:
    only the benchmark plot needs it)."""
    try:
        import matplotlib
    except ImportError as exc:
        raise ConfigError("the benchmark plot needs matplotlib: "
                          "pip install 'provrepair[bench]'") from exc
    return matplotlib


def plot_recovery(points: Mapping[str, Mapping[str, Any]], out: Path) -> Path:
    """points: method label → {"recovery", "llm_calls", "reasoner_calls", "oracle"}."""
    matplotlib = require_matplotlib()
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    usable = {k: v for k, v in points.items() if v.get("recovery") is not None}
    llm = any((v.get("llm_calls") or 0) > 0 for v in usable.values())
    x_key = "llm_calls" if llm else "reasoner_calls"
    fig, ax = plt.subplots(figsize=(7.5, 5))
    for name, values in usable.items():
        x, y = values.get(x_key) or 0.0, values["recovery"]
        ax.scatter([x], [y], s=50, marker="^" if values.get("oracle") else "o")
        ax.annotate(name, (x, y), textcoords="offset points", xytext=(6, 4), fontsize=8)
    ax.set_xlabel("LLM calls per case" if llm else
                  "steps sent to the reasoner per case (offline run: 0 LLM calls)")
    ax.set_ylabel("recovery")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title("Recovery vs repair cost per method")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path = out / PLOT
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
