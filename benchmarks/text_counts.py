"""Whether every count of runs an insight page's text states can be checked from what the page links.

A reader who sees "16 failed runs" beside 15 sources, or "19 of 23 runs" with no list of the 23,
cannot check the lesson. This reads an insight page as a reader does: its When it applies, What
to do and Evidence sections, each cut into clauses (a sentence, or a list item). In a clause,
each stated count of runs ("13 failed runs", "4 of the 22 runs here", "20 failed of 7 tasks")
is checked by the first rule that applies:

- *linked*: run pages are linked after the count, before the next count of the clause: the count
  must equal the distinct runs linked (plus the "K more" the clause says it left out);
- *sources*: it counts the page's own runs ("runs here", "Seen in N runs", "N successful, M
  failed" after it): it must equal the Sources list, by outcome when it names one;
- *listed*: another clause of the page links exactly that many runs after stating the same count
  (the sentence "In 12 of the 13 failed runs here ..." with its list "The 12 failed runs ...: ...");
- otherwise it is *unlinked*: a reader cannot tell which runs it counts.

A linked or sources count that disagrees is a *mismatch*. Counts of other things (tasks, records,
calls, looked-up values) are not checked here; nor are the counts of a quoted rule or a task's
words."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

SECTIONS = ("When it applies", "What to do", "Evidence")
_STEP_LINK = re.compile(r"\[(step-\d+)\]\([^)]*\)")
_OTHER_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_QUOTE = re.compile(r'"[^"]*"')
# "13 failed runs", "4 of the 22 runs here", "the 3 failed trials", "20 failed of 7 tasks, 1 successful"
_COUNT = re.compile(r"\b(?:(\d+) of (?:the )?)?(\d+) ((?:(?:failed|successful|other|such|more|distinct) )*)"
                    r"(runs?|trials?)\b( here(?! (?:that|whose|where|who)\b))?|\b(\d+) (failed|successful)\b(?! runs?\b| trials?\b)")
_MORE = re.compile(r"\band (\d+) more\b")
_SEEN = re.compile(r"Seen in (\d+) runs?\b[^:]*: (\d+) successful, (\d+) failed")


@dataclass
class Tally:
    counts: int = 0  # counts of runs stated
    linked: int = 0
    sources: int = 0
    listed: int = 0
    unlinked: int = 0
    mismatches: int = 0
    examples: list[str] = field(default_factory=list)  # the mismatched and unlinked clauses, for reading
    kinds: Counter = field(default_factory=Counter)  # unlinked counts by their words

    def add(self, other: "Tally") -> None:
        for name in ("counts", "linked", "sources", "listed", "unlinked", "mismatches"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.examples += other.examples
        self.kinds.update(other.kinds)


def sections(page: str) -> list[str]:
    """The reader's text of an insight page: the sections that state the lesson and its evidence."""
    out = []
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
        line = _OTHER_LINK.sub("⟨insight⟩", line)
        line = re.sub(r"(?<!⟨)`?\b(step-\d+)\b`?", r"⟨\1⟩", line)  # a run named without a link is named still
        line = _QUOTE.sub('"…"', line)  # a quoted rule or message counts its own things
        out += [c for c in re.split(r"(?<=[.])\s+(?=[A-Z⟨])", line.strip(" -")) if c]
    return out


def _outcome(words: str) -> str | None:
    return "failure" if "failed" in words else "success" if "successful" in words else None


def check(page: str, sources: list[dict]) -> Tally:
    """The counts of runs an insight page states, checked against its links (``sources``: the
    insight's corpus.json sources, each with its step and outcome)."""
    own = Counter(s["outcome"] for s in sources)
    own[None] = len(sources)
    tally = Tally()
    found = []  # (clause, position, stated, outcome, here, links after it, more)
    for clause in (c for body in sections(page) for c in clauses(body)):
        matches = list(_COUNT.finditer(clause))
        for k, m in enumerate(matches):
            end = matches[k + 1].start() if k + 1 < len(matches) else len(clause)
            after = clause[m.end():end]
            links = set(re.findall(r"⟨(step-\d+)⟩", after))
            more = sum(int(x) for x in _MORE.findall(after))
            if m.group(6):  # "20 failed of 7 tasks": a contrast's count of the task type's runs
                found.append((clause, m.group(6), m.group(7), False, links, more, m.group(0)))
                continue
            part, whole, words, here = m.group(1), m.group(2), m.group(3), bool(m.group(5))
            outcome = _outcome(words)
            if part is not None:  # "4 of the 22 runs here": the part is what links show, the whole a total
                found.append((clause, part, words, here and part == whole, links, more, m.group(0)))
                found.append((clause, whole, words, here, set(), 0, m.group(0) + " (the whole)"))
            else:
                found.append((clause, whole, words, here, links, more, m.group(0)))
        for seen in _SEEN.finditer(clause):  # "Seen in 13 runs of 6 tasks: 0 successful, 13 failed."
            stated = (int(seen.group(1)), int(seen.group(2)), int(seen.group(3)))
            tally.counts += 1
            tally.sources += 1
            if stated != (own[None], own["success"], own["failure"]):
                tally.mismatches += 1
                tally.examples.append(f"mismatch (sources): {clause}")
    listed: dict[int, set[frozenset]] = {}
    for clause, n, words, here, links, more, said in found:
        if links:
            listed.setdefault(int(n), set()).add(frozenset(links))
    for clause, n, words, here, links, more, said in found:
        if "Seen in" in clause and _SEEN.search(clause):
            continue  # checked above, as one
        n = int(n)
        tally.counts += 1
        if links:
            tally.linked += 1
            if n != len(links) + more:
                tally.mismatches += 1
                tally.examples.append(f"mismatch (linked {len(links)}+{more}, says {n}): {clause}")
        elif here:
            tally.sources += 1
            if n != own[_outcome(words)]:
                tally.mismatches += 1
                tally.examples.append(f"mismatch (sources {own[_outcome(words)]}, says {n}): {clause}")
        elif n in listed or n == 0:
            tally.listed += 1
        else:
            tally.unlinked += 1
            tally.kinds[re.sub(r"\d+", "N", said)] += 1
            tally.examples.append(f"unlinked ({said}): {clause}")
    return tally
