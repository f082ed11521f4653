"""The benchmark plots: no two method labels overprint in recovery_vs_llm_calls.png (they did
when two points were close but not equal), and the title names the run (fidelity level,
replay noise, seed) so that per-level plots of a sweep can be told apart."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import pytest

from provrepair.benchmark.plot import plot_recovery, recovery_figure

# the published sweep's neighbours at fidelity 0.8: recovery 0.873 / 0.900 / 0.907 at
# 5.0-5.2 calls, and two methods on the very same spot
POINTS = {
    "Ours": {"recovery": 0.873, "reasoner_calls": 5.03},
    "w/o support check": {"recovery": 0.900, "reasoner_calls": 5.06},
    "w/o selective replay": {"recovery": 0.907, "reasoner_calls": 5.12},
    "Ours + echo sweep": {"recovery": 0.873, "reasoner_calls": 5.03},
    "No repair": {"recovery": 0.0, "reasoner_calls": 0.0},
    "AgentTrace-style": {"recovery": 0.613, "reasoner_calls": 2.1},
}


def test_no_two_labels_overlap() -> None:
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    fig, texts = recovery_figure(POINTS, 150)
    renderer = fig.canvas.get_renderer()
    boxes = {t.get_text(): t.get_window_extent(renderer) for t in texts}
    assert set(boxes) == set(POINTS)
    overlapping = [(a, b) for a, b in combinations(boxes, 2) if boxes[a].overlaps(boxes[b])]
    plt.close(fig)
    assert not overlapping


def test_the_title_names_the_run(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    fig, _ = recovery_figure(POINTS, 30, "fidelity 0.8, replay noise 0.05, seed 7")
    title = fig.axes[0].get_title()
    plt.close(fig)
    assert "N = 30" in title and "fidelity 0.8, replay noise 0.05, seed 7" in title
    assert plot_recovery(POINTS, tmp_path, 30, "fidelity 0.8").stat().st_size > 0
