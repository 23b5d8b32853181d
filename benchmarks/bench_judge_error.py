"""Coverage and verdict errors of the pass rate corrected for an LLM judge's error, by simulation.

Known truth: a test of true pass rate π, n trials graded by a judge of sensitivity Se and
specificity Sp, m of them (drawn at random) labelled by people. For each cell (judge, m, n, π),
``REPS`` seeded repetitions; per method, the share of intervals lying wholly above π ("above":
the wrong-PASS side) and wholly below ("below": the wrong-FAIL side), each of which must stay at
or below α/2 = 2.5% within Monte Carlo error, and the verdict errors at the threshold 0.8:
wrong PASS (π < 0.8, interval at or above 0.8) and wrong FAIL (π ≥ 0.8, interval below 0.8).

Methods: assay's (``assay.stats.judges.corrected_bounds``: Rogan–Gladen, MOVER test inversion
with Clopper–Pearson pieces); the adjusted Wald interval of Lang & Reiczigel (2014, Prev. Vet.
Med. 113:13, their published formula); and the judge's own Clopper–Pearson interval of its
pass rate, uncorrected.

Run: ``python benchmarks/bench_judge_error.py`` (about two minutes); ``--write`` replaces the
table in docs/statistics.md (between its ``judge-errors`` markers); ``--reps`` sets the
repetitions per cell.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np
from scipy import stats as sps

from assay.stats.judges import corrected_bounds

JUDGES = ((0.95, 0.95), (0.95, 0.70), (0.70, 0.90), (0.99, 0.70), (0.85, 0.85), (0.65, 0.65))
LABELS = (50, 100, 200, 500)
TRIALS = (100, 1000, 5000)
RATES = (0.5, 0.7, 0.78, 0.8, 0.82, 0.9, 0.97)
THRESHOLD = 0.8
CONFIDENCE = 0.95
SEED = 51
DOC = Path(__file__).resolve().parents[1] / "docs" / "statistics.md"
BLOCK = re.compile(r"(<!-- judge-errors:start -->\n)(.*?)(<!-- judge-errors:end -->)", re.S)


def lang_reiczigel(x, n, tp, m1, tn, m0):  # type: ignore[no-untyped-def]
    """Lang & Reiczigel (2014): adjusted Wald limits, as their published R function."""
    z = sps.norm.isf((1 - CONFIDENCE) / 2)
    n_, p_ = n + z * z, (x + z * z / 2) / (n + z * z)
    se_n, sp_n = m1 + 2, m0 + 2
    se_, sp_ = (tp + 1) / se_n, (tn + 1) / sp_n
    youden = se_ + sp_ - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = (p_ + sp_ - 1) / youden
        spread = np.sqrt(
            p_ * (1 - p_) / n_
            + se_ * (1 - se_) / se_n * rate**2
            + sp_ * (1 - sp_) / sp_n * (1 - rate) ** 2
        ) / np.abs(youden)
        shift = 2 * z * z * (rate * se_ * (1 - se_) / se_n - (1 - rate) * sp_ * (1 - sp_) / sp_n)
        low = np.clip(rate + shift - z * spread, 0, 1)
        high = np.clip(rate + shift + z * spread, 0, 1)
    bad = ~np.isfinite(low) | ~np.isfinite(high)
    return np.where(bad, 0.0, low), np.where(bad, 1.0, high)


def cell(rng, se, sp, m, n, rate, reps):  # type: ignore[no-untyped-def]
    """Per method: (above, below, wrong PASS, wrong FAIL) shares over ``reps`` repetitions."""
    tp, fn, fp, tn = rng.multinomial(
        m, [rate * se, rate * (1 - se), (1 - rate) * (1 - sp), (1 - rate) * sp], size=reps
    ).T
    apparent = rate * se + (1 - rate) * (1 - sp)
    x = tp + fp + rng.binomial(n - m, apparent, size=reps)
    ours = corrected_bounds(x, n, tp, fn, fp, tn, CONFIDENCE)[:2]
    theirs = lang_reiczigel(x, n, tp, tp + fn, tn, fp + tn)
    alpha = (1 - CONFIDENCE) / 2
    judge = (
        np.where(x > 0, sps.beta.ppf(alpha, x, n - x + 1), 0.0),
        np.where(x < n, sps.beta.isf(alpha, x + 1, n - x), 1.0),
    )
    out = {}
    for name, (low, high) in (("assay", ours), ("lang-reiczigel", theirs), ("judge", judge)):
        wrong_pass = np.mean(low >= THRESHOLD) if rate < THRESHOLD else 0.0
        wrong_fail = np.mean(high < THRESHOLD) if rate >= THRESHOLD else 0.0
        out[name] = (np.mean(low > rate), np.mean(high < rate), wrong_pass, wrong_fail)
    return out


def table(reps: int) -> tuple[str, float]:
    """The Markdown table (worst cell per judge and label count) and assay's worst tail."""
    rng = np.random.default_rng(SEED)
    lines = [
        "| Se | Sp | labels | assay: above / below | assay: wrong PASS / FAIL "
        "| Lang–Reiczigel: above / below | judge only: above / below "
        "| judge only: wrong PASS / FAIL |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    worst = 0.0
    for se, sp in JUDGES:
        for m in LABELS:
            found: dict[str, np.ndarray] = {}
            for n in TRIALS:
                if m > n:
                    continue
                for rate in RATES:
                    for name, figures in cell(rng, se, sp, m, n, rate, reps).items():
                        found[name] = np.maximum(found.get(name, np.zeros(4)), figures)
            if not found:
                continue
            worst = max(worst, found["assay"][0], found["assay"][1])

            def pair(v: np.ndarray, i: int) -> str:
                return f"{100 * v[i]:.1f}% / {100 * v[i + 1]:.1f}%"

            lines.append(
                f"| {se:g} | {sp:g} | {m} | {pair(found['assay'], 0)} | "
                f"{pair(found['assay'], 2)} | {pair(found['lang-reiczigel'], 0)} | "
                f"{pair(found['judge'], 0)} | {pair(found['judge'], 2)} |"
            )
    return "\n".join(lines) + "\n", worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--write", action="store_true", help="update docs/statistics.md")
    args = parser.parse_args()
    text, worst = table(args.reps)
    print(text)
    mc = 3 * np.sqrt(0.025 * 0.975 / args.reps)
    print(
        f"assay's worst one-sided miss: {100 * worst:.2f}% (α/2 = 2.5%, + 3 MC SE = "
        f"{100 * (0.025 + mc):.2f}%)"
    )
    if args.write:
        doc = DOC.read_text()
        if not BLOCK.search(doc):
            raise SystemExit(f"{DOC}: no judge-errors markers")
        DOC.write_text(BLOCK.sub(lambda m: m.group(1) + text + m.group(3), doc))


if __name__ == "__main__":
    main()
