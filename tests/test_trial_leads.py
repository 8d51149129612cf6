"""A failed trial's page points to the way out its own log shows: the name its error listed, or
the page it read, that its task's successful trial then searched and found the answer with.

What a reader relies on: the lead is said only when the failed trial's own log holds it (the
error at the turn named listed that name, no call of the run sent it; the look-up named is one
the run made), with what to do; and on every importer's fixtures (FEVER and WebShop episodes
among them) each name and turn the record keeps for it is true of the log, or nothing is kept.
"""

from __future__ import annotations

import json
import re

import pytest
from fixture_runs import RUNS, relabeled
from test_add import ok

from wikitrace.compilers.page_notes import listed_names
from wikitrace.compilers.reading import read_run
from wikitrace.compilers.trial_record import record


def _trials(*blocks: tuple[str, str]) -> str:
    """A Reflexion printout of one question's trials: (CORRECT|INCORRECT|HALTED, the agent's text)."""
    out = []
    for i, (kind, text) in enumerate(blocks, 1):
        out.append("########################################\n"
                   f"BEGIN TRIAL {i}\nTrial summary: Correct: {int(kind == 'CORRECT')}, "
                   f"Incorrect: {int(kind == 'INCORRECT')}, Halted: {int(kind == 'HALTED')}\n"
                   "#######################################\n")
        for section in ("CORRECT", "INCORRECT", "HALTED"):
            out.append(f"------------- BEGIN {section} AGENTS -------------\n\n")
            if section == kind:
                out.append(text.strip() + "\n\n")
    return "".join(out)


Q = "Question: In what year was the Harbourside band that Ilse Moro played drums for formed?\n"
LISTED_WIN = Q + """Thought 1: I need to search Ilse Moro Harbourside band.
Action 1: Search[Ilse Moro Harbourside band]
Observation 1: Could not find [Ilse Moro Harbourside band]. Similar: ['Ilse Moro', 'The Gullwings'].
Thought 2: I can search The Gullwings.
Action 2: Search[The Gullwings]
Observation 2: The Gullwings are a rock band from Harbourside, formed in 1983. Their drummers included Ilse Moro.
Thought 3: The band was formed in 1983.
Action 3: Finish[1983]
Observation 3: Answer is CORRECT
Correct answer: 1983
"""
LISTED_LOST = Q + """Thought 1: I need to search Ilse Moro Harbourside band.
Action 1: Search[Ilse Moro Harbourside band]
Observation 1: Could not find [Ilse Moro Harbourside band]. Similar: ['Ilse Moro', 'The Gullwings'].
Thought 2: I should search the band's formation year.
Action 2: Search[Ilse Moro Harbourside band formation year]
Observation 2: Could not find [Ilse Moro Harbourside band formation year]. Similar: ['Ilse Moro'].
Correct answer: 1983
"""

P = "Question: Which role on Dockside Nights made famous the actor who starred in Low Tide?\n"
PAGE_WIN = P + """Thought 1: I need to search Low Tide and find its actors.
Action 1: Search[Low Tide]
Observation 1: Low Tide is a 1981 television play starring Mara Quell and Tobin Hale.
Thought 2: I can search Tobin Hale.
Action 2: Search[Tobin Hale]
Observation 2: Tobin Hale is an English actor best known as Captain Orm on Dockside Nights.
Thought 3: The role is Captain Orm.
Action 3: Finish[Captain Orm]
Observation 3: Answer is CORRECT
Correct answer: Captain Orm
"""
PAGE_LOST = P + """Thought 1: I need to search Low Tide and find its actors.
Action 1: Search[Low Tide]
Observation 1: Low Tide is a 1981 television play starring Mara Quell and Tobin Hale.
Thought 2: I can search Mara Quell.
Action 2: Search[Mara Quell]
Observation 2: Mara Quell is an actress, known for playing Nell Varga on Dockside Nights.
Thought 3: The role is Nell Varga.
Action 3: Finish[Nell Varga]
Observation 3: Answer is INCORRECT
Correct answer: Captain Orm
"""


