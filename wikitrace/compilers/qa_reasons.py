"""In-short facts that give a QA run's deciding fact as advice, for logs whose calls send plain
text and end with an answer (ReAct's ``Search[..]`` / ``Lookup[..]`` / ``Finish[..]``, whatever
the question set):

- an answer the run's own earlier reflection already names (Reflexion hands a retry the lessons
  of its failed attempts at turn 0), given again: quoted with the turn; and the expected answer
  a reflection already names, not given;
- an answer that differs from the expected one by words added or dropped, where the page about
  the thing opens with the expected form: the page's opening is quoted as the form to give;
- look-ups that never went through because each sent a description (question words joined to
  lower-case words) rather than a page's name, with nothing the errors listed tried;
- on a success, the look-up that returned the answer and where its query came from (the
  question, a page before it, an error's list), said as what to do.

Each is checked against the turns it names; anything unsure yields nothing.
"""

from __future__ import annotations

import re

from .answer_case import window
from .insight_words import expected_answer, followed, join, packed_calls
from .near_words import main_words
from .named_source import named_source
from .page_notes import listed_names
from .phrase_match import name_with_middle
from .reading import Call, Reading, _occurs
from .schema import KeyFact
from .text import TITLE_KIND, clip_words, folded_words

_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")


def _flat(text: str) -> str:
    return " ".join(str(text or "").split())


def _holds(text: str, needle: str) -> bool:
    """``needle`` as whole words of ``text``, case and spacing folded."""
    return _occurs(_flat(needle).casefold(), _flat(text).casefold())


def _sent(c: Call) -> str:
    return f"{c.name}[{clip_words(_flat(c.turn.arguments), 70)}]"


# --- an answer the run's own reflection already names -----------------------------------------------


def _reflections(r: Reading) -> list[str]:
    found = (r.run.task.metadata or {}).get("reflections")
    return [x for x in found if isinstance(x, str) and x.strip()] if isinstance(found, list) else []


_NAME_WORD = re.compile(r"[A-Z][\w'-]*")


def _naming_sentence(text: str, given: str) -> str | None:
    """The sentence of ``text`` that holds ``given`` as a name of its own: not part of a longer
    capitalised name ("Missouri" in "the Missouri Compromise"), the sentence cut at a stop outside
    the name ("Stone Brewing Co." keeps its full stop)."""
    flat, low = _flat(text), _flat(given).casefold()
    at = flat.casefold().find(low)
    while at >= 0:
        end = at + len(low)
        before, after = flat[:at].split()[-1:], flat[end:].split()[:1]
        whole = (at == 0 or not flat[at - 1].isalnum()) and (end == len(flat) or not flat[end].isalnum())
        joined = any(_NAME_WORD.fullmatch(w.strip(",;:\"'()")) for w in after) or (
            before and _NAME_WORD.fullmatch(before[0].strip(",;:\"'()")) and not re.search(r"[.!?]$", before[0]))
        if whole and not joined:
            starts = [m.end() for m in _SENTENCES.finditer(flat, 0, at)]
            stop = _SENTENCES.search(flat, end + 1)
            return flat[starts[-1] if starts else 0:stop.start() if stop else len(flat)].strip()
        at = flat.casefold().find(low, at + 1)
    return None


def reflected_answer(r: Reading, answer: Call) -> KeyFact | None:
    """An answer that a reflection the run was given (the task message holding it) names as whole
    words; with the look-up it came from, when that look-up's query is named in the same sentence
    (the run went back to the page the reflection was about). The run's patterns, lessons and facts
    each ask, whatever its outcome: worked out once per run (its memo)."""
    key = ("qa_reasons.reflected_answer", answer.n)
    if key not in r.memo:
        r.memo[key] = _reflected_answer(r, answer)
    return r.memo[key]


