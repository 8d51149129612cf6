"""What a compilation page says under a decision, beyond the decision itself: the checks of a
change's arguments and the system prompt's rules on it, where each argument value was shown
before a change that went through, whether a retry took a name an error offered, a look-up
that followed a name an earlier answer showed, for a final answer judged wrong what
the task expected, where the text of the answer given appeared, and a rule on the record an
id argument points at. Each sentence has its check in tests/test_page_sentences.py.
"""

from __future__ import annotations

import json
import re

from .computed_values import product_note
from .expected_calls import differences
from .answer_case import named, near_words as near_answer
from .insight_words import answer_seen_in, expected_answer, followed, free_form, gives_answer, is_verdict, join
from .arguments import check_arguments
from .named_source import named_source
from .phrase_match import name_with_middle, observation_words, phrase_span, words_of
from .error_listings import listed_in_errors
from .reading import Call, Reading, leaves
from .rules import _CONFIRM_WORDS
from .told_numbers import _last_key
from .arguments import _parsed
from .insight_parts import rules_once
from .near_words import main_words, near_words, place_words as _place_words
from .text import TITLE_KIND, clip, clip_words


def _record_named(r: Reading, c: Call, path: str, turn: int, held: list) -> tuple[str, bool]:
    """The name the call sent (beside the argument first) whose own object in the observation at
    ``turn`` (filed under it, or holding it as ``id``) holds the field with one of ``held``: whose
    record the differing field is. A gift card's balance is its record's ``amount``, not the amount
    the call pays from it, so the note says whose it is. Returns the name ("" when no name's record
    holds it) and whether it is another item's of the call (a name outside the argument's object)."""
    key = _last_key(path)
    parent = path[:len(path) - len(key)].rstrip(".")
    t = next((x for x in r.facts if x.turn == turn), None)
    data = _parsed(t.result or "") if t is not None else None
    owners: dict[str, object] = {}
    stack = [(data, None)]
    while stack:
        node, filed = stack.pop()
        if isinstance(node, dict):
            for name in {filed, node.get("id")} - {None}:
                if isinstance(name, str) and key in node:
                    owners.setdefault(name, node[key])
            stack += [(v, k) for k, v in node.items()]
        elif isinstance(node, list):
            stack += [(v, None) for v in node]
    names = [(p[:len(p) - len(_last_key(p))].rstrip(".") != parent, v) for p, v in leaves(c.turn.arguments)
             if isinstance(v, str) and v in owners]
    for far, name in sorted(names, key=lambda x: x[0]):
        if owners[name] in held:
            return f"`{name}`", far
    return "", False


def _as_expected(r: Reading, c: Call) -> set[str]:
    """The argument paths where the change sends what the log's expected call of its tool sends (a
    part-payment of 67 from a card holding 203 that the task itself expected): none without that record."""
    diffs = differences(r, c)
    if diffs is None:
        return set()
    differ = {path for path, _want, _got in diffs}
    return {path for path, _v in leaves(c.turn.arguments) if path not in differ}


