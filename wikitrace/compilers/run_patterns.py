"""The patterns one run met, whatever its outcome: the keys corpus/insights.py counts across
the runs of a task type (errors, repeats, changes, procedure, rules) and the choices it made
(the tools that answered, where a free-text query's words came from, the look-ups before a
change, how a call after an error differed, each change's arguments as digests), which the
insight pages contrast between successful and failed runs and corpus/trials.py compares
between trials of one task.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import lru_cache

from .answer_facts import answer_call
from .arguments import FREE_FORM, _as_text, check_arguments, is_chosen
from .call_kinds import changed_with, did_token
from .error_insights import error_key, missing_programs
from .failing_end import FAILING_END, failing_end
from .insight_parts import edit_place, edits_of, verb
from .missed_insight import undone_keys
from .limit_insights import LIMIT_CHANGED, unsettled_edit
from .option_choices import option_pattern
from .verdict_evidence import verdict_pattern
from .insight_words import free_form, gives_answer, is_hand_off, named_by, top_key
from .picked_values import _spoken_forms, picked
from .reading import leaves, t_is_user
from .record_facts import record_patterns
from .reading import Reading, runs_a_command
from .procedure_lessons import procedure_key
from .qa_reasons import reflected_answer
from .value_sources import _value_place
from .test_edits import TESTS_ONLY, test_only_edits
from .rule_lessons import confirmation, confirmation_broken
from .run_insights import repeats, stopped_browsing, unseen_insight
from .success_insights import silent, unchanged
from .task_words import given_words
from .text import clip, folded_words
from .value_digest import fingerprint as _fingerprint



_NOTHING = re.compile(r"\s*(?:\[\s*\]|\{\s*\}|null|none|no (?:more )?results?(?: found)?[.!]?)?\s*", re.I)


def found_nothing(result: str | None) -> bool:
    """Whether a call's answer holds nothing: empty, an empty list or object, or a "no results" line."""
    return _NOTHING.fullmatch(result or "") is not None


def patterns_of(r: Reading) -> list[str]:
    """Every pattern the run met, whatever its outcome: the keys the contrast with other runs
    of the same task type counts (corpus/insights.py)."""
    out: set[str] = set()
    for c in r.calls:
        if c.error:
            out.add(error_key(c))
    for c, _n in repeats(r):
        out.add(f"loop|{verb(c)}")
    writes = [c for c in r.calls if c.writes and not c.error]
    for w in writes:
        out.add(f"went-through|{changed_with(r, w)}")
        if is_hand_off(w):
            out.add(f"hand-off|{w.name}")
        elif free_form(w) is None and not runs_a_command(w.turn):
            insight = unseen_insight(r, w)
            if insight is not None:
                out.add(insight.key)
            # an argument value the agent took among several an answer listed, the user naming none
            out.update(f"picked|{w.name}|{top_key(p.path)}" for p in picked(r, w) if "|" not in p.path)
            places: dict[str, set[str]] = {}
            for key, where, tool in argument_sources(r, w):
                if "|" in key:
                    continue
                if where == "unknown":
                    places.setdefault(key, set()).add(where)
                else:
                    out.add(f"from|{w.name}|{key}:{where}")
                    places.setdefault(key, set()).add(
                        where if where in ("reply", "task", "none") else f"{'call' if where == 'again' else 'answer'}:{tool}")
            # the checklist of a change's page (rewrites.checklist): one place per argument, or "mixed" when
            # its values came from several (a flight list of kept and new segments)
            out.update(f"took|{w.name}|{key}|{next(iter(p)) if len(p) == 1 else 'mixed'}" for key, p in places.items())
        insight = confirmation(r, w)
        if insight is not None:
            out.add(insight.key + "|kept")
        broken = confirmation_broken(r, w)
        if broken is not None:
            out.add(broken)
    for c, e in edits_of(r):  # where a coding run found each file it changed (contrasted like a source)
        out.add(f"edited|{verb(c)}|{edit_place(r, c, e.file)[0]}")
    if test_only_edits(r):  # counted over both outcomes: whether changing only tests separates them
        out.add(TESTS_ONLY)
    if failing_end(r) is not None:  # settled on tests it had just seen fail, whatever the outcome
        out.add(FAILING_END)
    for c in r.calls:
        out.update(f"missing|{p}" for p in (missing_programs(c) if c.error else []))
    if unchanged(r):  # what the lessons of runs that changed nothing count: their own runs, stray hand-offs and all
        out.add("unchanged|none" if silent(r) else "unchanged|lookups")
    if not writes:
        out.add("idle|none" if not r.calls else "idle|lookups")
    elif stopped_browsing(r, writes):
        out.add("stopped")
    elif unsettled_edit(r, writes):
        out.add(LIMIT_CHANGED)
    out.update(undone_keys(r))  # whatever the outcome: the page counts it in successes too
    proc = procedure_key(r)
    if proc:
        out.add(proc)
    out.update(x for x in (option_pattern(r), verdict_pattern(r), reflected_pattern(r)) if x)
    out.update(decisions_of(r))
    out.update(record_patterns(r))
    out.update(f"asks|{w}" for w in opening_words(r))
    request = opening_request(r)
    if request:
        out.add(f"opening|{request}")
    out.update(looked_before(r))
    out.update(retries_of(r))
    return sorted(out)