def _reflected_answer(r: Reading, answer: Call) -> KeyFact | None:
    given = _flat(answer.turn.arguments)
    reflections = _reflections(r)
    if not reflections or not main_words(given):
        return None  # a bare "no" or "yes" stands in most texts by chance
    if _holds(_flat(r.run.task.instruction or ""), given):
        return None  # the question names it too: the reflection repeating a name of the question is no tell
    gold = expected_answer(r)
    if gold and form_only(given, gold) and named_source(r, gold, answer) is not None:
        return None  # a look-up showed the expected thing by its own name: the run found it and slipped on the form
    naming = [(x, s) for x in reflections if (s := _naming_sentence(x, given))]
    if not naming:
        return None
    sentence = naming[-1][1]  # the latest reflection's: the attempt just before this one
    told = next((t for t in r.run.turns if t.turn < answer.n and t.type == "message" and t.role == "user"
                 and sentence in _flat(t.content)), None)
    if told is None:
        return None
    n, k = len(reflections), len(naming)
    who = ("The reflection" if n == 1 else f"One of the {n} reflections" if k == 1 else
           "Both reflections" if n == 2 else f"All {n} reflections" if k == n else f"{k} of the {n} reflections")
    src = next((c for c in reversed(r.calls) if c.n < answer.n and not c.error and not c.writes and c.turn.result
                and _holds(c.turn.result, given)), None)
    went_back = src is not None and isinstance(src.turn.arguments, str) and _holds(sentence, src.turn.arguments.strip(" \"'"))
    turns = [told.turn, answer.n] + ([src.n] if went_back else [])
    return KeyFact(f"{who} the run was given at turn {told.turn} already {'names' if len(naming) == 1 else 'name'} "
                   f"\"{given}\" (\"{window(sentence, given, 160)}\"), and the run answered it at turn {answer.n}"
                   + (f", from what {_sent(src)} returned at turn {src.n}, a page that sentence names" if went_back else "")
                   + ": an answer a reflection already names needs a look-up showing it answers the question "
                     "before it is given.", turns, "reflected-answer", [answer.name])


def unheeded_reflection(r: Reading, answer: Call | None) -> KeyFact | None:
    """The expected answer named, as a name of its own, by a reflection the run was given, when
    the run then answered otherwise or gave no answer: the retry had the answer in hand and let it
    go. Said with the look-up that returned it, when one did."""
    gold = expected_answer(r)
    reflections = _reflections(r)
    if not gold or not reflections or not main_words(gold) or _holds(r.run.task.instruction or "", gold):
        return None  # a name the question itself gives stands in any reflection on it: no lead
    given = _flat(answer.turn.arguments) if answer is not None else ""
    if given and (_holds(given, gold) or _holds(gold, given)):
        return None  # it gave the expected thing, in another form: the form is what failed
    naming = [s for x in reflections if (s := _naming_sentence(x, gold))]
    if not naming:
        return None
    sentence = naming[-1]
    told = next((t for t in r.run.turns if t.type == "message" and t.role == "user" and sentence in _flat(t.content)
                 and (answer is None or t.turn < answer.n)), None)
    if told is None:
        return None
    end = answer.n if answer is not None else 1 + max((c.n for c in r.calls), default=told.turn)
    seen = next((c for c in r.calls if told.turn < c.n < end and not c.error and not c.writes and c.turn.result
                 and _holds(c.turn.result, gold)), None)
    who = "A reflection" if len(reflections) > 1 else "The reflection"
    turns = [told.turn] + ([seen.n] if seen else []) + ([answer.n] if answer is not None else [])
    return KeyFact(f"{who} the run was given at turn {told.turn} already names the expected answer \"{gold}\" "
                   f"(\"{window(sentence, gold, 160)}\")"
                   + (f", and {_sent(seen)} returned it at turn {seen.n}" if seen else "")
                   + (f"; the run answered \"{clip_words(given, 80)}\" at turn {answer.n}" if answer is not None
                      else "; the run ended without an answer")
                   + ": when a reflection names a candidate answer, look it up and give it once the page shows "
                     "it meets the question's conditions.", turns, "reflection-unheeded", [])


def form_only(given: str, gold: str | None) -> bool:
    """Whether an answer names the expected thing in another form: its words hold all of the
    expected answer's and more, or only some of them (what the run found was right)."""
    said, wanted = set(folded_words(given)), set(folded_words(gold or ""))
    return bool(said) and bool(wanted) and said != wanted and (said < wanted or wanted < said)


# --- the expected form, where the page about the thing opens with it ---------------------------------


