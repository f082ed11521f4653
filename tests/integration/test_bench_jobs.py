"""`bench run|sweep --jobs N` (benchmark/workers.py): the pairs in worker processes give the
very files one process gives, keep the run's progress bars, and keep `bench clean` off the
graph while the workers use it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from provrepair.benchmark.generate import generate_cases
from provrepair.benchmark.run import run_benchmark
from provrepair.repair.methods import method_names
from tests.conftest import Cli
from tests.integration.test_bench_run import Labels

SECONDS = re.compile(r'"seconds": [0-9.e-]+')


def measured(path: Path, text: str | None = None) -> str:
    """A file of a run (or its `text`) with what is measured, not computed, masked: each
    pair's `seconds` (results.jsonl) and the Seconds column of the cost table (its last)."""
    text = SECONDS.sub('"seconds": 0', path.read_text(encoding="utf-8") if text is None else text)
    if path.name == "cost.csv":
        return "\n".join(line.rpartition(",")[0] for line in text.splitlines())
    if path.name == "tables.md":
        head, sep, rest = text.partition("### Repair cost breakdown")
        cost, sep2, tail = rest.partition("\n### ")
        cost = re.sub(r"\| [0-9.]+ \|$", "| 0 |", cost, flags=re.MULTILINE)
        return head + sep + cost + sep2 + tail
    return text


def test_sweep_writes_the_same_files_with_one_or_two_jobs(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    args = ("bench", "sweep", "--levels", "1.0,0.7", "--seeds", "42", "--replay-noise",
            "0,0.2", "--limit", "3", "--methods",
            "no_repair,dependency_guided,replay_everything", "--out", str(out), "--json")
    serial = cli(*args, "--jobs", "1")
    assert serial.returncode == 0, serial.stderr
    first = tmp_path / "serial"
    out.rename(first)
    # the same place (so the same graphs, which now hold the first run's task copies)
    parallel = cli(*args, "--jobs", "2")
    assert parallel.returncode == 0, parallel.stderr
    assert parallel.stdout == serial.stdout
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert any(f.name == "results.jsonl" for f in files) and len(files) > 20
    for name in ("sweep.md", "sweep.csv", "sweep.json"):
        assert (out / name).read_bytes() == (first / name).read_bytes(), name
    for name in files:
        if name.suffix != ".png":
            assert measured(out / name) == measured(first / name), name


def test_workers_keep_the_bars_and_lines_of_one_process(tmp_path: Path, bench_env: str) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    for case in generate_cases(7, limit=3):
        (cases / f"{case.task_id}.json").write_text(case.model_dump_json())
    tag = "fidelity 1.0, replay noise 0.1, seed 7"
    results = {}
    for jobs in (1, 2):
        progress = Labels()
        summary, text = run_benchmark(cases, "no_repair,dependency_guided", "offline", None,
                                      tmp_path / f"out{jobs}", replay_noise=0.1, noise_seed=7,
                                      tag=tag, jobs=jobs, progress=progress)
        results[jobs] = (progress.labels, summary, measured(Path("tables.md"), text),
                         measured(tmp_path / f"out{jobs}" / "results.jsonl"))
    assert results[1] == results[2]
    assert len(results[2][0]) == 2 and all(tag in label for label in results[2][0])
    assert len(results[2][3].splitlines()) == 6


def six_cases(tmp_path: Path) -> Path:
    cases = tmp_path / "cases"
    cases.mkdir()
    for case in generate_cases(42, limit=6):
        (cases / f"{case.task_id}.json").write_text(case.model_dump_json())
    return cases


def started_run(cli: Cli, cases: Path, out: Path) -> subprocess.Popen[str]:
    """`bench run --jobs 2` over every method, once its first pair is written."""
    exe = Path(sys.executable).with_name("provrepair")
    run = subprocess.Popen([str(exe), "bench", "run", "--cases", str(cases), "--jobs", "2",
                            "--out", str(out), "--json"], env=cli.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (out / "results.jsonl").exists() and run.poll() is None:
        if time.monotonic() > deadline:
            run.kill()
            raise AssertionError("no pair finished in 2 minutes")
        time.sleep(0.05)  # polling for the condition, not a fixed wait
    return run


def test_clean_keeps_the_graph_the_workers_use(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = started_run(cli, six_cases(tmp_path), out)
    try:
        assert run.poll() is None, "the run ended before `bench clean` could be tried"
        done = cli("bench", "clean", "--json")
        assert done.returncode == 0, done.stderr
        (busy,) = json.loads(done.stdout)["busy"]
        assert busy["pid"] == run.pid
        stdout, stderr = run.communicate(timeout=600)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 0, stderr
    assert json.loads(stdout)["cases"] == 6
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 6 * len(method_names()) and all(json.loads(t)["status"] != "error" for t in lines)


def test_jobs_must_be_at_least_one(cli: Cli, tmp_path: Path) -> None:
    for command in (["run", "--cases", str(tmp_path)], ["sweep"]):
        done = cli("bench", *command, "--jobs", "0", "--out", str(tmp_path / "o"))
        assert done.returncode == 2 and "--jobs" in done.stderr, done.stderr
    assert not (tmp_path / "o").exists()


def children(pid: int) -> set[int]:
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_workers_of_a_killed_run_exit(cli: Cli, tmp_path: Path) -> None:
    """A run killed with -9 leaves no worker waiting for work forever (a rerun resumes)."""
    cases, out = six_cases(tmp_path), tmp_path / "out"
    run = started_run(cli, cases, out)
    try:
        workers = children(run.pid)
    finally:
        run.kill()
        run.communicate()
    assert len(workers) >= 2  # the pool (and its resource tracker)
    deadline = time.monotonic() + 60
    while any(alive(pid) for pid in workers):
        assert time.monotonic() < deadline, "a worker outlived its run by a minute"
        time.sleep(0.1)
    resumed = cli("bench", "run", "--cases", str(cases), "--methods", "no_repair", "--jobs", "2",
                  "--out", str(out), "--json")
    assert resumed.returncode == 0, resumed.stderr
