"""In-short facts for logs whose calls send plain text and end with an answer (ReAct's
``Search[..]`` / ``Lookup[..]`` / ``Finish[..]``): the form every failed call of a tool shared
and what to send instead, names its errors listed and no call sent (offered_names.py), an
answer about two named things that rests on one of them, and a look-up planned for the answer
that was never made. Each says what decided the run as advice, so it leads the page's In short,
before the facts it explains.

Each is said only where the log shows it for every call it speaks of; anything unsure yields
nothing. A log whose calls send JSON, or that gives no answer, gets none of them.
"""

from __future__ import annotations

import re

from .. import lazy_re
from .changes import what_ran
from .insight_words import expected_answer, gives_answer, is_verdict, join, packed_calls
from .named_comparisons import named_comparison_facts
from .near_words import main_words
from .page_notes import listed_names
from .offered_names import unchecked_candidate, unsent_listed
from .unsearched_names import named_unsearched
from .qa_reasons import (described_searches, failed_calls, opening_form, reflected_answer, reflected_query,
                         reflected_source, unheeded_reflection, unsent_listed_name, what_worked)
from .reading import Call, Reading, harness_reason
from .schema import KeyFact
from .text import clip_words
from .unfounded_names import unfounded_name


def qa_facts(r: Reading, facts: list[KeyFact]) -> list[KeyFact]:
    """``facts`` with this module's in front: each says what decided the run, as advice, so it
    leads the facts it explains (the errors it is about, the answer's own). A fact of ours
    whose neighbour is not there (the run stated no such errors) is left out."""
    if not any(isinstance(c.turn.arguments, str) for c in r.calls):
        return facts
    out = list(facts)
    causes = [fact for name, turns, fact in error_causes(r)
              # the error fact's own turns (it may end with the answer's, given all the same)
              if any(f.text.startswith(f"{name} failed at turn") and f.turns and set(f.turns[:-1]) <= turns
                     and f.turns[0] in turns for f in out)]
    if not r.run.outcome.success and not any(f.kind == "comparison" for f in out):
        out = named_comparison_facts(r) + out
    answer = _answer(r)
    if answer is not None:
        if r.run.outcome.success:  # after what the answer and the run's first error settle: the how, as advice
            worked = what_worked(r, answer)
            return out + ([worked] if worked is not None else [])
        planned = planned_look_up(r, answer)  # a planned look-up never made says more than the reflection naming it
        reflected = reflected_answer(r, answer)
        named = planned or reflected or reflected_source(r, answer)  # the lead the run followed
        # a reflection that named the answer is said too where the planned look-up leads: the runs a
        # lesson counts as answering what a reflection named are then every run that did
        also = reflected if planned is not None else None
        mine = [f for f in (named, also, None if named else unfounded_name(r, answer), opening_form(r, answer),
                            one_sided_answer(r, answer),
                            unchecked_candidate(r, answer), None if named else unheeded_reflection(r, answer),
                            named_unsearched(r, answer))
                if f is not None]
        if any(f.text.startswith("The answer \"") and answer.n in f.turns for f in out):
            causes = mine + causes
    elif not r.run.outcome.success:  # no answer given: the expected one a reflection named is what it let go
        causes = [f for f in (unheeded_reflection(r, None),) if f is not None] + causes
    if not r.run.outcome.success:  # a query the run's own reflection named, failing: after the errors' own form
        causes += [f for f in (reflected_query(r),) if f is not None]
    lead = sum(f.kind == "comparison" for f in out[:1])  # a refuted comparison in the agent's words stays first
    # last: the listed name the question gives that the run let go, where the facts above say what failed
    unsent = unsent_listed_name(r, out + causes)
    return out[:lead] + causes + out[lead:] + ([unsent] if unsent is not None else [])


def _answer(r: Reading) -> Call | None:
    """The call that gave the run's answer as free text, when it gave one (not a label of the
    task's closed set: a verdict is chosen, not looked up)."""
    writes = [c for c in r.calls if c.writes and not c.error]
    last = writes[-1] if writes else None
    if last is None or not isinstance(last.turn.arguments, str) or harness_reason(r) is not None:
        return None
    return last if gives_answer(r, last) and not is_verdict(r, last.turn.arguments) else None


def _fold(text: str) -> str:
    return " ".join(str(text).split()).casefold()


def _whole(needle: str) -> re.Pattern:
    return re.compile(r"(?<![\w])" + re.escape(needle) + r"(?![\w])")


# --- what every failed call of one tool shared ----------------------------------------------------

