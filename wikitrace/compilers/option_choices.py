"""The options a run chose on a page that lists them, held against the words of the task.

A shop or form page lists the values of a choice on one line, a label then two or more
bracketed values with nothing between them (``size [s][m][l]``); a plain-text call that sends
one of them word for word chooses it. An option is named by the task when one of its words
that sets it apart from the group's other options (a word not every option has) is a word of
the task text. Two things are then read off the log alone: a choice of an option the task
does not name while it names another of the same group, and a group the task names an option
of that the run never chose before its last call. These give the option lesson of a failed
run, the ``option|<tool>`` pattern its contrast counts, and a note beside the choice on the page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .. import lazy_re
from .insight_parts import kind_of_tasks, make_insight
from .insight_words import join
from .reading import Call, Reading
from .schema import CandidateInsight
from .text import clip

# "color [black][natural black #1b][wine red]": a label, then bracketed values back to back
_GROUP = lazy_re.compile(r"^[ \t]*([A-Za-z][\w &/-]{0,30}?)[ \t]*((?:\[[^\[\]\n]{1,80}\]){2,})[ \t]*$", re.M)
_WORD = lazy_re.compile(r"[a-z0-9]+(?:[.#-][a-z0-9]+)*")
_LINKING = frozenset(("and", "the", "for", "with", "from", "of", "to", "in", "or", "a", "an"))


@dataclass(frozen=True)
class Group:
    label: str
    options: tuple[str, ...]


@dataclass(frozen=True)
class Choice:
    call: Call
    group: Group
    chosen: str
    named: dict[str, list[str]]  # the group's options the task names -> the task's words each holds


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _LINKING and (len(w) >= 3 or any(ch.isdigit() for ch in w))}


def option_groups(text: str | None) -> list[Group]:
    out = []
    if not text or "][" not in text:  # a group is two bracketed options side by side: most answers have none
        return out
    for m in _GROUP.finditer(text):
        options = tuple(dict.fromkeys(x.strip() for x in re.findall(r"\[([^\[\]]+)\]", m.group(2)) if x.strip()))
        if len(options) >= 2:
            out.append(Group(m.group(1).strip(), options))
    return out


def named_options(r: Reading, group: Group) -> dict[str, list[str]]:
    """The group's options one of whose distinguishing words is a word of the task text, each
    with those words (in the option's order)."""
    task = _words(r.run.task.instruction or "")
    words = {o: _words(o) for o in group.options}
    common = set.intersection(*words.values()) if words else set()
    out = {}
    for o in group.options:
        hit = [w for w in dict.fromkeys(_WORD.findall(o.lower())) if w in (words[o] - common) & task]
        if hit:
            out[o] = hit
    return out


def _pages(r: Reading) -> list[tuple[Call, list[Group]]]:
    key = "options.pages"
    if key not in r.memo:
        r.memo[key] = [(c, gs) for c in r.calls if not c.error and (gs := option_groups(c.turn.result))]
    return r.memo[key]


def _sent(c: Call) -> str | None:
    args = c.turn.arguments
    return " ".join(args.split()).casefold() if isinstance(args, str) and args.strip() else None


def choices(r: Reading) -> list[Choice]:
    """Each plain-text call that went through sending an option the latest page before it listed."""
    key = "options.choices"
    if key in r.memo:
        return r.memo[key]
    out = []
    for c in r.calls:
        sent = _sent(c)
        page = next((gs for p, gs in reversed(_pages(r)) if p.n < c.n), None)
        if c.error or sent is None or page is None:
            continue
        for g in page:
            chosen = next((o for o in g.options if " ".join(o.split()).casefold() == sent), None)
            if chosen is not None:
                out.append(Choice(c, g, chosen, named_options(r, g)))
                break
    r.memo[key] = out
    return out


def unset_groups(r: Reading) -> list[tuple[Group, dict[str, list[str]], Call]]:
    """The groups of the last page shown before the run's last call, of which the task names an
    option and no call after that page chose one; with the page's call."""
    if not r.calls:
        return []
    last = r.calls[-1]
    shown = next(((p, gs) for p, gs in reversed(_pages(r)) if p.n < last.n), None)
    if shown is None:
        return []
    page, groups = shown
    chosen = {(ch.group.label, ch.chosen) for ch in choices(r) if ch.call.n > page.n}
    out = []
    for g in groups:
        named = named_options(r, g)
        if named and not any((g.label, o) in chosen for o in g.options):
            out.append((g, named, page))
    return out


def missed(r: Reading) -> tuple[list[Choice], list[tuple[Group, dict[str, list[str]], Call]]]:
    """Choices of an option the task does not name while it names another of the group, and
    groups the task names an option of that the run left unchosen."""
    other = [ch for ch in choices(r) if ch.named and ch.chosen not in ch.named]
    return other, unset_groups(r)


def option_pattern(r: Reading) -> str | None:
    """``option|<tool>``: the run chose an option the task does not name while it names another
    of the group, or left a group the task names an option of unchosen."""
    other, unset = missed(r)
    tool = other[0].call.name if other else r.calls[-1].name if unset else None
    return f"option|{tool}" if tool else None


def _holding(named: dict[str, list[str]]) -> str:
    """``100x45x45cm(39x18x18inch) holds the task's word 100x45x45cm``; several options sharing
    the same words are named together."""
    by_words: dict[tuple[str, ...], list[str]] = {}
    for o, words in named.items():
        by_words.setdefault(tuple(words), []).append(clip(o, 40))
    parts = [f"{join(opts, 3)} {'holds' if len(opts) == 1 else 'hold'} the task's word{'s' if len(ws) > 1 else ''} "
             f"{join(list(ws), 3)}" for ws, opts in by_words.items()]
    return "; ".join(parts[:2])


def option_insight(r: Reading, success: bool) -> CandidateInsight | None:
    """The option lesson: from a run that chose an option the task does not name or left a named
    one unset, what it chose instead; from one that chose, in every group the task names an option
    of, an option the task names and succeeded, the options it chose (the successes the page counts)."""
    other, unset = missed(r)
    key = option_pattern(r)
    if key is None and not success:
        return None
    if key is None:
        kept = [ch for ch in choices(r) if ch.named]
        if not kept:
            return None
        tool = kept[0].call.name
        detail = "; ".join(f"turn {ch.call.n}: chose {clip(ch.chosen, 40)} among {len(ch.group.options)} "
                           f"{ch.group.label} options, holding the task's word{'s' if len(ch.named[ch.chosen]) > 1 else ''} "
                           f"{join(ch.named[ch.chosen], 3)}" for ch in kept[:3])
        return _lesson(r, tool, detail, True)
    tool = key.split("|", 1)[1]
    parts = [f"turn {ch.call.n}: chose {clip(ch.chosen, 40)} among {len(ch.group.options)} {ch.group.label} options, "
             f"while {_holding(ch.named)}" for ch in other]
    parts += [f"turn {page.n} listed {len(g.options)} {g.label} options and no later call chose one, while "
              f"{_holding(named)}" for g, named, page in unset]
    return _lesson(r, tool, "; ".join(parts), False)


def _lesson(r: Reading, tool: str, detail: str, worked: bool) -> CandidateInsight:
    score = r.run.outcome.score if r.run.outcome is not None else None
    if isinstance(score, (int, float)) and not isinstance(score, bool):  # what the choices came to
        detail += f"; score {score:g}"
    return make_insight(f"option|{tool}", f"Choose every option the task names before the last {tool}",
                        f"When a page lists options for a choice (a size, a colour, a count), choose with {tool} the "
                        "option whose words the task uses, for every choice whose options the task names, before the "
                        "call that ends the run, sending the option's text exactly as the page lists it.",
                        f"In {kind_of_tasks(r)} whose pages list options to choose.", detail, worked)


def holding_words(r: Reading, c: Call) -> str:
    """For a refused plain-text call: ``; the page at turn 2 listed options holding its words: dark
    blue and sky blue`` (every word it sent, in the options of the latest page before it that lists
    any); "" when none holds them all or no page lists options."""
    sent = _words(c.turn.arguments) if isinstance(c.turn.arguments, str) else set()
    page = next(((p, gs) for p, gs in reversed(_pages(r)) if p.n < c.n), None)
    if not sent or page is None:
        return ""
    holding = [o for g in page[1] for o in g.options if sent <= _words(o)]
    if not holding:
        return ""
    return f"; the page at turn {page[0].n} listed options holding its words: {join([clip(o, 40) for o in holding], 3)}"


# a result list: an id alone in brackets on its line, the item's title on the next, maybe its price
_ITEM = lazy_re.compile(r"^[ \t]*\[([A-Za-z0-9]{6,20})\][ \t]*\n[ \t]*([^\n\[]\S[^\n]*?)[ \t]*(?:\n[ \t]*(\$[\d.,]+(?: to \$[\d.,]+)?)[ \t]*)?$",
                        re.M)


def _item_lists(r: Reading) -> list[tuple[Call, list[tuple[str, str, str]]]]:
    """The calls whose answer lists two items or more (id, title, price), read once per run."""
    key = "options.items"
    if key not in r.memo:
        r.memo[key] = [(x, items) for x in r.calls if not x.error and "[" in (x.turn.result or "")
                       and len(items := _ITEM.findall(x.turn.result or "")) >= 2]
    return r.memo[key]


def item_note(r: Reading, c: Call) -> list[str]:
    """Beside a call that opened an item the latest result list before it showed (an id alone in
    brackets, its title on the next line): its place in the list, its title and price as listed,
    and the task's words the title holds."""
    sent = c.turn.arguments.strip() if isinstance(c.turn.arguments, str) else ""
    listed = next(((x, items) for x, items in reversed(_item_lists(r)) if x.n < c.n), None) if sent and not c.error \
        else None
    if listed is None:
        return []
    x, items = listed
    at = next((k for k, item in enumerate(items) if item[0] == sent), None)
    if at is None:
        return []
    _id, title, price = items[at]
    task = _words(r.run.task.instruction or "")
    shared = [w for w in dict.fromkeys(_WORD.findall(title.lower())) if w in _words(title) & task]
    held = (f"the title holds the task's word{'s' if len(shared) > 1 else ''} {join(shared, 6)}" if shared
            else "the title holds none of the task's words")
    return [f"It opened item {at + 1} of the {len(items)} that {x.name} listed at turn {x.n}: "
            f"\u201c{clip(' '.join(title.split()), 120)}\u201d" + (f" at {price}" if price else "") + f"; {held}."]


def option_note(r: Reading, c: Call) -> list[str]:
    """Beside a call that chose a listed option: how many the page listed and which the task names."""
    ch = next((x for x in choices(r) if x.call is c), None)
    if ch is None:
        return []
    head = f"It chose {clip(ch.chosen, 60)} among {len(ch.group.options)} {ch.group.label} options listed at turn " \
           f"{next(p.n for p, gs in reversed(_pages(r)) if p.n < c.n)}"
    if not ch.named:
        return [head + "; none of them holds a word of the task that the others lack."]
    if ch.chosen in ch.named:
        return [head + f"; it holds the task's word{'s' if len(ch.named[ch.chosen]) > 1 else ''} "
                f"{join(ch.named[ch.chosen], 3)}."]
    return [head + f"; it holds no word of the task that sets an option apart, while {_holding(ch.named)}."]


# an upper limit on a price the task states: "price lower than 20.00 dollars", "under $30"
_AMOUNT = r"(?:\$\s?(\d[\d,]*(?:\.\d+)?)|(\d[\d,]*(?:\.\d+)?)\s?(?:dollars|usd)\b)"
_LIMIT = lazy_re.compile(r"\b(?:(?:lower|less|cheaper) than|under|below|at most|no more than|up to|within)\s+" + _AMOUNT, re.I)
_PRICE = lazy_re.compile(r"\$\s?(\d[\d,]*(?:\.\d+)?)")


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def over_limit(r: Reading) -> tuple[str, list[int]] | None:
    """The item the run opened last, when the list it came from priced it above the limit the
    task states (the lowest of a price range, so a range that reaches under it is never said to)."""
    m = _LIMIT.search(r.run.task.instruction or "")
    if m is None:
        return None
    limit = _number(m.group(1) or m.group(2))
    for c in reversed(r.calls):
        sent = c.turn.arguments.strip() if isinstance(c.turn.arguments, str) and not c.error else ""
        listed = next(((x, items) for x, items in reversed(_item_lists(r)) if x.n < c.n), None) if sent else None
        item = next((i for i in listed[1] if i[0] == sent), None) if listed else None
        if item is None:
            continue
        price = _PRICE.search(item[2] or "")
        if price is None or _number(price.group(1)) <= limit:
            return None
        return (f"the item it opened at turn {c.n} was listed at {item[2]} (turn {listed[0].n}), above the task's "
                f"limit (\"{m.group(0).strip()}\")", [listed[0].n, c.n])
    return None


# what a partly scored purchase left out, by kind (its page says it; the insight layer counts it)
UNCHOSEN, OFF_TASK, OVER_LIMIT = "unchosen-group", "off-task-option", "over-limit"


def partial_reasons(r: Reading) -> list[tuple[str, str, list[int]]]:
    """What a purchase that scored part of the task left out, as the log shows it: a group the
    task names an option of that was never chosen, an option chosen against the task's words,
    an item priced above the task's limit. Each as (kind, sentence, the turns that show it)."""
    other, unset = missed(r)
    out = [(UNCHOSEN, f"it chose no {g.label} option of the {len(g.options)} listed at turn {page.n}, while "
            f"{_holding(named)}", [page.n]) for g, named, page in unset[:1]]
    out += [(OFF_TASK, f"at turn {ch.call.n} it chose {clip(ch.chosen, 40)} among the {ch.group.label} options, "
             f"while {_holding(ch.named)}", [ch.call.n]) for ch in other[:1]]
    over = over_limit(r)
    return out + ([(OVER_LIMIT, *over)] if over else [])


def chosen_as_asked(r: Reading) -> str | None:
    """For a successful run that chose, in each group the task names an option of, an option it
    names: "chose grey among the 2 color options at turn 3 (the task's word grey)", joined."""
    other, unset = missed(r)
    kept = [ch for ch in choices(r) if ch.named and ch.chosen in ch.named]
    if not r.run.outcome.success or other or unset or not kept:
        return None
    return join([f"{clip(ch.chosen, 40)} among the {len(ch.group.options)} {ch.group.label} options at turn "
                 f"{ch.call.n} (the task's word{'s' if len(ch.named[ch.chosen]) > 1 else ''} "
                 f"{join(ch.named[ch.chosen], 3)})" for ch in kept[:3]], 3)
