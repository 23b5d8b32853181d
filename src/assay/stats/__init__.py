"""Statistics on numbers and arrays: pure functions, numpy and scipy only, no Polars, no I/O."""

from assay.stats._intervals import Interval, wilson_interval

__all__ = ["Interval", "wilson_interval"]
from assay.stats._sequential_oc import (
    FixedSampleDesign,
    OperatingCharacteristics,
    fixed_sample_design,
    operating_characteristics,
    simulate_sequential,
)
from assay.stats._sprt import (
    SPRT,
    ConfidenceSequenceTest,
    SequentialDecision,
    SequentialMethod,
    SequentialState,
    SequentialTest,
    sequential_test,
)

__all__ += [
    "SPRT",
    "ConfidenceSequenceTest",
    "FixedSampleDesign",
    "OperatingCharacteristics",
    "SequentialDecision",
    "SequentialMethod",
    "SequentialState",
    "SequentialTest",
    "fixed_sample_design",
    "operating_characteristics",
    "sequential_test",
    "simulate_sequential",
]
