"""How does an agent behave, and what separates failing trials from passing ones?

* :mod:`._behaviour` — behaviour diff between two versions: a test, effect and interval per
  feature kind (tool paths, binary, counts, continuous); :mod:`._behaviour_paths` — the
  tool-path test; :mod:`._behaviour_power` — the power to see a minimal change.
* :mod:`._explain` — which trace features separate failing from passing trials.
* :mod:`._flakiness` — the flakiness score and its explained factors.
* :mod:`._consistency` — tool-choice agreement and Levenshtein similarity.
* :mod:`._tool_paths` — a set of trials' distinct tool sequences and which one each took.
"""

from assay.stats.behaviour._behaviour import (
    BEHAVIOUR_KINDS,
    BehaviourKind,
    BehaviourSample,
    FeaturePair,
    Shift,
    binary_shift,
    continuous_shift,
    continuous_shifts,
    count_shift,
    count_shifts,
    difference_interval,
    log_ratio_se,
    row_shifts,
)
from assay.stats.behaviour._behaviour_paths import PathShift, path_shift, permutations_for
from assay.stats.behaviour._behaviour_power import (
    MINIMAL_EFFECTS,
    equal_trials_guess,
    ratio_power,
    ratio_powers,
    share_power,
    trials_for_power,
)
from assay.stats.behaviour._consistency import (
    ToolConsistency,
    levenshtein,
    sequence_similarity,
    tool_consistency,
)
from assay.stats.behaviour._explain import (
    FEATURE_KINDS,
    RELATIVE_RESOLUTION,
    FailureFactor,
    FailureRequest,
    FailureTests,
    explain_failures,
    explain_many,
    explain_tested,
    failure_tests,
)
from assay.stats.behaviour._flakiness import (
    CATEGORIES,
    WEIGHTS,
    Factor,
    Flakiness,
    category,
    flakiness,
    flakiness_of,
)
from assay.stats.behaviour._tool_paths import ToolPaths

__all__ = [
    "BEHAVIOUR_KINDS",
    "BehaviourKind",
    "BehaviourSample",
    "FeaturePair",
    "Shift",
    "binary_shift",
    "continuous_shift",
    "continuous_shifts",
    "count_shift",
    "count_shifts",
    "difference_interval",
    "log_ratio_se",
    "row_shifts",
    "PathShift",
    "path_shift",
    "permutations_for",
    "MINIMAL_EFFECTS",
    "equal_trials_guess",
    "ratio_power",
    "ratio_powers",
    "share_power",
    "trials_for_power",
    "ToolConsistency",
    "levenshtein",
    "sequence_similarity",
    "tool_consistency",
    "FEATURE_KINDS",
    "RELATIVE_RESOLUTION",
    "FailureFactor",
    "FailureRequest",
    "FailureTests",
    "explain_failures",
    "explain_many",
    "explain_tested",
    "failure_tests",
    "CATEGORIES",
    "WEIGHTS",
    "Factor",
    "Flakiness",
    "category",
    "flakiness",
    "flakiness_of",
    "ToolPaths",
]
