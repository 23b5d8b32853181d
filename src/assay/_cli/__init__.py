"""The commands of ``assay``, one module per family; ``assay.cli`` registers them."""
