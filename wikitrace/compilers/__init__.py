"""Stage 2: turn a run into a compilation (decisions + support) and up to three insights."""
