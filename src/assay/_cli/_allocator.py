"""How the allocators of an ``assay`` process keep freed memory (set before Polars loads).

Polars' allocator (jemalloc) gives freed pages back to the system half a second after they are
freed. A large trace set is read bucket by bucket, and each bucket frees about as much memory
as the next one takes; pages given back and taken again cost a page fault each. At 20M spans
(5 buckets) that was 1.9M faults and about 3 s of system time, a third of the run. Keeping freed
pages for three seconds lets the next bucket reuse them: 1.2M faults, at about 0.3 GiB more
peak memory (docs/scale.md has the measurements).

Python's own large blocks (numpy arrays, the packed tables of waiting buckets, ``bytes``) come
from the C library's ``malloc``. glibc's raises the size from which it maps a block of its own
(given back at once when freed) each time such a block is freed, up to 32 MiB; blocks below it
are carved from heaps that are seldom given back, and a set of millions of trials leaves them
full of holes. A fixed threshold (glibc's first one, 128 KiB) keeps every large block its own
mapping: 200M spans peaked at 4.42 GiB in the sort with the moving threshold, 3.49 with it.

pyarrow's default allocator (mimalloc) keeps what it frees for its next allocations. The
buckets' events are read by pyarrow in the two bucket threads (``assay.store.events_column``):
with mimalloc the command's peak rose by 0.1–0.3 GiB at 20M spans (to 1.98–2.04 GiB on the set
with five events a trial, 1.93–2.01 on 4M trials). With the C library's ``malloc`` it was
1.62–1.86 GiB, but every block mapped and given back cost page faults: 200M spans took 143 s
against 115 s. pyarrow's jemalloc, on Linux, gives back what stays unused: 1.71 and 1.78 GiB,
and 200M spans in 117 s at 3.78 GiB (docs/scale.md, fourteenth phase).

Only the command line sets these, and only when the user has not chosen a setting of their own
(``_RJEM_MALLOC_CONF``, which Polars reads, and only before Polars loads;
``MALLOC_MMAP_THRESHOLD_``, which glibc reads; ``ARROW_DEFAULT_MEMORY_POOL``, which pyarrow
reads when it loads): a program importing assay as a library keeps its own allocator
settings.
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Final

ALLOCATOR_ENV: Final = "_RJEM_MALLOC_CONF"
"""The variable Polars passes to its allocator, after its own defaults (so it wins)."""
KEEP_FREED_PAGES: Final = "dirty_decay_ms:3000,muzzy_decay_ms:0"
"""Freed pages stay for 3 s, then go back to the system at once."""


def keep_freed_pages() -> bool:
    """Set :data:`KEEP_FREED_PAGES` for this process; False when it cannot or should not."""
    if "polars" in sys.modules or ALLOCATOR_ENV in os.environ:
        return False
    os.environ[ALLOCATOR_ENV] = KEEP_FREED_PAGES
    return True


MMAP_THRESHOLD_ENV: Final = "MALLOC_MMAP_THRESHOLD_"
"""The variable glibc reads for a fixed threshold of its own."""
M_MMAP_THRESHOLD: Final = -3
"""glibc's ``mallopt`` parameter for the threshold (``malloc.h``)."""
MMAP_FROM_BYTES: Final = 128 * 1024
"""Blocks of this size or more are mapped on their own, and given back once freed."""


def fixed_mmap_threshold() -> bool:
    """Fix glibc's threshold at :data:`MMAP_FROM_BYTES`; False elsewhere, or if the user set it."""
    if not sys.platform.startswith("linux") or MMAP_THRESHOLD_ENV in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):  # not glibc (musl, ...)
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_FROM_BYTES))


ARROW_POOL_ENV: Final = "ARROW_DEFAULT_MEMORY_POOL"
"""The variable pyarrow reads for its default allocator, once, when it loads."""
ARROW_POOL: Final = "jemalloc"
"""pyarrow's jemalloc (in its Linux builds; another platform's may not have it)."""


def arrow_pool() -> bool:
    """Make pyarrow allocate with :data:`ARROW_POOL` on Linux; False elsewhere, or if too late.

    Too late: the user chose, or pyarrow has loaded (its choice is made then, and kept).
    """
    if not sys.platform.startswith("linux"):
        return False
    if ARROW_POOL_ENV in os.environ or "pyarrow" in sys.modules:
        return False
    os.environ[ARROW_POOL_ENV] = ARROW_POOL
    return True


keep_freed_pages()
fixed_mmap_threshold()
arrow_pool()
