"""The In short's sentences for text-action QA logs (qa_facts.py, named_comparisons.py), on a
Reflexion HotpotQA printout of our own in the real shape (tests/fixtures/importers/react_reflexion/
react_reflexion_slips.txt): each is written where its run shows it, with the turns that show it,
and is absent from the near misses beside it. That every such sentence holds of its log is
checked for every fixture in test_in_short.py (_check_qa_fact)."""

from __future__ import annotations

import pytest
from fixture_runs import IMPORTERS

from wikitrace.compilers.offline import compile_offline
from wikitrace.runs import load
from wikitrace.runs.model import Run

SLIPS = IMPORTERS / "react_reflexion" / "react_reflexion_slips.txt"
RUNS = {r.run_id.rsplit("-", 2)[1]: r for r in load._read(SLIPS, load.detect(SLIPS)) if isinstance(r, Run)}


def _facts(q: str) -> list:
    return compile_offline(RUNS[q]).in_short


def _texts(q: str) -> list[str]:
    return [f.text for f in _facts(q)]


def test_quote_marks_every_failed_search_shared_follow_the_errors_they_explain():
    texts = _texts("q007")  # the advice leads, the errors it explains right after
    assert texts[1].startswith("Search failed at turns 1, 2, 3 and 4")
    assert texts[0] == ("All 4 failed Search calls put quote marks in their text, and the errors at turns 1, 2 and 3 "
                        "listed the quoted name without them (\"Puppet Hall\" series at turn 3, listed as 'Puppet Hall'): "
                        "send a name as the error's list writes it, without quote marks.")
    assert _facts("q007")[0].turns == [1, 2, 3]


def test_no_shared_cause_when_one_failed_call_sent_no_quote_marks():
    texts = _texts("q009")  # Search[Loria Dunn] failed too, with no quote marks
    assert any(t.startswith("Search failed at turns 1 and 2") for t in texts)
    assert not any("put quote marks in" in t for t in texts), texts


def test_packed_calls_name_the_one_query_call_that_went_through():
    fact = _facts("q008")[0]
    assert fact.text == ("Both Search calls after the one that went through at turn 1 packed several calls into one argument (turn 2 sent "
                         "Search[Museo Vela], Search[Harbor Gallery], Search[Lumen Week] as one call); the one-query "
                         "Search call at turn 1 went through: send one query per Search call.")
    assert fact.turns == [1, 2, 3]


def test_an_in_common_answer_from_one_side_says_the_other_held_none_of_it():
    texts = _texts("q002")
    assert texts[0] == ("The question names two things, Tessa Marlow and Ivo Brandt; every word of the answer comes from "
                        "what Search[Tessa Marlow] returned at turn 1 about Tessa Marlow, and what Search[Ivo Brandt] "
                        "returned at turn 2 for Ivo Brandt holds none of them: an answer about both must be found in the "
                        "look-ups of each.")


def test_two_names_around_a_third_thing_are_no_question_about_both():
    # "the derby between Corran Rovers and Tessel Town": the answer is the derby's, found on one page
    assert not any("two things" in t for t in _texts("q003"))


def test_an_answer_the_reflection_planned_to_search_and_no_call_sent():
    fact = _facts("q010")[0]
    assert fact.text == ("The task message at turn 0 planned to search \"Gull Point Light\" (\"I should have searched Gull "
                         "Point Light to make sure it faces Fennick Harbour before answering.\"), and no Search call sent "
                         "it before the answer at turn 2: make the planned look-up before answering.")
    assert fact.turns == [0, 2]
    # the reflection named the answer too: said after it, so the run counts among those that answered so
    assert [f.kind for f in _facts("q010")][:2] == ["planned-look-up", "reflected-answer"]