def opening_form(r: Reading, answer: Call) -> KeyFact | None:
    """A failed answer whose words hold the expected answer's and others, or only some of them,
    where a look-up before it opens with the expected answer followed by a parenthesis or a comma
    (the page about the thing, naming it first): that opening is the form to answer with."""
    gold = expected_answer(r)
    given = _flat(answer.turn.arguments)
    if not gold or not given:
        return None
    if not form_only(given, gold):
        return None
    lead = re.compile(re.escape(_flat(gold)) + r"\s*[(,]", re.IGNORECASE)
    page = next((c for c in r.calls if c.n < answer.n and not c.error and not c.writes and c.turn.result
                 and lead.match(_flat(c.turn.result))), None)
    if page is None:
        return None
    opening = _flat(page.turn.result)
    close = opening.find(")")
    shown = clip_words(opening[:close + 1] if lead.match(opening).group(0).endswith("(") and 0 < close < 160
                       else opening, 90)
    return KeyFact(f"What {_sent(page)} returned at turn {page.n} opens with the expected name (\"{shown}\"): answer "
                   f"with the name as the opening of the page about the thing writes it, no words added or dropped.",
                   [page.n, answer.n], "opening-form", [answer.name])


# --- look-ups that sent a description rather than a name --------------------------------------------


def _outside_brackets(text: str) -> str:
    return re.sub(r"\([^()]*\)", " ", text)


def _described(query: str, question_words: set[str]) -> bool:
    """A query that is a description: it holds a word of the question and a main word written in
    lower case (outside a parenthesis, where a page's name keeps its kind: "(2004 film)")."""
    bare = _outside_brackets(query.strip(" \"'"))
    lower = [w for w in re.findall(r"[^\W\d_][\w'-]*", bare) if w[0].islower() and main_words(w)]
    return bool(lower) and bool(set(main_words(bare)) & question_words)


def failed_calls(r: Reading, name: str, errs: list[Call]) -> str:
    """The failed calls a fact speaks of, named on their own (the fact comes before the errors'):
    every failed call of the tool, or those after the last of it that went through."""
    ok = [c.n for c in r.calls if c.name == name and not c.error and c.n < errs[0].n]
    after = f" after the one that went through at turn {ok[-1]}" if ok else ""
    kind = f"{name} call" if ok else f"failed {name} call"
    return (f"The {kind}{after}" if len(errs) == 1 else f"Both {kind}s{after}" if len(errs) == 2
            else f"All {len(errs)} {kind}s{after}")


def described_searches(r: Reading, name: str, errs: list[Call]) -> KeyFact | None:
    """Two or more errors of one look-up tool that no later call of it got past, each sending a
    description built on the task's words that its error echoes back as not found; said with the
    names their errors listed, when no call of the run sent any of them."""
    question = set(main_words(r.run.task.instruction or ""))
    if len(errs) < 2 or not question or any(packed_calls(e) for e in errs):
        return None
    if not all(isinstance(e.turn.arguments, str) and _described(e.turn.arguments, question)
               and _holds(e.turn.result or "", e.turn.arguments) for e in errs):
        return None  # each error must name what it looked for and found nothing ("Could not find [X]"), not refuse an act
    listed = list(dict.fromkeys(n for e in errs for n in listed_names(e.turn.result or "")))
    sent = {_flat(c.turn.arguments).casefold().strip(" \"'") for c in r.calls if isinstance(c.turn.arguments, str)}
    untried = [n for n in listed if _flat(n).casefold() not in sent]
    queries = list(dict.fromkeys(_flat(e.turn.arguments) for e in errs))
    shown = join([f"\"{clip_words(q, 60)}\"" for q in queries], 2)
    said = (f"{failed_calls(r, name, errs)} sent a phrase that mixes the task's words with lower-case ones ({shown})")
    if untried and len(untried) == len(listed):
        said += f", and no call sent a name their errors listed ({join([repr(n) for n in untried], 3)})"
    return KeyFact(said + f": send {name} one name, from the question or from an error's list, not a phrase.",
                   [e.n for e in errs[:3]], "described-search", [name])


# --- a success: the look-up that returned the answer, and where its query came from --------------------


