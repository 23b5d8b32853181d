"""assay.run."""
