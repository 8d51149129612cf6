"""Rewriting the counts on insight pages in place, after ``cite record`` or ``forget``
changed the usage ledger: only the pages whose counts moved are written, through the
same pending record a build uses, so a kill half-way is finished by the next command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from . import pending
from .publish import Publisher
from .usage_pages import recounted, shown_counts


def publish_counts(root: Path, counts: dict, insight_ids: list[str], notes: list[str],
                   prompt_index: Callable[[list, list, Any], bytes]) -> list[str]:
    """Rewrite the insight pages whose counts changed (and the insight layer's search
    file), keeping every other file of the corpus as it is. ``prompt_index`` rebuilds
    the prompt index if an interrupted build must be finished first."""

    pub = Publisher(root, "runs")
    try:
        done_before = pending.recover(pub, prompt_index)  # an update killed earlier is finished (or rolled back) first
        if done_before:
            notes.append(done_before)
        pub.keep(list(pub.manifest.files))
        shown = pub.manifest.data.get("usage") or {}
        texts, skipped = recounted(pub, counts, shown, insight_ids)
        if skipped:
            notes.append(f"{len(skipped)} insight page(s) are not as the last build wrote them (missing, edited, "
                         f"or no build state in .wikitrace/): {', '.join(skipped[:3])}; run wikitrace compile to "
                         f"write them with their counts")
        done = shown_counts(counts, insight_ids)
        for rel in skipped:  # still showing the old counts
            iid = rel.rsplit("/", 1)[1][:-3]
            done.pop(iid, None)
            if iid in shown:
                done[iid] = list(shown[iid])
        record = pending.Pending(command="cite record", data={**pub.manifest.data, "usage": dict(sorted(done.items()))},
                                 output={}, pages=texts)
        if texts:  # only the shards holding a rewritten page are written again
            pending.save(pub, record)
        pending.complete(pub, record, prompt_index)
    finally:
        pub.close()
    return sorted(texts)