def _pages(tmp_path, text: str, by: str = "outcome") -> dict[str, list[str]]:
    """The "In short" lines of each run's page, by its outcome (or its step) in the corpus."""
    path = tmp_path / "react_reflexion_trials.txt"
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "c"
    ok("compile", str(path), "--out", str(out), "--offline", "-q")
    got = {}
    for r in json.loads((out / "corpus.json").read_text())["runs"]:
        page = (out / "compilation" / f"{r['step']}.md").read_text(encoding="utf-8")
        got[r[by]] = [ln for ln in page.split("## In short\n", 1)[1].split("\n## ", 1)[0].splitlines()
                      if ln.startswith("- ")]
    return got


def test_a_failure_is_told_its_own_error_listed_the_name_the_success_found_the_answer_with(tmp_path):
    lines = _pages(tmp_path, _trials(("HALTED", LISTED_LOST), ("CORRECT", LISTED_WIN)))
    line = next(ln for ln in lines["failure"] if ln.startswith("- The successful trial"))
    assert "which Search\\[The Gullwings\\] had returned; this run gave no answer" in line, line
    assert ("though the error at turn 1 had listed 'The Gullwings' and no call of this run sent it: when an error's "
            "list offers a name, search the one that fits the question's next step before rewording the query") in line
    assert "#turn-1)" in line  # the error's turn is linked


def test_a_failure_is_told_the_page_it_read_named_what_the_success_searched_next(tmp_path):
    lines = _pages(tmp_path, _trials(("INCORRECT", PAGE_LOST), ("CORRECT", PAGE_WIN)))
    line = next(ln for ln in lines["failure"] if ln.startswith("- The successful trial"))
    assert ("this run answered \"Nell Varga\", and no such look-up of this run went through; the successful trial "
            "searched \"Tobin Hale\" after Search\\[Low Tide\\] had named it at its turn 1, a look-up this run made "
            "too: when a page names the thing the question asks about next, search that name before answering") in line


def test_no_lead_when_the_failure_never_had_the_name_in_view(tmp_path):
    lost = LISTED_LOST.replace("Similar: ['Ilse Moro', 'The Gullwings']", "Similar: ['Ilse Moro', 'Harbourside']")
    lines = _pages(tmp_path, _trials(("HALTED", lost), ("CORRECT", LISTED_WIN)))
    line = next(ln for ln in lines["failure"] if ln.startswith("- The successful trial"))
    assert "had listed" not in line and "had named" not in line and "no such look-up" in line


def _fold(text: str) -> str:
    return " ".join(str(text).split()).strip(" \"'\u201c\u201d\u2018\u2019`").casefold()


@pytest.mark.parametrize("success", [False, True])
@pytest.mark.parametrize("run", RUNS, ids=lambda r: r.run_id)
def test_on_every_fixture_the_kept_leads_are_true_of_the_log(run, success):
    """FEVER, WebShop, HotpotQA and every other importer's runs: a name kept as offered was listed
    by the error at its turn and sent by no call; a page kept as naming the answer's query holds it."""
    r = read_run(relabeled(run, success))
    kept = record(r)
    by_turn = {c.n: c for c in r.calls}
    sent = {_fold(c.turn.arguments) for c in r.calls if isinstance(c.turn.arguments, str)}
    for tool, name, turn in kept.get("offered") or ():
        c = by_turn[turn]
        assert c.error and c.name == tool and name in listed_names(c.turn.result or ""), (name, turn)
        assert _fold(name) not in sent, name
    seen = kept.get("expected_seen")
    if seen:  # the look-up whose text held the expected answer, the first that did
        c = by_turn[seen["turn"]]
        gold = (r.run.task.metadata or {}).get("gold_answer")
        # held as written, or word for word with case, punctuation and spacing set aside
        words = lambda text: " " + " ".join(re.findall(r"[^\W_]+", text.casefold())) + " "  # noqa: E731
        assert not c.error and c.name == seen["tool"] and words(gold) in words(c.turn.result or "")
    elif seen == {}:  # the log gives an expected answer no look-up returned
        gold = (r.run.task.metadata or {}).get("gold_answer")
        assert gold and not any(not c.error and re.search(r"(?<![\w.])" + re.escape(gold.strip().casefold()) + r"(?!\w)",
                                                          (c.turn.result or "").casefold()) for c in r.calls)
    named = ((kept.get("answer") or {}).get("found") or {}).get("named_by")
    if named:
        found = kept["answer"]["found"]
        page = by_turn[named["turn"]]
        name = re.sub(r"\s*\([^()]*\)$", "", found["query"].strip(" \"'"))
        assert not page.error and name.casefold() in " ".join((page.turn.result or "").split()).casefold()
        assert named["turn"] < found["turn"]


