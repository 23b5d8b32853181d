"""The pass-rate confidence sequence a watched test is judged by, centred on its threshold."""

from __future__ import annotations

from assay.stats import BernoulliConfidenceSequence, open_ended_sequence

__all__ = ["pass_rate_sequence"]


def pass_rate_sequence(threshold: float, confidence: float) -> BernoulliConfidenceSequence:
    """The anytime-valid confidence sequence of a pass rate judged against ``threshold``.

    :func:`assay.stats.open_ended_sequence`: the adaptive runner's beta-binomial mixture
    (Robbins 1970; Howard et al. 2021), its prior centred on the threshold, with the broad prior
    of a stream that has no maximum. Coverage holds at every trial count whatever the prior.

    Args:
        threshold: The pass rate required, in [0, 1].
        confidence: ``1 - alpha``: the chance the sequence covers the true rate at every look.
    """
    return open_ended_sequence(threshold, confidence)
