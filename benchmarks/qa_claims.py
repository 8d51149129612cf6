"""Count false claims of three shapes on a compiled corpus of question-answering runs (ReAct
logs: look-ups, then a call that gives the answer), checked against the raw logs the corpus
holds, not against the compiler's own reading:

- *unreturned*: a sentence says no look-up returned the expected answer (or, on an insight's
  case or a page's note on where the answer came from, the answer given), while an observation the run got before its answer holds it as a
  whole phrase once case, punctuation and spacing are set aside ("that went through" limits the
  look to calls without an error);
- *answered*: a sentence says N failed trials of a task answered (otherwise, or a value), while
  a trial it links gave no answer, a trial it says gave none did answer, N is not the number
  of trials it links, or a trial it lists as not giving the value gave it in another form
  (case, accents, punctuation, articles and "and" aside);
- *contained*: a sentence says the expected answer appears in what a look-up returned (at a
  turn it names, or before the answer in each run it links) while that observation does not
  hold it as a whole phrase, case, punctuation and spacing aside: the sentence claims only
  that the text held those words, so the text must;
- *ended*: an insight's "Runs of this task type that ended with <call> ...: N failed ..." where
  the failed runs it names are not N (some left as "and K more"), or are not the runs of the
  task type that ended the way the sentence describes (the call, and where its text came from:
  read off the corpus's recorded ``procedure|`` patterns); the "by lesson" list under it must
  name every run it counts too.

Usage: python benchmarks/qa_claims.py <compiled corpus folder> [-v]
"""

from __future__ import annotations

import ast
import json
import re
import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

_WORD = re.compile(r"[^\W_]+")
_STEP = re.compile(r"\bstep-\d{4,}\b")
_LINK = re.compile(r"\[(step-\d+)\]\([^)]*\)")


def words(text: str) -> str:
    return " " + " ".join(_WORD.findall(str(text or "").casefold())) + " "


def holds(text: str, phrase: str) -> bool:
    needle = words(phrase)
    return bool(needle.strip()) and needle in words(text)


@dataclass
class Run:
    step: str
    outcome: str
    gold: str | None
    turns: list[dict]
    patterns: list[str]

    @property
    def calls(self) -> list[dict]:
        return [t for t in self.turns if t.get("type") == "function_call"]

    @property
    def answer(self) -> str:
        return next((str(t.get("content") or "") for t in reversed(self.turns) if t.get("type") == "answer"), "")

    @property
    def answered(self) -> bool:
        return any(t.get("type") == "answer" and str(t.get("content") or "").strip() for t in self.turns)

    def observations(self, before: int | None, went_through: bool) -> list[str]:
        return [str(c.get("result") or "") for c in self.calls
                if (before is None or c["turn"] < before) and not (went_through and c.get("is_error"))]

    def answer_turn(self) -> int | None:
        last = self.calls[-1] if self.calls else None
        return last["turn"] if last is not None and self.answered else None


@dataclass
class Found:
    checked: dict[str, int] = field(default_factory=lambda: {"unreturned": 0, "contained": 0, "answered": 0, "ended": 0})
    false: dict[str, list[str]] = field(default_factory=lambda: {"unreturned": [], "contained": [], "answered": [], "ended": []})


def same_answer(a: str, b: str) -> bool:
    """Two answers that differ only in form: case, accents, punctuation, articles, "and"."""
    def form(text: str) -> list[str]:
        flat = "".join(ch for ch in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(ch))
        return [w for w in _WORD.findall(flat) if w not in ("a", "an", "the", "and")]
    return bool(form(a)) and form(a) == form(b)


def load(root: Path) -> dict[str, Run]:
    corpus = json.loads((root / "corpus.json").read_text())
    runs = {}
    for entry in corpus["runs"]:
        step = entry["step"]
        meta = (root / "raw" / step / "metadata.md").read_text()
        m = re.search(r"^- gold_answer: (.*)$", meta, re.M)
        turns = [json.loads(x) for x in (root / "raw" / step / "solver.full.jsonl").read_text().splitlines() if x.strip()]
        pats = entry.get("patterns") or []
        pats = ast.literal_eval(pats) if isinstance(pats, str) else pats
        runs[step] = Run(step, entry["outcome"], m.group(1).strip() if m else None, turns, pats)
    return runs


_EXPECTED = re.compile(r'expected "(.*?)", which no look-up( that went through)? (?:had returned|held)')
_GIVEN = re.compile(r"\[(step-\d+)\]\([^)]*\): answered \w+\\\[(.*?)\\\], which no look-up held")
# where a page says the answer the run gave came from: nowhere but the task text (or an error)
_ONLY = re.compile(r'The answer "(.*?)" \(turn \d+\) was judged wrong;.*The answer appears in no look-up( that went '
                   r'through)?, only in|The answer it gave, "(.*?)", appears in the user message at turn \d+, not in any look-up')