def _origin(r: Reading, c: Call) -> tuple[str, Call | None] | None:
    """Where a look-up's query came from: the question's own words, a page an earlier look-up
    returned (its latest such call), or a name an earlier error listed; of a page and an error
    that both gave it, the one that gave it first (the Bisquick page named General Mills before
    an error listed it)."""
    if not isinstance(c.turn.arguments, str):
        return None
    words = set(folded_words(c.turn.arguments))
    if words and words <= set(folded_words(r.run.task.instruction or "")):
        return "question", None
    listed = next((x for x in reversed(r.calls) if x.n < c.n and x.error and _flat(c.turn.arguments).casefold() in {
        _flat(n).casefold() for n in listed_names(x.turn.result or "")}), None)
    page = followed(r, c)
    if page is not None and (listed is None or page.n < listed.n):
        return "page", page
    return ("listed", listed) if listed is not None else None


def what_worked(r: Reading, answer: Call) -> KeyFact | None:
    """The latest look-up before a right answer whose text holds it, and how its query was made,
    back through the pages its names came from (at most three look-ups)."""
    given = _flat(answer.turn.arguments)
    if not main_words(given):
        return None
    src = next((c for c in reversed(r.calls) if c.n < answer.n and not c.error and not c.writes and c.turn.result
                and _holds(c.turn.result, given)), None)
    if src is None or _holds(str(src.turn.arguments), given):
        return None  # a page found by the answer's own name holds it by chance: no look-up found it
    chain: list[tuple[Call, str, Call | None]] = []
    at: Call | None = src
    while at is not None and len(chain) < 3:
        origin = _origin(r, at)
        if origin is None:
            return None
        chain.append((at, *origin))
        at = origin[1] if origin[0] == "page" else None
    chain.reverse()
    if chain[0][1] == "page":
        return None  # the first look-up's own query came from a page further back: the chain is cut
    how = {"question": "a name from the question", "page": "a name the page at turn {} gave",
           "listed": "a name the error at turn {} listed"}
    plan = {"question": "search the name the question gives", "page": "search the name that page gives",
            "listed": "search a name the error's list offers"}
    steps = [f"{_sent(c)} at turn {c.n} ({how[kind].format(x.n if x else '')})" for c, kind, x in chain]
    # "that page": the look-up that held the answer, which need not be the run's last look-up
    return KeyFact(f"What worked: {', then '.join(plan[kind] for _c, kind, _x in chain)}, and answer with what that "
                   f"page says; here {', then '.join(steps)}, which returned \"{clip_words(given, 80)}\".",
                   [c.n for c, _k, _x in chain] + [answer.n], "", [answer.name])


# --- what the answer's page never showed, and what a reflection already said ------------------------

_NAME_RUN = re.compile(r"(?:[A-Z][\w'-]*|\d+(?:[.,]\d+)*)(?:[ \t]+(?:[A-Z][\w'-]*|\d+(?:[.,]\d+)*))*")


def question_names(question: str) -> list[str]:
    """The names and numbers the question gives, in its order: runs of capitalised words or
    figures, not a sentence's first word, a possessive's "'s" dropped."""
    flat = _flat(question)
    out = []
    for m in _NAME_RUN.finditer(flat):
        words = m.group(0).split()
        if not flat[:m.start()].strip() or flat[:m.start()].rstrip()[-1] in ".?!":
            words = words[1:]  # a sentence's first word is capitalised whatever it is
        while words and len(words[-1]) == 1:
            words = words[:-1]  # an abbreviation's first letter, cut at its point ("F" of "F.C.")
        if len(words) > 1 and words[0][0].isdigit() and not words[1][0].isdigit():
            words = words[1:]  # a figure before a name ("15" of "2014–15 Southampton") is no part of it
        name = re.sub(r"'s$", "", " ".join(words))
        if name:
            out.append(name)
    return out


