"""A judge that flatters: 3,000 trials graded by an LLM judge, 200 of them labelled by people.

    python examples/judge_labels.py judged-traces labels.jsonl
    assay analyze judged-traces --pass-when 'correctness.label == pass' --threshold 0.72
    assay analyze judged-traces --pass-when 'correctness.label == pass' --threshold 0.72 \\
        --labels labels.jsonl

The agent truly passes 70% of its trials. Its judge passes 95% of the trials people would pass
(sensitivity) and fails only 70% of those they would fail (specificity): it calls 30% of true
failures "pass", so the agent looks like a 75.5% one, and with 3,000 trials the judge's interval
lies above 0.72 — a PASS, exactly and wrongly. People label 200 trials drawn at random; with
them the verdict reads the corrected rate, about 70%, with an interval that carries the
uncertainty of the judge's measured agreement: not a PASS (docs/analysis.md, "A worked example:
a judge that flatters"). Seeded: the same traces and labels each run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from assay.instrument import ParquetSpanExporter

TRIALS = 3000
LABELLED = 200
TRUE_RATE, SENSITIVITY, SPECIFICITY = 0.70, 0.95, 0.70


def main(
    traces: str, labels: str, seed: int = 51, trials: int = TRIALS, labelled: int = LABELLED
) -> None:
    rng = np.random.default_rng(seed)
    truly = rng.random(trials) < TRUE_RATE
    says_pass = np.where(truly, rng.random(trials) < SENSITIVITY, rng.random(trials) >= SPECIFICITY)
    provider = TracerProvider(resource=Resource.create({"service.name": "support-bot"}))
    provider.add_span_processor(
        BatchSpanProcessor(ParquetSpanExporter(traces), max_queue_size=max(trials, 2048))
    )
    tracer = provider.get_tracer("judge-labels-example")
    trace_ids = []
    for i in range(trials):
        attributes = {"assay.test.id": "answers-refund-question", "assay.trial.index": i}
        with tracer.start_as_current_span("trial", attributes=attributes) as span:
            span.add_event(
                "gen_ai.evaluation.result",
                {
                    "gen_ai.evaluation.name": "correctness",
                    "gen_ai.evaluation.score.label": "pass" if says_pass[i] else "fail",
                },
            )
            trace_ids.append(f"{span.get_span_context().trace_id:032x}")
    provider.shutdown()
    chosen = rng.choice(trials, size=labelled, replace=False)
    with Path(labels).open("w", encoding="utf-8") as out:
        for i in sorted(chosen):
            row = {
                "trace_id": trace_ids[i],
                "evaluation": "correctness",
                "label": "pass" if truly[i] else "fail",
                "labeller": "reviewer-a",
            }
            out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