def check_notes(r: Reading, c: Call) -> tuple[list[str], bool]:
    """Notes on a state-changing call: arguments no earlier turn showed, and rules it meets.
    Returns the notes and whether any of them is a checked discrepancy."""
    notes, flagged = [], False
    checks = check_arguments(r, c.turn)
    agreed = _as_expected(r, c)
    for a in checks:
        if a.seen_at is not None or a.other_at is None and not a.unsourced:
            continue  # a value some turn holds in another rendering, or a default: nothing to say
        if a.path in agreed:
            continue  # the task's expected call sends this very value: worked out, not a discrepancy
        if a.other_at is not None:
            held = f"{' or '.join(_val(v) for v in a.other[:3])}{f' (and {len(a.other) - 3} more)' if len(a.other) > 3 else ''}"
            owner, another = _record_named(r, c, a.path, a.other_at, a.other)
            if another:  # the value is another item's of this call (the certificate beside the card): no difference
                continue
            flagged = True
            notes.append(f"`{a.path}` is {_val(a.value)}, where {owner}'s record in the observation at turn "
                         f"{a.other_at} holds `{_last_key(a.path)}` {held}." if owner else
                         f"`{a.path}` is {_val(a.value)}, but the observation at turn {a.other_at} "
                         f"gave that field as {held}.")
            continue
        # the agent's own rewording of what a turn said is no discrepancy: an answer whose words stand
        # together in a look-up is quoted beside it; a value most of whose words share one sentence of an
        # earlier turn is told with the count
        if free_form(c) is not None and (near := near_answer(r, c)) is not None:
            notes.append(f"`{a.path}` is {_val(a.value)}: no earlier turn holds it as written, but it is close "
                         f"to {near[0].name}'s answer at turn {near[0].n}: \"{near[1]}\".")
        elif (close := near_words(r, a.value, c.n)) is not None:
            t, k, n = close
            notes.append(f"`{a.path}` is {_val(a.value)}, close to {_place_words(t)} ({k} of its {n} main words).")
        elif (made := product_note(r, c, a.path, a.value)) is not None:
            notes.append(made)  # a number the system prompt's own rule computes from a record looked up
        elif not (isinstance(a.value, str) and not named(a.value) and gives_answer(r, c)):
            # an answer that is one plain word ("unknown") names nothing to look for on a page
            flagged = True
            notes.append(f"`{a.path}` is {_val(a.value)}: no earlier observation, user message or call holds "
                         f"this value.")
    for hit in rules_once(r, c):
        if hit.broken:
            flagged = True
            notes.append(f"The system prompt (turn {hit.turn}) says: \"{hit.sentence}\" — here {hit.broken}.")
        elif not _CONFIRM_WORDS.search(hit.sentence):  # a confirmation rule kept: the decision says the user agreed
            notes.append(f"A rule of the system prompt (turn {hit.turn}) on this action: \"{hit.sentence}\"")
    return notes, flagged


_LISTED = re.compile(r"\[\s*((?:'[^']*'|\"[^\"]*\")(?:\s*,\s*(?:'[^']*'|\"[^\"]*\"))+)\s*\]")


def listed_names(text: str) -> list[str]:
    """The quoted names of a bracketed list of two or more that an error's text offers (a search
    tool's "Similar: ['A', 'B']")."""
    m = _LISTED.search(text or "")
    return [x[1:-1] for x in re.findall(r"'[^']*'|\"[^\"]*\"", m.group(1))] if m else []


_QUOTE_MARKS = "\"'\u201c\u201d\u2018\u2019`"


def listed_note(calls: list[Call], err: Call) -> list[str]:
    """Whether a later call of the same tool sent one of the names the error listed: the
    retry the error itself offered, taken or not. A name sent inside quote marks is told as
    such: the marks, not the name, are then what the tool was given."""
    names = listed_names(err.turn.result or "")
    if not names:
        return []
    folded = {" ".join(n.split()).casefold(): n for n in names}
    fold = lambda text: " ".join(text.split()).casefold()  # noqa: E731
    later = [x for x in calls if x.n > err.n and x.name == err.name and isinstance(x.turn.arguments, str)]
    used = next(((x, folded[fold(x.turn.arguments)]) for x in later if fold(x.turn.arguments) in folded), None)
    quoted = None if used else next(
        ((x, folded[fold(x.turn.arguments.strip()[1:-1])]) for x in later
         if len(x.turn.arguments.strip()) > 2 and x.turn.arguments.strip()[0] in _QUOTE_MARKS
         and x.turn.arguments.strip()[-1] in _QUOTE_MARKS and fold(x.turn.arguments.strip()[1:-1]) in folded), None)
    shown = ", ".join(f"'{n}'" for n in names[:4]) + (", …" if len(names) > 4 else "")
    head = f"The error listed {len(names)} names ({shown}); "
    if quoted:
        x, name = quoted
        return [head + f"the {err.name} call at turn {x.n} sent one of them ('{name}') inside quote marks, as "
                f"{x.turn.arguments.strip()}, and " + ("was answered with an error." if x.error else "went through.")]
    return [head + (f"the {err.name} call at turn {used[0].n} sent one of them ('{used[1]}')." if used
                    else f"no later {err.name} call sent one of them.")]


def followed_note(r: Reading, c: Call) -> list[str]:
    """For a free-text look-up whose words beyond the task text all appear in one earlier answer:
    that answer's turn (the run followed what a look-up showed: a name on the page it read)."""
    source = followed(r, c)
    if source is None:
        return []
    return [f"Its words beyond the task text all appear in what {source.name} returned at turn {source.n}: "
            "it followed a name an earlier answer showed."]