def unsent_listed_name(r: Reading, others: list[KeyFact] = ()) -> KeyFact | None:
    """A failed run's first error whose list of names offered a name of two words or more the
    question gives (its kind in brackets aside), which no call of the run sent as listed, nor as
    another page of that name, nor inside a query that got through: the way to the page on the
    question's own subject, let go ("Love Incredible", listed when the search sent it inside quote
    marks; the run searched "Cashmere Cat" instead). It has no kind: it is said where the page has
    room, and no lesson counts it. Not where the page's ``others`` facts say it: one on phrases sent that
    names the listed names never sent, or one on quote marks for a name sent only inside them."""
    if r.run.outcome.success:
        return None
    names = {n.casefold(): n for n in question_names(r.run.task.instruction or "") if len(n.split()) >= 2}
    texts = [c for c in r.calls if isinstance(c.turn.arguments, str)]
    sent = {_flat(c.turn.arguments).casefold() for c in texts}
    if any(f.kind in ("described-search", "offered-names") for f in others):
        return None  # the page's fact on phrases sent, or on listed names, names those no call sent
    for e in r.calls:
        if not e.error or not isinstance(e.turn.arguments, str):
            continue
        for listed in listed_names(e.turn.result or ""):
            bare = TITLE_KIND.sub("", _flat(listed)).strip().casefold()
            if bare not in names or _flat(listed).casefold() in sent:
                continue
            quoted = [c.n for c in texts if _flat(c.turn.arguments).strip(" \"'\u201c\u201d").casefold()
                      == _flat(listed).casefold()]  # sent, but inside quote marks: not as listed
            if any(c.n not in quoted and (TITLE_KIND.sub("", _flat(c.turn.arguments)).strip(" \"'\u201c\u201d")
                                          .casefold() == bare or not c.error and bare in _flat(c.turn.arguments)
                                          .casefold()) for c in texts):
                continue  # the run chose another page of that name, or reached one holding it
            held = names[bare]
            if quoted and any(f.kind == "quoted-name" for f in others):
                return None  # the page's fact on quote marks says it
            after = next((c for c in texts if c.n > e.n), None)
            then = (f"; it sent {after.name}[{clip_words(_flat(after.turn.arguments), 60)}] next (turn {after.n})"
                    if after is not None and after.n not in quoted else "")
            what = "a name the question gives" if held == listed else f"the question's \"{held}\""
            how = (f" as listed, only inside quote marks (turn{'s' if len(quoted) > 1 else ''} "
                   f"{', '.join(map(str, quoted))})" if quoted else "")
            return KeyFact(f"The error {e.name} returned at turn {e.n} listed \"{listed}\", {what}, and no call "
                           f"sent it{how}{then}: send the listed name as written.",
                           sorted({e.n, *quoted[:2], *([after.n] if then else [])}), "", [e.name])
    return None


_DOUBLE_QUOTES = re.compile("[\"\u201c\u201d]")


def unmet_names(question: str, page: str, answer: str) -> list[str]:
    """The names and numbers the question gives (runs of capitalised words or figures, not a
    sentence's first word, a possessive's "'s" dropped) that the page an answer came from never
    holds as whole words, in the question's order: the part of the question nothing tied the
    answer to. A name of three words or more counts as held when the page holds it without its
    first word (a title before a name: "Emperor"), one of two with a capitalised word between its
    two (a middle name); the answer's own words are not counted. Double quote marks on the page
    are read as spaces: a nickname in quotes stands between a name's words ("Gerald Allen "Jerry"
    Roush" holds "Jerry Roush")."""
    page = _DOUBLE_QUOTES.sub(" ", page)
    out = []
    for name in question_names(question):
        words = name.split()
        if _holds(page, name) or _holds(answer, name) or name in out:
            continue
        if len(words) >= 3 and _holds(page, " ".join(words[1:])):
            continue
        if name_with_middle(page, name) is not None:
            continue  # a person's name with a middle name or initial between ("Kent Lex Baer")
        out.append(name)
    return out


def _source(r: Reading, answer: Call) -> Call | None:
    """The latest look-up before the answer whose text holds it as whole words."""
    given = _flat(answer.turn.arguments)
    return next((c for c in reversed(r.calls) if c.n < answer.n and not c.error and not c.writes and c.turn.result
                 and _holds(c.turn.result, given)), None)


def _query_of(c: Call) -> str:
    return _flat(c.turn.arguments).strip(" \"'")


_QUOTES = re.compile(r"'([^']+)'|\"([^\"]+)\"|\u2018([^\u2019]+)\u2019|\u201c([^\u201d]+)\u201d")


def _quoted_in(sentence: str) -> list[str]:
    return [next(g for g in m.groups() if g) for m in _QUOTES.finditer(sentence)]