@pytest.mark.parametrize("q, first", [
    ("q004", "The agent's comparison at turn 3 is wrong: the look-ups place Arnsby at 52°37′N (turn 1) and Welk at "
             "55°20′N (turn 2) (it wrote \"Arnsby is further north than Welk\")."),
    ("q006", "The agent's comparison at turn 3 is wrong: the look-ups give Mira Kell's birth year as 1961 (turn 1) and "
             "Odo Prim's as 1948 (turn 2) (it wrote \"Mira Kell is older than Odo Prim\")."),
    ("q005", "The agent's comparison at turn 3 rests on no value a look-up returned: no look-up before it gave "
             "coordinates for Lerwick, Shetland or Tarrow, Kent (it wrote \"Lerwick, Shetland is further south than "
             "Tarrow, Kent\"): find the values compared before choosing."),
])
def test_a_comparison_of_two_named_things_is_judged_only_by_what_the_look_ups_gave(q, first):
    assert _texts(q)[0] == first


def test_a_success_gets_none_of_them():
    texts = _texts("q001")
    assert not any(p in t for t in texts for p in ("quote marks in", "two things", "planned to", "comparison"))


def test_every_qa_sentence_holds_on_the_real_hotpotqa_runs():
    """The Reflexion HotpotQA dev runs, when the shared data is mounted: every sentence of these
    kinds on every page is checked against its run (test_in_short._check_qa_fact), and each kind
    of sentence is written somewhere, so a check that never ran cannot pass."""
    from test_in_short import _check_qa_fact
    from test_real_runs import REFLEXION, _load

    if not REFLEXION.is_dir():
        pytest.skip(f"{REFLEXION} absent (shared data not mounted)")
    written = {"listed together": 0, "made of the question's": 0, "quote marks in": 0, "packed several calls": 0, "two things": 0, "planned to": 0, "rests on no value": 0,
               "already name": 0, "already names the query": 0, "took its answer": 0, "opens with the expected name": 0, "sent a phrase": 0, "What worked": 0}
    runs, _report = _load(REFLEXION)
    for run in runs:
        for fact in compile_offline(run).in_short:
            if _check_qa_fact(run, fact.text):
                for key in written:
                    written[key] += key in fact.text
    assert all(written.values()), written


def test_an_answer_the_reflection_already_named_is_said_with_its_sentence_and_the_page_it_came_from():
    fact = _facts("q013")[0]
    assert fact.text == ("The reflection the run was given at turn 0 already names \"Dana Reyes\" (\"I assumed that the "
                         "Harrow Cup winner was Dana Reyes, but I never checked which year the cup moved to Kessel Park.\"), "
                         "and the run answered it at turn 2, from what Search[Harrow Cup] returned at turn 1, a page that "
                         "sentence names: an answer a reflection already names needs a look-up showing it answers the "
                         "question before it is given.")
    assert fact.turns == [0, 1, 2] and fact.kind == "reflected-answer"


def test_an_answer_the_reflection_already_named_is_its_own_lesson_not_a_page_not_found():
    """A retry that gives again the name its reflection says was assumed repeats the failed
    attempt: that slip is its own lesson, apart from the runs whose look-ups never held the answer."""
    lessons = {i.key for i in compile_offline(RUNS["q013"]).insights}
    assert "answer|Finish|reflected" in lessons and "answer|Finish|not-found" not in lessons, lessons
    lesson = next(i for i in compile_offline(RUNS["q013"]).insights if i.key == "answer|Finish|reflected")
    assert lesson.title == "Before giving Finish a name a reflection holds, check it against a look-up"
    # a name standing in the reflection only inside a longer one was not named by it: no such lesson
    assert not any(i.key == "answer|Finish|reflected" for i in compile_offline(RUNS["q014"]).insights)
    # a reflection may hold the right answer as well as a wrong guess: the lesson is contrasted on the
    # runs of either outcome whose answer a reflection held, not said to be a pattern only failures meet
    from dataclasses import replace

    from wikitrace.corpus.insights import contrast_pattern

    assert contrast_pattern("answer|Finish|reflected") == "reflected|Finish"
    assert contrast_pattern("answer|Finish|not-found") is None
    right = replace(RUNS["q013"], outcome=replace(RUNS["q013"].outcome, success=True))
    assert "reflected|Finish" in compile_offline(RUNS["q013"]).patterns
    assert "reflected|Finish" in compile_offline(right).patterns
    assert "reflected|Finish" not in compile_offline(RUNS["q014"]).patterns