def reflected_pattern(r: Reading) -> str | None:
    """``reflected|<tool>`` when the run's answer is a name a reflection it was given holds as a
    name of its own (qa_reasons.reflected_answer), whatever the outcome: a retry's reflection may
    hold a wrong guess or the right answer, and the lesson on it is contrasted on both."""
    answer = answer_call(r)
    return f"reflected|{answer.name}" if answer is not None and reflected_answer(r, answer) is not None else None


_OPENING_CHARS = 2000  # an opening past this (a long issue text) is read from its head
_OPENING_WORDS = 80  # distinct words kept per run: the pattern list stays small


_REQUEST_CHARS = 120  # the request quoted on a page, clipped


def _opening(r: Reading):
    return next((t for t in r.run.turns if t_is_user(t) and isinstance(t.content, str) and t.content.strip()
                 and t.extra.get("written_by") != "harness"), None)


def opening_request(r: Reading) -> str:
    """The head of the first message the agent is given, clipped, as a page quotes it to show what
    kind of request a lesson comes from; from where the task statement starts in it when it
    does (an issue text after an instruction template), and only its first line or sentence
    that holds a question mark (a question followed by other notes). Its values stay as written:
    a quote with its numbers masked ("the escape ~… must be read as …", "….decode rejects") no
    longer says what was asked, and no lesson counts this pattern: pages only quote it."""
    first = _opening(r)
    if first is None:
        return ""
    text = " ".join(first.content.split())
    statement = " ".join((r.run.task.instruction or "").split())[:40]
    at = text.find(statement) if statement else -1
    text = text[at:] if at > 0 else text
    asked = text.find("?")  # a question's mark, whatever follows it (Reflexion writes its notes right after)
    if 0 < asked < _REQUEST_CHARS:
        text = text[:asked + 1]
    return clip(text, _REQUEST_CHARS).replace("|", "/")


def opening_words(r: Reading) -> list[str]:
    """The distinct words (letters only, three or more, lower case) of the first message the
    agent is given (the user's request, the question, the task statement) that the task's
    statement holds too, as they are or in another form of one (cancel, cancelled), when the
    log records one: what an agent starting a new task knows
    first, and what every trial of the task is asked (a later trial's notes on the ones before
    it, a Reflexion reflection, are no part of it). The insight layer says in these words when
    a lesson applies (corpus/applies.py) instead of by how its runs ended."""
    first = _opening(r)
    if first is None:
        return []
    return list(_shared_words(first.content[:_OPENING_CHARS], r.run.task.instruction or ""))