def test_a_success_says_its_failed_trial_had_the_name_in_its_own_errors_list(tmp_path):
    lines = _pages(tmp_path, _trials(("HALTED", LISTED_LOST), ("CORRECT", LISTED_WIN)))
    assert lines["success"][0].startswith(
        "- Look up Search\\[The Gullwings\\] (the name its Search error at turn 1 listed) and answer from what it returns (\"1983\"), as this run did: the failed "
        "trial of this task gave no answer ("), lines["success"]
    assert "and that look-up never went through there, though its own error had listed that name." in lines["success"][0]
    lost = LISTED_LOST.replace("Similar: ['Ilse Moro', 'The Gullwings']", "Similar: ['Ilse Moro', 'Harbourside']")
    (tmp_path / "b").mkdir()
    assert not any("error had listed that name" in ln for ln in _pages(tmp_path / "b", _trials(("HALTED", lost), ("CORRECT", LISTED_WIN)))["success"])


# --- the error insight: the count of its failed runs whose own error listed the way out ----------------

# the same shape, another question: each name replaced (what the second question's trials read)
_SECOND = {"Ilse Moro": "Ada Venn", "Harbourside band": "Quayside choir", "The Gullwings": "Quayside Singers",
           "1983": "1961", "played drums for formed": "sang in founded", "rock band from Harbourside": "choir",
           "drummers included": "singers included"}


def _second(text: str) -> str:
    for old, new in _SECOND.items():
        text = text.replace(old, new)
    return text


LISTED_WIN_2, LISTED_LOST_2 = _second(LISTED_WIN), _second(LISTED_LOST)


def _insight_with(out, needle: str) -> str | None:
    return next((p.read_text(encoding="utf-8") for p in sorted((out / "insight").glob("insight-*.md"))
                 if needle in p.read_text(encoding="utf-8")), None)


def test_the_error_insight_counts_the_failed_runs_whose_own_error_listed_the_way_out(tmp_path):
    text = _trials(("HALTED", LISTED_LOST), ("CORRECT", LISTED_WIN)) + _trials(
        ("HALTED", LISTED_LOST_2), ("CORRECT", LISTED_WIN_2)).replace("BEGIN TRIAL 1", "BEGIN TRIAL 3").replace(
        "BEGIN TRIAL 2", "BEGIN TRIAL 4")
    path = tmp_path / "react_reflexion_trials.txt"
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "c"
    ok("compile", str(path), "--out", str(out), "--offline", "-q")
    lost = sorted(r["step"] for r in json.loads((out / "corpus.json").read_text())["runs"] if r["outcome"] == "failure")
    page = _insight_with(out, "searched and answered from")
    assert page is not None
    assert ("When a Search error lists names, search the listed one that fits the question's next step before "
            "rewording the query or answering from another page: in 2 of the 2 failed runs here whose task a trial "
            "solved, the run's own error had listed the very name that successful trial searched and answered from, "
            "and the run never sent it.") in " ".join(page.split())
    assert ("The 2 failed runs whose own Search error listed the name their task's successful trial answered from, "
            "each page's \"In short\" naming it and the turn: "
            + ", ".join(f"[{s}](../compilation/{s}.md)" for s in lost) + ".") in page
    for s in lost:  # each linked page names it
        assert "and no call of this run sent it" in (out / "compilation" / f"{s}.md").read_text(encoding="utf-8")


