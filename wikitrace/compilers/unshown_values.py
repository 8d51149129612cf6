"""A value a call sent that nothing before it showed, beside the value that was right and the turn
that showed that one: the agent guessed an identifier (a payment id built from another id's
digits) instead of looking it up first.

The right value comes from the log itself: what a later call of the same tool sent at the same
argument when it went through, or what the call the task expected sends there. Only one-word
values with a digit in them are read (ids, codes, dates): words and sentences an agent writes
itself (a summary, a cabin name) are no look-up's to give. The sent value counts as unshown only
when no earlier user message or answer holds it even as part of a longer text, so a page never
calls a value made up that the log had shown in some form.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..runs.model import Turn
from .reading import Call, Reading, _occurs, leaves, t_is_user


@dataclass
class Unshown:
    path: str  # the argument, as ``payment_id`` or ``flights[0].date``
    sent: str  # what the call sent, which no earlier turn held
    right: str  # the value that was right there
    shown_by: Turn | None  # the first user message or answer that held the right value

    def place(self) -> str:
        t = self.shown_by
        return f"the user (turn {t.turn})" if t_is_user(t) else f"{t.name}'s answer (turn {t.turn})"


def _id_like(value) -> bool:
    return isinstance(value, str) and len(value) >= 4 and not any(ch.isspace() for ch in value) \
        and any(ch.isdigit() for ch in value)


def _same_digits(a: str, b: str) -> bool:
    """Two ids whose digits are one number and whose letters differ: one built from the other."""
    da, db = "".join(ch for ch in a if ch.isdigit()), "".join(ch for ch in b if ch.isdigit())
    return len(da) >= 4 and da == db and a != b


def _first_holding(r: Reading, value: str) -> Turn | None:
    low = value.lower()
    return next((f for f in r.facts if _occurs(low, r.lower(f))), None)


def unshown(r: Reading, c: Call, right: dict[str, object]) -> list[Unshown]:
    """The arguments of ``c`` whose one-word value no earlier turn held, where ``right`` (argument
    path -> value) holds another one-word value for the same argument, with the turn that showed it."""
    out = []
    if not isinstance(c.turn.arguments, dict):  # a text argument (a query, a command) is written, not looked up
        return out
    for path, value in leaves(c.turn.arguments):
        want = right.get(path)
        if not _id_like(value) or not _id_like(want) or want == value or r.anywhere_before(value, c.n):
            continue
        out.append(Unshown(path, value, want, _first_holding(r, want)))
    return out


def retry_note(r: Reading, err: Call, fix: Call) -> tuple[str, list[int]]:
    """For a call that failed and a later call of its tool that went through: the value the failed
    one sent that nothing had shown, and the turn that showed the value that worked (text to end
    the sentence on the two calls, and that turn); ("", []) when there is none."""
    found = [u for u in unshown(r, err, dict(leaves(fix.turn.arguments)))
             if u.shown_by is not None and u.shown_by.turn < fix.n]  # an answer after the retry only echoes it
    if not found:
        return "", []
    u = found[0]
    after = u.shown_by.turn > err.n
    text = (f". The failed call sent `{u.path}` \"{u.sent}\", which no earlier answer or user message held"
            + (f" (the digits of \"{u.right}\" under another name)" if _same_digits(u.sent, u.right) else "") + "; "
            f"\"{u.right}\", which the call at turn {fix.n} sent, was shown by {u.place()}, "
            + ("only after the failed call" if after else "before the failed call"))
    if after and not t_is_user(u.shown_by):
        text += f". Look such a value up ({u.shown_by.name}) before sending it, rather than composing it"
    else:
        text += ". Send such a value as the log gave it, rather than composing it"
    return text, [u.shown_by.turn]


def expected_note(r: Reading, c: Call, diffs: list[tuple[str, object, object]]) -> tuple[str, list[int]]:
    """For a change that differs from the expected call: a value it sent that nothing before it
    showed, where the expected value was shown (a sentence, and that turn); ("", []) when none."""
    found = [u for u in unshown(r, c, {path: want for path, want, _got in diffs})
             if u.shown_by is not None and u.shown_by.turn < c.n]
    if not found:
        return "", []
    u = found[0]
    return (f" No earlier answer or user message held \"{u.sent}\"; the expected \"{u.right}\" was shown by "
            f"{u.place()}. Send such a value as the log gave it, rather than composing it.", [u.shown_by.turn])


def _answers_hold(r: Reading, value: str) -> bool:
    low = value.lower()
    return any(f.type == "function_call" and _occurs(low, r.lower(f)) for f in r.facts)


def unsearched_note(r: Reading, c: Call, expected: dict, diffs: list[tuple[str, object, object]]) -> tuple[str, list[int]]:
    """For a change that differs from the expected call: an expected one-word value (a flight
    number, a date) that no answer of the run ever held, and the look-ups that could only have
    shown it with the expected call's own values, when none was made with them: every look-up
    sending two or more of the change's top-level arguments sent another value for one of them."""
    missing = [(p, w) for p, w, _g in diffs if _id_like(w) and not _answers_hold(r, w)]
    if not missing or not isinstance(expected, dict):
        return "", []
    plain = {k: v for k, v in expected.items() if isinstance(v, str) and v.strip()}
    lookups = [x for x in r.calls if not x.writes and not x.error and isinstance(x.turn.arguments, dict)]
    shared = [(x, [k for k in plain if k in x.turn.arguments]) for x in lookups]
    shared = [(x, ks) for x, ks in shared if len(ks) >= 2]
    if not shared or any(all(x.turn.arguments[k] == plain[k] for k in ks) for x, ks in shared):
        return "", []
    keys = list(dict.fromkeys(k for _x, ks in shared for k in ks))
    want = " and ".join(f"{k} \"{plain[k]}\"" for k in keys)
    sent = list(dict.fromkeys(f"{x.name}(" + ", ".join(f"{k} \"{x.turn.arguments[k]}\"" for k in ks) + ")"
                              for x, ks in shared))
    path, value = missing[0]
    listing = ", ".join(sent[:5]) + (f" and {len(sent) - 5} more" if len(sent) > 5 else "")
    return (f" The expected `{path}` \"{value}\" appeared in no answer of the run: no look-up sent {want} together, "
            f"as the expected call does (the run's look-ups sent {listing}). Look up with the values the change "
            "must send before choosing what to send.", [x.n for x, _ks in shared][:3])


