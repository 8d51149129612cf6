"""What a verdict rested on: the lesson of a run that ended with a label of its task's answer set
says which look-up's answer holds the words its reasoning quoted (or that it quoted none, and
what each look-up returned), the page says the same beside the verdict, and the pattern counts
the quoting runs by outcome. The printout is in the shape of the ReAct paper's FEVER logs (the
question index before the claim, numbered thoughts and actions, the episode's result dict and
the running-average line), with claims of our own."""

from __future__ import annotations

import json
import re

import pytest
from fixture_runs import RUNS, relabeled

from wikitrace.build import BuildOptions, build
from wikitrace.compilers.offline import compile_offline
from wikitrace.runs.load import iter_runs
from wikitrace.runs.model import Run

CLAIMS = """101 Claim: The Orrin Canal is in Wales.
Thought 1: I should search the Orrin Canal and see where it is.
Action 1: Search[Orrin Canal]
Observation 1: The Orrin Canal is a disused waterway in Shropshire, England, opened in 1796 to carry limestone.

Thought 2: The observation says it is "in Shropshire, England", so it is not in Wales.
Action 2: Finish[REFUTES]
Observation 2: Episode finished, reward = 1


{'steps': 2, 'answer': 'REFUTES', 'gt_answer': 'REFUTES', 'question_idx': 101, 'em': 1, 'reward': 1, 'f1': 1} 

1 1 1.0 3.1
-----------

202 Claim: Mira Talbot wrote only plays.
Thought 1: I should search Mira Talbot.
Action 1: Search[Mira Talbot]
Observation 1: Mira Talbot (born 1961) is a Canadian playwright and novelist.

Thought 2: Talbot is known for plays, so the claim is supported.
Action 2: Finish[SUPPORTS]
Observation 2: Episode finished, reward = 0


{'steps': 2, 'answer': 'SUPPORTS', 'gt_answer': 'REFUTES', 'question_idx': 202, 'em': 0, 'reward': 0, 'f1': 0} 

1 2 0.5 3.4
-----------

303 Claim: Harbin Lighthouse is made of wood.
Thought 1: I should search Harbin Lighthouse.
Action 1: Search[Harbin Lighthouse]
Observation 1: Could not find [Harbin Lighthouse]. Similar: ['Harbin', 'Harbin Airport'].
Thought 2: I should look up the word wood.
Action 2: Lookup[wood]
Observation 2: No more results.

Thought 3: Nothing was found about "made of wood", so there is not enough information.
Action 3: Finish[NOT ENOUGH INFO]
Observation 3: Episode finished, reward = 1


{'steps': 3, 'answer': 'NOT ENOUGH INFO', 'gt_answer': 'NOT ENOUGH INFO', 'question_idx': 303, 'em': 1, 'reward': 1, 'f1': 1} 

2 3 0.6666666666666666 3.2
-----------
"""


def _runs(tmp_path):
    path = tmp_path / "claims_printout.txt"
    path.write_text(CLAIMS)
    return path, {r.run_id.rsplit("-", 1)[1]: r for r in iter_runs([path]) if isinstance(r, Run)}


def _fold(text: str) -> str:
    return " ".join((text or "").split()).casefold()


def _lookups_true(calls: dict, before: int, text: str) -> None:
    """``Search[X] returned 12 words (turn 1) and Lookup[y] returned "No more results." (turn 2)``."""
    looks = re.findall(r"(\w+)\[(.*?)\] (answered with an error|returned nothing|returned \"(.*?)\"|returned (\d+) words) "
                       r"\(turn (\d+)\)", text)
    assert looks, text
    for name, arg, how, short, words, turn in looks:
        t = calls[int(turn)]
        assert t.name == name and int(turn) < before and " ".join(t.arguments.split()).startswith(arg.rstrip("…"))
        flat = " ".join((t.result or "").split())
        if how == "answered with an error":
            assert t.is_error
        elif how == "returned nothing":
            assert not t.is_error and not flat
        elif words:
            assert not t.is_error and len(flat.split()) == int(words)
        else:
            assert not t.is_error and flat == short


