"""Reading the console's verdict table back, as a person reads it: cells under their headers."""

from __future__ import annotations


def table_rows(text: str) -> list[dict[str, str]]:
    """Each row of the ``assay verdicts`` table in ``text``: header → cell, in printed order."""
    lines = text.splitlines()
    top = next(i for i, line in enumerate(lines) if line.startswith("┏"))
    bottom = next(i for i, line in enumerate(lines) if line.startswith("└") and i > top)
    cells = [
        [cell.strip() for cell in line.strip()[1:-1].split(line[0])]
        for line in lines[top:bottom]
        if line.startswith(("┃", "│"))
    ]
    header, *rows = cells
    return [dict(zip(header, row, strict=True)) for row in rows]
