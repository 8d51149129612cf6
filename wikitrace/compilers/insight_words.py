"""What the insights read from a run: where each argument of a call came from, how a
later call differed from a failed one, a final free-form answer and the answer the task
expected (when the log records one). Values of one episode are masked (text.generic);
double quotes inside a quote become single ones.
"""

from __future__ import annotations

import re

from functools import lru_cache

from .arguments import asks_a_thing, is_verdict, wrong_kind, yes_or_no
from .changes import edit_of
from .phrase_match import observation_words, words_of
from .reading import Call, Reading, _occurs, is_command_line, leaves
from .text import clip, folded_words, generic

# A call that hands the conversation to a person: its failure is about *whether* to hand
# off, never about its arguments.
_HAND_OFF = re.compile(r"transfer|hand_?off|escalat|human|operator", re.I)


def is_hand_off(call: Call) -> bool:
    return hands_off(call.name)


@lru_cache(maxsize=1024)
def hands_off(name: str) -> bool:
    """Per tool name, not per call: asked of every change many times a run."""
    return bool(_HAND_OFF.search(name))


_TOP_KEY = re.compile(r"[^.\[]*")


def top_key(path: str) -> str:
    """The first step of an argument's path (``passengers`` of ``passengers[0].name``)."""
    return _TOP_KEY.match(path).group()