def check_verdict(run, text: str, turn: int | None = None) -> None:
    """A verdict lesson's detail (``turn N: gave X; ...``) or page note, against the turns."""
    calls = {t.turn: t for t in run.turns if t.type == "function_call"}
    if turn is None:
        m = re.match(r"turn (\d+): gave (.+?); (.+)$", text)
        assert m, text
        turn, text = int(m.group(1)), m.group(3)
        assert " ".join(calls[turn].arguments.split()).startswith(m.group(2).rstrip("…"))
    verdict = calls[turn]
    said = re.match("The reasoning given with it: \u201c(.+?)\u201d; ", text)
    if said:  # a page note: the reasoning as the log records it (clipped), then what it quoted
        assert " ".join((verdict.reasoning or "").split()).startswith(said.group(1).rstrip("\u2026"))
        text = text[said.end():]
    assert not verdict.is_error and verdict is [t for t in calls.values() if not t.is_error][-1]
    reasoning = verdict.reasoning or ""
    quoted = re.findall(r"quoted \"(.+?)\" from (\w+)\[.*?\]'s answer \(turn (\d+)\)", text) + \
        [(p, n, k) for p, n, k in re.findall(r"quotes \"(.+?)\", which (\w+) returned at turn (\d+)", text)]
    for phrase, name, k in quoted:
        src = calls[int(k)]
        assert src.name == name and int(k) < turn and not src.is_error
        assert f'"{phrase.rstrip("…")}' in reasoning or phrase.endswith("…")
        assert _fold(phrase.rstrip("…")) in _fold(src.result)
    if "quoted no words" in text or "quotes no words" in text:
        assert not quoted
        for m in re.finditer("\"([^\"\n]{3,200})\"", reasoning):
            assert not any(k < turn and not t.is_error and _fold(m.group(1)) in _fold(t.result) for k, t in calls.items())
        _lookups_true(calls, turn, text)
    else:
        assert quoted, text


def test_each_verdict_says_what_its_reasoning_quoted_and_from_where(tmp_path):
    _path, runs = _runs(tmp_path)
    lessons = {k: [i for i in compile_offline(r).insights if i.key == "verdict|Finish"] for k, r in runs.items()}
    (quoting,) = lessons["101"]
    assert quoting.detail == ("turn 2: gave REFUTES; its reasoning quoted \"in Shropshire, England\" from "
                              "Search[Orrin Canal]'s answer (turn 1)") and quoting.worked
    check_verdict(runs["101"], quoting.detail)
    # a run whose reasoning quoted no look-up teaches no quoting lesson (the quoted words of 303 are the
    # claim's, in no answer); its page note still says what it read
    assert lessons["202"] == [] and lessons["303"] == []
    notes = [n for e in compile_offline(runs["303"]).evidence for n in e.notes if n.startswith("The reasoning given")]
    assert len(notes) == 1 and notes[0].endswith(
        "it quotes no words of a look-up's answer; before it: Search[Harbin Lighthouse] answered with an error "
        "(turn 1) and Lookup[wood] returned \"No more results.\" (turn 2)."), notes
    notes = [n for e in compile_offline(runs["101"]).evidence for n in e.notes if n.startswith("The reasoning given")]
    assert notes == ["The reasoning given with it: \u201cThe observation says it is \"in Shropshire, England\", so it is not "
                     "in Wales.\u201d; it quotes \"in Shropshire, England\", which Search returned at turn 1."]


def test_the_verdict_lesson_counts_the_quoting_runs_by_outcome(tmp_path):
    path, _runs_by_id = _runs(tmp_path)
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[path], out=out, offline=True, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    (entry,) = [i for i in data["insights"] if i["key"] == "verdict|Finish"]
    assert (entry["counts"]["success"], entry["counts"]["failure"]) == (1, 0) and len(entry["sources"]) == 1
    assert (entry["contrast"]["failed_met"], entry["contrast"]["success_met"]) == (0, 1)
    page = (out / "insight" / f"{entry['id']}.md").read_text()
    assert "whose verdict's reasoning quoted words a look-up returned: 0 failed, 1 successful" in page


@pytest.mark.parametrize("run", RUNS, ids=lambda r: f"{r.source.get('format')}:{r.run_id}")
@pytest.mark.parametrize("success", [True, False], ids=["as-success", "as-failure"])
def test_verdict_lessons_and_notes_are_true_on_every_fixture_or_absent(run, success):
    run = relabeled(run, success)
    comp = compile_offline(run)
    for lesson in comp.insights:
        if lesson.key.startswith("verdict|"):
            assert lesson.worked == success
            check_verdict(run, lesson.detail)
    for e in comp.evidence:
        for note in e.notes:
            if note.startswith("The reasoning given with it"):
                assert note.startswith("The reasoning given with it: \u201c"), note
                check_verdict(run, note, e.turns[-1])


def test_an_acronym_the_question_names_is_an_answer_not_a_verdict():
    """A question about an upper-case name, answered with it: no answer set is recorded and no
    system prompt names one, so no verdict lesson; the same answer with the labels stated is one."""
    from test_offline_content import _call, _msg, _record, _run, _turns

    def record(system: str | None) -> dict:
        turns = ([_msg("system", system)] if system else []) + [
            _msg("user", "Which agency did ORBEX merge into in 1999?"),
            _call("Search", "ORBEX", "ORBEX was a satellite operator that merged into a larger agency in 1999.",
                  reasoning="I should search ORBEX."),
            _call("Finish", "ORBEX", "", reasoning='It says "merged into a larger agency", so I answer ORBEX.'),
            {"type": "answer", "role": "assistant", "content": "ORBEX"}, {"type": "episode_over"}]
        return _record("q-1", "qa", "Which agency did ORBEX merge into in 1999?", _turns(*turns), False)

    keys = [i.key for i in compile_offline(_run(record(None))).insights]
    assert not any(k.startswith("verdict|") for k in keys), keys
    labelled = compile_offline(_run(record("Answer with one of ORBEX, NONE.")))
    (lesson,) = [i for i in labelled.insights if i.key == "verdict|Finish"]
    assert lesson.detail == ('turn 3: gave ORBEX; its reasoning quoted "merged into a larger agency" from '
                             "Search[ORBEX]'s answer (turn 2)")


