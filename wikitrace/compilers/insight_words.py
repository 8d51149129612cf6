"""What the insights read from a run: where each argument of a call came from, how a
later call differed from a failed one, a final free-form answer and the answer the task
expected (when the log records one). Values of one episode are masked (text.generic);
double quotes inside a quote become single ones.
"""

from __future__ import annotations

import re

from dataclasses import dataclass
from functools import lru_cache

from .arguments import _NOT_JSON, _as_text, _last_key, _parsed, check_arguments, is_label, is_verdict  # noqa: F401
from .changes import edit_of
from .json_fields import fields_at_depth
from .reading import Call, Reading, _occurs, is_command_line, leaves, t_is_user
from .text import clip, generic
from .user_picks import singled_out

# A call that hands the conversation to a person: its failure is about *whether* to hand
# off, never about its arguments.
_HAND_OFF = re.compile(r"transfer|hand_?off|escalat|human|operator", re.I)


def is_hand_off(call: Call) -> bool:
    return bool(_HAND_OFF.search(call.name))


def top_key(path: str) -> str:
    return re.split(r"[.\[]", path, maxsplit=1)[0]


def sources(r: Reading, call: Call) -> tuple[dict[str, list[str]], list[str], list[str]]:
    """Which earlier tool showed each top-level argument, which came from the user, and the
    argument paths no earlier turn showed (a key with any such part is listed only there)."""
    by_turn = {c.n: c.name for c in r.calls}
    checks = check_arguments(r, call.turn)
    unseen = list(dict.fromkeys(a.path for a in checks if a.unsourced))
    doubtful = {top_key(a.path) for a in checks if a.seen_at is None}  # unsourced, or held where no source is told
    from_tool: dict[str, list[str]] = {}
    from_user: list[str] = []
    placed: set[str] = set()  # a key whose parts came from several places is named with its first
    for a in checks:
        key = top_key(a.path)
        if a.seen_at is None or key in doubtful or key in placed:
            continue
        placed.add(key)
        if a.seen_in == "user message":
            from_user.append(key)
        elif a.seen_in == "earlier call":
            from_tool.setdefault(f"the earlier {by_turn.get(a.seen_at, 'tool')} call", []).append(key)
        else:
            from_tool.setdefault(by_turn.get(a.seen_at, "a look-up"), []).append(key)
    dedup = lambda xs: list(dict.fromkeys(xs))  # noqa: E731
    return {t: dedup(k) for t, k in from_tool.items()}, dedup(from_user), unseen


def join(items: list[str], limit: int = 4) -> str:
    items = list(dict.fromkeys(items))
    shown = items[:limit] + ([f"{len(items) - limit} more"] if len(items) > limit else [])
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]






def free_form(w: Call) -> str | None:
    """The call's only argument when it is a plain string (an answer, a query), values masked."""
    args = w.turn.arguments
    if not isinstance(args, str) or not args.strip() or is_command_line(w.turn):
        return None
    return clip(generic(args.strip()), 80).replace('"', "'")


def gives_answer(r: Reading, c: Call) -> bool:
    """Whether the run's last free-text call is its answer: the task records the answer it
    expected, or the log records an answer turn after the call holding that text (a QA
    harness's ``Finish[..]``). A click on a button, a move or a command ends a run with
    neither, and is never worded as an answer."""
    text = str(c.turn.arguments or "").strip()
    if not text:
        return False
    return expected_answer(r) is not None or any(t.type == "answer" and t.turn > c.n and (t.content or "").strip() == text
                                                 for t in r.run.turns)


