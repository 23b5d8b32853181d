from assay.quality import DataQuality, Finding


def test_merged_keeps_order_and_drops_repeats() -> None:
    a = Finding("duplicate_spans", "3 spans read twice", count=3)
    b = Finding("incomplete_traces", "2 traces lack a parent", count=2, severity="info")
    merged = DataQuality((a,)).merged(DataQuality((a, b)), [b])
    assert merged.findings == (a, b)
    assert merged.warnings == (a,)
