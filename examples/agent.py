"""A simulated customer-support agent: seeded randomness, no LLM, no network.

Each case has a true success rate and its own habits (which tools it calls, how often it
retries), so that 30 trials per case show assay's three verdicts:

    python examples/agent.py --out traces --trials 30
    assay analyze traces

``--variant retry`` records a version that passes as often but calls its first tool a second
time in 40 % of trials (and so spends more tokens) — a behaviour change for ``assay compare``:

    python examples/agent.py --out v1 --version v1 --seed 1
    python examples/agent.py --out v3 --version v3 --seed 1 --variant retry
    assay compare v1 v3

``run(input)`` is the agent itself, callable from ``assay run`` (``--agent examples.agent:run``);
run as a script, the file records trials with ``assay.instrument``.
"""

from __future__ import annotations

import argparse
import random
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

import assay.instrument as ai


@dataclass(frozen=True)
class Case:
    """How the simulated agent behaves on one test case."""

    success_rate: float
    tools: tuple[str, ...]
    retry_tool: str
    difficulty: str


CASES: dict[str, Case] = {
    # Clearly good: passes almost always → PASS.
    "greeting": Case(1.0, ("lookup_customer",), "lookup_customer", "easy"),
    "refund-policy": Case(0.99, ("search_kb", "draft_answer"), "search_kb", "easy"),
    # Borderline: around the 80% threshold → INCONCLUSIVE with 30 trials.
    "flight-rebooking": Case(
        0.85, ("lookup_booking", "search_flights", "rebook"), "search_flights", "medium"
    ),
    # Clearly bad → FAIL; failing trials loop on `search_kb`.
    "multi-step-research": Case(0.45, ("search_kb", "summarise"), "search_kb", "hard"),
}

#: What changes in other agent versions: "v2" breaks the refund-policy case (for `assay compare`).
VERSION_RATES: dict[str, dict[str, float]] = {"v2": {"refund-policy": 0.70}}

#: Behaviour variants (``--variant``): same pass rates, different habits.
VARIANTS = ("none", "retry")
RETRY_SHARE = 0.4
"""Under ``--variant retry``, the share of trials that call their first tool a second time."""

PRICES: dict[str, dict[str, float]] = yaml.safe_load(
    (Path(__file__).with_name("prices.yaml")).read_text()
)["models"]
"""What the simulated models cost, USD per million tokens (``examples/prices.yaml``)."""

_rng_lock = threading.Lock()
_rng = random.Random(7)


def seed(value: int) -> None:
    """Reseed the agent's randomness (the runs are reproducible for a given seed)."""
    with _rng_lock:
        _rng.seed(value)


def _draw() -> random.Random:
    with _rng_lock:
        return random.Random(_rng.getrandbits(64))


def _bill(call: ai.LLMCall, model: str, input_tokens: int, output_tokens: int) -> None:
    """Record a call's tokens and, as a provider's SDK reports it, what it cost."""
    call.usage(input_tokens=input_tokens, output_tokens=output_tokens)
    price = PRICES[model]
    call.cost((input_tokens * price["input"] + output_tokens * price["output"]) / 1e6)


def run(input: dict[str, Any], seed: int | None = None) -> dict[str, Any]:
    """Answer one request, recording tool and LLM spans in the current trace.

    Args:
        input: ``{"case": <name in CASES>, "version": optional agent version, "variant":
            optional behaviour variant (see ``VARIANTS``)}``.
        seed: Make this call's randomness reproducible (``assay run --seed`` passes one per
            trial); without it, the module's seeded generator is used.

    Returns:
        ``{"answer": str, "resolved": bool, "quality": float}``.
    """
    name = str(input.get("case", ""))
    case = CASES.get(name)
    if case is None:
        raise ValueError(f"unknown case {name!r}; known: {', '.join(CASES)}")
    rng = random.Random(seed) if seed is not None else _draw()
    rate = VERSION_RATES.get(str(input.get("version", "")), {}).get(name, case.success_rate)
    success = rng.random() < rate
    # Drawn after `success`, and only under the variant, so pass rates stay those of the case.
    extra_call = input.get("variant") == "retry" and rng.random() < RETRY_SHARE
    with ai.llm("sim-model-small") as call:
        _bill(call, "sim-model-small", rng.randint(300, 500), rng.randint(20, 60))
    for position, tool_name in enumerate(case.tools):
        # Failing trials retry a tool — a habit assay's flakiness analysis should spot.
        repeats = 1 + (rng.randint(1, 3) if not success and tool_name == case.retry_tool else 0)
        repeats += 1 if extra_call and position == 0 else 0
        for _ in range(repeats):
            with ai.tool(tool_name):
                time.sleep(rng.uniform(0.0, 0.002))
    with ai.llm("sim-model-large") as call:
        # The extra tool result goes back into the prompt.
        grown = 600 if extra_call else 0
        _bill(call, "sim-model-large", rng.randint(800, 1500) + grown, rng.randint(100, 300))
    quality = rng.gauss(85 if success else 55, 6)
    answer = "Your request is resolved." if success else "Sorry, I could not finish that."
    return {
        "answer": answer,
        "resolved": success,
        "quality": round(min(100.0, max(0.0, quality)), 1),
    }


def record(out: str, trials: int, version: str, seed_value: int, variant: str = "none") -> None:
    """Run every case ``trials`` times as assay trials, writing a trace set to ``out``."""
    seed(seed_value)
    handle = ai.configure(out, service_name="example-support-agent")
    for name, case in CASES.items():
        for index in range(trials):
            with ai.trial(
                name,
                suite="example",
                agent_version=version,
                index=index,
                difficulty=case.difficulty,
                tags=["support"],
            ) as trial:
                output = run({"case": name, "version": version, "variant": variant})
                trial.score("quality", output["quality"], range=(0, 100))
                trial.check("request resolved", output["resolved"])
    handle.flush()


def main() -> None:
    """Record a trace set of the simulated agent."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="traces", help="trace set folder")
    parser.add_argument("--trials", type=int, default=30, help="trials per case")
    parser.add_argument("--version", default="v1", help="assay.agent.version to record")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--variant", choices=VARIANTS, default="none", help="a planted behaviour change"
    )
    args = parser.parse_args()
    record(args.out, args.trials, args.version, args.seed, args.variant)
    print(f"recorded {args.trials} trials × {len(CASES)} cases into {args.out}/")


if __name__ == "__main__":
    main()