def what_changed(err: Call, fix: Call) -> str:
    """How a later call that went through differed from a failed one, in a phrase:
    "with reason changed", "with payment_id taken from what the error listed",
    "as Search[Nick Park], a name the error listed"."""
    x, y = err.turn.arguments, fix.turn.arguments
    listed = (err.turn.result or "").lower()
    if isinstance(x, dict) and isinstance(y, dict):
        changed = [k for k in dict.fromkeys([*x, *y]) if x.get(k) != y.get(k)]
        from_error = [k for k in changed if str(y.get(k, "")) and str(y.get(k)).lower() in listed]
        if from_error:
            return f"with {join(from_error)} taken from what the error listed"
        return f"with {join(changed)} changed" if changed else "with the same arguments, later"
    if isinstance(y, str) and y.strip() and y != x:
        shown = f"{fix.name}[{clip(generic(y.strip()), 60)}]".replace('"', "'")
        return f"as {shown}" + (", a name the error listed" if y.strip().lower() in listed else "")
    return "with the same arguments, later"


def expected_answer(r: Reading) -> str | None:
    """The answer the task expected, when the log records it (a QA log's gold answer)."""
    gold = (r.run.task.metadata or {}).get("gold_answer")
    return gold.strip() if isinstance(gold, str) and gold.strip() else None


def answer_seen_in(r: Reading, gold: str, before: Call | None = None) -> Call | None:
    """The first call (before ``before``, when given) whose observation holds the expected answer."""
    return next((c for c in r.calls if (before is None or c.n < before.n) and not c.error and c.turn.result
                 and _occurs(gold, c.turn.result.lower())), None)


_WORD = re.compile(r"\w+")


def followed(r: Reading, c: Call) -> Call | None:
    """For a free-text look-up whose words beyond the task text all appear in one earlier answer,
    the latest such answer's call (the run searched a name a page had shown); else None."""
    if free_form(c) is None:
        return None
    task = set(_WORD.findall((r.run.task.instruction or "").casefold()))
    new = set(_WORD.findall(str(c.turn.arguments).casefold())) - task
    if not new:
        return None
    return next((x for x in reversed(r.calls) if x.n < c.n and not x.error and x.turn.result
                 and new <= _answer_words(r, x)), None)


def _answer_words(r: Reading, c: Call) -> set[str]:
    """The words of a call's answer, read once per run (every later look-up asks)."""
    key = f"answer-words:{c.n}"
    if key not in r.memo:
        r.memo[key] = set(_WORD.findall((c.turn.result or "").casefold()))
    return r.memo[key]


def named_by(listed: str, before, after) -> bool:
    """Whether the value a retry sent holds something the error's text named that the failed
    call did not send: the whole value, or one of its scalars (an amount, an id in a list)."""
    if after is None or not str(after):
        return False
    if not isinstance(after, (dict, list)):
        return str(after).lower() in listed
    old = {str(v).lower() for _p, v in leaves(before)}
    new = {str(v).lower() for _p, v in leaves(after)} - old
    return any(len(v) > 1 and re.search(rf"(?<![\w.]){re.escape(v)}(?![\w])", listed) for v in new)


def sums_to_named(listed: str, value) -> bool:
    """Whether a list or mapping of two or more numbers adds up to a number the error's text
    names (a total the parts must match)."""
    if not isinstance(value, (dict, list)):
        return False
    numbers = [v for _p, v in leaves(value) if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(numbers) < 2:
        return False
    total = round(sum(numbers), 2)
    named = {float(m) for m in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])", listed)}
    return total in named



def edited_files(r: Reading, calls: list[Call]) -> str:
    """The files the run's changes touched, as the edit or its echo names them (``changes.edit_of``):
    not every path-like word of a command, which would name the test file a ``pytest`` call only
    ran, or a URL inside the text an edit wrote."""
    paths = [e.file for c in calls if (e := edit_of(c.turn)) is not None]
    return join(list(dict.fromkeys(paths)), 3) if paths else ""


def packed_calls(c: Call) -> int:
    """How many calls of its own tool a plain-string argument holds, written as the text-action
    form does (``Name[...]``): ``A], Search[B`` sent as one Search is two."""
    args = c.turn.arguments
    if not isinstance(args, str) or not c.name:
        return 0
    joins = re.findall(rf"[\])]\s*[,;]?\s*(?:and\s+|then\s+)?{re.escape(c.name)}\s*[\[(]", args)
    return len(joins) + 1 if joins else 0



