"""A lesson one run taught points to the counted lesson of its task type on the same tool. One
run's recipe is an anecdote: its page stays (the run keeps its link, ids stay stable, and a second
run that meets it makes it a count); its page opens on "Seen in 1 run", and links
where the lesson drawn from many runs of the same tool is."""

from __future__ import annotations

from . import layout, run_counts
from .answered_refusals import cite_parts, shared_cites
from .applies import key_tool

# how corpus/trials.py ends what one successful trial did that its task's failed trials did not
_NONE_DID = ", which each failed trial of its task never did"


def mark(out: list[dict], groups: dict[str, list[tuple[dict, dict]]], kind_of_entry: dict[str, str],
         trials=None) -> None:
    """Records for each single-run lesson (``one_run``) the
    type's lesson on the same tool with most runs (the lowest id on a tie), when there is one. A
    successful run's lesson says first what it did that the failed trials of its own task did not
    (``trials``: corpus/trials.Trials), the one thing its recipe can show beyond one sequence."""
    best: dict[tuple[str, str], tuple[int, int, str]] = {}  # (task type, tool) -> (-runs, id number, id)
    for entry in out:
        tool = key_tool(entry["key"])
        runs = entry["counts"]["runs"]
        if tool and runs > 1:
            k = (kind_of_entry[entry["id"]], tool)
            mine = (-runs, int(entry["id"].rsplit("-", 1)[1]), entry["id"])
            best[k] = min(best.get(k, mine), mine)
    by_id = {e["id"]: e for e in out}
    for entry in out:
        if entry["counts"]["runs"] != 1:
            continue
        (run, _l), = groups[entry["id"]][:1]
        apart = _apart(entry, run, trials)
        if apart:  # beside the guideline, not in it: a model's merged guideline is not redone for it
            entry["one_run_apart"] = apart
            why = apart.get("refused")
            if why:  # what not to refuse on, said as what to do; its evidence stands in the line beside it
                entry["guideline"] = (f"{entry['guideline'].rstrip()} Do not refuse {why['tool']} for {why['values']}: "
                                      "a failed trial of the same task refused it for that value, and this run made "
                                      "it on the same record.")
        tool = key_tool(entry["key"])
        other = best.get((kind_of_entry[entry["id"]], tool)) if tool else None
        if other is not None:
            members = [e for e, _l in groups[other[2]]]
            entry["one_run"] = {"see": other[2], "tool": tool, "runs": run_counts.runs_of(members),
                                "title": by_id[other[2]]["title"]}


def _apart(entry: dict, run: dict, trials) -> dict | None:
    """{"failed": the failed trials of the run's task, "did": what it did that they did not} for a
    successful run whose task has failed trials it differs from, else None."""
    st = entry.get("same_task") or {}
    if trials is None or run["outcome"] != "success" or st.get("side") != "success" or not st.get("differences"):
        return None
    task = trials.group(run)
    failed = sorted((r["step"] for r in trials.by_task.get(task, {}).get("failure", [])), key=layout.id_number)
    if not failed:
        return None
    out = {"failed": failed, "did": [d["text"] for d in st["differences"]]}
    refusal = _refusal(entry, run, trials.by_task[task]["failure"])
    if refusal:
        out["refused"] = refusal
    return out


def _refusal(entry: dict, run: dict, failed: list[dict]) -> dict | None:
    """{"step", "turn", "text", "cited"} of the first failed trial that told the user it could not make
    the change this lesson's run made, naming a value of the record the run looked up too
    (corpus/trial_contrast.shared_cites): the reason a reader should not refuse on."""
    tool = key_tool(entry["key"])
    made = next((c["turn"] for c in (run.get("decisive") or {}).get("changes") or () if c["tool"] == tool), None)
    if made is None:
        return None
    for f in sorted(failed, key=lambda r: layout.id_number(r["step"])):
        why = (f.get("decisive") or {}).get("refused")
        cited = shared_cites(why, run, tool, made)
        if cited:
            values = cite_parts(why, run, tool, made, plain=True)[0]
            return {"step": f["step"], "turn": why["turn"], "text": why["text"], "cited": cited, "values": values,
                    "tool": tool}
    return None


def apart_line(apart: dict, link, md) -> str:
    """"What it did that none of the 3 failed trials of its task (step-…) did: …." with each trial
    linked to its page."""
    failed, texts = apart["failed"], apart["did"]
    pages = ", ".join(f"[{s}]({link.rel(layout.compilation_doc(s))})" for s in failed)
    trials_of = f"failed trial{'s' if len(failed) != 1 else ''} of its task ({pages})"
    if all(t.endswith(_NONE_DID) for t in texts):
        did = "; ".join(md(t.removesuffix(_NONE_DID)) for t in texts)
        if len(failed) > 1:
            said = f"What it did that none of the {len(failed)} {trials_of} did: {did}."
        else:
            said = f"What it did that the {trials_of} did not: {did}."
    else:
        said = f"Set against the {len(failed)} {trials_of}, it {'; it '.join(md(t) for t in texts)}."
    why = apart.get("refused")
    if why:  # the reason a failed trial gave for not making the change, which this run's record answers
        said += (f" [{why['step']}]({link.rel(layout.compilation_doc(why['step']))}) told the user it could not make it "
                 f"(its turn {why['turn']}): \"{md(why['text'])}\", naming {why['cited']}; this run looked up the same "
                 "record and the change went through.")
    return said