def _empty(text: str | None) -> bool:
    return (text or "").strip() in ("[]", "{}")


def empty_lookup_note(r: Reading, c: Call) -> tuple[str, list[int]]:
    """For a change the task did not expect as sent: a look-up that answered nothing, and another
    look-up sent the very same arguments whose answer gave the values this change sent (the run
    fell back to a second kind of search when the first found none); ("", []) when none."""
    if not isinstance(c.turn.arguments, dict):
        return "", []
    sent = [v for _p, v in leaves(c.turn.arguments) if _id_like(v)]
    looks = [x for x in r.calls if x.n < c.n and not x.writes and not x.error and isinstance(x.turn.arguments, dict)]
    for e in looks:
        if not _empty(e.turn.result) or not e.turn.arguments:
            continue
        for f in looks:
            if f.name == e.name or f.turn.arguments != e.turn.arguments or _empty(f.turn.result):
                continue
            gave = [v for v in dict.fromkeys(sent) if v in (f.turn.result or "") and v not in json.dumps(e.turn.arguments)]
            if not gave:
                continue
            args = ", ".join(f"{k} {json.dumps(v, ensure_ascii=False)}" for k, v in sorted(e.turn.arguments.items()))
            quoted = [f"\"{v}\"" for v in gave[:4]]
            listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
            return (f" {e.name}({args}) answered nothing at turn {e.n}; {listed}, which this call sent, "
                    f"{'is' if len(quoted) == 1 else 'are'} in the answer of {f.name} at turn {f.n}, a look-up with "
                    "the same arguments.", [e.n, f.n])
    return "", []


def out_of_reach_note(r: Reading, diffs) -> str:
    """" The expected … stands in no answer or user message of this run, nor in its task's
    instruction …" when every differing expected text value (of those ``diffs`` shown) is so: no
    answer the run got and nothing the user knew held it, so checking what the run read could not
    have found it; a look-up it never made might have (or the task's expectation is its own)."""
    wants = [want for _k, want, _got in diffs if isinstance(want, str) and want.strip()]
    if not wants or len(wants) < len(diffs):
        return ""
    end = max((t.turn for t in r.run.turns), default=0) + 1
    told = (r.run.task.instruction or "").lower()
    if any(r.anywhere_before(w, end) or w.lower() in told for w in wants):
        return ""
    shown = " and ".join(f'"{w}"' for w in wants)
    return (f" The expected {shown} stand{'s' if len(wants) == 1 else ''} in no answer or user message of this run, "
            "nor in its task's instruction.")