def unreturned(root: Path, runs: dict[str, Run], out: Found) -> None:
    for page in sorted((root / "compilation").glob("step-*.md")):
        run = runs.get(page.stem)
        if run is None or not run.gold:
            continue
        for line in page.read_text().splitlines():
            for m in _EXPECTED.finditer(line):
                out.checked["unreturned"] += 1
                if any(holds(o, run.gold) for o in run.observations(run.answer_turn(), bool(m.group(1)))):
                    out.false["unreturned"].append(f"{page.stem}: {line[:200]}")
            for m in _ONLY.finditer(line):
                out.checked["unreturned"] += 1
                given = m.group(1) if m.group(1) is not None else m.group(3)
                went_through = m.group(1) is not None and bool(m.group(2))
                if any(holds(o, given) for o in run.observations(run.answer_turn(), went_through)):
                    out.false["unreturned"].append(f"{page.stem}: {line[:200]}")
    for page in sorted((root / "insight").glob("insight-*.md")):
        for line in page.read_text().splitlines():
            for m in _GIVEN.finditer(line):
                run = runs.get(m.group(1))
                if run is None:
                    continue
                out.checked["unreturned"] += 1
                given = m.group(2).replace("\\", "")
                if any(holds(o, given) for o in run.observations(run.answer_turn(), False)):
                    out.false["unreturned"].append(f"{page.stem}: {line[:200]}")


# a named turn whose text, the sentence says, held the expected answer (a page's own run; an
# insight's case names the run first)
_AT_TURN = re.compile(r'expected "[^"]*", which appears in what the look-up at turn (\d+) returned'
                      r'|"[^"]*" appears in what the look-up at turn (\d+) returned'
                      r'|^What \S+ returned at turn (\d+) holds it: ')
_CASE_AT_TURN = re.compile(r"^- \[(step-\d+)\]\([^)]*\): answered .*?; the expected words appear in what the look-up "
                           r"at turn (\d+) \(")
_BEFORE = "the expected answer appears in what a look-up before the answer returned"


def _held_at(run: Run, turn: int) -> bool:
    answer = run.answer_turn()
    return any(c["turn"] == turn and (answer is None or turn < answer) and holds(str(c.get("result") or ""), run.gold)
               for c in run.calls)


def contained(root: Path, runs: dict[str, Run], out: Found) -> None:
    for folder in ("compilation", "insight"):
        for page in sorted((root / folder).glob("*-*.md")):
            mine = runs.get(page.stem)
            for line in page.read_text().splitlines():
                said = [(mine, int(next(g for g in m.groups() if g))) for m in _AT_TURN.finditer(line.lstrip("- "))
                        if mine is not None]
                said += [(runs.get(m.group(1)), int(m.group(2))) for m in _CASE_AT_TURN.finditer(line)]
                for run, turn in said:
                    if run is None or not run.gold:
                        continue
                    out.checked["contained"] += 1
                    if not _held_at(run, turn):
                        out.false["contained"].append(f"{page.stem} ({run.step}, turn {turn}): {line[:160]}")
                if _BEFORE not in line:
                    continue
                named = line.split("; not ", 1)[0]
                steps = list(dict.fromkeys(([page.stem] if mine is not None and "this run" in named else [])
                                           + _LINK.findall(named)))
                for step in steps:
                    run = runs.get(step)
                    if run is None or not run.gold:
                        continue
                    out.checked["contained"] += 1
                    if not any(holds(o, run.gold) for o in run.observations(run.answer_turn(), False)):
                        out.false["contained"].append(f"{page.stem} ({step}): {line[:160]}")


_TRIALS = re.compile(r"\b(?:(all|both)(?: (\d+))?|(\d+) of the (\d+)|the) (?:failed )?trials? of this task "
                     r"(?=answered|went another way|gave no answer)", re.I)
_SEGMENT_END = re.compile(r"; not |; this run |\): |\)\.|, (?:a look-up|and that look-up|though|all after|after the same)|$")
_NONE_GROUP = re.compile(r"no answer \(((?:\[[^\]]*\]\([^)]*\)(?:, | and )?)+)")


