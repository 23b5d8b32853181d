"""Exact per-n error of the fixed-n threshold verdict, Wilson's and the verdict rule's.

For n = 1…100 and thresholds 0.5, 0.8, 0.9, 0.95 at 95% confidence: at a true pass rate equal to
the threshold t, the false-PASS rate P(lower bound ≥ t) and the false-FAIL rate
P(upper bound < t), X ~ Binomial(n, t), summed exactly over every count (no simulation). Two
intervals: Wilson's own, and the verdict rule's (``assay.stats.verdict_interval``: Wilson's
bound, or Clopper–Pearson's on a side where Wilson's exact error exceeds α/2 = 2.5%). The
rule's rates must stay at or below 2.5% at every n; the last line counts those above.

Run: ``python benchmarks/bench_verdict_errors.py``; ``--write`` replaces the table in
docs/statistics.md (between its ``verdict-errors`` markers).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np
from scipy import stats as sps

from assay.stats import proportion_bounds, verdict_bounds

THRESHOLDS = (0.5, 0.8, 0.9, 0.95)
CONFIDENCE = 0.95
MAX_N = 100
DOC = Path(__file__).resolve().parents[1] / "docs" / "statistics.md"
BLOCK = re.compile(r"(<!-- verdict-errors:start -->\n)(.*?)(<!-- verdict-errors:end -->)", re.S)


def errors(n: int, threshold: float, rule: bool) -> tuple[float, float]:
    """Exact (false PASS, false FAIL) at true rate ``threshold`` with ``n`` trials."""
    counts = np.arange(n + 1)
    if rule:
        low, high = verdict_bounds(counts, n, threshold, CONFIDENCE)
    else:
        low, high = proportion_bounds(counts, n, CONFIDENCE)
    pmf = sps.binom.pmf(counts, n, threshold)
    return float(pmf[low >= threshold].sum()), float(pmf[high < threshold].sum())


def table() -> tuple[str, int]:
    """The Markdown table, and how many of the rule's rates exceed α/2."""
    half = (1 - CONFIDENCE) / 2
    head = "| n | " + " | ".join(f"{t:g}: Wilson | {t:g}: rule" for t in THRESHOLDS) + " |"
    lines = [head, "|---:|" + "---:|" * (2 * len(THRESHOLDS))]
    above = 0
    for n in range(1, MAX_N + 1):
        cells = []
        for t in THRESHOLDS:
            for rule in (False, True):
                fp, ff = errors(n, t, rule)
                if rule:
                    above += (fp > half) + (ff > half)
                cells.append(f"{100 * fp:.2f} / {100 * ff:.2f}")
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n", above


def main() -> None:
    """Print the table (and write it into docs/statistics.md with ``--write``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update docs/statistics.md")
    args = parser.parse_args()
    text, above = table()
    print("false PASS / false FAIL in %, at a true rate equal to the threshold, 95% confidence")
    print(text)
    worst = {t: max(max(errors(n, t, False)) for n in range(1, MAX_N + 1)) for t in THRESHOLDS}
    print(
        "Wilson's worst one-sided rate: "
        + ", ".join(f"{t:g}: {100 * w:.1f}%" for t, w in worst.items())
    )
    print(f"rule rates above {100 * (1 - CONFIDENCE) / 2:g}%: {above}")
    if args.write:
        doc = DOC.read_text()
        DOC.write_text(BLOCK.sub(lambda m: m[1] + text + m[3], doc))


if __name__ == "__main__":
    main()