@lru_cache(maxsize=2048)
def _shared_words(opening: str, instruction: str) -> tuple[str, ...]:
    """opening_words of one (first message, task statement) pair: the trials of a task share both,
    and the statement's stems are worked out once."""
    words = _letter_words(opening)
    stated = set(_letter_words(instruction))
    if not stated:
        return words[:_OPENING_WORDS]
    # cue_words.same_word against every stated word: w is a stated word, a stated word of four
    # letters or more begins with w (the first stated word from w on, in order, does if any does),
    # or w begins with one (four letters at least)
    ordered = sorted(stated)

    def starts_one(w: str) -> bool:
        k = bisect_left(ordered, w)
        return k < len(ordered) and ordered[k].startswith(w)

    return tuple(w for w in words if w in stated or (len(w) >= 4 and starts_one(w))
                 or any(w[:k] in stated for k in range(4, len(w))))[:_OPENING_WORDS]


@lru_cache(maxsize=2048)
def _letter_words(text: str) -> tuple[str, ...]:
    """The distinct runs of three or more letters a-z standing alone (no digit beside them), lower case."""
    return tuple(dict.fromkeys(_LETTER_WORD.findall(text.lower())))


_LETTER_WORD = re.compile(r"(?<![a-z0-9])[a-z]{3,}(?![a-z0-9])")


def argument_sources(r: Reading, w) -> list[tuple[str, str, str]]:
    """Where each top-level argument of a change came from, once per (argument, place), with
    the tool whose answer (or earlier call) held it (empty for the user's words and for none):
    ``reply`` a user message answering the agent holds it (as a user writes it), ``task`` only
    the task statement does, ``picked`` the agent took it unasked among several values one
    answer listed, ``shown`` another earlier answer held it, ``again`` only the run's own earlier
    call sent it, ``none`` no earlier turn did, ``unknown`` turns held it but the log does not show
    which it came from (``value_sources``: a word several records share). The pages contrast these between successful and failed runs of the same change."""
    chosen = {(top_key(p.path), p.value) for p in picked(r, w)}
    said = [(t.turn in r.replies, r.lower(t)) for t in r.facts if t.turn < w.n and t_is_user(t)]
    by_turn = {c.n: c.name for c in r.calls}
    names = frozenset(v.lower() for _p, v in leaves(w.turn.arguments) if isinstance(v, str) and len(v) > 2)
    out: dict[tuple[str, str, str], None] = {}
    for a in check_arguments(r, w.turn):
        key, text = top_key(a.path), _as_text(a.value)
        forms = _spoken_forms(text) if len(text) >= 2 else []
        told = [reply for reply, low in said if any(f in low for f in forms)]
        if told:
            where = "reply" if any(told) else "task"
        elif a.seen_in == "user message":
            where = "reply" if a.seen_at in r.replies else "task"
        elif a.seen_in == "observation":
            where = "picked" if (key, text) in chosen else "shown"
        elif a.seen_in == "earlier call":  # sent before by the run's own earlier call
            where = "again"
        elif a.unsourced:  # shown by no earlier turn in any rendering
            where = "none"
        else:  # held by a turn in another rendering, or a default: no place to tell
            continue
        tool = by_turn.get(a.seen_at, "") if where in ("picked", "shown", "again") else ""
        if where in ("picked", "shown") and a.path != FREE_FORM:  # the answer the value came from, not the last that held it (an echo)
            place = _value_place(r, w, a, by_turn, names)
            if place is None or place[3] not in ("answer", "user") or place[2] is None and place[3] == "answer":
                # the log does not show where (or which of several tools' answers): said of no place
                out[(key, "unknown", "")] = None
                continue
            if place[3] == "user":
                where = "reply" if place[1] in r.replies else "task"
            tool = place[2].name if place[3] == "answer" else ""
        out[(key, where, tool)] = None
    return list(out)


def retries_of(r: Reading) -> set[str]:
    """``retry|<tool>|same|listed|other``: how each call that followed an error of its own tool
    differed from the failed one: sent unchanged, with a value the error's text named (a
    suggested name, a listed id), or with other values."""
    out: set[str] = set()
    for k, c in enumerate(r.calls):
        if not c.error or runs_a_command(c.turn):
            continue
        nxt = next((x for x in r.calls[k + 1:] if x.name == c.name), None)
        if nxt is None:
            continue
        listed = (c.turn.result or "").lower()
        x, y = c.turn.arguments, nxt.turn.arguments
        if nxt.sig == c.sig:
            how = "same"
        elif isinstance(x, dict) and isinstance(y, dict):
            how = "listed" if any(named_by(listed, x.get(key), y.get(key)) for key in y if x.get(key) != y.get(key)) \
                else "other"
        else:
            how = "listed" if named_by(listed, x, y) else "other"
        out.add(f"retry|{c.name}|{how}")
    return out


