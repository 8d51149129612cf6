"""The plain count behind a quote-mark lead: how many of a task type's look-ups sent with quote
marks failed. "All 129 failed" is a fact a reader can act on and recount; a one-sided p-value on
the runs that met the error says less and hides it."""

from __future__ import annotations

from . import fact_leads


def _tool(entry: dict, by_step: dict[str, dict]) -> str | None:
    for step in (entry.get("checked") or {}).get("steps") or []:
        for f in by_step.get(step, {}).get("facts") or []:
            if fact_leads.kind_of(fact_leads.group(f)) == "quoted-name" and f.get("about"):
                return f["about"][0]
    return None


def quoted_plainly(entry: dict, runs_of_type: list[dict], by_step: dict[str, dict]) -> None:
    """After a quote-mark lead, the count of the task type's look-ups of its tool whose text held
    quote marks and how many of them failed, over every run of the type (either outcome)."""
    if (entry.get("checked") or {}).get("kind") != "quoted-name":
        return
    tool = _tool(entry, by_step)
    if tool is None:
        return
    sent = failed = runs = 0
    for r in runs_of_type:
        counts = ((r.get("decisive") or {}).get("quoted_calls") or {}).get(tool)
        if counts:
            sent, failed, runs = sent + counts[0], failed + counts[1], runs + 1
    if sent < 2:
        return
    who = f"all {sent}" if failed == sent else f"{failed} of the {sent}"
    said = (f"Of the {tool} calls in this task type's runs whose text held quote marks, {who} failed "
            f"(sent in {runs} runs, either outcome).")
    from .advice_cut import sentences

    # after the lead's first sentence, cut where a sentence ends (not at "…." inside a quoted error)
    first, *rest = sentences(entry["guideline"]) or [""]
    entry["guideline"] = " ".join(x for x in [first, said, *rest] if x)