def clip_words(text: str, limit: int) -> str:
    """``text`` whitespace-folded, cut at a word boundary when longer than ``limit``: a quote
    never ends inside a word."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0].rstrip(",;:(")
    return cut + " …"


_ASIDE = re.compile(r"\s*\([^()]*\)")


def rule_title(sentence: str, longest: int = 120) -> str:
    """The rule without its asides in parentheses (lists of examples), cut at a word when still
    long: a title says what the rule asks, not a quote cut mid-list."""
    return clip_words(_ASIDE.sub("", sentence).rstrip(" ."), longest)



def why_wrong(r: Reading, w: Call) -> str:
    gold = expected_answer(r)
    if not gold:
        return "unsettled"
    if is_verdict(r, gold):
        return "verdict"
    if _occurs(gold, (r.run.task.instruction or "").lower()):
        return "option"
    said = set(re.findall(r"\w+", str(w.turn.arguments).casefold()))
    wanted = set(re.findall(r"\w+", gold.casefold()))
    if said and wanted and said != wanted and said < wanted:
        return "partial"
    if said and wanted and said != wanted and wanted < said:
        return "extra"
    return "misread" if answer_seen_in(r, gold, w) is not None else "not-found"


# why a final answer was judged wrong -> (title, what to do), each naming the answering tool {t}
WHY_WRONG = {
    "verdict": ("Check every part of a claim before a {t} verdict",
                "Before a {t} verdict, check each part of the claim against what the look-ups returned: one "
                "unsupported part changes the verdict"),
    "option": ("Compare the named options on what is asked before {t}",
               "When the request names the options, look each one up and compare them on exactly what it asks "
               "before {t}"),
    "partial": ("Give {t} the full name or phrase, not a part of it",
                "Answer with {t} in the full form the observations give (the whole name or phrase), not a part of it"),
    "extra": ("Give {t} just what is asked",
              "Answer with {t} giving just what the request asks, without the words around it"),
    "misread": ("Read what the look-ups returned for exactly what is asked before {t}",
                "When a look-up has already returned the answer, read it for exactly what the request asks (the "
                "fact asked for, not a related one next to it), and give it with {t} in the words that look-up used "
                "for it (its own term, singular or plural as written), not a paraphrase"),
    "not-found": ("Answer with {t} only once a look-up has returned the answer",
                  "While no look-up has returned the answer, keep looking instead of answering with {t}: look up "
                  "each name the request gives, and search again with other words when an answer does not hold it"),
    "unsettled": ("Check every part of the request before the {t} that ends the run",
                  "Before the {t} that ends the run, check each part of the request against what the look-ups "
                  "returned, and look further for any part they do not show yet"),
}


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")


_ISO_DATE = re.compile(r"\d{4}-(\d{2})-(\d{2})")


def _spoken_forms(text: str) -> list[str]:
    """The value as a user may have written it, lower case: itself, and for an ISO date its
    month-name and slashed forms ("may 25", "25 may", "5/25")."""
    forms = [text.lower()]
    m = _ISO_DATE.fullmatch(text)
    if m and 1 <= int(m.group(1)) <= 12:
        month, day = _MONTHS[int(m.group(1)) - 1], int(m.group(2))
        forms += [f"{month} {day}", f"{day} {month}", f"{int(m.group(1))}/{day}", f"{m.group(1)}/{m.group(2)}"]
    return forms


@dataclass
class Pick:
    """An argument value a change took among several one earlier answer gave the same field."""

    path: str  # the argument's path in the call
    value: str
    source: Call  # the answer that listed it
    field: str  # the answer's field that held it
    values: list[str]  # every value the answer gave that field, this one included
    described: str | None = None  # how the user's words single out its record, when they do


def _fields_at_depth(text: str) -> list[tuple[str, int, object, str]]:
    """(field, nesting depth, scalar, the path of the record holding it) for every scalar of a
    JSON answer: values of one field at one depth are the items of one listing (a reservation's
    own origin is not one of its flights' origins)."""
    data = _parsed(text)
    if data is _NOT_JSON:
        return []
    return [(_last_key(path), path.count(".") + path.count("["), v, _LAST_STEP.sub("", path))
            for path, v in leaves(data)]


_LAST_STEP = re.compile(r"(?:\.[^.\[]*|\[\d+\])$")


class _FieldsIndex:
    """``_fields_at_depth`` of one answer, looked up by value instead of scanned per value.

    Only the places holding each value are indexed up front; a field's listing and a
    record's names are gathered when first asked for: a change asks about one or two
    values of an answer that may hold hundreds (a flight search)."""

    def __init__(self, places: list[tuple[str, int, object, str]]):
        self.places = places
        self.holding: dict[str, list[tuple[str, int, str]]] = {}  # a scalar's text -> (field, depth, record path) of each place
        self._listings: dict[tuple[str, int], list[str]] = {}
        self._names: dict[str, list[str]] = {}
        for k, d, v, home in places:
            self.holding.setdefault(v if type(v) is str else _as_text(v), []).append((k, d, home))

    def listing(self, field: str, depth: int) -> list[str]:
        """The distinct non-empty values of ``field`` at ``depth``, in order."""
        key = (field, depth)
        found = self._listings.get(key)
        if found is None:
            found = self._listings[key] = list(dict.fromkeys(
                v if type(v) is str else _as_text(v) for k, d, v, _h in self.places
                if k == field and d == depth and v not in (None, "")))
        return found

    def names(self, home: str) -> list[str]:
        """The string scalars of 3 characters or more of the record at ``home``."""
        found = self._names.get(home)
        if found is None:
            found = self._names[home] = [v for _k, _d, v, h in self.places
                                         if h == home and isinstance(v, str) and len(v) >= 3]
        return found


@lru_cache(maxsize=64)
def _fields_index(text: str) -> _FieldsIndex:
    """Built once per answer text: a run's changes ask about the same few answers."""
    data = _parsed(text)
    places = [] if data is _NOT_JSON else fields_at_depth(data)  # the same tuples, in one walk
    return _FieldsIndex(_fields_at_depth(text) if places is None else places)


def _ids(node) -> dict[str, str]:
    """The ids an object names at its top level: its plain text fields whose key names an id
    (``id``, ``reservation_id``)."""
    if not isinstance(node, dict):
        return {}
    return {k: v for k, v in node.items() if isinstance(v, str) and (k.lower() in ("id", "_id") or k.lower().endswith("_id") or k.endswith("Id"))}


def _other_record(mine: dict[str, str], look_up) -> bool:
    """Whether a look-up was about another record than the change: it was sent, or its answer
    holds at its top level, an id the change sends under the same key with another value."""
    if not mine:
        return False
    theirs = _look_up_ids(look_up.result or "", tuple(sorted(_ids(look_up.arguments).items())))
    return any(k in theirs and theirs[k] != v for k, v in mine.items())


@lru_cache(maxsize=512)
def _look_up_ids(result: str, sent: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """The ids a look-up is about: those its answer holds at its top level, and those it was sent
    (once per answer: every change of a run asks about the same look-ups)."""
    answer = _parsed(result)
    return {**(_ids(answer) if isinstance(answer, dict) else {}), **dict(sent)}


def picked(r: Reading, c: Call) -> list[Pick]:
    """The argument values of a change the agent picked among several that one earlier answer
    gave the same field, sending none of the others (a field whose other values the call sent
    too is a set it kept), when no user message before the call holds the value in any form a
    user writes it, nor another name of the record it sits in (a saved passenger the user named,
    a card by its brand). An answer that also states the value as a field's only value (a
    reservation's own origin beside its flights' origins) is no listing of it, and a value whose
    record the user's words single out among the listed ones' (``user_picks.singled_out``) is the
    user's pick. The listing named is the first that showed the value, where the agent could
    have learned it. The log proves only that the agent chose it among others unasked."""
    key = f"picked:{c.n}"
    if key in r.memo:
        return r.memo[key]
    out: list[Pick] = []
    described: list[Pick] = []  # the same, where the user's words single out the value's record
    said = [r.lower(t) for t in r.facts if t.turn < c.n and t_is_user(t)]
    answers = [t for t in r.facts if t.turn < c.n and t.type == "function_call"]
    sent = {_as_text(v) for _p, v in leaves(c.turn.arguments)}
    by_turn = {x.n: x for x in r.calls}
    heard: dict[str, bool] = {}  # a record's names are asked about once per value, not once per argument
    mine = _ids(c.turn.arguments)

    def told(v: str) -> bool:
        hit = heard.get(v)
        if hit is None:
            hit = heard[v] = any(f in u for f in _spoken_forms(v) for u in said)
        return hit

    for a in check_arguments(r, c.turn):
        text = _as_text(a.value)
        if a.seen_at is None or len(text) < 3 or told(text):
            continue
        low = text.lower()
        key, number = _last_key(a.path), isinstance(a.value, (int, float)) or text.replace(".", "", 1).isdigit()
        for t in answers:
            if low not in r.lower(t):
                continue  # cheap: an answer whose text lacks the value holds no listing of it
            if _other_record(mine, t):
                continue  # another reservation's look-up: its values are not the ones this call refers to
            fields = _fields_index(t.result or "")
            holding = fields.holding.get(text)
            if holding and number:  # a number means what its field says: a price is no balance
                holding = [h for h in holding if h[0] == key]
            if not holding:
                continue
            listings = {(k, d): fields.listing(k, d) for k, d, _h in holding}
            homes = {h for _k, _d, h in holding}
            named = any(v != text and told(v) for h in homes for v in fields.names(h))
            if named:
                break  # the user named the record it sits in
            if any(len(v) < 2 for v in listings.values()):
                continue  # this answer states it as a field's only value: an earlier listing may hold the choice
            choice = next(((k, d) for (k, d), values in sorted(listings.items())
                           if not sent & (set(values) - {text})), None)
            if choice is not None and t.turn in by_turn:
                pick = Pick(a.path, text, by_turn[t.turn], choice[0], list(listings[choice]))
                pick.described = singled_out(r, c.n, text, listings[choice])
                (described if pick.described else out).append(pick)
            break
    r.memo[key] = out
    r.memo[f"described:{c.n}"] = described
    return out


def user_described(r: Reading, c: Call) -> list[Pick]:
    """The values ``picked`` would name but for the user's words, which single out their records."""
    picked(r, c)
    return r.memo[f"described:{c.n}"]


def report_message(r: Reading):
    """The agent's message that reported what its look-ups found: the first it wrote after its
    last call (later ones answer thanks and goodbyes), or its last message when it called nothing."""
    texts = [t for t in r.run.turns if t not in r.harness and t.type == "message" and t.role == "assistant"
             and isinstance(t.content, str) and t.content.strip()]
    after = r.calls[-1].n if r.calls else None
    return next((t for t in texts if t.turn > after), None) if after is not None else (texts[-1] if texts else None)


def last_said(r: Reading, limit: int = 100) -> str:
    """``; it told the user (turn N): "…"``: the agent's report after its last call, clipped, when a
    person answered it in this log (a run that changed nothing is read by how it ended)."""
    said = report_message(r) if r.has_interlocutor else None
    return "" if said is None else f"; it told the user (turn {said.turn}): \"{clip(' '.join(said.content.split()), limit)}\""