def looked_before(r: Reading) -> set[str]:
    """``before|<change tool>|<look-up>``: each look-up tool that answered without an error
    before the first call of a change tool that went through (hand-offs, free-text answers and
    shell commands aside), so the pages can say which look-ups successful runs made first."""
    out: set[str] = set()
    done: set[str] = set()
    for w in r.calls:
        if (not w.writes or w.error or w.name in done or is_hand_off(w) or free_form(w) is not None
                or runs_a_command(w.turn)):
            continue
        done.add(w.name)
        out.update(f"before|{w.name}|{verb(c)}" for c in r.calls if c.n < w.n and not c.writes and not c.error)
    return out




@lru_cache(maxsize=512)
def _answer_words(text: str) -> frozenset[str]:
    """An answer's folded words, once per answer text: trials of a task get the same answers."""
    return frozenset(folded_words(text))


def decisions_of(r: Reading) -> set[str]:
    """What the run decided, for the comparison with other trials of the same task: every
    tool it called that answered without an error (``did|<tool>``; a coding call by its kind and
    target, compilers/call_kinds.py: ``did|@view:A.java``), where the words of each
    free-text look-up came from (``query|<tool>|task``: all from the task statement, ``given``:
    the rest from the other messages it was given before its first call, a retry's reflections,
    ``shown``: some from what earlier calls returned, ``own``: some from none of these; ``said|``
    for a free-text answer), and for each
    state-changing call with named arguments, each argument key with a digest of its value
    (``set|<tool>|<key>|<digest>``), and how many such calls of each tool went through
    (``count|<tool>|<n>``)."""
    out: set[str] = set()
    statement, task_words = given_words(r)
    shown: set[str] = set()  # the words every earlier answer showed, errors' lists of names included
    unread: list[str] = []  # earlier answers not split into words yet: only a query beyond the task needs them
    changes: dict[str, int] = {}
    for c in r.calls:
        query = free_form(c)  # a free-text look-up or answer
        # a free-text change that answers nothing (a shop's click[Buy Now], a move) is no answer
        # whose words could come from somewhere: its choice is counted by the lessons on options
        if query is not None and not (c.writes and (is_chosen(r, str(c.turn.arguments)) or not gives_answer(r, c))):
            # a yes/no or a verdict is chosen, not written from words anywhere: no source to compare
            words = set(folded_words(str(c.turn.arguments)))
            if words:
                if words <= statement:
                    where = "task"
                elif words <= task_words:  # beyond the statement: from the rest of what it was given (reflections)
                    where = "given"
                else:
                    for answer in unread:
                        shown.update(_answer_words(answer))
                    unread.clear()
                    # each word looked up in the two sets: no union of all the shown words per query
                    where = "shown" if all(w in shown or w in task_words for w in words) else "own"
                out.add(f"{'said' if c.writes else 'query'}|{c.name}|{where}")
        unread.append(c.turn.result or "")  # an error's answer is an answer too: it may list names
        if c.error:
            continue
        if c.writes or not found_nothing(c.turn.result) or runs_a_command(c.turn):
            # a coding call by its kind, not its agent's tool name; a look-up that answered nothing (a
            # notebook tool's empty reply, "No Results", an empty list) got nothing from the environment,
            # and calling it is no way to settle
            out.add(f"did|{did_token(r, c) or verb(c)}")
        args = c.turn.arguments
        if c.writes and isinstance(args, dict) and not runs_a_command(c.turn) and not is_hand_off(c):
            changes[c.name] = changes.get(c.name, 0) + 1
            for key, value in args.items():
                if "|" not in str(key):
                    out.add(f"set|{c.name}|{key}|{_fingerprint(value)}")
    out.update(f"count|{tool}|{n}" for tool, n in changes.items())
    return out
