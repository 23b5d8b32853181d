"""How long Polars' allocator keeps freed memory in an ``assay`` process (set before Polars loads).

Polars' allocator (jemalloc) gives freed pages back to the system half a second after they are
freed. A large trace set is read bucket by bucket, and each bucket frees about as much memory
as the next one takes; pages given back and taken again cost a page fault each. At 20M spans
(5 buckets) that was 1.9M faults and about 3 s of system time, a third of the run. Keeping freed
pages for three seconds lets the next bucket reuse them: 1.2M faults, at about 0.3 GiB more
peak memory (docs/scale.md has the measurements).

Only the command line sets this, and only when Polars is not loaded yet and the user has not
chosen a setting of their own (``_RJEM_MALLOC_CONF``, which Polars reads): a program importing
assay as a library keeps its own allocator settings.
"""

from __future__ import annotations

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


keep_freed_pages()