def test_one_run_with_the_lead_makes_no_insight_advice(tmp_path):
    path = tmp_path / "react_reflexion_trials.txt"
    path.write_text(_trials(("HALTED", LISTED_LOST), ("CORRECT", LISTED_WIN)), encoding="utf-8")
    out = tmp_path / "c"
    ok("compile", str(path), "--out", str(out), "--offline", "-q")
    assert _insight_with(out, "searched and answered from") is None


# --- no trial solved the question: the page another trial read that held the expected answer ----------

H = "Question: Which boxer did Oren Dale beat for the vacant title in 1968?\n"
HELD = H + """Thought 1: I need to search Oren Dale.
Action 1: Search[Oren Dale]
Observation 1: Oren Dale is a retired boxer who fought Tam Reyes twice.
Thought 2: I should search Tam Reyes.
Action 2: Search[Tam Reyes]
Observation 2: Tam Reyes was a boxer. In 1968 Oren Dale beat Lio Marsh for the vacant title, then lost to Reyes.
Thought 3: The answer is Tam Reyes.
Action 3: Finish[Tam Reyes]
Observation 3: Answer is INCORRECT
Correct answer: Lio Marsh
"""
MISSED_AGAIN = H + """Thought 1: I should look up Oren Dale first.
Action 1: Search[Oren Dale]
Observation 1: Oren Dale is a retired boxer who fought Tam Reyes twice.
Thought 2: He fought Tam Reyes, so the answer is Tam Reyes.
Action 2: Finish[Tam Reyes]
Observation 2: Answer is INCORRECT
Correct answer: Lio Marsh
"""
MISSED = H + """Thought 1: I need to search Oren Dale.
Action 1: Search[Oren Dale]
Observation 1: Oren Dale is a retired boxer who fought Tam Reyes twice.
Thought 2: The answer is Tam Reyes.
Action 2: Finish[Tam Reyes]
Observation 2: Answer is INCORRECT
Correct answer: Lio Marsh
"""


def _by_run(tmp_path, text: str) -> dict[str, list[str]]:
    return _pages(tmp_path, text, "step")


def test_a_failure_is_pointed_to_the_page_another_trial_read_that_held_the_expected_answer(tmp_path):
    got = _by_run(tmp_path, _trials(("INCORRECT", HELD), ("INCORRECT", MISSED), ("INCORRECT", MISSED_AGAIN)))
    steps = sorted(got)
    held, missed = steps[0], steps[1:]
    assert len(missed) == 2
    for s in missed:
        line = next(ln for ln in got[s] if "trials of this task answered" in ln)
        assert (f"What Search\\[Tam Reyes\\] returned in [{held}]({held}.md) at its turn 2 held the expected answer, a "
                "look-up that never went through in this run, and that trial gave this answer all the same: when a "
                "page you read may hold the answer, read it for exactly what the question asks before answering."
                ) in line, line
        assert "find a look-up whose text shows it fits every part of the task" not in line  # the general advice gives way
    assert not any("held the expected answer" in ln for ln in got[held])  # it read the page itself


def test_the_page_is_named_as_one_to_look_up_when_its_trial_answered_otherwise(tmp_path):
    other = HELD.replace("Finish[Tam Reyes]", "Finish[Ada Reyes]")
    got = _by_run(tmp_path, _trials(("INCORRECT", other), ("INCORRECT", MISSED), ("INCORRECT", MISSED_AGAIN)))
    held = sorted(got)[0]
    line = next(ln for ln in got[sorted(got)[1]] if "trials of this task answered" in ln)
    assert (f"What Search\\[Tam Reyes\\] returned in [{held}]({held}.md) at its turn 2 held the expected answer, a look-up "
            "that never went through in this run: when the trials of a question keep giving one wrong answer, look up "
            "the pages the other trials read before giving it again.") in line, line


def test_a_lead_takes_the_place_of_the_general_advice_on_an_answer_other_trials_gave_too(tmp_path):
    again = PAGE_LOST.replace("Thought 2: I can search Mara Quell.", "Thought 2: Mara Quell is the actor to search.")
    got = _by_run(tmp_path, _trials(("INCORRECT", PAGE_LOST), ("INCORRECT", again), ("CORRECT", PAGE_WIN)))
    lines = [ln for step in sorted(got) for ln in got[step] if ln.startswith("- The successful trial")]
    assert len(lines) == 2
    for line in lines:
        assert "search that name before answering. Both failed trials of this task answered \"Nell Varga\"" in line, line
        assert "find a look-up whose text shows it fits every part of the task" not in line