_QUOTED = lazy_re.compile(r"\"([^\"]+)\"|\u201c([^\u201d]+)\u201d")
_WRAPS = ("''", "``", "\u2018\u2019")


def _quoted_spans(text: str) -> list[str]:
    """The texts a call's argument put inside quote marks: within double quotes anywhere, or a
    whole argument wrapped in single quotes or backticks (an apostrophe alone is none)."""
    spans = [a or b for a, b in _QUOTED.findall(text)]
    s = text.strip()
    if not spans and len(s) > 2 and s[0] + s[-1] in _WRAPS:
        spans = [s[1:-1]]
    return [x for x in spans if x.strip()]


def _standing(r: Reading) -> dict[str, list[Call]]:
    """Errors no later call of the same program or tool got past, by program (in_short.py's
    errors fact states exactly these)."""
    ran = {c.n: what_ran(c.turn) for c in r.calls}
    last_ok = {ran[c.n]: c.n for c in r.calls if not c.error}
    out: dict[str, list[Call]] = {}
    for c in r.calls:
        if c.error and c.n > last_ok.get(ran[c.n], -1):
            out.setdefault(ran[c.n], []).append(c)
    return out


def error_causes(r: Reading) -> list[tuple[str, set[int], KeyFact]]:
    """(tool, its failed calls' turns, the fact) for each tool whose standing errors all sent
    plain text of one checked form: several calls of the tool packed into one argument, or a
    name in quote marks that the error itself listed without them."""
    out: list[tuple[str, set[int], KeyFact]] = []
    if not any(c.error for c in r.calls):
        return out
    for key, errs in _standing(r).items():
        name = errs[0].name
        if key != name or not all(isinstance(e.turn.arguments, str) and e.name == name for e in errs):
            continue
        fact = (_packed_fact(r, name, errs) or _quoted_fact(r, name, errs) or described_searches(r, name, errs)
                or unsent_listed(r, name, errs))
        if fact is not None:
            out.append((name, {e.n for e in errs}, fact))
    return out


def _packed_fact(r: Reading, name: str, errs: list[Call]) -> KeyFact | None:
    if not all(packed_calls(e) >= 2 for e in errs):
        return None
    first = errs[0]
    single = next((c for c in r.calls if c.name == name and not c.error and packed_calls(c) == 0), None)
    sent = clip_words(f"{name}[{first.turn.arguments}]", 110)
    return KeyFact(f"{failed_calls(r, name, errs)} packed several calls into one argument (turn {first.n} sent "
                   f"{sent}{' as one call' if len(errs) > 1 else ''})"
                   + (f"; the one-query {name} call at turn {single.n} went through" if single else "")
                   + f": send one query per {name} call.",
                   [e.n for e in errs[:3]] + ([single.n] if single else []), "packed-calls", [name])


def _quoted_fact(r: Reading, name: str, errs: list[Call]) -> KeyFact | None:
    spans = [_quoted_spans(e.turn.arguments) for e in errs]
    if not all(spans):
        return None
    listed = []  # (call, the name its error listed without the marks)
    for e, own in zip(errs, spans):
        names = {_fold(n): n for n in listed_names(e.turn.result or "")}
        bare = next((names[_fold(s)] for s in own if _fold(s) in names), None)
        if bare is not None:
            listed.append((e, bare))
    if not listed:
        return None
    e, bare = listed[-1]
    mark = '"' if "'" in bare else "'"  # as the list itself wrote it
    shown = f"{' '.join(e.turn.arguments.split())} at turn {e.n}, listed as {mark}{bare}{mark}"
    if len(errs) == 1:
        said = f"{failed_calls(r, name, errs)} put quote marks in its text, and its error listed the quoted name without them ({shown})"
    elif len(listed) == len(errs):
        said = (f"{failed_calls(r, name, errs)} put quote marks in their text, and every one of their errors listed the "
                f"quoted name without them ({shown})")
    else:
        ns = [str(x.n) for x, _ in listed]
        said = (f"{failed_calls(r, name, errs)} put quote marks in their text, and the error{'s' if len(ns) > 1 else ''} at "
                f"turn{'s' if len(ns) > 1 else ''} {join(ns, 6)} listed the quoted name without them ({shown})")
    return KeyFact(said + ": send a name as the error's list writes it, without quote marks.",
                   sorted({x.n for x, _ in listed[:3]} | {e.n}), "quoted-name", [name])


# --- an answer about two named things that rests on one ---------------------------------------------

