"""What a QA page says about look-ups, trials and counted runs holds of the logs it links, on a
Reflexion printout of our own in the real shape (tests/fixtures/importers/react_reflexion/
react_reflexion_claims.txt): an expected answer a look-up held with other quote marks, spacing
or case counts as returned; a trial that halted without an answer is never counted among those
that answered; a procedure page's count of runs names the set it counts, every run of it."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from fixture_runs import IMPORTERS

from wikitrace.build import BuildOptions, build
from wikitrace.compilers.ending_words import ended_with
from wikitrace.compilers.offline import compile_offline
from wikitrace.compilers.phrase_match import holds_phrase, phrase_span
from wikitrace.corpus.contrast_words import contrast_sentence
from wikitrace.runs import load
from wikitrace.runs.model import Run

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import qa_claims  # noqa: E402

CLAIMS = IMPORTERS / "react_reflexion" / "react_reflexion_claims.txt"
RUNS = [r for r in load._read(CLAIMS, load.detect(CLAIMS)) if isinstance(r, Run)]


def _run(question: str, answer: str) -> Run:
    return next(r for r in RUNS if question in (r.task.instruction or "")
                and any(t.type == "answer" and t.content == answer for t in r.turns))


def _in_short(run: Run) -> str:
    return "\n".join(f.text for f in compile_offline(run).in_short)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("claims") / "out"
    build(BuildOptions(inputs=[CLAIMS], out=out, offline=True, quiet=True))
    return out


def test_a_phrase_is_held_whatever_its_quote_marks_spacing_and_case_but_only_whole():
    assert holds_phrase("the films Tin Harbour (2004) and Glass  Orchard (2006), and", '"Glass Orchard" (2006)')
    assert holds_phrase("Until 1990 the Rovers played at the old quay ground.", "Old Quay Ground")
    assert not holds_phrase("the Old Quay Groundsman retired", "Old Quay Ground")
    assert not holds_phrase("anything at all", "\"\" ()")
    text = "came to notice in Glass  Orchard (2006), and"
    start, end = phrase_span(text, '"Glass Orchard" (2006)')
    assert text[start:end] == "Glass  Orchard (2006"


def test_an_expected_answer_a_search_held_in_other_marks_is_said_to_be_returned():
    text = _in_short(_run("Nell Vance", "Tin Harbour"))
    assert "which appears in what the look-up at turn 2 returned" in text
    assert "no look-up" not in text


def test_an_expected_answer_only_a_lookup_held_is_said_to_be_returned():
    text = _in_short(_run("Corran Rovers", "Corran Park"))  # the first trial: Search, then Lookup[ground]
    assert "which appears in what the look-up at turn 2 returned" in text, text


def test_a_trial_that_halted_is_counted_as_giving_no_answer(corpus):
    page = next(p for p in (corpus / "compilation").glob("step-*.md") if "Ros Hale\"), as this run did" in p.read_text())
    line = next(x for x in page.read_text().splitlines() if "failed trials of this task" in x)
    assert "all 3 failed trials of this task went another way: 2 answered otherwise" in line
    halted = re.search(r"1 gave no answer \(\[(step-\d+)\]", line).group(1)
    log = (corpus / "raw" / halted / "solver.full.jsonl").read_text()
    assert '"type":"answer"' not in log.replace(" ", "")  # the trial it names gave none


def test_a_procedure_count_names_the_set_it_counts_and_every_run_of_it(corpus):
    data = json.loads((corpus / "corpus.json").read_text())
    checked = 0
    for entry in data["insights"]:
        c = entry.get("contrast") or {}
        if not str(c.get("pattern", "")).startswith("procedure|"):
            continue
        page = (corpus / "insight" / f"{entry['id']}.md").read_text()
        assert f"Runs of this task type {ended_with(c['pattern'])}: " in page
        meeting = {r["step"] for r in data["runs"] if r["outcome"] == "failure" and c["pattern"] in r["patterns"]}
        named = re.search(r"Runs of this task type .*?, the \d+ failed: (.*)", page)
        assert set(re.findall(r"step-\d+", named.group(1) if named else "")) == meeting
        checked += 1
    assert checked


def test_the_ending_sentence_says_which_way_of_ending_it_counts():
    said = contrast_sentence({"contrast": {"pattern": "procedure|Finish:own", "failed_met": 3, "success_met": 2,
                                           "verdict": "none"}})
    assert said.startswith("Runs of this task type that ended with Finish, giving an answer no look-up held word for "
                           "word: 3 failed, 2 successful.")


def test_the_claims_checker_finds_none_false_on_the_fixture_corpus(corpus):
    found = qa_claims.check(corpus)
    assert all(found.checked.values()), found.checked
    assert found.false == {"unreturned": [], "contained": [], "answered": [], "ended": []}


# a retry whose reflection names the answer with a hyphen, while the page it searched wrote it with
# an en dash: the answer came from that search, not from the reflection in the task text
_DASHED = """########################################
BEGIN TRIAL 2
Trial summary: Correct: 0, Incorrect: 1, Halted: 0
#######################################
------------- BEGIN CORRECT AGENTS -------------

------------- BEGIN INCORRECT AGENTS -----------

