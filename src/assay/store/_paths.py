"""Trace-set paths → unique real files: folders walked, globs matched, symlinks resolved once.

A trace set named twice (the same folder as ``traces`` and ``/abs/traces``), reached through a
symlink, or holding a symlink loop must still count each file once: every file is identified
by its device and inode, every folder walked at most once (so a loop ends where it starts), and
what was collapsed or could not be read is reported rather than hidden.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG

from assay.errors import InputError
from assay.quality import Finding

__all__ = ["TEMP_SUFFIX", "FileListing", "is_remote", "list_files"]

TEMP_SUFFIX = ".tmp"
"""A file being written ends so (``.name.tmp``): readers never list it."""

_REMOTE = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)


def is_remote(path: str) -> bool:
    """Whether ``path`` is a URL (``s3://...``) rather than a local path."""
    return _REMOTE.match(path) is not None


_GLOB_CHARS = frozenset("*?[")
_EXAMPLES = 5


@dataclass(slots=True)
class FileListing:
    """The files a list of paths names, each once, and what was left out on the way."""

    files: list[str] = field(default_factory=list)
    """Local files (first name seen) and object-store URLs, in the order found."""
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    """Folders or files that could not be listed or examined, with the reason."""
    repeated: list[str] = field(default_factory=list)
    """Paths that led to a file or folder already listed (named twice, a symlink, a link)."""
    loops: list[str] = field(default_factory=list)
    """Symlinked folders not followed because they lead back into a folder already walked."""
    _seen_files: set[tuple[int, int]] = field(default_factory=set)
    _seen_dirs: set[tuple[int, int]] = field(default_factory=set)

    def findings(self) -> list[Finding]:
        """What the user must be told about the listing itself."""
        out: list[Finding] = []
        if self.repeated:
            out.append(
                Finding(
                    "duplicate_paths",
                    f"{len(self.repeated)} path(s) lead to a file or folder already read (the "
                    "same folder given twice, a symlink or a hard link); each is read once",
                    len(self.repeated),
                    tuple(self.repeated[:_EXAMPLES]),
                    "info",
                )
            )
        if self.loops:
            out.append(
                Finding(
                    "symlink_loops",
                    f"{len(self.loops)} symlinked folder(s) lead back into folders already read "
                    "and were not followed",
                    len(self.loops),
                    tuple(self.loops[:_EXAMPLES]),
                    "info",
                )
            )
        return out

    def _add_file(self, path: str, stat: os.stat_result) -> None:
        identity = (stat.st_dev, stat.st_ino)
        if identity in self._seen_files:
            self.repeated.append(path)
            return
        self._seen_files.add(identity)
        self.files.append(path)

    def _enter_dir(self, path: str) -> bool:
        """Mark a folder walked; False when it was walked already (a loop or a repeat)."""
        stat = os.stat(path)
        identity = (stat.st_dev, stat.st_ino)
        if identity in self._seen_dirs:
            return False
        self._seen_dirs.add(identity)
        return True


def _hidden_or_temp(relative: str) -> bool:
    """Writers' temporary files and private folders (``.x``, ``_wal``, ``_staging``)."""
    return relative.endswith(TEMP_SUFFIX) or any(
        part.startswith((".", "_")) for part in Path(relative).parts
    )


def _walk(listing: FileListing, root: str) -> Iterator[str]:
    """Every regular file under ``root`` (relative paths), each folder entered once."""
    if not listing._enter_dir(root):
        listing.repeated.append(root)
        return
    stack = [""]
    while stack:
        relative = stack.pop()
        folder = os.path.join(root, relative) if relative else root
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            listing.unreadable.append((folder, f"cannot list folder ({exc.strerror or exc})"))
            continue
        subfolders: list[str] = []
        for entry in entries:
            name = os.path.join(relative, entry.name) if relative else entry.name
            if entry.name.startswith((".", "_")):
                continue
            try:
                is_dir = entry.is_dir()  # follows symlinks; loops are cut by _enter_dir
                if is_dir and not listing._enter_dir(entry.path):
                    listing.loops.append(entry.path)
                    continue
            except OSError as exc:
                listing.unreadable.append((entry.path, f"cannot examine ({exc.strerror or exc})"))
                continue
            if is_dir:
                subfolders.append(name)
            else:
                yield name
        stack.extend(reversed(subfolders))


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A regex for a relative glob: ``**`` spans folders, ``*`` and ``?`` stay inside one."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = pattern.find("]", i + 2)
            if end < 0:
                out.append(re.escape(ch))
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                out.append("[^" + body[1:] + "]" if body.startswith("!") else "[" + body + "]")
                i = end
        else:
            out.append(re.escape(ch))
        i += 1
    return re.compile("".join(out) + r"\Z")