# what stands between two things the question sets side by side: "A and B", "A or B", "A, or the B"
_BETWEEN = lazy_re.compile(r"\s*,?\s*(?:and|or|&)\s+(?:the\s+)?", re.IGNORECASE)
# a run of capitalised words (or a parenthesis) written as one name: "Papa Gino's", "ISS A/S (Integrated ...)"
_TITLED = r"(?:[A-Z0-9][\w'\u2019.&/-]*|\([^()]{1,60}\))"
_NAME_AFTER = lazy_re.compile(rf"{_TITLED}(?:\s+(?:(?:of|the)\s+)?{_TITLED})*")
_NAME_BEFORE = lazy_re.compile(rf"{_TITLED}(?:\s+(?:(?:of|the)\s+)?{_TITLED})*$")


# a question that asks what holds of both, not of a third thing between them ("the game between A and B")
_OF_BOTH = lazy_re.compile(r"\b(?:both|in common|share[sd]?|each)\b", re.IGNORECASE)


def _unquoted(text: str) -> str:
    return " ".join(text.strip().strip("\"'\u201c\u201d\u2018\u2019`").split())


def two_things(r: Reading) -> tuple[str, str] | None:
    """The two things a question sets side by side ("A and B", "A or B"): names the agent
    searched for, written in the question, or one of them searched and the capitalised name on
    the other side of the "and"/"or". None unless exactly one such pair is found."""
    question = " ".join((r.run.task.instruction or "").split())
    low = question.casefold()
    spans: list[tuple[int, int]] = []
    for c in r.calls:
        if c.writes or not isinstance(c.turn.arguments, str):
            continue
        text = _unquoted(c.turn.arguments).casefold()
        if len(text) < 2:
            continue
        m = _whole(text).search(low)
        if m:
            spans.append(m.span())
    spans = sorted({s for s in spans if not any(o != s and o[0] <= s[0] and s[1] <= o[1] for o in spans)})
    pairs = set()
    for a, b in zip(spans, spans[1:]):
        if _BETWEEN.fullmatch(question[a[1]:b[0]]):
            pairs.add((question[a[0]:a[1]], question[b[0]:b[1]]))
    for s, e in spans:  # the other side's name, where the agent searched only one of the two
        after = _BETWEEN.match(question, e)
        if after and (m := _NAME_AFTER.match(question, after.end())):
            other = m.group(0).rstrip(".")
            if not any(x[0] <= m.start() < x[1] for x in spans):
                pairs.add((question[s:e], other))
        before = re.search(r"\s*,?\s*(?:and|or|&)\s+(?:the\s+)?$", question[:s], re.IGNORECASE)
        if before and (m := _NAME_BEFORE.search(question[:before.start()])):
            if not any(x[0] <= m.start() < x[1] for x in spans):
                pairs.add((m.group(0), question[s:e]))
    if len(pairs) != 1:
        return None
    a, b = pairs.pop()
    return (a, b) if _fold(a) != _fold(b) and _tokens(a) and _tokens(b) else None


def _tokens(text: str) -> set[str]:
    return set(re.findall(r"[^\W_]+", text.casefold()))


def _about(c: Call, thing: str) -> bool:
    """A look-up is about a thing when every word of one is a word of the other: "ISS A/S" for
    "ISS A/S (Integrated Service Solutions)", "Rock (Nominees) Ltd v RCO" for "Rock Nominees Ltd"."""
    sent, own = _tokens(_unquoted(str(c.turn.arguments))), _tokens(thing)
    return bool(sent) and (sent <= own or own <= sent)


def _result_words(r: Reading, c: Call) -> set[str]:
    key = f"qa_facts.words:{c.n}"
    if key not in r.memo:
        r.memo[key] = set(main_words(c.turn.result or ""))
    return r.memo[key]


def one_sided_answer(r: Reading, answer: Call) -> KeyFact | None:
    """For a question about two named things: the answer's own words (beyond the question's)
    all come from the look-ups of one of them, and no other look-up that went through holds any
    (the other's, or any other). An answer made of the question's own words (one of the two
    names) says nothing here."""
    things = two_things(r) if _OF_BOTH.search(r.run.task.instruction or "") else None
    if things is None:
        return None
    looks = [c for c in r.calls if c.n < answer.n and not c.writes and isinstance(c.turn.arguments, str)]
    mine = {t: [c for c in looks if _about(c, t) and not any(_about(c, o) for o in things if o != t)] for t in things}
    found = {t: [c for c in mine[t] if not c.error and c.turn.result] for t in things}
    words = [w for w in main_words(answer.turn.arguments) if w not in set(main_words(r.run.task.instruction or ""))]
    if words:
        for t in things:
            other = things[1] if t == things[0] else things[0]
            held = set().union(*(_result_words(r, c) for c in found[t])) if found[t] else set()
            elsewhere = set().union(*(_result_words(r, c) for c in looks if not c.error and c not in found[t]), set())
            if found[t] and set(words) <= held and not set(words) & elsewhere and not _expected_alike(r, held, elsewhere):
                src = [c for c in found[t] if set(words) & _result_words(r, c)]
                return KeyFact(f"The question names two things, {things[0]} and {things[1]}; every word of the answer "
                               f"comes from {join([_returned(c) for c in src], 2)} about {t}, and "
                               + _other_side(other, mine[other], found[other], "holds none of them")
                               + ": an answer about both must be found in the look-ups of each.",
                               [c.n for c in src[:2]] + [c.n for c in mine[other][:2]], "one-sided", [answer.name])
    return None