def join(items: list[str], limit: int = 4) -> str:
    items = list(dict.fromkeys(items))
    if not items:
        return ""
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
    harness's ``Finish[..]``), or the task asks a question and no free-text write follows the
    call. A click on a button, a move or a command ends a task that asks nothing with none of
    these, and is never worded as an answer."""
    text = str(c.turn.arguments or "").strip()
    if not text:
        return False
    if expected_answer(r) is not None or any(t.type == "answer" and t.turn > c.n and (t.content or "").strip() == text
                                             for t in r.run.turns):
        return True
    asked = (r.run.task.instruction or "").strip()
    asking = asks_a_thing(asked)  # "which" inside a request ("shoes which fit") asks nothing
    return (asked.endswith("?") or (asking is not None and asking.start() == 0)) and not any(
        w.writes and w.n > c.n and free_form(w) is not None for w in r.calls)


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
        # one of the names a list of choices gives, not a part of one (named_by, as the retry's pattern counts it)
        return f"as {shown}" + (", a name the error listed" if named_by(listed, x, y.strip()) else "")
    return "with the same arguments, later"


def expected_answer(r: Reading) -> str | None:
    """The answer the task expected, when the log records it (a QA log's gold answer)."""
    gold = (r.run.task.metadata or {}).get("gold_answer")
    return gold.strip() if isinstance(gold, str) and gold.strip() else None


def answer_seen_in(r: Reading, gold: str, before: Call | None = None, after: int = -1) -> Call | None:
    """The first call (before ``before``, when given, and after turn ``after``) whose observation holds
    the expected answer: as written, or word for word with case, punctuation and spacing set aside
    (phrase_match). None for a yes or a no, which no look-up returns."""
    if yes_or_no(gold):
        return None
    needle = words_of(gold)
    if not needle.strip():
        needle = ""
    return next((c for c in r.calls if (before is None or c.n < before.n) and c.n > after and not c.error
                 and c.turn.result and (_occurs(gold, c.turn.result.lower())
                                        or needle and needle in observation_words(r, c))), None)


def followed(r: Reading, c: Call) -> Call | None:
    """For a free-text look-up whose words beyond the task text all appear in one earlier answer,
    the latest such answer's call (the run searched a name a page had shown); else None."""
    if free_form(c) is None:
        return None
    task = set(folded_words(r.run.task.instruction or ""))
    new = set(folded_words(str(c.turn.arguments))) - task
    if not new:
        return None
    # a page that came back for a search of those very words holds them by being found with them: the
    # name was taken from an earlier page (Search[Creed] returned the article on creeds, and the name
    # "Creed (band)" came from the page before, on the singer of the band Creed)
    return next((x for x in reversed(r.calls) if x.n < c.n and not x.error and x.turn.result
                 and new <= _answer_words(r, x) and not new <= set(folded_words(str(x.turn.arguments)))), None)


def led_nowhere(r: Reading, c: Call) -> bool:
    """A free-text look-up that went through and that nothing later drew on: no later query or
    answer holds words of this page beyond the task text, nor stands in it whole ("1978"). A
    listed name searched this way got past the error and found a page the run then left: a dead
    end, not progress."""
    if free_form(c) is None or c.error or not c.turn.result:
        return False
    task = set(folded_words(r.run.task.instruction or ""))
    page, low = _answer_words(r, c), c.turn.result.lower()
    for x in r.calls:
        if x.n <= c.n or not isinstance(x.turn.arguments, str) or not x.turn.arguments.strip():
            continue
        new = set(folded_words(x.turn.arguments)) - task
        if (new and new & page) or _occurs(x.turn.arguments.strip().lower(), low):
            return False
    return True


def _answer_words(r: Reading, c: Call) -> set[str]:
    """The words of a call's answer, read once per run (every later look-up asks)."""
    key = f"answer-words:{c.n}"
    if key not in r.memo:
        r.memo[key] = set(folded_words(c.turn.result or ""))
    return r.memo[key]


# an item of a bracketed list of quoted names, as an error prints its choices (["A", 'B'])
_LIST_ITEM = re.compile(r"""(?<=[\[,])\s*(?:'([^']*)'|"([^"]*)")\s*(?=[,\]])""")


_DASHES = str.maketrans({c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"})


def name_form(text: str) -> str:
    """A name as a list and a query are compared: lower case, spacing folded, every dash a hyphen
    (a wiki lists "Russia\u2013United Kingdom relations"; an agent types a hyphen)."""
    return " ".join(text.lower().translate(_DASHES).split())


@lru_cache(maxsize=256)
def listed_items(text: str) -> frozenset[str]:
    """The names a text lists in brackets, as name_form writes them; empty when it lists none."""
    return frozenset(name_form(a or b) for a, b in _LIST_ITEM.findall(text))


def named_by(listed: str, before, after) -> bool:
    """Whether the value a retry sent holds something the error's text named that the failed
    call did not send: the whole value, or one of its scalars (an amount, an id in a list)."""
    if after is None or not str(after):
        return False
    if not isinstance(after, (dict, list)):
        items = listed_items(listed)
        if items:  # the error lists its choices: a value is named when it is one of them, not part of one
            return name_form(str(after)) in items
        return str(after).lower() in listed
    old = {str(v).lower() for _p, v in leaves(before)}
    new = {str(v).lower() for _p, v in leaves(after)} - old
    # a value not in the text at all needs no pattern compiled for it
    return any(len(v) > 1 and v in listed and re.search(rf"(?<![\w.]){re.escape(v)}(?![\w])", listed)
               for v in new)


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
    said = set(folded_words(str(w.turn.arguments)))
    wanted = set(folded_words(gold))
    if said and wanted and said != wanted and said < wanted:
        return "partial"
    if said and wanted and said != wanted and wanted < said:
        return "extra"
    if _same_words_but_endings(folded_words(str(w.turn.arguments)), folded_words(gold)):
        return "form"
    if wrong_kind(r, str(w.turn.arguments)) is not None and not yes_or_no(gold):
        return "kind"
    given = " ".join(str(w.turn.arguments).split())
    if given and not yes_or_no(given) and _occurs(given.lower(), (r.run.task.instruction or "").lower()):
        return "restated"  # the question gave these words to point at the thing asked, which they are not
    return "misread" if answer_seen_in(r, gold, w) is not None else "not-found"


def _same_words_but_endings(said: list[str], wanted: list[str]) -> bool:
    """The answer is the expected one written with other word endings ("authors" for "author"):
    word for word, one word starts with the other, and at least one pair differs."""
    return len(said) == len(wanted) > 0 and said != wanted and all(
        a.startswith(b) or b.startswith(a) for a, b in zip(said, wanted)) and all(
        min(len(a), len(b)) >= 3 for a, b in zip(said, wanted) if a != b)


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
    "form": ("Give {t} the answer with the word endings the look-up wrote",
             "When a look-up wrote the answer, give it to {t} with each word ending as written there (singular or "
             "plural, the same form of the word): the right words in another form were judged wrong"),
    "kind": ("Give {t} the thing the question asks for, not yes or no",
             "When the question asks for a thing (what, which, who, when, how many), answer with {t} naming that "
             "thing as a look-up gave it: a name, a date, a number; yes or no answers another question"),
    "restated": ("Give {t} the thing the question asks for, not words the question already states",
                 "When the answer you are about to give stands in the question itself (a name, a date, a place it "
                 "mentions) and is not one of options it asks you to choose between, it is the clue, not the answer: "
                 "find what the question asks about it (the band that person came from, the event that date belongs "
                 "to) and answer with {t} naming that"),
    "misread": ("Read what the look-ups returned for exactly what is asked before {t}",
                "When a look-up has already returned the answer, read it for exactly what the request asks (the "
                "fact asked for, not a related name or date next to it), and give it with {t} in the words that "
                "look-up used for it, not a paraphrase"),
    "reflected": ("Before giving {t} a name a reflection holds, check it against a look-up",
                  "A name a reflection on an earlier attempt holds is often the guess that attempt failed on: a "
                  "retry that gives {t} the same name with no new look-up behind it repeats the failed attempt. "
                  "Look up what the reflection says was assumed, and answer with another name when the look-up "
                  "does not bear it out"),
    # the runs here gave a value some look-up returned, just not the one asked for: "returned the answer"
    # would read as what they did
    "not-found": ("Answer with {t} only once a look-up's text answers every part of the question",
                  "While no look-up's text answers every part of the question, keep looking instead of answering "
                  "with {t}: look up each name the request gives, and search again with other words when an answer "
                  "does not hold it"),
    "unsettled": ("Check every part of the request before the {t} that ends the run",
                  "Before the {t} that ends the run, check each part of the request against what the look-ups "
                  "returned, and look further for any part they do not show yet"),
}


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