def _glob(listing: FileListing, pattern: str) -> None:
    parts = Path(pattern).parts
    fixed = next((i for i, p in enumerate(parts) if _GLOB_CHARS & set(p)), len(parts))
    base = str(Path(*parts[:fixed])) if fixed else "."
    matcher = _glob_regex("/".join(parts[fixed:]))
    before = len(listing.files) + len(listing.repeated)
    if os.path.isdir(base):
        for relative in _walk(listing, base):
            if matcher.match(relative.replace(os.sep, "/")) and not _hidden_or_temp(relative):
                _add_stat(listing, os.path.join(base, relative))
    if len(listing.files) + len(listing.repeated) == before:
        raise InputError(f"{pattern}: no file matches this pattern")


def _add_stat(listing: FileListing, path: str) -> None:
    try:
        stat = os.stat(path)
    except OSError as exc:
        listing.unreadable.append((path, f"cannot examine ({exc.strerror or exc})"))
        return
    if not S_ISREG(stat.st_mode):
        # Opening a FIFO blocks until someone writes to it: never open one.
        listing.unreadable.append((path, "not a regular file (a FIFO, a socket or a device)"))
        return
    listing._add_file(path, stat)


def _why_empty(folder: str) -> str:
    """What an empty folder tells about a collector writing into it (the names it uses)."""
    if os.path.exists(os.path.join(folder, "_collector.lock")):
        # A clean stop removes the lock file; after a crash it stays, hence both cases.
        return (
            " yet: a running collector writes here (_collector.lock), and its spans appear"
            " within a second of a pause in traffic; if it crashed, `assay collect` on this"
            " folder converts what its log (_wal/) holds"
        )
    return ""


def list_files(names: list[str]) -> FileListing:
    """Resolve folders, globs, files and URLs into unique files.

    Folders are searched recursively for ``*.parquet`` (hidden and ``_`` entries skipped);
    symlinks are followed, but no folder is entered twice, so a loop ends at once.

    Raises:
        InputError: A path does not exist, a folder holds no spans file, a pattern matches
            nothing.
    """
    listing = FileListing()
    for name in names:
        if _REMOTE.match(name):
            listing.files.append(name)
        elif _GLOB_CHARS & set(name):
            _glob(listing, name)
        elif os.path.isdir(name):
            before = len(listing.files) + len(listing.repeated)
            for relative in _walk(listing, name):
                if relative.endswith(".parquet") and not _hidden_or_temp(relative):
                    _add_stat(listing, os.path.join(name, relative))
            found = len(listing.files) + len(listing.repeated) - before
            if not found and not listing.unreadable and name not in listing.repeated:
                raise InputError(f"{name}: folder holds no .parquet files{_why_empty(name)}")
        elif os.path.isfile(name) or (os.path.exists(name) and not os.path.islink(name)):
            _add_stat(listing, name)  # a FIFO or a device is named as such
        elif os.path.islink(name):
            raise InputError(f"{name}: a symlink to nothing (or a symlink loop)")
        else:
            raise InputError(f"{name}: no such file or folder")
    return listing
