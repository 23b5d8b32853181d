"""assay.report."""