def answered(root: Path, runs: dict[str, Run], out: Found) -> None:
    for page in sorted((root / "compilation").glob("step-*.md")):
        for line in page.read_text().splitlines():
            for m in _TRIALS.finditer(line):
                rest = line[m.end():]
                seg = rest[:_SEGMENT_END.search(rest).start()]
                none = set()
                for g in _NONE_GROUP.finditer(seg):
                    none |= set(_LINK.findall(g.group(1)))
                linked = list(dict.fromkeys(([page.stem] if "this run" in seg else []) + _LINK.findall(seg)))
                claimed = (2 if (m.group(1) or "").lower() == "both" and not m.group(2) else
                           int(m.group(2)) if m.group(2) else int(m.group(3)) if m.group(3) else 1)
                out.checked["answered"] += 1
                wrong = [s for s in linked if s in runs and runs[s].answered == (s in none)]
                said_all_answered = rest.startswith("answered") and bool(none)  # "answered otherwise: ..., no answer (...)"
                value = re.match(r'answered "(.*?)"(?: or a form of it| \()', rest)
                if value:  # the trials after "; not" gave some other answer, not this one written otherwise
                    listed = re.match(r"; not ((?:\[[^\]]*\]\([^)]*\)|[^()])*)", rest[len(seg):])
                    others = _LINK.findall(listed.group(1)) if listed else []
                    wrong += [s for s in others if s in runs and same_answer(runs[s].answer, value.group(1).replace("\\", ""))]
                if wrong or said_all_answered or (len(linked) != claimed and "more" not in seg):
                    out.false["answered"].append(f"{page.stem}: {m.group(0)}{seg[:160]} (wrong: {wrong}, "
                                                 f"linked {len(linked)} of {claimed})")


_ENDED = re.compile(r"^Runs of this task type that ended with (.*?): (\d+) failed\b")
_COUNTED = re.compile(r"^Runs of this task type .*?, the (\d+) failed: (.*)$")
_BY_LESSON = re.compile(r"^- \[[^\]]*\]\([^)]*\): (\d+) runs? \((.*)\)$")


def _named(text: str) -> tuple[list[str], bool]:
    steps = list(dict.fromkeys(_STEP.findall(text)))
    return steps, bool(re.search(r"\band \d+ more\b", text))


def _described(desc: str, title: str, key: str, runs: dict[str, Run]) -> set[str] | None:
    """The failed runs the sentence describes: ended with the call it names (or the page's, for
    "this call"), with the source its words (or the title's) name."""
    if not key.startswith("procedure|"):
        return None
    tool = key.split("|", 1)[1].split(":", 1)[0]
    said = title if desc.strip() == "this call" else desc
    source = ("own" if "no look-up held word for word" in said else "looked-up" if "a value a look-up returned" in said
              else "label" if "giving the verdict" in said
              else "task" if "only the question held" in said or "the question itself holds" in said else None)
    out = set()
    for r in runs.values():
        if r.outcome != "failure" or not r.calls or r.calls[-1].get("name") != tool or not r.answered:
            continue
        proc = next((p for p in r.patterns if p.startswith(f"procedure|{tool}:")), None)
        if proc is None:
            continue
        if source is not None and proc.split(":", 1)[1] != source:
            continue
        out.add(r.step)
    return out


def ended(root: Path, runs: dict[str, Run], out: Found) -> None:
    for page in sorted((root / "insight").glob("insight-*.md")):
        text = page.read_text()
        key = (re.search(r'^key: "(.*)"$', text, re.M) or [None, ""])[1]
        title = (re.search(r'^title: "(.*)"$', text, re.M) or [None, ""])[1]
        lines = text.splitlines()
        for i, line in enumerate(lines):
            m = _ENDED.match(line)
            if m:
                out.checked["ended"] += 1
                n = int(m.group(2))
                counted = next((c for c in map(_COUNTED.match, lines[i + 1:]) if c), None)  # under "Runs behind the counts"
                steps, hidden = _named(counted.group(2)) if counted else ([], True)
                want = _described(m.group(1), title, key, runs)
                if n == 0 and counted is None:  # none counted, none to name
                    hidden = False
                if hidden or len(steps) != n or (want is not None and want != set(steps)):
                    out.false["ended"].append(f"{page.stem}: {line[:160]} (named {len(steps)}{', some hidden' if hidden else ''}"
                                              + (f"; described {len(want)}" if want is not None else "") + ")")
            b = _BY_LESSON.match(line)
            if b and "ended this way teach" in "\n".join(lines[max(0, i - 8):i]):
                out.checked["ended"] += 1
                steps, hidden = _named(b.group(2))
                if hidden or len(steps) != int(b.group(1)):
                    out.false["ended"].append(f"{page.stem}: {line[:160]}")


def check(root: Path) -> Found:
    runs = load(root)
    out = Found()
    unreturned(root, runs, out)
    contained(root, runs, out)
    answered(root, runs, out)
    ended(root, runs, out)
    return out


def main(argv: list[str]) -> int:
    root = Path(argv[0])
    found = check(root)
    for shape in found.checked:
        print(f"{shape}: {len(found.false[shape])} false of {found.checked[shape]} checked")
        if "-v" in argv:
            for ex in found.false[shape]:
                print("   ", ex)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
