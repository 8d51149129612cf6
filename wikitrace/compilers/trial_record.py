"""What a run decided, kept small enough for its corpus.json entry, so that the pages of the
other trials of its task can be set against it without reading its log again.

A trial is decided by the calls that change something and by its final answer; the look-ups
only say how it got there. So the record holds each state-changing call that went through
(its tool, turn and argument values, where each top-level argument came from), the answer
and the look-up whose answer held it, the one-value look-ups the run made (a search, a record
fetched by its id; before a success's change, the one sent its value), and which tools' look-ups
any other run made. Values that say nothing about the decision are left out here, once: wording (a hand-off summary, a
message) differs between any two runs, and a value the run's own earlier change returned (a
reservation id the system made) differs between trials by construction.
"""

from __future__ import annotations

import re
import unicodedata

from ..runs.errors import tests_passed
from .arguments import check_arguments, is_chosen, is_verdict
from .change_facts import RULED
from .edit_lines import edit_lines
from .error_listings import listed_in_errors
from .expected_calls import made_as_expected, missed_changes, unasked_hand_off
from .expected_outputs import told
from .insight_parts import edits_of
from .insight_words import answer_seen_in, expected_answer, gives_answer, named_by, report_message, top_key
from .offered_names import naming_page, unsent_offers
from .refusal_cites import declined, refused
from .model_cost import model_cost
from .reading import Call, Reading, harness_reason, is_read_only, leaves
from .test_edits import test_only_edits
from .unseen_names import unseen_names
from .value_sources import credited
from .task_words import answer_origin
from .text import clip, folded_words

RESTATES = "in_short.restates"  # Reading.memo: texts of success facts that only say what the run did

WORDING = 6  # a string value of at least this many words is wording, not a choice
SHOWN_LOOKUPS = 40  # free-text look-ups kept per run (a QA run makes a handful)


def _wording(value) -> bool:
    return isinstance(value, str) and len(value.split()) >= WORDING


def norm(value):
    """A value as compared across trials: text folded (case, spacing), numbers as numbers, so
    that "250", 250 and 250.0 are one value."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if type(value) is not str:
        return _norm_text(str(value))
    hit = _NORMED.get(value)
    if hit is None:  # the same values are compared with every other trial of the task
        if len(_NORMED) >= 8192:
            _NORMED.clear()
        hit = _NORMED[value] = _norm_text(value)
    return hit


_NORMED: dict[str, object] = {}
_NUMBER_TEXT = re.compile(r"-?[\d,]*\.?\d+")


def _norm_text(value: str):
    text = " ".join(value.split()).casefold()
    try:
        return float(text.replace(",", "")) if _NUMBER_TEXT.fullmatch(text) else text
    except ValueError:
        return text


# Words that change an answer's form, not what it names: the articles, and "and" (what "&", a
# mark the comparison drops, spells out), so "India, Europe, and the United States" is
# "India, Europe, United States" given again.
_FORM_WORDS = re.compile(r"\b(a|an|the|and)\b")


def answer_norm(text: str) -> str:
    """An answer as compared across trials: case, accents ("Śivarāma" is "Sivarama"), punctuation,
    the form words above and spacing dropped. Every comparison of answers between trials goes
    through it, so a count of trials that gave an answer and its "not …" list agree."""
    text = str(text).casefold()
    if not text.isascii():
        text = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))
    folded = re.sub(r"[^\w\s]", " ", text)
    return " ".join(_FORM_WORDS.sub(" ", folded).split())


def _made_by_own_change(r: Reading, c: Call, value: str) -> bool:
    """Whether the first place before ``c`` that showed ``value`` is the answer of one of the
    run's own changes: a value the system made for this run (a new reservation's id)."""
    low = value.casefold()
    if len(low) < 3 or not r.anywhere_before(low, c.n):
        return False
    for f in r.facts:
        if f.turn >= c.n:
            break
        if low in r.lower(f):
            return f.type == "function_call" and not is_read_only(f)
    return False


def _values(r: Reading, c: Call) -> dict[str, object]:
    """The call's argument values by path (a list's length under ``path#``), wording and
    values the run's own changes made left out."""
    args = c.turn.arguments
    out: dict[str, object] = {}
    for path, value in leaves(args):
        if _wording(value) or (isinstance(value, str) and _made_by_own_change(r, c, value)):
            continue
        out[path or "argument"] = value
    for path, value in _lists(args, ""):
        out[f"{path}#"] = value
    return out