Question: The coach of the Skerry Gulls played home games at which stadium in 1998?You have attempted to answer following question before and failed. The following reflection(s) give a plan to avoid failing to answer the question in the same way you did previously. Use them to improve your strategy of correctly answering the given question.
Reflections:
- I assumed the coach stayed at Hollin-Marsh Park without checking. I should search Hollin-Marsh Park first.
Thought 1: I need to search Hollin-Marsh Park.
Action 1: Search[Hollin-Marsh Park]
Observation 1: Hollin\u2013Marsh Park is a football ground in Skerry, home of the Skerry Gulls since 1971.
Thought 2: So the answer is Hollin-Marsh Park.
Action 2: Finish[Hollin-Marsh Park]
Observation 2: Answer is INCORRECT
Correct answer: Brack Lane

------------- BEGIN HALTED AGENTS --------------

"""


def test_an_answer_a_search_wrote_with_another_dash_is_said_to_come_from_that_search(tmp_path):
    path = tmp_path / "react_reflexion_dash.txt"
    path.write_text(_DASHED.replace("\\u2013", "\u2013"), encoding="utf-8")
    [run] = [r for r in load._read(path, load.detect(path)) if isinstance(r, Run)]
    text = _in_short(run)
    assert "appears in what Search returned at turn 1" in text
    assert "only in the user message" not in text


def test_a_retry_names_a_listed_choice_only_when_it_is_one_of_the_choices():
    """A ReAct Search error lists its near titles; a retry that sends a phrase found inside one of
    them ("Patti Page" inside 'Patti Page discography') did not send a name the error listed."""
    from wikitrace.compilers.insight_words import named_by

    error = ("could not find [\"i'll keep the lovelight burning\"]. similar: [\"i'll keep the lovelight burning\", "
             "'list of songs recorded by patti page', 'ray mckinley', 'patti page discography']")
    assert named_by(error, "I'll Keep the Lovelight Burning", "Ray McKinley")
    assert named_by(error, "I'll Keep the Lovelight Burning", "Patti  Page discography")
    assert not named_by(error, "I'll Keep the Lovelight Burning", "Patti Page")
    # an error that lists no choices still names what its text holds
    assert named_by("error: flight hat123 is not available on that date", "HAT001", "HAT123")
    # a wiki's dash is the hyphen an agent types
    assert named_by("Similar: ['Russia\u2013United Kingdom relations', 'World War I']", "x", "Russia-United Kingdom relations")


def test_the_line_of_a_retry_that_got_past_an_error_says_a_listed_name_only_of_one_of_the_choices():
    """The source line of an error lesson ("got past it at turn 2 (as Search[...], a name the error
    listed)") reads the retry as the retry's own pattern does: a blind rater found "Patti Page" said
    to be a name the error listed, where the list held only longer titles holding it."""
    from wikitrace.compilers.insight_words import what_changed
    from wikitrace.compilers.reading import Call
    from wikitrace.runs.model import Turn

    def call(n, query, result):
        return Call(Turn(turn=n, type="function_call", role="assistant", name="Search", arguments=query,
                         result=result), error=n == 1, writes=False, confirmed=False)

    error = ("Could not find [I'll Keep the Lovelight Burning singer]. Similar: [\"I'll Keep the Lovelight Burning\", "
             "'List of songs recorded by Patti Page', 'Patti Page discography']")
    assert what_changed(call(1, "I'll Keep the Lovelight Burning singer", error),
                        call(2, "Patti Page", "Clara Ann Fowler (November 8, 1927 ...)")) == "as Search[Patti Page]"
    assert what_changed(call(1, "I'll Keep the Lovelight Burning singer", error),
                        call(2, "Patti Page discography", "...")).endswith(", a name the error listed")


def test_the_checker_flags_a_form_counted_as_another_answer_and_text_said_to_hold_what_it_lacks(tmp_path):
    forms = IMPORTERS / "react_reflexion" / "react_reflexion_forms.txt"
    out = tmp_path / "out"
    build(BuildOptions(inputs=[forms], out=out, offline=True, quiet=True))
    found = qa_claims.check(out)
    assert found.checked["contained"] and found.checked["answered"]
    assert found.false["contained"] == found.false["answered"] == []
    page = out / "compilation" / "step-0000.md"  # the first trial; the second wrote its answer otherwise
    text = page.read_text()
    recount = re.compile(r'2 of the 3 trials of this task answered ("[^"]+") or a form of it \("[^"]+"\) '
                         r"\(this run and (\[step-\d+\]\([^)]*\)); not ")
    assert recount.search(text), text
    # as the page read before trials were compared in one form: the second trial among the "not"s
    text = recount.sub(r"1 of the 3 trials of this task answered \1 (this run; not \2, ", text)
    # the answer's own turn said to hold the expected answer: the look-up at turn 1 did, no earlier one
    text = text.replace("which appears in what the look-up at turn 1 returned", "which appears in what the look-up at "
                        "turn 2 returned")
    page.chmod(0o644)  # pages are written read-only: only root could write it as it is
    page.write_text(text)
    found = qa_claims.check(out)
    assert [x.split(":")[0] for x in found.false["answered"]] == ["step-0000"]
    assert found.false["contained"] and all(x.startswith("step-0000") for x in found.false["contained"])
