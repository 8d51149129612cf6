"""Stage 3: lay compiled runs out as the read-only raw / compilation / insight corpus."""