REFLEXION_ACRONYM = """
########################################
BEGIN TRIAL 1
Trial summary: Correct: 0, Incorrect: 1, Halted: 0
#######################################
------------- BEGIN CORRECT AGENTS -------------

------------- BEGIN INCORRECT AGENTS -----------

Question: ORVEL Records changed its name in 2003. What does the new acronym stand for?
Thought 1: I need to search ORVEL Records and find its new name.
Action 1: Search[ORVEL Records]
Observation 1: Could not find [ORVEL Records]. Similar: ['ORVEL Plus', 'Orvel Music Group', 'Records (album)'].
Thought 2: I can search ORVEL Plus instead.
Action 2: Search[ORVEL Plus]
Observation 2: ORVEL Plus was a Danish music channel run by ORVEL from 1999 until 2003.
Thought 3: The channel was run by ORVEL, so the answer is ORVEL.
Action 3: Finish[ORVEL]
Observation 3: Answer is INCORRECT
Correct answer: Orvel Music Group

------------- BEGIN HALTED AGENTS --------------
"""


def test_an_upper_case_answer_the_question_mentions_keeps_the_look_up_it_came_from(tmp_path):
    """A Reflexion HotpotQA run answering with an upper-case name its question mentions: no
    answer set is offered anywhere, so the answer is a value the look-up at turn 2 returned, and
    the run counts among those that settled with a looked-up value, not among verdicts."""
    path = tmp_path / "reflexion_log.txt"
    path.write_text(REFLEXION_ACRONYM)
    (run,) = iter_runs([path])
    compiled = compile_offline(run)
    assert "procedure|Finish:looked-up" in compiled.patterns and "procedure|Finish:label" not in compiled.patterns
    assert compiled.decisive["answer"]["found"] == {"tool": "Search", "turn": 2, "query": "ORVEL Plus"}


def test_a_verdict_vocabulary_is_a_list_of_labels_offered_as_alternatives():
    from wikitrace.compilers.arguments import offered_labels

    assert offered_labels("Answer SUPPORTS, REFUTES, or NOT ENOUGH INFO.") == {"SUPPORTS", "REFUTES", "NOT ENOUGH INFO"}
    assert offered_labels("Reply with YES/NO only.") == {"YES", "NO"}
    assert offered_labels("ORVEL Records changed its name. What does ORVEL stand for?") == set()
    assert offered_labels("Flights to the USA, UK and France are sold out.") == set()  # a list of other words


REFLEXION_CHOICE = """
########################################
BEGIN TRIAL 1
Trial summary: Correct: 0, Incorrect: 1, Halted: 0
#######################################
------------- BEGIN CORRECT AGENTS -------------

------------- BEGIN INCORRECT AGENTS -----------

Question: Which magazine was started first, ORVEL or KESTA?
Thought 1: I need to search ORVEL and KESTA and find which was started first.
Action 1: Search[ORVEL]
Observation 1: ORVEL is a Danish music magazine first published in 1961.
Thought 2: I need to search KESTA next.
Action 2: Search[KESTA]
Observation 2: KESTA is a weekly magazine about music, founded in Ostwick in 1952.
Thought 3: ORVEL was started in 1961 and KESTA in 1952, so ORVEL was first.
Action 3: Finish[ORVEL]
Observation 3: Answer is INCORRECT
Correct answer: KESTA

------------- BEGIN HALTED AGENTS --------------
"""


def test_the_options_a_question_asks_among_are_no_verdict_labels(tmp_path):
    """A question that names two upper-case titles and asks which of them: the answer is one of
    the things looked up, so a page says where the expected one appeared, not that the task
    expected "the verdict" KESTA."""
    from wikitrace.compilers.arguments import offered_labels

    assert offered_labels("Which of VIVA or NME was founded first?", asked=True) == set()
    assert offered_labels("Who was born first, ABBA or KISS?", asked=True) == set()
    # instructions offer verdicts even when they ask for one
    assert offered_labels("Which applies: SUPPORTS, REFUTES or NOT ENOUGH INFO?") == {"SUPPORTS", "REFUTES",
                                                                                     "NOT ENOUGH INFO"}
    path = tmp_path / "reflexion_log.txt"
    path.write_text(REFLEXION_CHOICE)
    (run,) = iter_runs([path])
    compiled = compile_offline(run)
    said = "\n".join(f.text for f in compiled.in_short)
    assert "verdict" not in said, said
    assert 'the task expected "KESTA", which appears in what the look-up at turn 2 returned' in said, said
    assert "procedure|Finish:label" not in compiled.patterns