def test_an_answer_the_question_names_too_is_not_said_to_come_from_the_reflection():
    """A reflection that repeats a name the question gives proposes nothing: "Ronald Koeman" in a
    question about him is no sign the reflection led the run to its answer."""
    from dataclasses import replace

    run = RUNS["q013"]
    asked = replace(run, task=replace(run.task, instruction=run.task.instruction + " Was it Dana Reyes?"))
    assert not any(f.kind == "reflected-answer" for f in compile_offline(asked).in_short)
    assert any(f.kind == "reflected-answer" for f in compile_offline(run).in_short)


def test_a_name_inside_a_longer_name_of_the_reflection_is_not_the_answer_named():
    # "Tarn" stands in the reflection only as part of "the Tarn Accord": it named another thing
    assert not any("reflection" in t for t in _texts("q014")), _texts("q014")


def test_an_answer_with_a_word_added_points_at_the_page_opening_with_the_expected_name():
    texts = _texts("q015")
    assert texts[0] == ("What Search[Hollin Brewing Co.] returned at turn 2 opens with the expected name (\"Hollin Brewing "
                        "(formerly Hollin Brewing Co.)\"): answer with the name as the opening of the page about the thing "
                        "writes it, no words added or dropped.")


def test_failed_searches_that_each_sent_a_phrase_say_so_with_the_names_never_tried():
    texts = _texts("q017")
    assert texts[0] == ("All 3 Search calls after the one that went through at turn 1 sent a phrase that mixes the task's words with lower-case ones "
                        "(\"famous radio song by Pell Arno\", \"famous Marathi radio song by Pell Arno\" and 1 more), and no "
                        "call sent a name their errors listed ('Marathi radio', 'Pell Arno discography' and 'Radio Ossory'): "
                        "send Search one name, from the question or from an error's list, not a phrase.")


def test_a_page_name_with_its_kind_in_brackets_is_no_phrase():
    # "The Lark and Me (2004 film)": the lower-case word is the page's own disambiguation
    assert not any("phrase" in t for t in _texts("q018")), _texts("q018")


def test_a_success_says_what_worked_back_to_the_question():
    fact = _facts("q011")[1]
    assert fact.text == ("What worked: search the name the question gives, then search the name that page gives, and "
                         "answer with what that page says; here Search[Orrin House] at turn 1 (a name from the "
                         "question), then Search[Penwick] at turn 2 (a name the page at turn 1 gave), which returned "
                         "\"Greyford County\".")
    assert fact.turns == [1, 2, 3]


def test_an_answer_found_by_searching_its_own_name_is_no_lesson_of_what_worked():
    assert not any(t.startswith("What worked") for t in _texts("q012")), _texts("q012")


def test_a_one_word_answer_that_names_nothing_gets_no_unsourced_note():
    comp = compile_offline(RUNS["q016"])
    said = " ".join(n for c in comp.evidence for n in c.notes)
    assert any("Finish" in (c.call or c.decision) for c in comp.evidence)  # the answer is a cause, with its notes
    assert "\"unknown\"" not in said and "no earlier observation" not in said, said