def _val(v) -> str:
    return json.dumps(v, ensure_ascii=False)


def wrong_answer(r: Reading, c: Call) -> str | None:
    """For a final answer (a free-form argument) of a failed run: that it was judged wrong, what
    the task expected when the log records it, and whether a look-up had shown that; None for
    a call that changes state, whose page keeps saying what the change may have missed. A
    verdict the task expected (``is_verdict``) is named as one: no look-up was to return it."""
    if free_form(c) is None:
        return None
    if not gives_answer(r, c):  # a click or a move that ended the run: no answer was given
        score = r.run.outcome.score
        return "This call ended the run, and the run was judged a failure" + (
            f" (score {score:g})." if isinstance(score, (int, float)) else ".")
    gold = expected_answer(r)
    if gold is None:
        return "This answer ended the run and was judged wrong."
    if is_verdict(r, gold):  # a label of the task's answer set: no look-up returns one
        return f"This answer ended the run and was judged wrong; the task expected the verdict \"{clip(gold, 80)}\"."
    seen = named_source(r, gold, c) or answer_seen_in(r, gold, c)
    # an error's list of near names is no look-up's answer, but it did show the name: said, as In short says it
    listed = None if seen is not None else listed_in_errors(r, gold, c.n)
    return (f"This answer ended the run and was judged wrong; the task expected \"{clip(gold, 80)}\", which "
            + (f"appears in what the look-up at turn {seen.n} returned." if seen is not None else
               f"no look-up that went through had returned, only {listed.where('answered')}." if listed is not None else
               "no look-up had returned."))


def _window(text: str, needle: str, width: int, asked: str = "") -> str | None:
    """``needle`` in ``text`` (whitespace folded) with about ``width`` characters either side, cut
    at word ends and marked with … where cut; None when absent or when a double quote inside
    would not read back exactly. Given the question (``asked``), the place whose sentence holds the
    most of its main words beyond the needle's own: a page about the answer names it everywhere,
    and the sentence that ties it to what was asked is the one to quote."""
    flat = " ".join((text or "").split())
    needle = " ".join(needle.split())
    low = flat.lower()
    # as words first, as text else; ASCII text without the needle in any case needs no pattern
    absent = flat.isascii() and needle.isascii() and needle.lower() not in low
    places = [] if absent else [m.start() for m in re.finditer(r"(?<!\w)" + re.escape(needle) + r"(?!\w)", flat, re.I)]
    if asked and len(places) > 1:
        wanted = set(main_words(asked)) - set(main_words(needle))
        places.sort(key=lambda at: -len(wanted & set(main_words(_sentence_at(flat, at)))))
    at = places[0] if places else low.find(needle.lower())
    if asked and at >= 0:  # the sentence that ties it to the question, whole when short
        sentence = _sentence_at(flat, at).strip()
        if len(sentence) <= _SENTENCE_SHOWN and "\"" not in sentence:
            begin = flat.find(sentence)
            return f"{'…' if begin > 0 else ''}{sentence}{'…' if begin + len(sentence) < len(flat) else ''}"
    if at < 0:  # held with other case, marks or spacing (phrase_match): quote it as the page wrote it
        span = phrase_span(flat, needle)
        if span is None:
            return None
        at, needle = span[0], flat[span[0]:span[1]]
    start, end = max(0, at - width), min(len(flat), at + len(needle) + width)
    # a double quote would not read back inside the page's own quotes: the window stops short of it
    start = max(start, flat.rfind("\"", start, at) + 1)
    cut = flat.find("\"", at + len(needle), end)
    end = end if cut < 0 else cut
    if "\"" in flat[at:at + len(needle)]:
        return None
    if start > 0 and " " in flat[start:at] and flat[start - 1] != "\"":
        start = flat.index(" ", start) + 1
    if end < len(flat) and " " in flat[at + len(needle):end] and flat[end] != "\"":
        end = flat.rindex(" ", at + len(needle), end)
    window = flat[start:end].strip()
    return f"{'…' if start else ''}{window}{'…' if end < len(flat) else ''}"


