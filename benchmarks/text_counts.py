"""Whether every count of runs an insight page's text states can be checked from what the page links.

A reader who sees "16 failed runs" beside 15 sources, or "19 of 23 runs" with no list of the 23,
cannot check the lesson. This reads an insight page as a reader does: its When it applies, What
to do, Evidence and More evidence sections, each cut into clauses (a sentence, or a list item). In
a clause, each stated count of runs ("13 failed runs", "4 of the 22 runs here", "20 failed of 7 tasks")
is checked by the first rule that applies:

- *linked*: run pages are linked (or named) after the count, before the next count of the
  clause: the count must equal the distinct runs linked, plus the "K more" the clause says it
  left out, plus the page's own runs of that outcome when it says "the K under Sources" (K must
  be all of them);
- *sources*: it counts the page's own runs ("runs here", "Seen in N runs", "N successful, M
  failed" after it): it must equal the Sources list, by outcome when it names one;
- *through*: no run is linked, but an insight page is, whose Sources are that many runs;
- *listed*: another clause of the page links exactly that many runs after stating the same count
  (the sentence "In 12 of the 13 failed runs here ..." with its list "The 12 failed runs ...: ...");
  a whole ("the 23" of "19 of the 23 runs here that retried") is listed when its part and the
  rest are, each in a clause of its own;
- otherwise it is *unlinked*: a reader cannot tell which runs it counts.

A linked or sources count that disagrees is a *mismatch*. A linked count that adds up only with
"and K more" is *hidden* besides: a reader cannot name the K runs, so cannot redo the count. Counts of other things (tasks, records,
calls, looked-up values) are not checked here; nor are the counts of a quoted rule or a task's
words."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

SECTIONS = ("When it applies", "What to do", "Evidence", "More evidence", "Runs behind the counts")
_STEP_LINK = re.compile(r"\[(step-\d+)\]\([^)]*\)")
_OTHER_LINK = re.compile(r"\[[^\]]*\]\((?:[^)]*/)?(insight-\d+)?[^)]*\)")
_QUOTE = re.compile(r'"[^"]*"')
# "13 failed runs", "4 of the 22 runs here", "the 3 failed trials", "20 failed of 7 tasks, 1 successful"
_COUNT = re.compile(r"\b(?:(\d+) of (?:the )?)?(\d+) ((?:(?:failed|successful|other|such|more|distinct) )*)"
                    r"(runs?|trials?)\b( here(?! (?:that|whose|where|who)\b))?|\b(\d+) (failed|successful)\b(?! runs?\b| trials?\b)")
_MORE = re.compile(r"\band (\d+) more\b")
_ALL_SOURCES = "The runs counted there are the ones under Sources."
_UNDER = re.compile(r"\bthe (\d+) under Sources\b")  # "the 13 under Sources": every source of the count's outcome
_SEEN = re.compile(r"Seen in (\d+) runs?\b[^:]*: (\d+) successful, (\d+) failed")


@dataclass
class Tally:
    counts: int = 0  # counts of runs stated
    linked: int = 0
    sources: int = 0
    listed: int = 0
    unlinked: int = 0
    mismatches: int = 0
    hidden: int = 0  # linked counts that add up only with an "and K more" the page does not name
    examples: list[str] = field(default_factory=list)  # the mismatched and unlinked clauses, for reading
    kinds: Counter = field(default_factory=Counter)  # unlinked counts by their words

    def add(self, other: "Tally") -> None:
        for name in ("counts", "linked", "sources", "listed", "unlinked", "mismatches", "hidden"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.examples += other.examples
        self.kinds.update(other.kinds)


def sections(page: str) -> list[str]:
    """The reader's text of an insight page: the line of support under its title and the sections
    that state the lesson and its evidence."""
    out = []
    head = re.split(r"\n## ", page)[0]
    if "\n# " in head:  # the support line under the title ("Seen in 3 runs: ...")
        out.append(head.split("\n# ", 1)[1].partition("\n")[2])
    for part in re.split(r"\n## ", page)[1:]:
        name, _, body = part.partition("\n")
        if name.strip() in SECTIONS:
            out.append(body)
    return out


def clauses(body: str) -> list[str]:
    """Sentences and list items, with runs (linked or named) turned into ``⟨step-N⟩`` marks and any other
    link into its bare words (an insight title's "and 2 more" is not a count of runs)."""
    out = []
    for line in body.split("\n"):
        line = _STEP_LINK.sub(lambda m: f"⟨{m.group(1)}⟩", line)
        line = _OTHER_LINK.sub(lambda m: f"⟨{m.group(1)}⟩" if m.group(1) else "⟨link⟩", line)
        line = re.sub(r"(?<!⟨)`?\b(step-\d+)\b`?", r"⟨\1⟩", line)  # a run named without a link is named still
        line = _QUOTE.sub('"…"', line)  # a quoted rule or message counts its own things
        out += [c for c in re.split(r"(?<=[.])\s+(?=[A-Z⟨])", line.strip(" -")) if c]
    return out


def _outcome(words: str) -> str | None:
    return "failure" if "failed" in words else "success" if "successful" in words else None


@dataclass
class Stated:
    """One count of runs as a clause states it, with what follows it up to the clause's next count."""
    clause: str
    n: int
    words: str  # "failed", "successful runs", ... (which outcome it counts, if any)
    said: str  # the words as written, for the report
    here: bool = False  # it counts the page's own runs (every one of that outcome)
    links: set = field(default_factory=set)  # runs linked or named after it
    more: int = 0  # "and K more"
    through: list = field(default_factory=list)  # the source counts of the insight pages linked after it
    part: int | None = None  # a whole's part ("4" of "4 of the 22 runs"): the rest may be listed apart


def stated(clause: str, sources: list[dict], runs_of: dict[str, int] | None, tally: Tally) -> list[Stated]:
    """The counts of runs one clause states (a "the K under Sources" that is not every source of
    its outcome is a mismatch at once)."""
    out = []
    matches = list(_COUNT.finditer(clause))
    for k, m in enumerate(matches):
        after = clause[m.end():matches[k + 1].start() if k + 1 < len(matches) else len(clause)]
        links = set(re.findall(r"⟨(step-\d+)⟩", after))
        through = [runs_of.get(i) for i in re.findall(r"⟨(insight-\d+)⟩", after)] if runs_of else []
        more = sum(int(x) for x in _MORE.findall(after))
        under = _UNDER.search(after)
        if under:  # the page's own runs of the count's outcome, every one: as if each were linked
            side = _outcome(m.group(3) or m.group(7) or "")
            mine = {s["step"] for s in sources if side is None or s["outcome"] == side}
            links |= mine
            if int(under.group(1)) != len(mine):
                tally.mismatches += 1
                tally.examples.append(f"mismatch (sources {len(mine)}, says {under.group(1)}): {clause}")
        if m.group(6):  # "20 failed of 7 tasks": a contrast's count of the task type's runs
            out.append(Stated(clause, int(m.group(6)), m.group(7), m.group(0), False, links, more, through))
            continue
        part, whole, words, here = m.group(1), int(m.group(2)), m.group(3), bool(m.group(5))
        if part is not None:  # "4 of the 22 runs here": the part is what links show, the whole a total
            out.append(Stated(clause, int(part), words, m.group(0), here and int(part) == whole, links, more, through))
            out.append(Stated(clause, whole, words, m.group(0) + " (the whole)", here, part=int(part)))
        else:
            out.append(Stated(clause, whole, words, m.group(0), here, links, more, through))
    return out


def check(page: str, sources: list[dict], runs_of: dict[str, int] | None = None) -> Tally:
    """The counts of runs an insight page states, checked against its links (``sources``: the
    insight's corpus.json sources, each with its step and outcome; ``runs_of``: every insight's
    number of sources, so a count of the runs another page lists checks against that page)."""
    own = Counter(s["outcome"] for s in sources)
    own[None] = len(sources)
    tally = Tally()
    found: list[Stated] = []
    for clause in (c for body in sections(page) for c in clauses(body)):
        seen = _SEEN.search(clause)
        if seen:  # "Seen in 13 runs of 6 tasks: 0 successful, 13 failed.": the Sources, by outcome
            tally.counts += 1
            tally.sources += 1
            if tuple(map(int, seen.groups())) != (own[None], own["success"], own["failure"]):
                tally.mismatches += 1
                tally.examples.append(f"mismatch (sources): {clause}")
            continue
        found += stated(clause, sources, runs_of, tally)
    if _ALL_SOURCES in page:  # the contrast's counts are the page's own runs, every one
        for s in found:
            if s.words in ("failed", "successful") and not s.links and s.clause.startswith("Runs of this task type"):
                s.here = True
    listed = {s.n for s in found if s.links}
    for s in found:
        tally.counts += 1
        if s.links:
            tally.linked += 1
            if s.n != len(s.links) + s.more:
                tally.mismatches += 1
                tally.examples.append(f"mismatch (linked {len(s.links)}+{s.more}, says {s.n}): {s.clause}")
            elif s.more:
                tally.hidden += 1
                tally.examples.append(f"hidden ({s.more} of {s.n} not named): {s.clause}")
        elif s.n in s.through:  # the runs another insight's page lists, every one
            tally.linked += 1
        elif s.here:
            tally.sources += 1
            if s.n != own[_outcome(s.words)]:
                tally.mismatches += 1
                tally.examples.append(f"mismatch (sources {own[_outcome(s.words)]}, says {s.n}): {s.clause}")
        elif s.n in listed or s.n == 0 or (s.part is not None and {s.part, s.n - s.part} <= listed | {0}):
            tally.listed += 1
        else:
            tally.unlinked += 1
            tally.kinds[re.sub(r"\d+", "N", s.said)] += 1
            tally.examples.append(f"unlinked ({s.said}): {s.clause}")
    return tally
