"""Arrow arrays made from numpy buffers without ``pa.array`` (:func:`int64_array`).

The first ``pa.array`` of a process imports pandas, to ask whether the values are one of its
own types: 0.3-0.6 s of a command's wall time for a library assay never uses (measured on a
100k-span analysis: 2.3-2.5 s with it, 1.7-2.0 s without). Arrays the analysis makes from
numpy are made from the buffer itself.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa

__all__ = ["int64_array"]


def int64_array(values: npt.NDArray[np.integer]) -> pa.Array:
    """``values`` as an Arrow int64 array with no nulls, sharing the buffer where it can."""
    buffer = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), buffer.size, [None, pa.py_buffer(buffer)])