_SENTENCE_SHOWN = 220  # characters of a page's sentence quoted whole beside a right answer


def _sentence_at(flat: str, at: int) -> str:
    """The sentence of ``flat`` holding the place ``at``."""
    start = max(flat.rfind(". ", 0, at), flat.rfind("! ", 0, at), flat.rfind("? ", 0, at)) + 1
    ends = [i for i in (flat.find(". ", at), flat.find("! ", at), flat.find("? ", at)) if i >= 0]
    return flat[start:min(ends) + 1 if ends else len(flat)]


def answer_context(r: Reading, c: Call, width: int = 90) -> list[str]:
    """For a final answer judged wrong whose expected answer a look-up had returned: the words
    around it in that look-up's answer, quoted exactly, so the reader sees what the agent read
    past (the year beside a range, the full name beside a short one). When no look-up had
    returned it: the look-ups it asked, and where the answer it gave was read, if anywhere."""
    if free_form(c) is None or r.run.outcome is None or r.run.outcome.success:
        return []
    if c is not next((x for x in reversed(r.calls) if x.writes and not x.error), None):
        return []  # a click on the way (a product, an option) is no answer: the notes go with the last one
    gold = expected_answer(r)
    seen = (named_source(r, gold, c) or answer_seen_in(r, gold, c)) if gold else None
    if seen is None:
        return asked_note(r, c.n) + given_answer_note(r, c, width)
    window = _window(seen.turn.result, gold, width)
    if window is None:
        return []
    return [f"What {seen.name} returned at turn {seen.n} holds it: \"{window}\""]


def given_answer_note(r: Reading, c: Call, width: int = 90) -> list[str]:
    """Where the text of the answer that ended the run appeared last before it, quoted exactly:
    on a success the look-up that held it, on a failure the page the agent took a wrong one from."""
    found = answer_source(r, c, width)
    if found is None:
        return []
    kind, where, window = found
    given = " ".join(str(c.turn.arguments).split())
    if kind == "look-up":
        # a look-up that searched the answer itself holds it by being found with it: said so, or the
        # reader takes the page for where the answer was read (Search[Sony] returns the page on Sony)
        asked = " ".join(str(where.turn.arguments or "").split())
        bare = TITLE_KIND.sub("", asked.rstrip())  # "Love and Theft (duo)": the name, its kind aside
        own = (f", a look-up that searched the answer itself ({where.name}[{asked}])"
               if words_of(given).strip() and words_of(given) == words_of(bare) else "")
        return [f"The answer it gave, {json.dumps(given)}, appears in what {where.name} returned at turn {where.n}{own}: "
                f"\"{window}\""]
    if kind == "error":
        opened = searched_listed(r, c, where.n)
        if opened is not None:
            sent = clip(str(opened[0].turn.arguments), 60)
            return [f"The answer it gave, {json.dumps(given, ensure_ascii=False)}, is a name the error {where.name} "
                    f"returned at turn {where.n} listed (\"{window}\"); {opened[0].name}[{sent}] at turn "
                    f"{opened[0].n} went through, and its answer names \"{opened[1]}\"."]
        return [f"The answer it gave, {json.dumps(given)}, appears in no look-up that went through, only in the error "
                f"{where.name} returned at turn {where.n}: \"{window}\""]
    return [f"The answer it gave, {json.dumps(given)}, appears in the user message at turn {where.turn}, not in any "
            f"look-up: \"{window}\""]


def searched_listed(r: Reading, c: Call, listed_at: int) -> tuple[Call, str] | None:
    """(the look-up, the name) when, after the error at ``listed_at`` listed the answer ``c`` gave,
    a look-up sent that name (its kind in brackets aside, on either), went through, and its answer
    names it ("Godspell" of "Godspell (film)"; a person with a middle name between): the answer is
    the name of what the run opened, though no look-up's text held it as written."""
    given = " ".join(str(c.turn.arguments).split())
    bare = TITLE_KIND.sub("", given).strip()
    needle = words_of(bare).strip()
    if not needle:
        return None
    found = next((x for x in r.calls if listed_at < x.n < c.n and not x.error and not x.writes and x.turn.result
                  and TITLE_KIND.sub("", " ".join(str(x.turn.arguments or "").split())).strip() == bare), None)
    if found is None:
        return None
    if needle in observation_words(r, found):
        return found, bare
    span = name_with_middle(found.turn.result, bare)  # a person's page writes the middle name: "Justin Matthew Turner"
    return (found, span) if span else None


