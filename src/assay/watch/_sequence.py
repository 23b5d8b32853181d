"""The pass-rate confidence sequence a watched test is judged by, centred on its threshold."""

from __future__ import annotations

from assay.stats import BernoulliConfidenceSequence

__all__ = ["pass_rate_sequence"]

# The prior's weight in trials: the library's default (a broad prior; see the stats module).
_PRIOR_STRENGTH = 2.0
# A threshold of 0 or 1 is allowed; the mixing prior's mean must lie strictly inside (0, 1).
_EDGE = 1e-3


def pass_rate_sequence(threshold: float, confidence: float) -> BernoulliConfidenceSequence:
    """The anytime-valid confidence sequence of a pass rate judged against ``threshold``.

    The beta-binomial mixture of :class:`assay.stats.BernoulliConfidenceSequence` (Robbins
    1970; Howard et al. 2021), its prior centred on the threshold: the sequence is tightest
    where the verdict is decided. Coverage holds at every trial count whatever the prior.

    Args:
        threshold: The pass rate required, in [0, 1].
        confidence: ``1 - alpha``: the chance the sequence covers the true rate at every look.
    """
    centre = min(max(threshold, _EDGE), 1 - _EDGE)
    return BernoulliConfidenceSequence(
        confidence=confidence, prior_mean=centre, prior_strength=_PRIOR_STRENGTH
    )