# --- FEVER: a verdict is chosen, not read off a page ----------------------------------------------------

FEVER_PAIR = """3310 Claim: The Harlow Viaduct was built by Tomas Brenn.
Thought 1: I should search Harlow Viaduct and see who built it.
Action 1: Search[Harlow Viaduct builder]
Observation 1: Could not find [Harlow Viaduct builder]. Similar: ['Harlow Bridge', 'Brenn Works'].

Thought 2: Let me search who built the viaduct.
Action 2: Search[viaduct built by Tomas Brenn]
Observation 2: Could not find [viaduct built by Tomas Brenn]. Similar: ['Harlow Bridge', 'Brenn Works'].

Thought 3: Let me search the builder of the Harlow viaduct.
Action 3: Search[builder of the Harlow viaduct]
Observation 3: Could not find [builder of the Harlow viaduct]. Similar: ['Harlow Bridge', 'Brenn Works'].

Thought 4: I cannot find it, so there is not enough information.
Action 4: Finish[NOT ENOUGH INFO]
Observation 4: Episode finished, reward = 0


{'steps': 4, 'answer': 'NOT ENOUGH INFO', 'gt_answer': 'SUPPORTS', 'question_idx': 3310, 'em': 0, 'reward': 0, 'f1': 0} 

1 1 0.0 3.1
-----------

3310 Claim: The Harlow Viaduct was built by Tomas Brenn.
Thought 1: I should search Harlow Viaduct and see who built it.
Action 1: Search[Harlow Viaduct builder]
Observation 1: Could not find [Harlow Viaduct builder]. Similar: ['Harlow Bridge', 'Brenn Works'].

Thought 2: The list offers Harlow Bridge, the viaduct's other name.
Action 2: Search[Harlow Bridge]
Observation 2: Harlow Bridge, also the Harlow Viaduct, is a railway viaduct built by Tomas Brenn in 1871. Its arches supports the line over the Harl valley.

Thought 3: It was built by Tomas Brenn, so the claim is supported.
Action 3: Finish[SUPPORTS]
Observation 3: Episode finished, reward = 1


{'steps': 3, 'answer': 'SUPPORTS', 'gt_answer': 'SUPPORTS', 'question_idx': 3310, 'em': 1, 'reward': 1, 'f1': 1} 

2 2 1.0 3.0
-----------
"""


def test_a_fever_failure_is_told_its_error_listed_the_page_the_successful_episode_read(tmp_path):
    """The ReAct FEVER printout, the same claim twice: the episode that read the page its error
    listed got the verdict; the one that kept rewording did not. A page's "supports" (a verb) is
    no source of the verdict "SUPPORTS": no line says a look-up returned it."""
    path = tmp_path / "fever_pair.txt"
    path.write_text(FEVER_PAIR, encoding="utf-8")
    out = tmp_path / "c"
    ok("compile", str(path), "--out", str(out), "--offline", "-q")
    runs = {r["outcome"]: r["step"] for r in json.loads((out / "corpus.json").read_text())["runs"]}
    pages = {k: (out / "compilation" / f"{s}.md").read_text(encoding="utf-8") for k, s in runs.items()}
    assert (f"The successful trial [{runs['success']}]({runs['success']}.md) of this task answered \"SUPPORTS\" at its "
            "turn 3 after Search\\[Harlow Bridge\\] went through at its turn 2; this run answered \"NOT ENOUGH INFO\", "
            "and no such look-up of this run went through, though the error at turn 1 had listed 'Harlow Bridge' and no "
            "call of this run sent it: when an error's list offers a name, search the one that fits the question's next "
            "step before answering.") in pages["failure"]
    for page in pages.values():
        assert "had returned \"SUPPORTS\"" not in page and "returns (\"SUPPORTS\")" not in page
