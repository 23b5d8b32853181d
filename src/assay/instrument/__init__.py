"""assay.instrument."""
