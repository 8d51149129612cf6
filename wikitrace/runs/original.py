"""A run's kept original record (``run.source["original"]``) on its way to its page.

The record is written as ``raw/<step>/original.<suffix>`` by the page writer. When
the input is read in a helper process, the record crosses the pipes as bytes
(``helper_process.PickledOriginal``) and is unpickled only in the page writer: the
build's main process never reads it.
"""

from __future__ import annotations

import pickle

from ..helper_process import PickledOriginal


def original_suffix(run) -> str | None:
    """The kept original record's page: ``original.<suffix>`` (None: the run keeps none)."""
    original = run.source.get("original")
    if original is None:
        return None
    if isinstance(original, PickledOriginal):  # read in the reader process
        return original.suffix
    kind = run.source.get("original_format") or ("text" if isinstance(original, str) else "json")
    return "txt" if kind == "text" else "jsonl" if kind == "jsonl" and isinstance(original, list) else "json"


def seal_original(run) -> None:
    """Pickle the run's kept original record on its own (in the reader process): the build
    passes it on to the page writer as bytes."""
    original = run.source.get("original")
    if original is not None and not isinstance(original, PickledOriginal):
        sealed = PickledOriginal(pickle.dumps(original, protocol=pickle.HIGHEST_PROTOCOL), original_suffix(run))
        run.source = {**run.source, "original": sealed}
