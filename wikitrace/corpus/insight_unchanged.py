"""Whether a published insight page is what a gathered entry renders to, so that adding a run
rewrites only the insight pages it changes (corpus/update.py ``publish_insights``)."""

from __future__ import annotations

# contrast figures of the whole task type: they move with every run of it, but a page shows
# only its own counts and verdict (insights.index_note puts these on the index)
_INDEX_ONLY = ("failed", "success", "p")


def _shown(entry: dict) -> dict:
    contrast = entry.get("contrast")
    if not contrast:
        return entry
    return {**entry, "contrast": {k: v for k, v in contrast.items() if k not in _INDEX_ONLY}}


def same_page(published: dict[str, dict], entry: dict, usage, shown_before, titles: dict[str, str]) -> bool:
    """True when the published page of ``entry``'s insight is what ``entry`` renders to: the
    same fields a page shows, the same usage counts (a corpus whose manifest kept no counts:
    never, as its pages' counts are unknown) and the same titles of the insights it links.
    The page is then left as it is, so adding a run renders only the pages it changes."""
    before = published.get(entry["id"])
    if before is None or not isinstance(shown_before, dict):
        return False
    if tuple(shown_before.get(entry["id"], (0, 0))) != tuple(usage):
        return False
    for item in (entry.get("contrast") or {}).get("instead", []):
        for linked in item["insights"]:
            if titles.get(linked) != (published.get(linked) or {}).get("title"):
                return False
    return _shown(before) == _shown(entry)