def test_a_fever_claim_log_gets_the_phrase_searches_said_too():
    """A FEVER-style notebook printout (a claim, Search calls, a verdict): its look-ups are
    plain text like HotpotQA's, so three failed phrase searches are said the same way."""
    path = IMPORTERS / "react_notebook" / "fever_phrases.txt"
    [run] = [r for r in load._read(path, load.detect(path)) if isinstance(r, Run)]
    texts = [f.text for f in compile_offline(run).in_short]
    assert run.source["format"] == "react-notebook"
    assert "All 3 failed Search calls sent a phrase" in texts[0] and texts[0] == ("All 3 failed Search calls sent a phrase that mixes the task's words with lower-case ones "
                        "(\"Harlow Viaduct builder\", \"viaduct built by Tomas Brenn\" and 1 more), and no call sent a name "
                        "their errors listed ('Harlow Bridge' and 'Brenn Works'): send Search one name, from the question "
                        "or from an error's list, not a phrase."), texts


def test_an_expected_answer_left_unchecked_in_a_list_leads_the_page():
    fact = _facts("q019")[0]
    assert fact.text == ("The expected \"Maja Tell\" stood among at least 5 names what Search returned at turn 1 listed together, "
                         "and the run looked up only 'Ebba Strand' of them (turn 2) before answering: check each listed "
                         "candidate against every condition of the question before answering.")
    assert fact.turns == [1, 2, 3] and fact.kind == "unchecked-candidates"


def test_an_expected_answer_the_run_looked_up_is_no_unchecked_candidate():
    # Search[Maja Tell] was made; the run answered another name from the list all the same
    assert not any("listed candidate" in t for t in _texts("q020")), _texts("q020")


def test_a_form_slip_gets_no_reflection_advice_and_cites_the_page_naming_the_expected_answer():
    texts = _texts("q021")  # the reflection names "Kell Bakehouse Ltd.", and turn 2 showed it sells the roll
    assert texts[0].startswith("What Search[Kell Bakehouse Ltd.] returned at turn 2 opens with the expected name")
    assert not any("reflection" in t for t in texts), texts
    # turn 1 holds the expected words only as the head of "Kell Bakehouse Ltd.": turn 2 names it on its own
    assert "the task expected \"Kell Bakehouse\", which appears in what the look-up at turn 2 returned" in texts[1], texts


def test_names_the_errors_listed_and_no_call_sent_lead_a_stuck_run():
    facts = _facts("q022")
    assert facts[0].text == ("The errors at turns 1 and 3 listed 4 names, and no call sent any of them on its own ('Tovan "
                             "Reel (glass)' is made of the question's or the failed query's words): when Search fails, "
                             "send it the listed name that fits the question, as the list writes it, before rewording "
                             "the query.")
    assert facts[0].turns == [1, 3] and facts[1].text.startswith("Search failed at turns 1, 2 and 3")


def test_a_listed_name_sent_as_written_leaves_no_offered_names_fact():
    # 'Salt Harbour' was sent; 'Harbour Lights' is made of no word of the question or of its query
    assert not any("listed name that fits" in t for t in _texts("q023")), _texts("q023")


def test_a_listed_name_sent_even_in_quote_marks_counts_as_tried():
    # 'Loria Dunn (singer)' was sent (in quote marks: that fact is the quote-mark one's); 'Dunn (surname)' fits nothing
    assert not any("listed name that fits" in t for t in _texts("q009")), _texts("q009")


def test_a_listed_name_sent_in_quote_marks_is_said_so_beside_the_fitting_one_never_sent():
    assert _texts("q024")[0] == ("The error at turn 1 listed 2 names, and the run sent 1 of them ('Vell Dunmore "
                                 "(painter)' in quote marks, turn 2); never 'Dunmore Gallery', made of the question's or the "
                                 "failed query's words: when Search fails, send it the listed name that fits the question, as "
                                 "the list writes it, before rewording the query."), _texts("q024")


def test_a_query_the_reflection_named_that_failed_again_is_said_with_its_sentence_and_every_failure():
    fact = next(f for f in _facts("q025") if f.kind == "reflected-query")
    assert fact.text == ("The reflection the run was given at turn 0 already names the query \"Frank Orla Keswick rock band\" "
                         "(\"Instead I should have tried to search 'Frank Orla Keswick rock band' and then looked for the "
                         "year it was formed.\"), and both calls sending it failed (Search[Frank Orla Keswick rock band], "
                         "turns 1 and 2): a query a reflection names is a guess; once it fails, send a name its error lists "
                         "instead of sending it again.")
    assert fact.turns == [0, 1, 2]