def _naming(r: Reading, needle: str) -> tuple[int, str, int] | None:
    """(how many reflections name ``needle`` as whole words, the latest one's sentence that does,
    the turn of the message that gave it)."""
    sentences = [s for x in _reflections(r) for s in _SENTENCES.split(_flat(x)) if _holds(s, needle)
                 and not any(_holds(q, needle) and _flat(q).casefold() != _flat(needle).casefold()
                             for q in _quoted_in(s))]  # a part of a longer quoted query is not that query
    if not sentences:
        return None
    k = sum(any(_holds(s, needle) for s in _SENTENCES.split(_flat(x))) for x in _reflections(r))
    told = next((t for t in r.run.turns if t.type == "message" and t.role == "user"
                 and sentences[-1] in _flat(t.content)), None)
    return (k, sentences[-1], told.turn) if told is not None else None


def _who(r: Reading, k: int, told: int) -> str:
    n = len(_reflections(r))
    who = ("The reflection" if n == 1 else f"One of the {n} reflections" if k == 1 else
           "Both reflections" if n == 2 else f"All {n} reflections" if k == n else f"{k} of the {n} reflections")
    return f"{who} the run was given at turn {told}"


def reflected_source(r: Reading, answer: Call) -> KeyFact | None:
    """A failed answer taken from a page that two or more reflections the run was given name (the
    title it looked up, as whole words): earlier attempts failed around that page, and the run
    answered from it once more."""
    src = _source(r, answer)
    if src is None or not isinstance(src.turn.arguments, str):
        return None
    query = _query_of(src)
    title = TITLE_KIND.sub("", query)  # a title's "(2014 film)" is the search's, not the name's
    given = _flat(answer.turn.arguments)
    if len(main_words(title)) < 2 or _holds(r.run.task.instruction or "", title) or _holds(title, given) \
            or _holds(given, title):
        return None  # one word, or a name the question itself gives, stands in any reflection on it
    found = _naming(r, title)
    if found is None or found[2] >= src.n or found[0] < 2:
        return None  # one reflection naming a page may be the plan that led there; two are attempts that failed at it
    k, sentence, told = found
    return KeyFact(f"{_who(r, k, told)} already {'names' if k == 1 else 'name'} \"{title}\" "
                   f"(\"{window(sentence, title, 160)}\"), and the run took its answer "
                   f"\"{clip_words(_flat(answer.turn.arguments), 60)}\" from {_sent(src)} at turn {src.n}: "
                   "when reflections on earlier attempts name the page an answer comes from, read what they "
                   "say of it before answering from it.", [told, src.n, answer.n], "reflected-source", [answer.name])


def reflected_query(r: Reading) -> KeyFact | None:
    """A query a reflection the run was given names word for word (a quoted or proposed search)
    that every call of the run sending it failed with, sent again or never got past: the
    reflection's own plan was the failing step. A query of the question's words only is not one."""
    failed: dict[str, list[Call]] = {}
    for c in r.calls:
        if isinstance(c.turn.arguments, str) and not c.writes and _query_of(c):
            failed.setdefault(_query_of(c).casefold(), []).append(c)
    best = None
    for calls in failed.values():
        if not all(c.error for c in calls):
            continue
        query = _query_of(calls[0])
        if len(query.split()) < 2 or set(folded_words(query)) <= set(folded_words(r.run.task.instruction or "")):
            continue  # one word, or the question's own words, stand in a reflection by chance
        got_past = any(c.name == calls[0].name and not c.error and c.n > calls[0].n for c in r.calls)
        if got_past and len(calls) < 2:
            continue  # one failure the run then got past decided nothing
        found = _naming(r, query)
        if found is None or found[2] >= calls[0].n:
            continue
        if best is None or len(calls) > len(best[1]):
            best = (query, calls, found)
    if best is None:
        return None
    query, calls, (k, sentence, told) = best
    turns = [c.n for c in calls]
    sent = f"{calls[0].name}[{clip_words(query, 70)}]"
    said = ("the run's one call sending it failed" if len(calls) == 1 else
            "both calls sending it failed" if len(calls) == 2 else f"all {len(calls)} calls sending it failed")
    return KeyFact(f"{_who(r, k, told)} already {'names' if k == 1 else 'name'} the query \"{clip_words(query, 70)}\" "
                   f"(\"{window(sentence, query, 160)}\"), and {said} ({sent}, turn{'s' if len(turns) > 1 else ''} "
                   f"{join([str(t) for t in turns], 6)}): a query a reflection names is a guess; once it fails, "
                   "send a name its error lists instead of sending it again.",
                   [told] + turns[:3], "reflected-query", [calls[0].name])
