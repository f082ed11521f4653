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


def plot_recovery(points: Mapping[str, Mapping[str, Any]], out: Path, cases: int) -> Path:
    """points: method label → {"recovery", "llm_calls", "reasoner_calls", "oracle"}; methods
    landing on the same spot get their labels stacked, not overprinted."""
    matplotlib = require_matplotlib()
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    usable = {k: v for k, v in points.items() if v.get("recovery") is not None}
    llm = any((v.get("llm_calls") or 0) > 0 for v in usable.values())
    x_key = "llm_calls" if llm else "reasoner_calls"
    fig, ax = plt.subplots(figsize=(7.5, 5))
    placed: dict[tuple[float, float], int] = {}
    for name, values in usable.items():
        x, y = values.get(x_key) or 0.0, values["recovery"]
        spot = (round(x, 1), round(y, 2))
        stacked = placed.get(spot, 0)
        placed[spot] = stacked + 1
        ax.scatter([x], [y], s=50, marker="^" if values.get("oracle") else "o")
        ax.annotate(name, (x, y), textcoords="offset points", xytext=(6, 4 - 11 * stacked),
                    fontsize=8)
    ax.set_xlabel("LLM calls per case" if llm else
                  "steps sent to the reasoner per case (offline run: 0 LLM calls)")
    ax.set_ylabel("recovery")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(f"Recovery vs repair cost per method (N = {cases})")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path = out / PLOT
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


SWEEP_PLOT = "quality_vs_fidelity.png"


def plot_sweep(methods: Mapping[str, Mapping[str, Mapping[str, Any]]], levels: list[float],
               out: Path, cases: int) -> Path:
    """Recovery and claim-invalidation F1 against fidelity: method label → level → metrics."""
    matplotlib = require_matplotlib()
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 5), sharey=True)
    for ax, metric, title in ((axes[0], "recovery", "recovery"),
                              (axes[1], "claim_f1", "claim-invalidation F1")):
        spread = (max(levels) - min(levels) or 1.0) * 0.006  # equal scores stay visible
        for index, (name, by_level) in enumerate(methods.items()):
            shift = (index - (len(methods) - 1) / 2) * spread
            points = [(lv + shift, by_level[str(lv)][metric]) for lv in levels
                      if by_level[str(lv)][metric] is not None]
            if points:
                ax.plot(*zip(*points, strict=True), marker="os^vD<>ph*"[index % 10],
                        linestyle="-" if index < 10 else "--", label=name)
        ax.set_xlabel("provenance fidelity (1.0 = recorded exactly)")
        ax.set_title(f"{title} (N = {cases} per level)")
        ax.invert_xaxis()
        ax.set_ylim(-0.05, 1.05)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("score")
    axes[1].legend(fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5))
    fig.suptitle("Repair quality as the recorded provenance degrades (methods are offset "
                 "slightly along x so that equal scores stay visible)", fontsize=10)
    fig.tight_layout()
    path = out / SWEEP_PLOT
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
