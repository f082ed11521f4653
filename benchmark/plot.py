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


def plot_recovery(points: Mapping[str, Mapping[str, Any]], out: Path, cases: int,
                  tag: str = "") -> Path:
    """points: method label → {"recovery", "llm_calls", "reasoner_calls", "oracle"}; `tag`
    names the run (the sweep's fidelity level, noise and seed) in the title."""
    matplotlib = require_matplotlib()
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, _ = recovery_figure(points, cases, tag)
    path = out / PLOT
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def recovery_figure(points: Mapping[str, Mapping[str, Any]], cases: int,
                    tag: str = "") -> tuple[Any, list[Any]]:
    """The figure and its method labels, placed so that no two overlap (checked on the drawn
    text, not on rounded data coordinates: close points' labels used to overprint)."""
    import matplotlib.pyplot as plt

    usable = {k: v for k, v in points.items() if v.get("recovery") is not None}
    llm = any((v.get("llm_calls") or 0) > 0 for v in usable.values())
    x_key = "llm_calls" if llm else "reasoner_calls"
    fig, ax = plt.subplots(figsize=(7.5, 5))
    spots = sorted(((values.get(x_key) or 0.0, values["recovery"], name, values.get("oracle"))
                    for name, values in usable.items()), key=lambda p: (-p[1], p[0], p[2]))
    for x, y, _, oracle in spots:
        ax.scatter([x], [y], s=50, marker="^" if oracle else "o")
    ax.set_xlabel("LLM calls per case" if llm else
                  "steps sent to the reasoner per case (offline run: 0 LLM calls)")
    ax.set_ylabel("recovery")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(f"Recovery vs repair cost per method (N = {cases}"
                 + (f"; {tag}" if tag else "") + ")", fontsize=10)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    texts = _place_labels(fig, ax, spots)
    return fig, texts


def _place_labels(fig: Any, ax: Any, spots: list[tuple[float, float, str, Any]]) -> list[Any]:
    """Each label right of its point; moved down a line at a time while it overlaps one
    already placed."""
    renderer = fig.canvas.get_renderer()
    placed: list[Any] = []
    texts = []
    for x, y, name, _ in spots:
        dy = 4.0
        text = ax.annotate(name, (x, y), textcoords="offset points", xytext=(6, dy), fontsize=8)
        for _ in range(len(spots) + 1):
            box = text.get_window_extent(renderer)
            if not any(box.overlaps(other) for other in placed):
                break
            dy -= 11.0
            text.set_position((6, dy))
        placed.append(text.get_window_extent(renderer))
        texts.append(text)
    return texts


SWEEP_PLOT = "quality_vs_fidelity.png"


def plot_sweep(methods: Mapping[str, Mapping[str, Mapping[str, Any]]], levels: list[float],
               out: Path, cases: int | list[int], *, suffix: str = "", detail: str = "") -> Path:
    """Recovery and claim-invalidation F1 against fidelity: method label → level → metrics;
    `suffix` names the file (quality_vs_fidelity-<suffix>.png), `detail` the titles."""
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
        ax.set_title(f"{title} (N = {cases} per level" + (f"; {detail}" if detail else "") + ")",
                     fontsize=9)
        ax.invert_xaxis()
        ax.set_ylim(-0.05, 1.05)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("score")
    axes[1].legend(fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5))
    fig.suptitle("Repair quality as the recorded provenance degrades (methods are offset "
                 "slightly along x so that equal scores stay visible)", fontsize=10)
    fig.tight_layout()
    path = out / (SWEEP_PLOT.replace(".png", f"-{suffix}.png") if suffix else SWEEP_PLOT)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
