"""The same lesson taught by runs of another task type, linked from each of its pages.

A lesson's page counts only the runs of its own task type: its contrast tests that type's
failed runs against its successful ones. When another type's runs teach the lesson under the
same key (a test still failing at the end, met by a Claude Code session and by a SWE-agent
run), an agent reading either page should learn that the lesson holds beyond its own kind,
and where the other runs are. The link and the other page's counts sit on the entry
(``elsewhere``), so a page whose linked lesson changed is written again, as any change of
its entry is (insight_unchanged.same_page), while its own counts stay its type's.
"""

from __future__ import annotations

from collections import defaultdict

from . import layout
from .applies import kind_of


def link(insights: list[dict]) -> list[dict]:
    """``insights`` with ``elsewhere`` set on each entry whose key another task type's entry
    shares (the others' id, title, task type and counts, by id), and dropped where none does.
    An entry whose links changed is a new dict: the published entries are never changed in place."""
    by_key: dict[str, list[dict]] = defaultdict(list)
    for entry in insights:
        by_key[entry["key"]].append(entry)
    out = []
    for entry in insights:
        kind = kind_of(entry)
        others = [{"insight": o["id"], "title": o["title"], "task_type": kind_of(o),
                   "runs": (o.get("counts") or {}).get("runs", 0),
                   "success": (o.get("counts") or {}).get("success", 0),
                   "failure": (o.get("counts") or {}).get("failure", 0)}
                  for o in sorted(by_key[entry["key"]], key=lambda o: layout.id_number(o["id"]))
                  if kind_of(o) != kind]
        if others != entry.get("elsewhere", []):
            entry = {k: v for k, v in entry.items() if k != "elsewhere"}
            if others:
                entry["elsewhere"] = others
        out.append(entry)
    return out
