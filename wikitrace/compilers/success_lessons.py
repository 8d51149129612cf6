"""What a successful run teaches, said as what to do: the refusal that kept a run from a change
its task did not want, the hand-off that came only after it, each change with where its values
came from, and the look-up chain that led a question's run to its answer.

A success page that says "the task expected no change, and the run made none" restates the
outcome. What made it pass is in the log: the agent's own sentence telling the user it could not
do something, the record values that sentence names (a cabin, a membership), and the rule of the
system prompt that names the same values. Each is quoted as the log has it; nothing is inferred
beyond which rule sentence names the most of those values (a tie quotes none). All of it needs a
person who answered the agent: logs without one get none of it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .arguments import _parsed
from .insight_words import join
from .reading import Call, Reading
from .rule_blocks import _blocks
from .rule_facts import _on_its_own, _plain
from .rule_talk import _DENIES, _NOT_ABLE, _YOU, _people
from .rules import _words, points_back, sentences
from .schema import KeyFact
from .text import clip_words

_WIDTH = 220


@dataclass(frozen=True)
class _Refusal:
    text: str
    turn: int


# what a sentence could not go on without: the first two words after "without" (and an article),
# where the head of a short noun phrase stands ("the user ID", "a reservation number")
_WITHOUT = re.compile(r"\bwithout (?:the |your |a |an )?(\w[\w'-]*(?: \w[\w'-]*)?)", re.I)


def _refusal(r: Reading, before: int | None) -> _Refusal | None:
    """The agent's first sentence to the user saying it could not do something (a negation of
    ability or permission not about the user: "if you can't find it"), before turn ``before``. One
    that could not go on only without something ("I'm unable to proceed without the user ID") is
    no refusal once a later user message names that thing and a call follows: the run went on."""
    people = _people(r)
    for k, t in enumerate(people):
        if before is not None and t.turn >= before:
            break
        if t.role != "assistant" or not any(w in t.content for w in _DENIES):
            continue
        for s in sentences(t.content):
            if any(not _YOU.search(s[max(0, m.start() - 12):m.start()]) for m in _NOT_ABLE.finditer(s)):
                if _supplied_later(r, s, people[k + 1:]):
                    break
                return _Refusal(clip_words(s, _WIDTH), t.turn)
    return None


def _supplied_later(r: Reading, sentence: str, after: list) -> bool:
    """Whether what ``sentence`` could not go on without is named by a later user message that a
    tool call then followed."""
    m = _WITHOUT.search(sentence)
    if m is None:
        return False
    thing = m.group(1).strip().lower()
    return any(t.role == "user" and thing in t.content.lower() and any(c.n > t.turn for c in r.calls)
               for t in after)


def _named_values(r: Reading, refusal: _Refusal) -> list[tuple[Call, str, object, str]]:
    """(look-up, field, value, phrase) of the plain record values looked up before the refusal that
    its sentence names as terms of their own ("basic economy" for ``cabin`` "basic_economy")."""
    low = refusal.text.lower()
    out, seen = [], set()
    for c in r.calls:
        if c.n >= refusal.turn or c.writes or c.error:
            continue
        answer = _parsed(c.turn.result or "")
        if not isinstance(answer, dict):
            continue
        for key, value in answer.items():
            plain = _plain(value)
            if not isinstance(plain, str) or plain.lower() in ("yes", "no", "true", "false"):
                continue
            phrase = " ".join(plain.lower().replace("_", " ").split())
            if len(phrase) >= 4 and phrase not in seen and phrase in low and _on_its_own(low, phrase):
                seen.add(phrase)
                out.append((c, key, value, phrase))
    return out


def _rule(r: Reading, refusal: _Refusal, phrases: list[str]) -> str | None:
    """The one rule sentence of the system prompt that names the most of the values the refusal
    names, then shares the most of its words; None when two rank alike or none names a value."""
    if r.system is None or not phrases:
        return None
    words = _words(refusal.text)
    ranked = []
    for b in _blocks(r.system.content or ""):
        for i, s in enumerate(b.sentences):
            if not s.rule:
                continue
            low = s.text.lower()
            named = sum(1 for p in phrases if p in low and _on_its_own(low, p))
            if named:  # a sentence that points back is quoted with the one it qualifies
                text = f"{b.sentences[i - 1].text} {s.text}" if i and points_back(s.text) else s.text
                ranked.append((named, len(words & s.words), text))
    if not ranked:
        return None
    ranked.sort(key=lambda x: (x[0], x[1]), reverse=True)
    if len(ranked) > 1 and ranked[1][:2] == ranked[0][:2]:
        return None
    return clip_words(ranked[0][2], 260)


def refused(r: Reading, writes: list[Call], expected_handoff: bool = False) -> KeyFact | None:
    """For a success whose task expected no change, made none but a hand-off: the agent's refusal
    with the record values it names and the rule naming them, then the hand-off and the user's
    words just before it. None without a refusal before any change."""
    if not r.has_interlocutor or len(writes) > 1 or any(w.turn.arguments and _plain_args(w) for w in writes):
        return None  # a change with values of its own (a booking) is no hand-off: its page says what it was
    first = writes[0].n if writes else None
    refusal = _refusal(r, first)
    if refusal is None:
        return None
    named = _named_values(r, refusal)
    turns = [refusal.turn]
    parts = []
    by_call: dict[int, list[str]] = {}
    for c, key, value, _p in named[:3]:
        by_call.setdefault(c.n, []).append(f"`{key}` {json.dumps(value, ensure_ascii=False)}")
    for n, fields in by_call.items():
        c = next(x for x in r.calls if x.n == n)
        parts.append(f"{c.name} (turn {n}) gave {join(fields, 3)}")
        turns.append(n)
    asked = None
    if writes and expected_handoff:  # a hand-off the task did not expect played no part: nothing said of when it came
        asked = next((t for t in reversed(_people(r)) if t.role == "user" and t.turn < writes[0].n), None)
        asked = asked if asked is not None and asked.turn > refusal.turn else None
    expected = (f"the task expected a {writes[0].name} call too" if expected_handoff and writes else
                "the task expected a hand-off too, which this run never made" if expected_handoff else
                f"the task expected no change, and no {writes[0].name} call either: the hand-off at turn "
                f"{writes[0].n} was not one it asked for" if writes else "the task expected no change")
    what = "a change the records rule out" if named else "the request"
    looks = _unlooked(r, writes)
    one = looks.count(" and ") == 0 and ", " not in looks  # a single look-up named
    head = (f"Look up {looks} before answering: the task expected {'that look-up' if one else 'those look-ups'} and "
            f"no change, and this run {('never made it' if one else 'made none of them') if r.calls else 'made no call at all'}"
            ", so it refused without checking" if looks else
            f"Refuse {what} and make no change, as this run did" if not writes or not expected_handoff else
            f"Refuse {what}, then hand off" + (" only after the user's reply to the refusal" if asked is not None else "")
            + ", as this run did")
    # it did not hold to its refusal: a change was sent (before a hand-off, after the refusal), and only the
    # tool's error stopped it
    tried = [] if looks else [c for c in r.calls if c.writes and c.error and (
        not writes or (c.n > refusal.turn and c.n < writes[0].n and c.name != writes[0].name))]
    if tried:
        head = f"Make no change{', then hand off' if writes and expected_handoff else ''} ({expected})"
    head += "" if looks or tried else f" ({expected})"
    text = f"{head}: " + (join(parts, 3) + "; " if parts else "") + \
        f"the agent told the user at turn {refusal.turn}: \"{refusal.text}\""
    if tried:
        text += (f"; yet this run sent {tried[0].name} at turn {tried[0].n}, which answered with an error "
                 f"(\"{clip_words(' '.join(str(tried[0].turn.result).split()), 120)}\"), so no change went through: the "
                 "tool's refusal, not the agent's, kept the run from the change.")
        turns.append(tried[0].n)
    rule = _rule(r, refusal, [p for _c, _k, _v, p in named])
    if rule is not None:
        text += f" The system prompt's rule naming the same value{'s' if len(named) > 1 else ''} (turn {r.system.turn}): \"{rule}\""
        turns.append(r.system.turn)
    if asked is not None:
        text += (f" {writes[0].name} came at turn {writes[0].n}, after the user wrote at turn {asked.turn}: "
                 f"\"{clip_words(' '.join(asked.content.split()), 160)}\"")
        turns += [asked.turn, writes[0].n]
    text = text if text.endswith(('.', '."', '!"', '?"')) else text + "."
    return KeyFact(text, sorted(set(turns)))


def _plain_args(w: Call) -> bool:
    """Whether a call sends a value other than wording (a hand-off sends only a summary)."""
    args = w.turn.arguments
    if not isinstance(args, dict):
        return True
    return any(not (isinstance(v, str) and len(v.split()) >= 6) for v in args.values())


def made_from(r: Reading, writes: list[Call]) -> str:
    """Each change with where its values came from ("cancel_reservation at turn 14, `reservation_id`
    Z7GOZK from get_user_details's answer (turn 4)"): what the change rested on."""
    from .trial_record import sources

    out = []
    for c in writes[:3]:
        args = c.turn.arguments if isinstance(c.turn.arguments, dict) else {}
        came = sources(r, c)
        said = [f"`{k}` " + (f"{json.dumps(args[k], ensure_ascii=False)} " if isinstance(args.get(k), (str, int, float))
                              and not isinstance(args.get(k), bool) else "") + f"from {place}"
                for k, place in came.items()]
        out.append(f"{c.name} at turn {c.n}" + (f", with {join(said[:3], 3)}" if said else ""))
    return "; ".join(out)


def _unlooked(r: Reading, writes: list[Call]) -> str:
    """The look-ups the log expected, named, when the run made none of them (no call at all, or only a
    hand-off): a refusal that checked nothing is no recipe, the look-ups are ("" when the run made one
    of them or none were expected)."""
    from .expected_calls import expected_lookups

    names = list(dict.fromkeys(c["name"] for c in expected_lookups(r)))
    if not names or any(c.name in names for c in r.calls) or any(not c.writes for c in r.calls):
        return ""  # the task expected no call at all, or the run looked something up: it checked
    return join(names, 3)
