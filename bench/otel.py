"""Live OpenTelemetry capture and dependency readings (issue 11), measured side by side.

    python bench/otel.py [--spans 20000]

1. Time the agent's thread spends per span (start, attributes, end) with: no span processor;
   the SDK's BatchSpanProcessor with an exporter that drops everything; and the same
   processor with provrepair's exporter storing each run. Interleaved, medians of 5 rounds;
   the export itself runs on the processor's worker thread.
2. Plan size of the bundled transcript with conservative dependencies (everything earlier
   in context) and with explicit evidence on its two model outputs, against a private
   embedded store.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from provrepair.loaders.openai_messages import transcript_case
from provrepair.loaders.otel_live import ProvrepairSpanExporter
from provrepair.provenance.ingest import ingest_case
from provrepair.provenance.store.config import open_store
from provrepair.repair.plan import plan

REPO = Path(__file__).resolve().parent.parent
TRANSCRIPT = REPO / "examples" / "transcripts" / "shopping_transcript.json"


class Drop(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None


def agent_thread_time(provider: TracerProvider, spans: int, run: int) -> float:
    """Seconds per span on the calling thread: one agent run of `spans` spans."""
    tracer = provider.get_tracer("bench")
    started = time.perf_counter()
    with tracer.start_as_current_span("invoke_agent") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.conversation.id", f"bench-{run}")
        for i in range(spans - 1):
            with tracer.start_as_current_span("search_memory") as span:
                span.set_attribute("gen_ai.operation.name", "search_memory")
                span.set_attribute("gen_ai.conversation.id", f"bench-{run}")
                span.set_attribute("gen_ai.memory.records",
                                   json.dumps([{"id": f"m{i % 50}", "content": "x"}]))
    return (time.perf_counter() - started) / spans


def overhead(spans: int) -> dict[str, float]:
    store = open_store(migrate=True)
    setups = {"no processor": lambda: TracerProvider(),
              "batch + dropping exporter": lambda: _with(Drop()),
              "batch + provrepair exporter": lambda: _with(ProvrepairSpanExporter(store))}
    times: dict[str, list[float]] = {name: [] for name in setups}
    for rnd in range(5):
        for name, make in setups.items():
            provider = make()
            times[name].append(agent_thread_time(provider, spans, rnd))
            provider.shutdown()
    store.close()
    return {name: statistics.median(v) for name, v in times.items()}


def _with(exporter: SpanExporter) -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter, max_queue_size=1_000_000))
    return provider


def precision() -> dict[str, dict[str, int]]:
    raw = json.loads(TRANSCRIPT.read_text())
    explicit = copy.deepcopy(raw)
    explicit["messages"][2]["evidence"] = ["u_001"]
    explicit["messages"][4]["evidence"] = ["m_price_c", "call_a"]
    out = {}
    with open_store(migrate=True) as store:
        for name, variant in (("conservative", raw), ("explicit evidence", explicit)):
            case = transcript_case(variant, "t")
            ingest_case(store, case, replace=True)
            p = plan(store, case.task_id)
            out[name] = {"affected": len(p.affected_ids), "quarantined":
                         len(p.quarantine_memory_ids), "replayed": len(p.replay_step_ids),
                         "preserved": len(p.preserve_step_ids)}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spans", type=int, default=20000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="provrepair-otel-bench-") as home:
        os.environ["PROVREPAIR_HOME"] = home
        os.environ.pop("PROVREPAIR_URI", None)
        costs = overhead(args.spans)
        base = costs["no processor"]
        print(f"agent-thread time per span ({args.spans} spans, median of 5, interleaved):")
        for name, seconds in costs.items():
            print(f"  {name:<28} {seconds * 1e6:8.1f} µs  (+{(seconds - base) * 1e6:.1f} µs)")
        rows: dict[str, Any] = precision()
        print("plan of the bundled transcript:")
        for name, counts in rows.items():
            print(f"  {name:<18} " + ", ".join(f"{k} {v}" for k, v in counts.items()))
        open_store().close()
        from provrepair.provenance.store.embedded import EmbeddedServer

        EmbeddedServer(Path(home)).stop()
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, load "
          f"{os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
