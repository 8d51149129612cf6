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

from ..compilers.trial_record import looked_up, norm
from . import layout
from .trial_wording import _t


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
        f"same task made it on a record with that value. {first['step']} told the user it could not (its turn "
        f"{first['turn']}): \"{first['text']}\"; {first['won']} looked up the same record ({first['record']}) and "
        "made that change"
        + (f" ({len(more)} more failed run{'s' if len(more) != 1 else ''} here refused likewise: "
           f"{', '.join(more[:3])}{' and others' if len(more) > 3 else ''})" if more else "") + ".")