def _lists(value, path: str):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _lists(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        if path:
            yield path, len(value)
        for i, v in enumerate(value):
            yield from _lists(v, f"{path}[{i}]")


def sources(r: Reading, c: Call) -> dict[str, str]:
    """Worked out once per call: a success's page and its corpus entry both ask."""
    memo = r.memo.setdefault("trial_record.sources", {})
    if c.n not in memo:
        memo[c.n] = _sources(r, c)
    return memo[c.n]


def _sources(r: Reading, c: Call) -> dict[str, str]:
    """Where each top-level argument's values came from, as the page says it ("the user (turn 4)"):
    only for an argument every value of which one or two places showed (a sum the agent worked
    out itself came from none of them, so its argument gets no source)."""
    if not isinstance(c.turn.arguments, dict):
        return {}
    out = {}
    for key, places in credited(r, c).items():
        paths = [a.path for a in check_arguments(r, c.turn) if top_key(a.path) == key]
        if 0 < len(places) <= 2 and (len(paths) == 1 or all(credited(r, c, {p}).get(key) for p in paths)):
            out[key] = " and ".join(places)
    return out


def _answer(r: Reading) -> Call | None:
    writes = [c for c in r.calls if c.writes and not c.error and isinstance(c.turn.arguments, str)]
    last = writes[-1] if writes else None
    return last if last is not None and harness_reason(r) is None and gives_answer(r, last) else None


def record(r: Reading) -> dict:
    """The run's decisive calls as plain data (see the module's docstring); empty when it made none."""
    answer = _answer(r)
    out: dict = {}
    changes = []
    edited = {c.n: e for c, e in edits_of(r)}
    for c in r.calls:
        if not c.writes or c.error or c is answer or tests_passed(c.turn.result):
            continue  # a test run that passed changed nothing: it checked the change before it
        item = {"tool": c.name, "turn": c.n, "values": _values(r, c)}
        if c.n in edited:  # the file it changed: two editors' calls on one file are one act
            item["file"] = edited[c.n].file
            if edited[c.n].function:
                item["function"] = edited[c.n].function
            lines = edit_lines(r, c)  # what it took out and put in: trials on one file differ there
            if lines is not None:
                item["removed"], item["added"] = lines
                unseen = [name for name, _shown in unseen_names(r, c)]
                if unseen:
                    item["unseen"] = unseen  # names its log showed only with another spelling: a trial may share them
        came = sources(r, c) if r.run.outcome.success else {}  # said only of a success's own values
        if came:
            item["from"] = came
            listed = _listed_before(r, c, came)
            if listed:
                item["listed"] = listed
        if made_as_expected(r, c):
            item["expected"] = True  # the change the log says the task expected, sent alike
        ruled = r.memo.get(RULED, {}).get(c.n)
        if ruled:  # what the rule on it left open on its record (compilers/change_facts.py): why it was wrong
            item["ruled"] = ruled
        before = _looked_before(r, c) if r.run.outcome.success else None
        if before is not None:
            item["after"] = {"tool": before.name, "query": _query(before), "turn": before.n}
        changes.append(item)
    if changes:
        out["changes"] = changes
        # a success's hand-off the task did not expect changed no record: not what won it
        unasked = sorted({c.name for c in r.calls if r.run.outcome.success and c.writes and not c.error
                          and unasked_hand_off(r, c)})
        if unasked:
            out["unasked"] = unasked
        if not r.run.outcome.success and test_only_edits(r):
            out["tests_only"] = True  # its page sets it against a successful trial that changed the code
    if not r.calls:
        out["no_calls"] = True  # "this run made no calls at all", not "never made that one"
    if not r.run.outcome.success and harness_reason(r) is not None:
        out["stopped"] = True  # the harness ended it: a change it never made is one it had no turn for
    spent = model_cost(r)
    if spent is not None:  # what its model calls cost, set against a trial's on a page
        out["cost"] = list(spent)
    if answer is None and expected_answer(r) is None:  # which tools' look-ups went through: a successful
        # trial's value that came from a look-up this run never made is the step it missed
        reads = sorted({c.name for c in r.calls if not c.writes and not c.error and c.name})
        if len(reads) <= SHOWN_LOOKUPS:  # none is said too: "a look-up this run never made"
            out["reads"] = reads
    if answer is not None:
        text = " ".join(str(answer.turn.arguments).split())
        out["answer"] = {"text": clip(text, 120), "turn": answer.n}
        if len(text) > 120:  # the whole answer's words: another trial's shorter answer may stand past the cut
            out["answer"]["words"] = answer_norm(text)
        origin = answer_origin(r, text)
        if origin == "given":  # named by a reflection before any look-up
            out["answer"]["given"] = True
        elif origin == "question":  # the question itself names it (one of the two it asks between)
            out["answer"]["in_question"] = True
        if is_chosen(r, text):  # a verdict, a yes or a no: chosen, not returned by a look-up
            out["answer"]["chosen"] = True
        found = answer_seen_in(r, text, answer) if answer_norm(text) and not is_verdict(r, text) else None
        if found is not None:
            out["answer"]["found"] = {"tool": found.name, "turn": found.n, "query": _query(found)}
            if folded_words(str(found.turn.arguments)) == folded_words(text):
                # the look-up searched the answer itself: its page names what the agent had already chosen
                out["answer"]["found"]["echo"] = True
            _named_by(r, found, out["answer"]["found"])
            if not r.run.outcome.success:  # the question's names that page never gave: what tied it to nothing
                from .qa_reasons import unmet_names

                unmet = unmet_names(r.run.task.instruction or "", found.turn.result or "", text)
                if unmet:  # a name a page read before it held was tied in by the run's chain (Kent Baer -> his team -> its stadium)
                    read = "\n".join(c.turn.result for c in r.calls if c.n < answer.n and not c.error and not c.writes
                                     and c.turn.result)
                    unmet = [n for n in unmet if n in unmet_names(r.run.task.instruction or "", read, text)]
                if unmet:
                    out["answer"]["unmet"] = unmet[:4]
        elif is_verdict(r, text):  # a verdict is chosen, not read off a page: it rests on the last look-up before it
            read = next((c for c in reversed(r.calls) if c.n < answer.n and not c.error and not c.writes and _query(c)),
                        None)
            if read is not None:
                out["answer"]["read"] = {"tool": read.name, "turn": read.n, "query": _query(read)}
                _named_by(r, read, out["answer"]["read"])
    # which one-value look-ups went through (a question's searches, a record fetched by its id)
    asked = {looked_up(c.name, q) for c in r.calls if not c.writes and not c.error and (q := _query(c))}
    if len(asked) <= SHOWN_LOOKUPS:  # more: not kept, and no page says which look-ups the run made
        out["lookups"] = sorted(asked)
    # failed look-ups whose text stood inside quote marks: a trial that sent the name bare may have got through
    quoted = {looked_up(c.name, q) for c in r.calls if not c.writes and c.error and isinstance(c.turn.arguments, str)
              and (q := _query(c)) and q[:1] + q[-1:] in ('""', "''", "\u201c\u201d")}
    if quoted and len(quoted) <= SHOWN_LOOKUPS:
        out["quoted"] = sorted(quoted)
    tally: dict[str, list[int]] = {}  # look-ups whose text held quote marks, by tool: [sent, failed]
    for c in r.calls:
        if not c.writes and isinstance(c.turn.arguments, str) and _in_quotes(c.turn.arguments):
            counts = tally.setdefault(c.name, [0, 0])
            counts[0] += 1
            counts[1] += bool(c.error)
    if tally:
        out["quoted_calls"] = dict(sorted(tally.items()))
    gold = expected_answer(r)
    if gold and not is_verdict(r, gold):  # where the expected answer stood, if a look-up returned it ({}: none did)
        held = answer_seen_in(r, gold)
        out["expected_seen"] = {"tool": held.name, "turn": held.n, "query": _query(held)} \
            if held is not None and _query(held) else {}
        listing = listed_in_errors(r, gold, None) if held is None else None
        if listing is not None:  # no page held it, but an error's list of near names did: a lead left unfollowed
            out["expected_listed"] = {"tool": listing.errors[0].name, "turn": listing.errors[0].n}
    offered = unsent_offers(r) if not r.run.outcome.success else {}
    if offered and len(offered) <= SHOWN_LOOKUPS:  # names an error listed and the run never sent
        out["offered"] = [[tool, name, turn] for name, turn, tool in offered.values()]
    reflected = _reflections(r)
    if reflected is not None:
        out["reflections"] = reflected
    said = told(r)
    if said:  # the values the task expected the agent to say, and where it wrote each (None: never)
        out["told"] = [[t.value, t.turn] for t in said]
    if not r.run.outcome.success and r.has_interlocutor and missed_changes(r):
        last = report_message(r)  # what a run that left a change unmade told the user instead: a refusal, often
        if last is not None:
            out["said_last"] = [last.turn, clip(" ".join(last.content.split()), 160)]
        why = refused(r, _query)  # the record values its "I cannot" named: a successful trial may have made it on that record
        if why is not None:
            out["refused"] = why
    said_no = declined(r)  # a success's "I cannot": a failed trial may have made that very change
    if said_no:
        out["declined"] = said_no
    return out


def _named_by(r: Reading, c: Call, into: dict) -> None:
    """On a success, the earlier page that named what look-up ``c`` sent, kept in ``into``."""
    named = naming_page(r, c) if r.run.outcome.success and _query(c) else None
    if named is not None and _query(named):
        into["named_by"] = {"tool": named.name, "turn": named.n, "query": _query(named)}
    elif r.run.outcome.success and isinstance(c.turn.arguments, str):  # or an error of the same tool listed it
        listed = next((x for x in r.calls if x.n < c.n and x.error and x.name == c.name and x.turn.result
                       and named_by(x.turn.result.lower(), x.turn.arguments, c.turn.arguments)), None)
        if listed is not None:
            into["listed_by"] = {"tool": listed.name, "turn": listed.n}


def _in_quotes(text: str) -> bool:
    """Whether a look-up's text holds a part in double quote marks, or is wrapped in single ones."""
    t = text.strip()
    return "\"" in t or "\u201c" in t or (len(t) > 2 and t[0] + t[-1] in ("''", "\u2018\u2019"))


_USER_AT = re.compile(r"^the user \(turn (\d+)\)$")


def _listed_before(r: Reading, c: Call, came: dict[str, str]) -> dict[str, dict]:
    """For each argument the user gave, the first look-up whose answer had already listed its
    value before the user named it: the user picked it from what the agent read out, and that
    look-up, not a later one, is the step a trial that never made it missed."""
    out: dict[str, dict] = {}
    args = c.turn.arguments if isinstance(c.turn.arguments, dict) else {}
    for key, place in came.items():
        m = _USER_AT.match(place)
        value = args.get(key)
        if m is None or not isinstance(value, str) or len(value) < 3:
            continue
        said = int(m.group(1))
        word = re.compile(r"(?<![\w-])" + re.escape(value) + r"(?![\w-])")
        x = next((x for x in r.calls if x.n < said and not x.writes and not x.error
                  and word.search(x.turn.result or "")), None)
        if x is not None:
            out[key] = {"tool": x.name, "turn": x.n}
    return out


def _reflections(r: Reading) -> dict | None:
    """How many reflections on earlier failed attempts the run was given (Reflexion hands a retry
    them in its task message) and the turn of the message that holds them; None without any."""
    found = (r.run.task.metadata or {}).get("reflections")
    texts = [" ".join(x.split()) for x in found if isinstance(x, str) and x.strip()] if isinstance(found, list) else []
    if not texts:
        return None
    told = next((t for t in r.run.turns if t.type == "message" and t.role == "user"
                 and texts[-1] in " ".join((t.content or "").split())), None)
    return {"count": len(texts), "turn": told.turn} if told is not None else None


def _looked_before(r: Reading, c: Call) -> Call | None:
    """The latest one-value look-up before a change that was sent one of the change's own values
    (the record fetched by the id the change then acts on): the step the change rested on."""
    args = c.turn.arguments if isinstance(c.turn.arguments, dict) else {}
    sent = {v.casefold() for v in args.values() if isinstance(v, str) and len(v) >= 3}
    if not sent:
        return None
    return next((x for x in reversed(r.calls) if x.n < c.n and not x.writes and not x.error
                 and (q := _query(x)) and q.casefold() in sent), None)


def looked_up(tool: str, query: str) -> str:
    """A look-up as trials compare it: the same tool with the same words (a search of a title is
    not a look-up of that word inside a page)."""
    return f"{tool}|{answer_norm(query)}"


def _query(c: Call) -> str:
    args = c.turn.arguments
    if isinstance(args, str):
        return clip(" ".join(args.split()), 80)
    if isinstance(args, dict) and len(args) == 1:
        (value,) = args.values()
        return clip(" ".join(str(value).split()), 80) if isinstance(value, (str, int, float)) else ""
    return ""


def decisive(r: Reading, comp) -> dict:
    """``record`` of the run, and on a success the "In short" facts that only restate what it
    did (RESTATES, filled by compilers/in_short.py), by place: the page drops them when a contrast takes their place,
    and gets them back when it no longer has one."""
    out = record(r)
    restating = set(r.memo.get(RESTATES, ())) if r.run.outcome.success else set()
    shown = [[i, f.text, list(f.turns)] for i, f in enumerate(comp.in_short) if f.text in restating]
    if shown:
        out["restates"] = shown
    return out
