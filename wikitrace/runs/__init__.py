"""Stage 1 of the pipeline: read agent runs from their input formats into `Run` records."""