def test_a_query_that_is_only_part_of_a_longer_quoted_one_is_not_the_reflection_s_query():
    # the reflection quotes 'Aldo Venn choir founding year'; the run sent "Aldo Venn choir", another query
    assert not any(f.kind == "reflected-query" for f in _facts("q027")), _texts("q027")


def test_an_answer_taken_from_the_page_two_reflections_name_is_said_with_the_latest_sentence():
    fact = _facts("q026")[0]
    assert fact.text == ("Both reflections the run was given at turn 0 already name \"Night of the Heron\" (\"I assumed that "
                         "the film Night of the Heron was the film Pell Arno plays Davy in.\"), and the run took its answer "
                         "\"Ines Ward\" from Search[Night of the Heron] at turn 2: when reflections on earlier attempts name "
                         "the page an answer comes from, read what they say of it before answering from it.")
    assert fact.turns == [0, 2, 3] and fact.kind == "reflected-source"


def test_a_name_no_text_before_it_gave_is_named_as_the_step_the_wrong_answer_came_from():
    facts = _facts("q028")  # the agent's thought claims a page said the film's name; no page did
    assert facts[0].kind == "unfounded-name" and facts[0].turns == [2, 3]
    assert facts[0].text.startswith('Search at turn 2 sent "Grey Harbour", and "Grey" and "Harbour" stood in neither '
                                    "the task text it was given nor any answer before it (the agent's words: \"The "
                                    'paragraph says Rona Tell appeared in the 1998 film Grey Harbour.")')
    assert 'no look-up from turn 2 on held the expected "Tom Kerr"' in facts[0].text


def test_a_misspelt_name_of_the_question_is_no_new_name():
    # "Sayrevill" is the question's "Sayreville" with a letter dropped: the step stood on the question
    assert not any(f.kind == "unfounded-name" for f in _facts("q029"))


def test_a_page_found_by_searching_a_name_is_not_where_that_name_came_from():
    """Search[Lantern] returned the article on lanterns; the name "Lantern (band)" came from the
    page before it, on the singer of the band Lantern: the chain says so, and skips the wrong page."""
    fact = next(f for f in _facts("q030") if f.text.startswith("What worked"))
    assert fact.text == ("What worked: search the name the question gives, then search the name that page gives, and "
                         "answer with what that page says; here Search[Wren Castell] at turn 1 (a name from the "
                         "question), then Search[Lantern (band)] at turn 3 (a name the page at turn 1 gave), which "
                         "returned \"2006\".")


def test_a_look_up_of_the_answer_itself_is_said_to_be_one():
    """Search[Arnsby] returns the page on Arnsby: it holds the answer by being found with it, and the
    note says so; a look-up of a longer name holding the answer is no search of the answer itself."""
    from wikitrace.compilers.page_notes import given_answer_note
    from wikitrace.compilers.reading import read_run

    r = read_run(RUNS["q004"])
    (note,) = given_answer_note(r, r.calls[-1])
    assert note.startswith('The answer it gave, "Arnsby", appears in what Search returned at turn 1, a look-up that '
                           "searched the answer itself (Search[Arnsby]): ")
    for q in RUNS:
        r = read_run(RUNS[q])
        if not r.calls:
            continue
        for note in given_answer_note(r, r.calls[-1]):
            if "searched the answer itself" in note:  # true of the call it names: its query is the answer, kind aside
                asked = note.split("itself (", 1)[1].split("]): ", 1)[0].split("[", 1)[1]
                assert asked.split(" (")[0].casefold() == str(r.calls[-1].turn.arguments).casefold(), (q, note)