def _expected_alike(r: Reading, held: set[str], elsewhere: set[str]) -> bool:
    """Whether the expected answer (when the log records one) rests on the same one side too:
    then resting on one side is not what set the answer apart from it."""
    gold = expected_answer(r)
    words = set(main_words(gold or "")) - set(main_words(r.run.task.instruction or ""))
    return bool(words) and words <= held and not words & elsewhere


def _returned(c: Call) -> str:
    return f"what {c.name}[{clip_words(c.turn.arguments, 60)}] returned at turn {c.n}"


def _other_side(thing: str, tried: list[Call], found: list[Call], verdict: str) -> str:
    if found:
        return (f"{join([_returned(c) for c in found], 2)} for {thing} "
                f"{verdict if len(found) == 1 else verdict.replace('holds', 'hold')}")
    if tried:
        ns = [str(c.n) for c in tried]
        return f"no look-up of {thing} went through (turn{'s' if len(ns) > 1 else ''} {join(ns, 4)} failed)"
    return f"{thing} was never looked up"


# --- a look-up planned for the answer and never made ------------------------------------------------

_SENTENCES = lazy_re.compile(r"(?<=[.!?])\s+|\n+")


def _plans(sentence: str, needle: str, tools: list[str]) -> str | None:
    """The look-up tool a sentence plans to call on ``needle``: a word starting with the tool's
    name ("search", "searched") at most four words before it ("should have searched X", "search
    for the X"); None when no such word stands there."""
    low = sentence.casefold()
    at = low.find(needle)
    while at >= 0:
        if (at == 0 or not low[at - 1].isalnum()) and not low[at + len(needle):at + len(needle) + 1].isalnum():
            for word in low[:at].split()[-4:]:
                word = word.strip("\"'\u201c\u2018(")
                tool = next((t for t in tools if word.startswith(t.casefold())), None)
                if tool is not None:
                    return tool
        at = low.find(needle, at + 1)
    return None


def planned_look_up(r: Reading, answer: Call) -> KeyFact | None:
    """An answer no look-up returned and no call sent, that the task's text or the agent's own
    earlier words planned to look up with one of the run's look-up tools, by its name."""
    given = " ".join(answer.turn.arguments.split())
    needle = given.casefold()
    said = [(t.turn, t.content, "the task message") for t in r.run.turns
            if t.turn < answer.n and t.type == "message" and t.role == "user" and t.content]
    said += [(c.n, c.turn.reasoning, "the agent's own thought") for c in r.calls if c.n <= answer.n and c.turn.reasoning]
    said = [x for x in said if needle in x[1].casefold()]  # most runs' words never hold their answer: nothing to read
    tools = sorted({c.name for c in r.calls if not c.writes and c.name}, key=len, reverse=True)
    if not said or not tools or not main_words(given):
        return None
    plans = [(turn, sentence, who, tool) for turn, text, who in said for sentence in
             (" ".join(x.split()).lstrip("-*\u2022 ") for x in _SENTENCES.split(text))
             if (tool := _plans(sentence, needle, tools))]
    if not plans:
        return None
    found = min(plans, key=lambda p: (p[0], len(p[1])))  # the earliest turn's plan, its shortest sentence
    word = _whole(needle)
    for c in r.calls:
        if c.n < answer.n and (word.search(_fold(c.turn.arguments)) or not c.error and word.search(_fold(c.turn.result or ""))):
            return None  # the run sent it (whatever came back), or a look-up returned it
    turn, sentence, who, tool = found
    return KeyFact(f"{who[0].upper()}{who[1:]} at turn {turn} planned to {tool.lower()} \"{given}\" "
                   f"(\"{clip_words(sentence, 150)}\"), and no {tool} call sent it before the answer at "
                   f"turn {answer.n}: make the planned look-up before answering.", [turn, answer.n],
                   "planned-look-up", [tool])
