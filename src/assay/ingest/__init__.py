"""assay.ingest."""
