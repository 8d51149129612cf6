"""A lesson's failed runs that refused a change for a record value a successful trial made it on.

A run that told the user "basic economy reservations cannot have their passengers changed" and
left the expected change unmade failed by a belief, not by a missing step; when a successful trial
of the same task looked up the same record and made the change, the belief is refuted by the logs
themselves (compilers/refusal_cites.py keeps the values the refusal named; shared_cites checks
the success read the same record and had not changed it first). The trial lines of both pages
(corpus/trial_contrast.py), a one-run lesson (corpus/one_run.py) and the What to do of the failed
runs' lessons say so, with the refusal quoted: the condition a reader should not refuse on.
"""

from __future__ import annotations

import json

from ..compilers.missed_insight import MISSED
from ..compilers.trial_record import looked_up, norm
from . import layout
from .trial_wording import _t

IDLE = "idle"  # the first part of the keys of lessons on runs that settled nothing (corpus/stop_counts.py)


def shared_cites(why: dict | None, won: dict, tool: str, made_at: int, plain: bool = False) -> str:
    """"`cabin` "basic_economy", which get_reservation_details(3RK2T9) showed it (its turn 4)": the
    values a failed run's refusal of ``tool`` named (compilers/refusal_cites.py) from a record the
    successful trial ``won`` looked up too and had not changed before it made that change at
    ``made_at`` (an upgrade first changes the cabin the refusal named); "" when there are none.
    Escaped for a page line, or ``plain`` for a guideline the page escapes itself."""
    parts = cite_parts(why, won, tool, made_at, plain)
    return f"{parts[0]}, which {parts[1]} showed it (its turn {parts[2]})" if parts else ""


def cite_parts(why: dict | None, won: dict, tool: str, made_at: int, plain: bool = False) -> tuple[str, str, int] | None:
    """(the values, the look-up that showed them, its turn) of ``shared_cites``, or None."""
    if not why or why.get("tool") != tool:
        return None
    record = won.get("decisive") or {}
    lookups = set(record.get("lookups") or ())
    touched = {norm(v) for c in record.get("changes") or () if c["turn"] < made_at for v in c["values"].values()}
    cites = [c for c in why.get("cites") or () if looked_up(c[2], c[3]) in lookups and norm(c[3]) not in touched]
    if not cites:
        return None
    text = (lambda x: x) if plain else _t
    values = " and ".join(f"`{k}` {text(json.dumps(v, ensure_ascii=False))}" for k, v, *_rest in cites)
    _k, _v, tool_, query, turn = cites[0]
    return values, text(tool_ + "(" + query + ")"), turn


def answered(members: list[tuple[dict, dict]], trials) -> list[dict]:
    """{"step", "turn", "text", "cited", "won"} for each failed member whose refusal a successful trial
    of its task answered (the first such trial by step), in the members' order."""
    out = []
    for e, _l in members:
        why = (e.get("decisive") or {}).get("refused")
        task = trials.group(e) if why and e["outcome"] == "failure" else None
        if task is None:
            continue
        wins = sorted(trials.by_task.get(task, {}).get("success", []), key=lambda w: layout.id_number(w["step"]))
        for w in wins:
            made = next((c["turn"] for c in (w.get("decisive") or {}).get("changes") or () if c["tool"] == why["tool"]),
                        None)
            parts = cite_parts(why, w, why["tool"], made, plain=True) if made is not None else None
            if parts:
                out.append({"step": e["step"], "turn": why["turn"], "text": why["text"], "values": parts[0],
                            "record": parts[1], "won": w["step"], "tool": why["tool"]})
                break
    return out


def say_answered(entry: dict, members: list[tuple[dict, dict]], trials) -> None:
    """Adds to the lesson's guideline the refusals of its failed runs that a successful trial of the
    same task answered (the first, and how many more), as what not to refuse on."""
    found = answered(members, trials)
    if not found:
        return
    first = found[0]
    more = [f["step"] for f in found[1:]]
    entry["guideline"] = (
        f"{entry['guideline'].rstrip()} Do not refuse {first['tool']} for {first['values']}: a successful trial of the "
        f"same task made it on a record with {first['values']}. {first['step']} told the user it could not (its turn "
        f"{first['turn']}): \"{first['text']}\"; {first['won']} looked up the same record ({first['record']}) and "
        "made that change"
        + (f" ({len(more)} more failed run{'s' if len(more) != 1 else ''} here refused likewise: "
           f"{', '.join(more[:3])}{' and others' if len(more) > 3 else ''})" if more else "") + ".")


def _about(key: str, tool: str) -> bool:
    """Whether a lesson is about a refusal of ``tool``: its key names the tool, or the lesson is on
    changes left unmade or on runs that made none."""
    parts = key.split("|")
    return key == MISSED or parts[0] == IDLE or tool in parts


def say_allowed(entry: dict, members: list[tuple[dict, dict]]) -> None:
    """Adds to the lesson's guideline the refusals of its failed runs that the run's own system prompt
    answers (compilers/refusal_cites.py "allowed"): what not to refuse, the sentence that allows it,
    and the runs that refused it, the first quoted. Most shared first; no trial is needed to say so.
    Only on a lesson about it (``_about``): a lesson on another tool that one of those runs also
    taught is not."""
    groups: dict[tuple, list[dict]] = {}
    for e, _l in members:
        why = (e.get("decisive") or {}).get("refused") or {}
        a = why.get("allowed")
        if a and e["outcome"] == "failure" and _about(entry["key"], why["tool"]):
            key = (a["field"], a["key"], json.dumps(a["value"], ensure_ascii=False), a["rule"])
            groups.setdefault(key, []).append({"step": e["step"], **why})
    said = []
    for (field, key, value, rule), runs in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        runs.sort(key=lambda w: layout.id_number(w["step"]))
        first, rest = runs[0], [w["step"] for w in runs[1:]]
        tools = " or ".join(dict.fromkeys(w["tool"] for w in runs))
        likewise = f"; likewise {', '.join(rest[:-1]) + ' and ' if len(rest) > 1 else ''}{rest[-1]}." if rest else ""
        said.append(
            f"Do not refuse a `{field}` change on a record with `{key}` {value}: the system prompt allows it "
            f"(\"{rule}\"). It was refused in {len(runs)} failed run{'s' if len(runs) != 1 else ''}, where the task "
            f"expected {tools}: {first['step']} told the user at its turn {first['turn']}: \"{first['text']}\""
            + (likewise or ("" if first["text"][-1:] in ".!?" else ".")))
    if said:
        entry["guideline"] = f"{entry['guideline'].rstrip()} {' '.join(said)}"
