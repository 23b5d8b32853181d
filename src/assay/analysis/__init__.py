"""Polars analysis: spans → trials table → per-test tables; reading the span conventions."""

from assay.analysis import _columns as columns
from assay.analysis import _conventions as conventions
from assay.analysis._behaviour_features import behaviour_sample, behaviour_samples
from assay.analysis._cost import (
    DEFAULT_PRICES,
    DEFAULT_PRICES_AS_OF,
    Price,
    PriceTable,
    load_prices,
    with_cost,
)
from assay.analysis._describe import Candidate, Description, SourceSeen, describe_spans
from assay.analysis._engines import SPANS_PER_BUCKET, bucket_size, engine_trials
from assay.analysis._features import (
    Feature,
    column_features,
    features_of,
    model_features,
    path_features,
    tool_paths,
    trial_features,
)
from assay.analysis._human_outcomes import (
    Grader,
    LabelledTrials,
    Repeats,
    judge_repeats,
    labelled_trials,
    recorded_labels,
)
from assay.analysis._in_order import taken_in_order
from assay.analysis._labels import read_labels
from assay.analysis._ownership import assign_trials
from assay.analysis._passwhen import PassRule, parse_pass_when
from assay.analysis._per_bucket import tools_as_strings
from assay.analysis._score_ranges import parse_score_range, recorded_score_ranges
from assay.analysis._suggest import Suggestion, suggest
from assay.analysis._trials import NoTrialSpans, Trials, read_trials, trials_from_spans
from assay.analysis._unclaimed import is_work_feature, work_unknown
from assay.analysis._variants import tool_variants
from assay.choices import Engine

__all__ = [
    "Candidate",
    "DEFAULT_PRICES",
    "DEFAULT_PRICES_AS_OF",
    "Description",
    "SourceSeen",
    "PassRule",
    "SPANS_PER_BUCKET",
    "Suggestion",
    "Engine",
    "bucket_size",
    "Feature",
    "column_features",
    "features_of",
    "model_features",
    "path_features",
    "tool_paths",
    "trial_features",
    "Price",
    "PriceTable",
    "NoTrialSpans",
    "Grader",
    "LabelledTrials",
    "Repeats",
    "judge_repeats",
    "labelled_trials",
    "read_labels",
    "recorded_labels",
    "Trials",
    "assign_trials",
    "behaviour_sample",
    "behaviour_samples",
    "columns",
    "conventions",
    "describe_spans",
    "engine_trials",
    "tools_as_strings",
    "taken_in_order",
    "is_work_feature",
    "load_prices",
    "parse_pass_when",
    "parse_score_range",
    "read_trials",
    "recorded_score_ranges",
    "suggest",
    "tool_variants",
    "trials_from_spans",
    "with_cost",
    "work_unknown",
]
