"""What to do, kept to what a new run can act on; the counts behind it move to the evidence.

The passes of ``insights.gather`` each add to a lesson's guideline an instruction and the counts
that justify it, so a page's advice grew into a paragraph of tallies with one usable sentence
inside. This last pass cuts the guideline (kept whole in corpus.json, the lesson with its counts)
into sentences (never inside a quote, a code span or
parentheses) and sorts them:

- a sentence that states no number and no verdict on the counts is advice and stays;
- a sentence that does is evidence and moves to ``entry["counted"]`` (shown under Evidence,
  where a reader checks counts against links); its instruction, when a clause of it is one with
  the numbers left out (a parenthesis of counts dropped, the clause after the colon that ends the
  counts, a list's "and 3 more" said as "and others"), stays as advice, and Evidence then shows
  the sentence without it when it stands whole at either end (said once, not twice).

What to do never holds only a pointer to another page (a sentence whose one instruction is the
quoted title of another lesson): the lesson's own instruction, found in a counted sentence when
no plain one holds it, stands first.

What to do then holds at most ``KEPT`` sentences: the one saying when the lesson applies first
(a sentence opening on the trigger), then the mistake the failed runs' logs show, then what the
successful runs did instead, then the rest in their order. The other advice sentences follow the
counts under Evidence, so nothing the passes found is lost. Every rule here is about the
sentences this package writes itself; a model's merged guideline (LLM path) replaces the text
after this and is not cut.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .retry_advice import NOT_ENOUGH, UNPROVEN

KEPT = 3  # sentences What to do keeps
# words a sentence of this package uses only when it weighs counts, not when it gives advice
_VERDICT = ("not a proven cause", "is not shown to", "did not decide", "not a count", "no successful run",
            "largest such difference", "is not shown:", "not shown (", "what set these", "where a failed run here has")
_ONE = re.compile(r"\bone (?:failed |successful )?(?:run|trial)\b", re.I)
_POINTER = " (counts under Evidence)"  # said beside advice whose counts stand under Evidence: right below it
_NUMBER = re.compile(r"\b\d")
# how this package opens a sentence that says when it applies or what to do first
_TRIGGER = re.compile(r"(?:When|Whenever|If) ")
# advice naming the system prompt's own rule, quoted: what decides the change, before how successes made it
_RULE_CHECK = re.compile(r"\bsystem prompt's rule \"")


def _spans(text: str) -> list[tuple[int, int]]:
    """The parts of ``text`` outside quotes and code spans, as (start, end) pairs."""
    out, start, quote, code = [], 0, False, False
    for m in _QUOTING.finditer(text):  # only the quote and backtick characters: the rest changes nothing
        i, ch = m.start(), m.group()
        if ch == "`" and not quote:
            if not code:
                out.append((start, i))
            code = not code
            start = i + 1
        elif ch == '"' and not code:
            if not quote:
                out.append((start, i))
            quote = not quote
            start = i + 1
    if not quote and not code:
        out.append((start, len(text)))
    return out


_QUOTING = re.compile(r'[`"]')


def _bare(text: str) -> str:
    """``text`` without its quotes and code spans: what a number or verdict is looked for in."""
    return " ".join(text[a:b] for a, b in _spans(text))


def counted(text: str) -> bool:
    """Whether a sentence or clause states a number or weighs the counts (outside its quotes)."""
    bare = _bare(text)
    return (bool(_NUMBER.search(bare) or _ONE.search(bare)) or "Fisher" in bare
            or any(v in bare for v in _VERDICT))


def sentences(text: str) -> list[str]:
    """``text`` cut at each full stop (or ! ?) followed by a space and a capital, a quote or a code
    span, outside quotes, code spans and parentheses; and after a quote that ends the sentence (its
    last word a stop, or the … of a quote cut short)."""
    out, start, quote, code, depth = [], 0, False, False, 0
    n = len(text)
    for m in _SENTENCE_MARKS.finditer(text):  # the characters the loop reacts to; the rest change nothing
        i, ch = m.start(), m.group()
        if ch == "`" and not quote:
            code = not code
        elif ch == '"' and not code:
            quote = not quote
            # a quote that ends the sentence; one followed by another quote is a rule quoted sentence by sentence
            if not quote and depth == 0 and text[i - 1:i] in (".", "!", "?", "…") and i + 2 < n and text[i + 1] == " " \
                    and (text[i + 2].isupper() or text[i + 2] == "`"):
                out.append(text[start:i + 1].strip())
                start = i + 2
        elif not quote and not code:
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth = max(0, depth - 1)
            elif ch in ".!?" and depth == 0 and i + 2 < n and text[i + 1] == " " and (
                    text[i + 2].isupper() or text[i + 2] in '"`'):
                out.append(text[start:i + 1].strip())
                start = i + 2
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return [s for s in out if s]


_SENTENCE_MARKS = re.compile(r'[`"().!?]')


def _unquoted(text: str, wanted: str):
    """(index, character) of each of the ``wanted`` characters of ``text`` outside double quotes and
    code spans. Only those and the quoting characters are visited (a guideline is a paragraph, read
    by several passes of every lesson of the task type)."""
    quote = code = False
    for m in _wanted(wanted).finditer(text):
        i, ch = m.start(), m.group()
        if ch == "`" and not quote:
            code = not code
        elif ch == '"' and not code:
            quote = not quote
        elif not quote and not code and ch in wanted:
            yield i, ch


@lru_cache(maxsize=None)
def _wanted(chars: str) -> re.Pattern:
    return re.compile("[" + re.escape('`"' + chars) + "]")


def _top_level(text: str, marks: str) -> list[int]:
    """Where ``marks`` characters stand outside quotes, code spans and parentheses."""
    at, depth = [], 0
    for i, ch in _unquoted(text, "()" + marks):
        depth += ch == "("
        depth -= ch == ")" and depth > 0
        if depth == 0 and ch in marks:
            at.append(i)
    return at


def _drop_counted_parens(text: str) -> str:
    """``text`` without its parentheses that state a number ("(8 of the 12 failed runs here)")."""
    out, depth, start, keep_from = [], 0, 0, 0
    for i, ch in _unquoted(text, "()"):
        if ch == "(":
            if depth == 0:
                start = i
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
            if depth == 0 and counted(text[start + 1:i]):
                out.append(text[keep_from:start].rstrip())
                keep_from = i + 1
    out.append(text[keep_from:])
    return re.sub(r"\s+([,.;:])", r"\1", " ".join(" ".join(p.split()) for p in out if p.strip()))


# how this package's lists end when they name only their first items (insight_words.join)
_LIST_TAIL = re.compile(r" and (\d+) more\b")


def _unlisted(text: str) -> str:
    """``text`` with its lists' "and 3 more" said without the number: an elided list's length is no
    count of runs, and the instruction around it is one a new run can follow."""
    return _LIST_TAIL.sub(lambda m: " and another" if m.group(1) == "1" else " and others", text)


def _ended(text: str) -> str:
    """``text`` ending as a sentence does: one full stop, none after a quote that ends with its own."""
    text = text.rstrip(".")
    return text if text.endswith(('."', '!"', '?"')) else text + "."


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


# the verbs this package's instructions open with (after a clause saying when): a clause that opens
# otherwise ("Getting the call through is not enough") states a finding, not what to do
_DO = frozenset("""add answer ask build call change check compare do end find fix give hand keep learn leave look make
never put read reread replace run say send set settle take tell use view word work""".split())
_WHEN = re.compile(r"(?:(?:When|Whenever|If|Before|After|Where|Once|In a run like these)\b[^,]*, )?(\w+)", re.I)


def _advises(clause: str) -> bool:
    """Whether a clause is an instruction: it opens (after a clause saying when) on a verb of ``_DO``."""
    m = _WHEN.match(clause.strip())
    return bool(m) and m.group(1).lower() in _DO


def action(sentence: str) -> str:
    """The instruction a counted sentence holds, with its numbers left out, or "". Its clauses
    (between top-level colons and semicolons) lose their parentheses of counts; when the clauses before the first
    one still stating a count include an instruction, they are it ("When X answers E, the message
    names the value it refused (in 5 of the 5 runs here): replace that value ..."); else the first
    instruction after a counted clause, with the uncounted clauses that follow it ("In 9 of the 12
    failed runs here ...: check X first.")."""
    if not sentence:
        return ""
    sentence = _unlisted(sentence)
    cuts = [-1, *_top_level(sentence, ":;"), len(sentence)]
    clauses = [_drop_counted_parens(sentence[a + 1:b].strip()).rstrip(".") for a, b in zip(cuts, cuts[1:])]
    plain = [bool(c) and not counted(c) for c in clauses]
    head = plain.index(False) if False in plain else len(plain)
    if any(_advises(c) for c in clauses[:head]):
        return _ended(_capital(_drop_counted_parens(sentence[:cuts[head]].strip())))
    for k in range(head, len(clauses)):
        if plain[k] and _advises(clauses[k]):
            end = k
            while end < len(clauses) and plain[end]:
                end += 1
            return _ended(_capital(_drop_counted_parens(sentence[cuts[k] + 1:cuts[end]].strip())))
    return ""


def _pointer(sentence: str) -> bool:
    """Whether a sentence only points to another lesson: it quotes one, does not open on when it
    applies, and none of its clauses outside the quotes is an instruction ("Failed runs ended this
    way too; the lesson they teach most often is ...: \"Before X, check ...\"")."""
    if '"' not in sentence or _TRIGGER.match(sentence):
        return False
    bare = _bare(sentence)
    cuts = [-1, *_top_level(bare, ":;"), len(bare)]
    return not any(_advises(bare[a + 1:b].strip()) for a, b in zip(cuts, cuts[1:]))


def _opening(sentence: str) -> str | None:
    """"Before book_reservation" of "Before book_reservation, check ...": the clause saying when, or None."""
    head = sentence.split(",", 1)[0]
    return head if _WHEN.fullmatch(head + ", x") else None


def _findings(sentence: str, shown: list[str]) -> str:
    """A counted sentence as Evidence shows it: without its instruction when What to do shows that
    instruction already and it stands whole at the sentence's start or end ("In 44 of the 44 failed
    runs here X: reread ..." -> "In 44 of the 44 failed runs here X."); whole otherwise (an
    instruction whose own parentheses hold the counts, or one between two counted clauses)."""
    do = action(sentence)
    if not do or do not in shown:
        return sentence
    cuts = [-1, *_top_level(sentence, ":;"), len(sentence)]
    clauses = [sentence[a + 1:b].strip() for a, b in zip(cuts, cuts[1:])]
    plain = [bool(c) and not counted(c) for c in clauses]
    if len(clauses) < 2:
        return sentence
    tail = len(clauses)
    while tail > 1 and plain[tail - 1]:
        tail -= 1
    if tail < len(clauses) and _advises(clauses[tail]) and not plain[tail - 1]:
        return _ended(sentence[:cuts[tail]].strip())
    head = 0
    while head < len(clauses) - 1 and plain[head]:
        head += 1
    if head and _advises(clauses[0]) and not plain[head]:
        return _ended(_capital(sentence[cuts[head] + 1:].strip()))
    return sentence


def _instead_leads(entry: dict) -> bool:
    """Successful runs whose own pattern does not separate them from failed runs (its verdict
    "none"), all of which differ from the failed trials of their tasks in one way, seen on two
    tasks or more: that difference is what the page teaches, and the pattern only where it was met."""
    st = entry.get("same_task") or {}
    top = (st.get("differences") or [None])[0]
    return (st.get("side") == "success" and (entry.get("contrast") or {}).get("verdict") == "none"
            and top is not None and top["runs"] == st.get("compared", 0) >= 2 and top.get("tasks", 0) >= 2)


def cut(entry: dict, mistake: str = "", instead: str = "") -> None:
    """Sets ``entry["advice"]`` (What to do) to at most ``KEPT`` advice sentences of the guideline (trigger first, then
    ``mistake``, then ``instead``, then the rest in order) and moves every sentence stating counts,
    to ``entry["counted"]`` and the advice left over to ``entry["more_advice"]``, in their order."""
    advice: list[str] = []
    evidence: list[str] = []
    # the counted lead ``mistake`` restates: its own instruction says the same less exactly
    superseded = (entry.get("checked") or {}).get("said", "")
    recipe = action(entry.pop("recipe", ""))  # settled.fold: the successful runs' way to the change (no field kept)
    found: list[str] = []  # what counted findings other than the trigger's say to do
    unproven = entry.pop(UNPROVEN, False)  # retry_advice.untested_fix: no run backs the trigger's retry
    for s in sentences(entry["guideline"]):
        if not counted(s):
            advice.append(s.replace(_POINTER, ""))
            continue
        evidence.append(s)
        do = "" if mistake and superseded and superseded in s else action(s)
        if do and do not in advice:
            advice.append(do)
            if not _TRIGGER.match(s) and NOT_ENOUGH not in s:
                found.append(do)
    if mistake and _opening(mistake):  # advice opening as the mistake's does ("Before X, ...") says the same, less exactly
        advice = [s for s in advice if _opening(s) != _opening(mistake)]
    # a mistake said as what to do when the page's error comes (passed_errors.merge) is the trigger itself;
    # the successes' difference from their own tasks' failed trials, where the page's pattern decides nothing
    ordered = [mistake] if _TRIGGER.match(mistake) else [instead] if instead and _instead_leads(entry) else (
        [s for s in advice if _TRIGGER.match(s)][:1] or [s for s in advice if not _pointer(s)][:1] or advice[:1])
    if unproven and found and not mistake:
        # the runs that got past the error as its advice says all failed: what their pages show went wrong leads
        ordered.insert(0, found[0])
    ordered += [mistake] if mistake and mistake not in ordered else [
        s for s in advice if s not in ordered and s != recipe][:1]
    ordered += [s for s in advice if s not in ordered and _RULE_CHECK.search(s)][:1]
    if recipe in advice and recipe not in ordered:  # how successful runs made the change: after the check
        ordered.append(recipe)
    if instead and instead not in ordered:
        ordered.append(instead)
    ordered += [s for s in advice if s not in ordered]
    kept, rest = ordered[:KEPT], ordered[KEPT:]
    if recipe in kept:  # said with the runs that settled the task so, not as an order nobody gave
        whole = next((s for s in evidence if action(s) == recipe), recipe)
        kept[kept.index(recipe)] = whole
        evidence = [s for s in evidence if s != whole]
    entry["advice"] = " ".join(kept)
    evidence = [_findings(s, kept) for s in evidence]
    if mistake in rest:
        evidence.insert(0, mistake)
    if evidence:
        entry["counted"] = evidence
    # advice left over that an evidence sentence still opens or ends with (after its counts' colon), or
    # is with its counts dropped, is said there already
    plain = {" ".join(_drop_counted_parens(e).split()) for e in evidence}
    more = [s for s in rest if s not in evidence and s != instead and " ".join(s.split()) not in plain
            and not any(e.startswith(s.rstrip(".") + ":") or e.endswith(": " + s[:1].lower() + s[1:]) for e in evidence)]
    if more:
        entry["more_advice"] = more
