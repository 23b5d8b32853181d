"""assay.collect."""
