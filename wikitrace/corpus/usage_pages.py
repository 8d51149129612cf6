"""The usage counts on insight pages: "cited in N episodes, M succeeded".

An insight page carries its counts twice: ``cited_episodes`` and ``cited_succeeded``
in the frontmatter (always present, 0 when never cited) and one line in the body,
ended by an HTML comment mark that no run text can hold (run text has ``<`` escaped).
``with_counts`` sets both on a page already written, and the renderer builds pages
the same way, so a page is a function of its run and the ledger whether it was
rendered by ``compile`` or updated by ``cite record``: a rebuild writes the same bytes.
"""

from __future__ import annotations

import re

MARK = "<!-- wikitrace:usage -->"
_FM_KEYS = ("cited_episodes", "cited_succeeded")
_USAGE_LINE = re.compile(r"^.*" + re.escape(MARK) + r"$", re.M)


def usage_line(episodes: int, succeeded: int) -> str:
    if not episodes:
        text = "Not cited in any recorded episode yet."
    else:
        text = (f"Cited in {episodes} recorded episode{'s' if episodes != 1 else ''}, "
                f"{succeeded} succeeded, {episodes - succeeded} failed (usage/ledger.jsonl).")
    return f"{text} {MARK}"


def frontmatter_fields(episodes: int, succeeded: int) -> dict[str, int]:
    return {"cited_episodes": episodes, "cited_succeeded": succeeded}


def with_counts(page: str, episodes: int, succeeded: int) -> str:
    """``page`` with its counts set to these (frontmatter keys and the marked body line)."""
    if not page.startswith("---\n"):
        return page
    end = page.find("\n---\n", 3)
    if end < 0:
        return page
    head, body = page[:end + 1], page[end + 1:]
    for key, value in frontmatter_fields(episodes, succeeded).items():
        head = re.sub(rf"^{key}: \d+$", f"{key}: {value}", head, count=1, flags=re.M)
    body = _USAGE_LINE.sub(lambda _m: usage_line(episodes, succeeded), body, count=1)
    return head + body


def counts_on_page(page: str) -> tuple[int, int] | None:
    """The counts a page's frontmatter shows, or None (a page written before counts)."""
    end = page.find("\n---\n", 3)
    head = page[:end + 1] if page.startswith("---\n") and end > 0 else ""
    found = [re.search(rf"^{key}: (\d+)$", head, re.M) for key in _FM_KEYS]
    if not all(found):
        return None
    return int(found[0].group(1)), int(found[1].group(1))


def recounted(pub, counts: dict[str, tuple[int, int]], shown: dict, insight_ids) -> tuple[dict[str, str], list[str]]:
    """The pages of ``insight_ids`` whose counts ``shown`` (id -> [n, m] as the pages have
    them; absent: 0, 0) differ from ``counts``, with the new counts (rel -> text), and the
    pages skipped because they are missing or edited (the next ``compile`` repairs those)."""
    from . import layout

    texts, skipped = {}, []
    for iid in insight_ids:
        want = tuple(counts.get(iid, (0, 0)))
        if tuple(shown.get(iid, (0, 0))) == want:
            continue
        rel = layout.insight_doc(iid)
        if not pub.owns(rel) or pub.verify(rel) != "ok":
            skipped.append(rel)
            continue
        page = (pub.root / rel).read_text(encoding="utf-8")
        new = with_counts(page, *want)
        if new != page:
            texts[rel] = new
    return texts, skipped


def shown_counts(counts: dict[str, tuple[int, int]], insight_ids) -> dict[str, list[int]]:
    """What the manifest keeps: the nonzero counts of the corpus's insights, by id."""
    return {i: list(counts[i]) for i in sorted(insight_ids) if counts.get(i, (0, 0)) != (0, 0)}


def check_usage(root, data: dict, docs: dict[str, dict]) -> list[str]:
    """``wikitrace check``'s view of the usage ledger: every line readable, every cited id
    one this corpus holds or retired, and each insight page showing the ledger's counts."""
    from . import ledger

    try:
        lines, problems = ledger.read_ledger(root)
    except ledger.LedgerError as exc:
        return [str(exc)]
    if not lines and not problems and not (root / ledger.LEDGER).exists():
        counts: dict = {}
    else:
        retired = data.get("retired") or {}
        known = {r.get("step") for r in data.get("runs", []) if isinstance(r, dict)} | set(retired.get("steps") or [])
        known_ins = {i.get("id") for i in data.get("insights", []) if isinstance(i, dict)} | \
            set(retired.get("insights") or [])
        for ep in lines:
            for key, pool in (("R", known), ("C", known), ("I", known_ins)):
                for ident in getattr(ep, key):
                    if ident not in pool:
                        problems.append(f"{ledger.LEDGER}: episode {ep.run!r} ({ep.episode}) cites {ident} under "
                                        f"{key}, which this corpus never held; remove the id from that line")
        counts = ledger.tally(ledger.fold(lines).values())
    for rel, meta in docs.items():
        if meta.get("type") != "insight" or "cited_episodes" not in meta:
            continue
        want = counts.get(str(meta.get("id")), (0, 0))
        have = (meta.get("cited_episodes"), meta.get("cited_succeeded"))
        if have != want:
            problems.append(f"{rel}: shows cited_episodes {have[0]}, cited_succeeded {have[1]} but "
                            f"{ledger.LEDGER} gives {want[0]}, {want[1]}; run wikitrace compile to update the page")
    return problems
