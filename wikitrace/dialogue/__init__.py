"""Dialogue memory (TrajWiki): source-grounded snapshots, claim trajectories,
a Memory Wiki and hierarchical retrieval over them.

Pipeline: messages -> exchange snapshots with claims -> trajectories (append-only
claim lifecycle) -> wiki pages -> hierarchical retrieval -> evidence packet
(-> optional LLM answer). Everything works offline and deterministically; an
OpenAI-compatible LLM or embedding endpoint is optional.
"""

FORMAT = "wikitrace-dialogue/1"
