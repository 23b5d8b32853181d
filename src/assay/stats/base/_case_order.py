"""The one random order, fixed by a seed, in which a suite's cases are run and fed to a test."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from assay.errors import ConfigError


def case_order(cases: int, seed: int = 0) -> npt.NDArray[np.int64]:
    """A random order of ``cases`` cases, fixed by ``seed``: the order to run and feed them in.

    The interval's guarantee treats the cases as random draws; a fixed order (alphabetical,
    easiest first) could make an early stop favour one kind of case.
    """
    if cases < 0:
        raise ConfigError(f"cases cannot be negative (got {cases})")
    return np.random.default_rng(seed).permutation(cases).astype(np.int64)
