"""When may a run stop? Anytime-valid confidence sequences and stopping rules.

* :mod:`._confidence_sequence` — an anytime-valid confidence sequence for a pass rate, and the
  one factory of the sequence every adaptive verdict reads (``pass_rate_sequence``).
* :mod:`._drop_sequence` — an anytime-valid test of a drop between two pass rates (betting on
  the versions' trials paired in run order), the drop's confidence sequence and its power.
* :mod:`._betting` — the betting confidence sequence of a bounded mean (Waudby-Smith & Ramdas).
* :mod:`._paired_sequence` — its use for the mean paired difference over cases, and the decision.
* :mod:`._paired_simulation` — that adaptive comparison run over many simulated suites at once.
* :mod:`._sprt` — stopping rules for adaptive runs: the confidence sequence, Wald's SPRT.
* :mod:`._sequential_oc` — their exact operating characteristics, simulation, fixed-N reference.
"""

from assay.stats.sequential._betting import BoundedMeanSequence
from assay.stats.sequential._confidence_sequence import (
    DEFAULT_HORIZON,
    BernoulliConfidenceSequence,
    open_ended_sequence,
    pass_rate_sequence,
    tuned_prior_strength,
)
from assay.stats.sequential._drop_sequence import DropSequence, DropTest
from assay.stats.sequential._paired_sequence import (
    PairedDecision,
    PairedDifferenceSequence,
    PairedStatus,
    decide_paired,
)
from assay.stats.sequential._paired_simulation import PairedStops, simulate_paired_sequence
from assay.stats.sequential._sequential_oc import (
    FixedSampleDesign,
    OperatingCharacteristics,
    fixed_sample_design,
    operating_characteristics,
    simulate_sequential,
)
from assay.stats.sequential._sprt import (
    SPRT,
    ConfidenceSequenceTest,
    LegacyConfidenceSequenceTest,
    SequentialDecision,
    SequentialState,
    SequentialTest,
    sequential_test,
)

__all__ = [
    "BoundedMeanSequence",
    "DEFAULT_HORIZON",
    "BernoulliConfidenceSequence",
    "open_ended_sequence",
    "pass_rate_sequence",
    "tuned_prior_strength",
    "DropSequence",
    "DropTest",
    "PairedDecision",
    "PairedDifferenceSequence",
    "PairedStatus",
    "decide_paired",
    "PairedStops",
    "simulate_paired_sequence",
    "FixedSampleDesign",
    "OperatingCharacteristics",
    "fixed_sample_design",
    "operating_characteristics",
    "simulate_sequential",
    "SPRT",
    "ConfidenceSequenceTest",
    "LegacyConfidenceSequenceTest",
    "SequentialDecision",
    "SequentialState",
    "SequentialTest",
    "sequential_test",
]