def answer_source(r: Reading, c: Call, width: int = 90):
    """Where the text of the run's answer appeared last before it: ("look-up", call, words around
    it) for a look-up that went through, ("error", call, …) for an error's list of near names
    only, ("user", turn, …) for the task text only; None when nowhere, or for an answer of one
    lower-case word, which occurs in most pages by chance."""
    given = " ".join(str(c.turn.arguments).split())
    if len(given.split()) < 2 and not any(ch.isdigit() or ch.isupper() for ch in given):
        return None
    if not gives_answer(r, c) or c is not next((x for x in reversed(r.calls) if x.writes and not x.error), None):
        return None
    needle = given.lower()
    phrase = words_of(given)  # the answer's words: a text holding them with other marks between holds it too
    first = phrase.split(" ", 2)[1] if phrase.strip() else needle
    words = None  # compiled only once some answer holds the text at all

    def holds(result: str, result_words=None) -> bool:
        nonlocal words
        if result.isascii() and first.isascii() and first not in result.lower():
            return False  # its first word is nowhere in the answer: the answer is not folded
        low = " ".join(result.split()).lower()
        if needle in low:
            if words is None:
                words = re.compile(r"(?<!\w)" + re.escape(needle) + r"(?!\w)")
            if words.search(low) is not None:
                return True
        # written otherwise ("Washington–Grizzly" for "Washington-Grizzly"): the same words in a row
        return phrase.strip() != "" and phrase in (result_words() if result_words else words_of(result))

    source = next((x for x in reversed(r.calls) if x.n < c.n and not x.error and not x.writes
                   and holds(x.turn.result or "", lambda x=x: observation_words(r, x))
                   and _window(x.turn.result, given, width)), None)
    if source is not None:
        return "look-up", source, _window(source.turn.result, given, width)
    # no look-up that went through showed it: an error's list of near names may have (a name taken
    # from a "Similar: [...]" list, never opened)
    offered = next((x for x in reversed(r.calls) if x.n < c.n and x.error and not x.writes
                    and holds(x.turn.result or "") and _window(x.turn.result, given, width)), None)
    if offered is not None:
        return "error", offered, _window(offered.turn.result, given, width)
    # no look-up showed it: the task text may (a retry's notes on an earlier, wrong attempt)
    said = next((t for t in reversed(r.run.turns) if t.turn < c.n and t.type == "message" and t.role == "user"
                 and holds(t.content or "") and _window(t.content, given, width)),
                None)
    return None if said is None else ("user", said, _window(said.content, given, width))


def asked_note(r: Reading, before: int) -> list[str]:
    """The free-text look-ups a run sent before turn ``before``, in its own words and order (first
    time each): the query shapes a reader compares with those that found an answer."""
    asked = list(dict.fromkeys(f"{c.name}[{clip(' '.join(c.turn.arguments.split()), 60)}]" for c in r.calls
                               if c.n < before and not c.writes and free_form(c) is not None))
    if not asked:
        return []
    return [f"Its look-ups before it asked: {join(asked, 6)}."]


REASON_WIDTH = 300


def reason_note(r: Reading, c: Call, width: int = REASON_WIDTH) -> list[str]:
    """What the agent wrote about a change before making it, quoted from the start: the call's own
    reasoning when the log keeps one, else its last message since its previous call (the plan it
    put to the user, the rule it cited). It is the why of the call in the agent's own words, and
    what a reader compares with the observation the call rests on."""
    if (c.turn.reasoning or "").strip():
        return [f"The agent wrote with this call (turn {c.n}): \"{clip_words(c.turn.reasoning, width)}\""]
    previous = max((x.n for x in r.calls if x.n < c.n), default=-1)
    harness = {t.turn for t in r.harness}
    said = next((t for t in reversed(r.run.turns) if previous < t.turn < c.n and t.type == "message"
                 and t.role == "assistant" and (t.content or "").strip() and t.turn not in harness), None)
    if said is None:
        return []
    return [f"The agent's last message before it (turn {said.turn}): \"{clip_words(said.content, width)}\""]
