"""The "In short" at the top of a compilation page: the facts that most likely decided the run,
said plainly (not left inside a quote), each checked here against the log it came from.

Fixtures are in the shapes of today's formats, content our own: a Reflexion HotpotQA printout
(question, numbered thoughts and actions, "Correct answer:") and tau-bench's result file (the
chat as OpenAI messages with ``tool_calls``, the task's expected ``actions``)."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta

import pytest
from fixture_runs import relabeled
from test_page_sentences import RUNS, _flat, _text

from tau_messages import agent as _agent, tool as _tool, user as _user
from wikitrace.build import BuildOptions, build
from wikitrace.compilers.claim_checks import comparisons, money_limits, stated_count, wrong_phrase
from wikitrace.compilers.conclusions import conclusions
from wikitrace.compilers.offline import compile_offline
from wikitrace.compilers.consent import AGREES, answer_kind
from wikitrace.compilers.reading import command_of, is_read_only
from wikitrace.runs import load
from wikitrace.compilers.changes import edit_of
from wikitrace.runs.errors import is_test_report, reports_failing_tests
from wikitrace.runs.model import Run, Turn

# --- the parser, on sentences of our own -------------------------------------------------------


@pytest.mark.parametrize("text, left, relation, right, holds, instead", [
    ("1979 (Ada Lind) < 1961 (Bo Hale), so Ada Lind was born first.", "1979", "<", "1961", False,
     "1979 is later than 1961"),
    ("Ada Lind (1979) < Bo Hale (1961), so Ada is older.", "1979", "<", "1961", False, "1979 is later than 1961"),
    ("Ada Lind (born 1979) is older than Bo Hale (born 1961).", "1979", "<", "1961", False, "1979 is later than 1961"),
    ("The museum opened in 1990, which is earlier than 1985.", "1990", "<", "1985", False, "1990 is later than 1985"),
    ("The fare difference of $412 is within your $250 budget.", "$412", "<=", "$250", False, "$412 is more than $250"),
    ("The new total, $1,002, is more than $957.", "$1,002", ">", "$957", True, "$1,002 is more than $957"),
    ("2024-06-02 > 2024-06-09, so the second flight leaves first.", "2024-06-02", ">", "2024-06-09", False,
     "2024-06-02 is earlier than 2024-06-09"),
    ("She is 41, which is older than 57.", "41", ">", "57", False, "41 is less than 57"),
    ("1961 (Bo Hale) < 1979 (Ada Lind), so Bo Hale was born first.", "1961", "<", "1979", True,
     "1961 is earlier than 1979"),
])
def test_a_written_comparison_is_read_and_checked(text, left, relation, right, holds, instead):
    [c] = comparisons(text)
    assert (c.left, c.relation, c.right, c.holds) == (left, relation, right, holds)
    assert wrong_phrase(c) == instead


@pytest.mark.parametrize("text", [
    "if x < 5 then retry",  # a name, not a number, on one side
    "Step 3 -> Step 2",  # an arrow
    "The flight leaves at 10:00 < 12:00",  # clock times are not read
    "3 bags is more than 2 passengers",  # two quantities
    "Of the 12 members, 4 were more than 30 years old",  # a count against an age
    "In 2010, the city was less than 300 km away",  # a year against a distance
    "Reservation K7PQ2M < 5",  # an id
    "It cost $30, which is more than 20 passengers",  # money against a count
    "The Rhine is longer than the Elbe.",  # no numbers at all
    "Tomas is older than Mira (born 1968).",  # one number only
])
def test_near_misses_are_left_unread(text):
    assert comparisons(text) == []


def test_money_limits_are_read_from_the_users_words():
    assert money_limits("My budget is $200, so please keep it under that.") == [200.0]
    assert money_limits("I can pay up to $1,500 for this.") == [1500.0]
    assert money_limits("$300 at most, please.") == [300.0]
    assert money_limits("The insurance is $30 per passenger.") == []  # a price, not a limit
    assert money_limits("I paid $412 for it last week.") == []


def test_counts_are_read_only_when_the_message_asserts_one():
    asked = "How many passengers were on that booking? I think there were 4."
    assert stated_count(asked, "passengers") == 4
    assert stated_count("There were two passengers on it.", "passengers") == 2
    assert stated_count("Please book 3 passengers on the 2024-06-02 flight.", "passengers") is None  # a request
    assert stated_count("How many passengers? It was on June 17.", "passengers") is None  # a date, not the count
    assert stated_count("How many flights are there? 2 or 3?", "flights") is None  # unsure
    assert stated_count(asked, "flights") is None  # another noun


# --- QA: a wrong comparison in the agent's reasoning ------------------------------------------------

REFLEXION = """
########################################
BEGIN TRIAL 1
Trial summary: Correct: 1, Incorrect: 1, Halted: 0
#######################################
------------- BEGIN CORRECT AGENTS -------------

Question: Which sculptor was born first, Ada Lind or Bo Hale?
Thought 1: I need the birth years of both.
Action 1: Search[Ada Lind]
Observation 1: Ada Lind (born 1979) is a Swedish sculptor working in bronze.
Thought 2: Now Bo Hale.
Action 2: Search[Bo Hale]
Observation 2: Bo Hale (born 1961) is a Welsh sculptor and printmaker.
Thought 3: 1961 (Bo Hale) < 1979 (Ada Lind), so Bo Hale was born first.
Action 3: Finish[Bo Hale]
Observation 3: Answer is CORRECT
Correct answer: Bo Hale

------------- BEGIN INCORRECT AGENTS -----------

Question: Which painter was born first, Cora Mint or Dev Oakes?
Thought 1: I need the birth years of both.
Action 1: Search[Cora Mint]
Observation 1: Cora Mint (born 1983) is a Scottish painter of seascapes.
Thought 2: Now Dev Oakes.
Action 2: Search[Dev Oakes]
Observation 2: Dev Oakes (born 1958) is an English painter.
Thought 3: 1983 (Cora Mint) < 1958 (Dev Oakes), so Cora Mint was born first.
Action 3: Finish[Cora Mint]
Observation 3: Answer is INCORRECT
Correct answer: Dev Oakes

"""


def _load(path) -> list[Run]:
    return [r for r in load._read(path, load.detect(path)) if isinstance(r, Run)]


def _facts(run: Run) -> list[str]:
    return [f.text for f in compile_offline(run).in_short]


def _right_and_wrong(tmp_path, log: str) -> list[Run]:
    """The successful and the failed run of a two-question Reflexion log."""
    path = tmp_path / "react_reflexion_2q.txt"
    path.write_text(log, encoding="utf-8")
    return sorted(_load(path), key=lambda r: not r.outcome.success)


def test_a_wrong_comparison_in_the_reasoning_is_said_to_be_wrong(tmp_path):
    right, wrong = _right_and_wrong(tmp_path, REFLEXION)
    facts = _facts(wrong)
    turn = next(t.turn for t in wrong.turns if "1983 (Cora Mint) < 1958" in (t.reasoning or t.content or ""))
    assert facts[0] == (f"The agent's comparison at turn {turn} is wrong: 1983 is later than 1958 "
                        "(it wrote \"1983 (Cora Mint) < 1958\").")
    assert any(f.startswith('The answer "Cora Mint"') and 'the task expected "Dev Oakes", which appears in what the look-up at turn'
               in f for f in facts), facts
    # the successful run's comparison holds: nothing is said about it; its answer and its source are
    facts = _facts(right)
    assert not any("comparison" in f for f in facts)
    assert re.fullmatch(r'The answer "Bo Hale" \(turn \d+\) was judged right; "Bo Hale" appears in what the look-up '
                        r'at turn \d+ returned \("Bo Hale \(born 1961\) is a Welsh sculptor and printmaker\."\)\.',
                        facts[0]), facts  # the words around it, from the one look-up that held it


def test_the_page_opens_with_the_facts_and_links_their_turns(tmp_path):
    path = tmp_path / "runs" / "react_reflexion_2q.txt"
    path.parent.mkdir()
    path.write_text(REFLEXION, encoding="utf-8")
    out = tmp_path / "wiki"
    build(BuildOptions(inputs=[path.parent], out=out, offline=True, quiet=True))
    pages = {p.name: p.read_text() for p in (out / "compilation").glob("step-*.md")}
    wrong = next(text for text in pages.values() if "Cora Mint" in text)
    head, _, rest = wrong.partition("## In short\n")
    assert "## Task" in rest and "## Task" not in head  # at the top, before the task
    first = rest.splitlines()[0]
    assert re.fullmatch(r"- The agent's comparison at turn (\d+) is wrong: 1983 is later than 1958 \(it wrote "
                        r"\"1983 \(Cora Mint\) \\< 1958\"\)\. \(turn \[\1\]\(\.\./raw/step-\d+/turns\.md#turn-\1\)\)",
                        first), first



REVERSED_RUN = REFLEXION.replace(
    "Thought 3: 1983 (Cora Mint) < 1958 (Dev Oakes), so Cora Mint was born first.",
    "Thought 3: 1958 (Dev Oakes) < 1983 (Cora Mint), so Cora Mint was born first.")


def test_a_conclusion_naming_the_other_side_than_its_own_years_pick_is_said_so(tmp_path):
    """Right figures, wrong side: the page says which side the question's word picks by the run's own
    years; the success, whose conclusion follows its years, gets no such sentence."""
    right, wrong = _right_and_wrong(tmp_path, REVERSED_RUN)
    facts = _facts(wrong)
    turn = next(t.turn for t in wrong.turns if "1958 (Dev Oakes) < 1983" in (t.reasoning or t.content or ""))
    assert facts[0] == (f"The agent's conclusion at turn {turn} names the wrong side: by its own figures Dev Oakes (1958) "
                        "comes before Cora Mint (1983), so \"first\" picks Dev Oakes, not Cora Mint (it wrote \"1958 (Dev "
                        "Oakes) < 1983 (Cora Mint), so Cora Mint was born first\").")
    assert not any("comparison" in f for f in facts)  # the figures themselves hold
    # counted across runs as a comparison its words had the other way round, the earlier year first
    fact = compile_offline(wrong).in_short[0]
    assert (fact.kind, fact.about) == ("comparison", ["1958 is earlier than 1983"])
    assert not any("conclusion" in f for f in _facts(right))


@pytest.mark.parametrize("text, picks, named", [
    ("1963 (Ann Roe) < 1974 (Bea Cole), so Bea Cole was born first.", "Ann Roe", "Bea Cole"),
    ("Ann Roe (1963) < Bea Cole (1974), so Bea Cole is older.", "Ann Roe", "Bea Cole"),
    ("1974 (Bea Cole) > 1963 (Ann Roe), therefore Ann Roe aired later", "Bea Cole", "Ann Roe"),
    ("2009 (The Pilot) is earlier than 2010 (The Finale), so The Pilot came out first.", "The Pilot", "The Pilot"),
])
def test_a_conclusion_is_read_with_the_side_its_word_picks(text, picks, named):
    [c] = conclusions(text)
    assert (c.picks, c.named, c.reversed) == (picks, named, picks != named)


@pytest.mark.parametrize("text", [
    "1985 (Ann Roe) < 1965 (Bea Cole), so Ann Roe was born first.",  # wrong figures: a wrong comparison instead
    "1982 (Antic) < 1988 (Chronicle), so their runs did not overlap.",  # names neither side
    "1963 (Ann Roe) < 1974 (Bea Cole), so Bea Cole was not born first.",  # negated
    "1963 (Ann Roe) < 1963 (Bea Cole), so Bea Cole was born first.",  # equal years
    "1963 (Ann Roe) < 1974 (Bea Cole), so Bea Cole won the award.",  # no word that orders them
])
def test_what_is_not_a_readable_conclusion_yields_nothing(text):
    assert conclusions(text) == []



def test_a_success_saved_by_a_refused_change_the_task_did_not_expect_says_so(tmp_path):
    """It reads as a run that held back; it sent the change and the tool refused it. (A run whose agent
    then told the user it could not is said so by the refusal lesson instead.)"""
    moved = {"reservation_id": "Q4WZ8N", "cabin": "economy", "payment_id": "gift_card_7730215",
             "flights": [{"flight_number": "HAT030", "date": "2024-05-13"}]}
    run = _tau(tmp_path, [_user("Move my flight to May 13."),
                          *_tool("update_reservation_flights", moved, "Error: flight HAT030 not available on date 2024-05-13"),
                          _agent("Let me look at other dates for you."), _user("No need, keep it as it is."),
                          _agent("Done, your reservation stays as it is.")], reward=1.0, actions=[])
    turn = _call_turn(run, "update_reservation_flights")
    facts = _facts(run)
    assert facts[0] == (f"update_reservation_flights at turn {turn} failed (\"Error: flight HAT030 not available on date "
                        "2024-05-13\"), and the task expected no update_reservation_flights call: this run succeeded "
                        "because that change was refused, not because it held back from sending it."), facts
    _check(run, facts[0], [turn])


SLIPS = """
########################################
BEGIN TRIAL 1
Trial summary: Correct: 0, Incorrect: 2, Halted: 0
#######################################
------------- BEGIN CORRECT AGENTS -------------

------------- BEGIN INCORRECT AGENTS -----------

Question: Through which strait does the Varn ferry run?
Thought 1: Search the Varn ferry.
Action 1: Search[Varn ferry]
Observation 1: The Varn ferry runs through the Kessel Strait between Orlo and Tamm.
Thought 2: So it runs through the Kessel Strait, between the two towns.
Action 2: Finish[through the Kessel Strait, near Orlo]
Observation 2: Answer is INCORRECT
Correct answer: the Kessel Strait

Question: Which club did the goalkeeper of the 1994 Marrow Cup final join next?
Thought 1: I should search the final.
Action 1: Search["1994 Marrow Cup final"]
Observation 1: Could not find ["1994 Marrow Cup final"]. Similar: ['Marrow Cup', 'Ines Varga (goalkeeper)'].
Thought 2: The goalkeeper must be Ines Varga.
Action 2: Finish[Ines Varga]
Observation 2: Answer is INCORRECT
Correct answer: Orlo Athletic

"""


def test_a_wrong_answer_is_set_beside_the_expected_one_and_its_source(tmp_path):
    path = tmp_path / "react_reflexion_2q.txt"
    path.write_text(SLIPS, encoding="utf-8")
    added, listed = sorted(_load(path), key=lambda r: "Varn" not in r.task.instruction)
    [fact] = _facts(added)
    assert fact.endswith('The answer holds the expected words and adds "through" before it and "near Orlo" after it.')
    fact = next(f for f in _facts(listed) if f.startswith("The answer "))
    err = next(t.turn for t in listed.turns if t.type == "function_call" and "Similar" in (t.result or ""))
    answered = next(t.turn for t in listed.turns if t.type == "function_call" and t.name == "Finish")
    assert fact.endswith(f"The run's answer appears in no look-up that went through, only in the error Search returned at "
                         f"turn {err}; no call before turn {answered} sent it."), fact


# a Reflexion log's trial with one failed agent and no other: each question's fixture follows it
ONE_FAILED_TRIAL = """
########################################
BEGIN TRIAL 1
Trial summary: Correct: 0, Incorrect: 1, Halted: 0
#######################################
------------- BEGIN CORRECT AGENTS -------------

------------- BEGIN INCORRECT AGENTS -----------

"""


OPENED = ONE_FAILED_TRIAL + """Question: Which goalkeeper of the 1994 Marrow Cup final later coached Orlo Athletic?
Thought 1: I should search the final.
Action 1: Search[1994 Marrow Cup final]
Observation 1: Could not find [1994 Marrow Cup final]. Similar: ['Marrow Cup', 'Ines Varga (footballer)'].
Thought 2: Search the goalkeeper the list gives.
Action 2: Search[Ines Varga (footballer)]
Observation 2: Ines Kata Varga (born 1970) is a former goalkeeper who played in the 1994 Marrow Cup final.
Thought 3: So the answer is Ines Varga.
Action 3: Finish[Ines Varga]
Observation 3: Answer is INCORRECT
Correct answer: Tamm Oduya

"""


def test_a_listed_name_the_run_searched_and_found_is_not_said_to_be_in_no_look_up(tmp_path):
    """"appears in no look-up that went through" was misleading when the run had searched the
    listed name and the page it got named it (as "Godspell" for "Godspell (film)", with a middle
    name for a person): the fact says so, and that the name came from the error's list."""
    path = tmp_path / "react_reflexion_1q.txt"
    path.write_text(OPENED, encoding="utf-8")
    [run] = _load(path)
    fact = next(f for f in _facts(run) if f.startswith("The answer "))
    err, opened = (t.turn for t in run.turns if t.type == "function_call" and t.name == "Search")
    assert "no look-up that went through" not in fact, fact
    assert fact.endswith(f"The run's answer is a name the error Search returned at turn {err} listed; Search[Ines Varga "
                         f"(footballer)] at turn {opened} went through, and its answer names \"Ines Kata Varga\"."), fact


UNTIED = ONE_FAILED_TRIAL + """Question: Which Argentine forward did the Dutch manager Ronald Koeman replace at Marrow Town?
Thought 1: I should search Marrow Town.
Action 1: Search[Marrow Town]
Observation 1: Marrow Town is a football club. Its forwards have included Ines Varga, a Dutch striker.
Thought 2: So the answer is Ines Varga.
Action 2: Finish[Ines Varga]
Observation 2: Answer is INCORRECT
Correct answer: Tamm Oduya

"""


def test_a_wrong_answer_from_a_page_that_never_met_the_question_s_names_says_which(tmp_path):
    """The run took a Dutch striker for the Argentine forward the question asks about: the page
    its answer came from (and every page it read) holds neither "Argentine" nor "Ronald Koeman",
    and the fact says so, naming the question's names nothing tied the answer to."""
    path = tmp_path / "react_reflexion_1q.txt"
    path.write_text(UNTIED, encoding="utf-8")
    [run] = _load(path)
    fact = next(f for f in _facts(run) if f.startswith("The answer "))
    page = next(t.turn for t in run.turns if t.type == "function_call" and t.name == "Search")
    assert fact.endswith(f"The run's answer appears in what Search returned at turn {page}, though no page the run read "
                         'before answering holds "Argentine" or "Ronald Koeman", which the question names.'), fact
    _check(run, fact, [])
    # counted across a lesson's failed runs on the answer's tool (corpus/failed_only_facts.py)
    [kept] = [f for f in compile_offline(run).in_short if f.text.startswith("The answer ")]
    assert (kept.kind, kept.about) == ("answer-untied", ["Finish"])


FIRST_GIVEN = """
########################################
BEGIN TRIAL 1
Trial summary: Correct: 1, Incorrect: 0, Halted: 0
#######################################
------------- BEGIN CORRECT AGENTS -------------

Question: In what state is the maker of Oatfold headquartered?
Thought 1: Search Oatfold.
Action 1: Search[Oatfold]
Observation 1: Oatfold is a baking mix sold by Varn Mills under its Tamm brand.
Thought 2: Search the maker.
Action 2: Search[Oatfold maker]
Observation 2: Could not find [Oatfold maker]. Similar: ['Oatfold', 'Varn Mills', 'Baking mix'].
Thought 3: Search Varn Mills.
Action 3: Search[Varn Mills]
Observation 3: Varn Mills is a food maker headquartered in Orlo, Kessel.
Thought 4: The answer is Kessel.
Action 4: Finish[Kessel]
Observation 4: Answer is CORRECT

------------- BEGIN INCORRECT AGENTS -----------

"""


def test_what_worked_credits_the_page_that_gave_a_name_before_an_error_listed_it(tmp_path):
    """The Oatfold page named Varn Mills at turn 1 before the error at turn 2 listed it: the search that
    found the answer followed that page (HotpotQA rater, step-0013)."""
    path = tmp_path / "react_reflexion_1q.txt"
    path.write_text(FIRST_GIVEN, encoding="utf-8")
    [run] = _load(path)
    fact = next(f for f in _facts(run) if f.startswith("What worked"))
    assert "Search[Varn Mills] at turn 3 (a name the page at turn 1 gave)" in fact, fact


LET_GO = ONE_FAILED_TRIAL + """Question: Which label released the single Tin Kettle Song?
Thought 1: Search the single.
Action 1: Search[single Tin Kettle Song label]
Observation 1: Could not find [single Tin Kettle Song label]. Similar: ['Tin Kettle Song', 'Rua Penn', 'Kettle'].
Thought 2: Rua Penn sang it, I think.
Action 2: Search[Rua Penn]
Observation 2: Rua Penn is a singer signed to Orlo Records.
Thought 3: So Orlo Records.
Action 3: Finish[Orlo Records]
Observation 3: Answer is INCORRECT
Correct answer: Tamm Sound

"""


def test_a_listed_name_the_question_gives_and_the_run_let_go_is_named(tmp_path):
    """The error listed "Tin Kettle Song", the question's own title, and the run searched the singer
    it guessed instead: the page names the listed name it never sent (HotpotQA rater: say what the
    reasoning got wrong), with the call it made instead."""
    path = tmp_path / "react_reflexion_1q.txt"
    path.write_text(LET_GO, encoding="utf-8")
    [run] = _load(path)
    err, then = (t.turn for t in run.turns if t.type == "function_call" and t.name == "Search")
    fact = next(f for f in _facts(run) if "no call sent it" in f)
    assert fact == (f"The error Search returned at turn {err} listed \"Tin Kettle Song\", a name the question gives, "
                    f"and no call sent it; it sent Search[Rua Penn] next (turn {then}): send the listed name as "
                    "written."), fact
    _check(run, fact, [err, then])


HALTED = """
########################################
BEGIN TRIAL 1
Trial summary: Correct: 0, Incorrect: 0, Halted: 1
#######################################
------------- BEGIN CORRECT AGENTS -------------

------------- BEGIN INCORRECT AGENTS -----------

------------- BEGIN HALTED AGENTS --------------

Question: Which short film by the maker of Tin Owl won the 1991 Corran Prize?
Thought 1: Search the maker.
Action 1: Search["Tin Owl"]
Observation 1: Could not find ["Tin Owl"]. Similar: ['Tin Owl (film)', 'Paper Heron', 'Mira Sand'].
Thought 2: Look up the prize.
Action 2: Lookup[Corran Prize]
Observation 2: No Results
Correct answer: Paper Heron

"""


def test_a_halted_run_names_the_error_that_offered_the_expected_answer(tmp_path):
    path = tmp_path / "react_reflexion_1q.txt"
    path.write_text(HALTED, encoding="utf-8")
    [run] = _load(path)
    fact = next(f for f in _facts(run) if f.startswith("The harness stopped the run: "))
    err = next(t.turn for t in run.turns if t.type == "function_call" and "Similar" in (t.result or ""))
    assert fact.endswith(f'No answer had been given; the expected "Paper Heron" appeared in no look-up that went '
                         f"through, only in the error Search answered at turn {err}; no later call sent it."), fact
    assert not any("Paper Heron" in str(t.arguments) for t in run.turns if t.type == "function_call")


def test_a_halted_run_counts_the_calls_it_spent_repeating_one_with_the_same_answer(tmp_path):
    """Where the step limit ended the run, the call sent again with the same arguments and answered
    the same is a call that bought nothing: the harness line counts and pairs them."""
    again = HALTED.replace("Question:", "Question:", 1).replace(
        "Observation 2: No Results\n",
        "Observation 2: No Results\nThought 3: Look up the prize again.\nAction 3: Lookup[Corran Prize]\n"
        "Observation 3: No Results\n")
    path = tmp_path / "react_reflexion_1q.txt"
    path.write_text(again, encoding="utf-8")
    [run] = _load(path)
    fact = next(f for f in compile_offline(run).in_short if f.text.startswith("The harness stopped the run: "))
    lookups = [t.turn for t in _calls(run) if t.name == "Lookup"]
    assert (f"1 of its 3 calls sent an earlier call's arguments again and got the same answer (turn {lookups[1]} "
            f"repeated turn {lookups[0]}).") in fact.text, fact.text
    assert set(lookups) <= set(fact.turns)
    _check(run, fact.text, fact.turns)
    [plain] = _load(_written(tmp_path / "plain", HALTED))  # no call sent twice: nothing is said
    assert "sent an earlier call's arguments again" not in " ".join(_facts(plain))


def test_a_halted_run_whose_last_calls_were_reworded_and_answered_alike_says_so(tmp_path):
    """Three Lookups in a row, other words each time, "No Results" each time, then the limit: the run
    spent its last calls rewording a call that gave nothing new, and its page says which turns."""
    alike = HALTED.replace(
        "Observation 2: No Results\n",
        "Observation 2: No Results\nThought 3: Look up the award.\nAction 3: Lookup[Corran award]\n"
        "Observation 3: No Results\nThought 4: Look up the winner.\nAction 4: Lookup[prize winner]\n"
        "Observation 4: No Results\n")
    [run] = _load(_written(tmp_path / "alike", alike))
    fact = next(f for f in compile_offline(run).in_short if f.text.startswith("The harness stopped the run: "))
    lookups = [t.turn for t in _calls(run) if t.name == "Lookup"]
    assert len(lookups) == 3
    assert (f"Its last 3 calls (turns {lookups[0]} to {lookups[-1]}) each sent Lookup other arguments and each got the "
            'same answer ("No Results"): the limit came while the run reworded a call that gave nothing new.') \
        in fact.text, fact.text
    assert set(lookups) <= set(fact.turns)
    _check(run, fact.text, fact.turns)
    # two such calls are no pattern yet
    [two] = _load(_written(tmp_path / "two", HALTED.replace(
        "Observation 2: No Results\n",
        "Observation 2: No Results\nThought 3: Look up the award.\nAction 3: Lookup[Corran award]\n"
        "Observation 3: No Results\n")))
    assert len([t for t in _calls(two) if t.name == "Lookup"]) == 2
    assert "gave nothing new" not in " ".join(_facts(two))


RETRIED_ELSEWHERE = """
########################################
BEGIN TRIAL 1
Trial summary: Correct: 1, Incorrect: 0, Halted: 0
#######################################
------------- BEGIN CORRECT AGENTS -------------

Question: What play do both Jon Arvel and Ida Lusk have in common?
Thought 1: Search Jon Arvel.
Action 1: Search[Jon Arvel]
Observation 1: Could not find [Jon Arvel]. Similar: ['Jonas Arvel', 'Jon Arvel (cyclist)', 'Arvel Bay'].
Thought 2: Search the first listed name.
Action 2: Search[Jon Arvel (cyclist)]
Observation 2: Jon Arvel (born 1971) is a retired racing cyclist who rode two Tours of Orlo.
Thought 3: Search Ida Lusk instead.
Action 3: Search[Ida Lusk]
Observation 3: Ida Lusk is a playwright best known for her play Grey Harbour, staged with Jonas Arvel in 1990.
Thought 4: The play is Grey Harbour.
Action 4: Finish[Grey Harbour]
Observation 4: Answer is CORRECT
Correct answer: Grey Harbour

------------- BEGIN INCORRECT AGENTS -----------

------------- BEGIN HALTED AGENTS --------------

"""


def test_a_retry_whose_page_did_not_lead_to_the_answer_is_not_shown_as_how_it_was_found(tmp_path):
    """The Search after the error went through with a listed name, but its page (a cyclist) holds
    nothing of the answer, which came from a later look-up: the page says so, with that turn."""
    [run] = _load(_written(tmp_path / "elsewhere", RETRIED_ELSEWHERE))
    facts = compile_offline(run).in_short
    fact = next(f for f in facts if "a later Search call went through" in f.text)
    searches = [t.turn for t in _calls(run) if t.name == "Search"]
    assert fact.text.endswith(f'; what it returned does not hold the answer, which came from the look-up at turn '
                              f'{searches[2]}.'), fact.text
    assert searches[2] in fact.turns
    _check(run, fact.text, fact.turns)
    # the retry's own page holding the answer: nothing more is said
    [held] = _load(_written(tmp_path / "held", RETRIED_ELSEWHERE.replace(
        "rode two Tours of Orlo.", "rode two Tours of Orlo and starred in the play Grey Harbour.")))
    fact = next(f for f in compile_offline(held).in_short if "a later Search call went through" in f.text)
    assert "does not hold the answer" not in fact.text


def _written(folder, text: str):
    folder.mkdir()
    path = folder / "react_reflexion_1q.txt"
    path.write_text(text, encoding="utf-8")
    return path


HALTED_AGAIN = """
########################################
BEGIN TRIAL 1
Trial summary: Correct: 0, Incorrect: 0, Halted: 1
#######################################
------------- BEGIN CORRECT AGENTS -------------

------------- BEGIN INCORRECT AGENTS -----------

------------- BEGIN HALTED AGENTS --------------

Question: Which short film by the maker of Tin Owl won the 1991 Corran Prize?
Thought 1: Search the maker.
Action 1: Search["Tin Owl"]
Observation 1: Could not find ["Tin Owl"]. Similar: ['Tin Owl (film)', 'Paper Heron', 'Mira Sand'].
Thought 2: Paper Heron may be the film.
Action 2: Search["Paper Heron"]
Observation 2: Could not find ["Paper Heron"]. Similar: ['Paper Heron', 'Paper Heron (novel)', 'Heron Bay'].
Thought 3: Try the prize.
Action 3: Search["Corran Prize"]
Observation 3: Could not find ["Corran Prize"]. Similar: ['Corran Prize winners', 'Paper Heron', 'Corran'].
Thought 4: Both together.
Action 4: Search["Corran Prize Paper Heron"]
Observation 4: Could not find ["Corran Prize Paper Heron"]. Similar: ['Corran Prize winners', 'Corran'].
Correct answer: Paper Heron

"""


def test_an_expected_answer_several_errors_listed_names_each_and_the_search_for_it(tmp_path):
    path = tmp_path / "react_reflexion_1q.txt"
    path.write_text(HALTED_AGAIN, encoding="utf-8")
    [run] = _load(path)
    fact = next(f for f in compile_offline(run).in_short if f.text.startswith("The harness stopped the run: "))
    # the last error holds the name only where it repeats the query: it listed nothing of it
    errs = [t.turn for t in run.turns if t.type == "function_call" and "'Paper Heron'" in (t.result or "")]
    searched = next(t.turn for t in run.turns if t.type == "function_call" and "Paper Heron" in str(t.arguments))
    assert len(errs) == 3 and searched == errs[1]
    # every error that listed it, not only the first, and the search the agent made for it
    assert fact.text.endswith(f'the expected "Paper Heron" appeared in no look-up that went through, only in the errors '
                              f"Search answered at turns {errs[0]}, {errs[1]} and {errs[2]}; the agent sent it to Search "
                              f"at turn {searched}, which failed too."), fact.text
    assert set(errs) <= set(fact.turns)
    _check(run, fact.text, fact.turns)


def _halted_after(page: str) -> str:
    return f"""
########################################
BEGIN TRIAL 1
Trial summary: Correct: 0, Incorrect: 0, Halted: 1
#######################################
------------- BEGIN CORRECT AGENTS -------------

------------- BEGIN INCORRECT AGENTS -----------

------------- BEGIN HALTED AGENTS --------------

Question: In which Bristol gallery has the weaver Lotte Brandt shown her work?
Thought 1: Search the weaver.
Action 1: Search[Lotte Brandt]
Observation 1: {page}
Thought 2: Search the galleries of Bristol.
Action 2: Search[Search[Bristol galleries]]
Observation 2: Could not find that page, please try again.
Thought 3: Try again.
Action 3: Search[Search[Bristol galleries list]]
Observation 3: Could not find that page, please try again.
Correct answer: Harlow Gallery Bristol

"""


@pytest.mark.parametrize("page, said", [
    # the page named the gallery without its city: the answer was there in another form
    ("Lotte Brandt (born 1962) is a German weaver. Her tapestries have been shown in several galleries, including "
     "the Harlow Gallery and the Tate.", ' as written, though Search\'s answer at turn 1 held 2 of its 3 main words in one '
     'sentence ("Harlow", "Gallery").'),
    # near miss: one of the three words only, so nothing close is claimed
    ("Lotte Brandt (born 1962) is a German weaver. Her tapestries hang in a gallery in Hamburg.", "."),
])
def test_an_expected_answer_a_look_up_held_in_another_form_is_said_so(tmp_path, page, said):
    path = tmp_path / "react_reflexion_1q.txt"
    path.write_text(_halted_after(page), encoding="utf-8")
    [run] = _load(path)
    fact = next(f for f in compile_offline(run).in_short if f.text.startswith("The harness stopped the run: "))
    assert fact.text.endswith('no look-up had returned the expected "Harlow Gallery Bristol"' + said), fact.text
    _check(run, fact.text, fact.turns)


RETRY = """
########################################
BEGIN TRIAL 1
Trial summary: Correct: 1, Incorrect: 0, Halted: 0
#######################################
------------- BEGIN CORRECT AGENTS -------------

Question: Which river runs past the town where Paper Heron was filmed?
Thought 1: Search the film.
Action 1: Search["Paper Heron"]
Observation 1: Could not find ["Paper Heron"]. Similar: ['Paper Heron (film)', 'Tin Owl'].
Thought 2: Search the film's page.
Action 2: Search[Paper Heron (film)]
Observation 2: Paper Heron is a 1991 short film shot in Orlo, a town on the river Vell.
Thought 3: The river is the Vell.
Action 3: Finish[Vell]
Observation 3: Answer is CORRECT
Correct answer: Vell

------------- BEGIN INCORRECT AGENTS -----------

"""


def test_a_success_says_how_it_got_past_its_first_error(tmp_path):
    path = tmp_path / "react_reflexion_1q.txt"
    path.write_text(RETRY, encoding="utf-8")
    [run] = _load(path)
    err, fix = [t.turn for t in run.turns if t.type == "function_call" and t.name == "Search"]
    assert _facts(run)[1] == (f'Search failed at turn {err}; a later Search call went through at turn {fix}, sending '
                              '"Paper Heron (film)", a name the error had listed; the failed call had sent its text '
                              "inside quote marks, this one none.")
    # a call between them that sent its text without the marks failed too: the marks were not what failed
    again = RETRY.replace("Thought 2: Search the film's page.\n",
                          "Thought 2: Without quote marks.\nAction 2: Search[Paper Heron]\nObservation 2: Could not find "
                          "[Paper Heron]. Similar: ['Paper Heron (film)', 'Tin Owl'].\nThought 3: Search the film's page.\n"
                          ).replace("Action 2: Search[Paper Heron (film)]", "Action 3: Search[Paper Heron (film)]", 1)
    again = again.replace("Observation 2: Paper Heron is", "Observation 3: Paper Heron is").replace(
        "Thought 3: The river is the Vell.\nAction 3: Finish[Vell]\nObservation 3:",
        "Thought 4: The river is the Vell.\nAction 4: Finish[Vell]\nObservation 4:")
    [run] = _load(_written(tmp_path / "bare", again))
    searches = [t for t in run.turns if t.type == "function_call" and t.name == "Search"]
    assert [bool(t.is_error) for t in searches] == [True, True, False], [t.arguments for t in searches]
    said = next(f for f in _facts(run) if "a later Search call went through" in f)
    assert "quote marks" not in said, said


# --- tau-bench: a limit, a count, expected calls ------------------------------------------------------

POLICY = ("# Airline Agent Policy\n\nThe current time is 2024-06-01 10:00:00 EST.\n\n- You should only make one "
          "tool call at a time.\n")
TRIP = {"reservation_id": "Q4WZ8N", "user_id": "lena_vogt_3017", "origin": "DEN", "destination": "BOS",
        "flight_type": "one_way", "cabin": "economy",
        "flights": [{"origin": "DEN", "destination": "BOS", "flight_number": "HAT907", "date": "2024-06-09",
                     "price": 160}],
        "passengers": [{"first_name": "Lena", "last_name": "Vogt", "dob": "1988-03-04"},
                       {"first_name": "Ravi", "last_name": "Vogt", "dob": "1986-12-19"}],
        "payment_history": [{"payment_id": "gift_card_7730215", "amount": 320}],
        "created_at": "2024-05-20T08:11:02", "total_baggages": 0, "nonfree_baggages": 0, "insurance": "yes"}





def _tau(tmp_path, messages, reward, actions=None, instruction="You are lena_vogt_3017. Move your flight.", record=TRIP,
         end=True):
    """One tau-bench record; ``end``: the user's closing thanks after ``messages``, as most have."""
    traj = [{"role": "system", "content": POLICY}, _user("Hi, I need help with my Boston trip."),
            _agent("Of course. What is your user id and reservation id?"),
            _user("lena_vogt_3017, reservation Q4WZ8N."),
            *_tool("get_reservation_details", {"reservation_id": "Q4WZ8N"}, record),
            *messages, *([_user("Thanks. ###STOP###")] if end else [])]
    task = {"user_id": "lena_vogt_3017", "outputs": [], "instruction": instruction}  # actions: tau-bench's kwargs shape
    if actions is not None:
        task["actions"] = actions
    record = {"task_id": 12, "reward": reward, "trial": 0, "traj": traj,
              "info": {"task": task, "source": "user", "reward_info": {"reward": reward, "info": {}, "actions": []}}}
    path = tmp_path / "airline-results.json"
    path.write_text(json.dumps([record]), encoding="utf-8")
    [run] = _load(path)
    return run


def _call_turn(run: Run, name: str) -> int:
    return next(t.turn for t in run.turns if t.type == "function_call" and t.name == name)


def _turn_of(run: Run, needle: str) -> int:
    return next(t.turn for t in run.turns if needle in json.dumps([t.content, t.arguments, t.result]))


def test_a_computed_cost_above_the_users_limit_is_stated_with_both_numbers(tmp_path):
    run = _tau(tmp_path, [
        _user("I'd like the 2024-06-10 flight instead. I can pay up to $150 for the change."),
        *_tool("calculate", {"expression": "(245 - 160) * 2 + 30"}, "200.0"),
        _agent("The change would cost $200 in all. Shall I go ahead?"),
        _user("That's more than I can pay, so no, leave it as it is."),
    ], reward=1.0)
    calc, said = _turn_of(run, "245 - 160"), _turn_of(run, "up to $150")
    put, reply = _turn_of(run, "would cost $200"), _turn_of(run, "more than I can pay")
    # what the user made of the figure is quoted in their words, with the turn the agent put it to them
    assert _facts(run)[0] == (f"The calculate call at turn {calc} gave 200, above the $150 limit the user gave at turn "
                              f"{said} (\"I can pay up to $150 for the change.\"); no change went through after it: the agent put $200 to the user at turn {put}, "
                              f"and the user replied at turn {reply}: \"That's more than I can pay, so no, leave it as "
                              "it is.\"")
    kf = next(f for f in compile_offline(run).in_short if f.text.startswith("The calculate call"))
    assert {calc, put, reply} <= set(kf.turns)


def test_a_sum_above_the_limit_that_the_run_moved_past_is_left_unsaid(tmp_path):
    change = {"reservation_id": "Q4WZ8N", "cabin": "economy", "payment_id": "gift_card_7730215",
              "flights": [{"flight_number": "HAT311", "date": "2024-06-10"}]}
    run = _tau(tmp_path, [
        _user("I can pay up to $150 for the change."),
        *_tool("calculate", {"expression": "(245 - 160) * 2 + 30"}, "200.0"),
        _user("Too much. What about only my own seat?"),
        *_tool("calculate", {"expression": "245 - 160"}, "85.0"),
        _user("Yes, go ahead with that."),
        *_tool("update_reservation_flights", change, dict(TRIP)),
    ], reward=0.0)
    assert not any("limit" in f for f in _facts(run))


def test_a_limit_in_the_task_instruction_counts_and_a_payment_above_it_is_named(tmp_path):
    change = {"reservation_id": "Q4WZ8N", "cabin": "economy", "payment_id": "gift_card_7730215",
              "flights": [{"flight_number": "HAT311", "date": "2024-06-10"}],
              "payment_methods": [{"payment_id": "gift_card_7730215", "amount": 140},
                                  {"payment_id": "credit_card_6604418", "amount": 95}]}
    run = _tau(tmp_path, [_user("Please move it to the 2024-06-10 flight, HAT311."), _agent("Done shortly."),
                          *_tool("book_reservation", change, "ok")], reward=0.0,
               instruction="You are lena_vogt_3017. Your budget is $200 for any change; refuse anything above it.")
    facts = _facts(run)
    booked = _turn_of(run, "credit_card_6604418")
    # what the limit bounds is the user's own sentence: quoted, so the reader weighs the two figures
    assert facts[0] == (f"book_reservation at turn {booked} paid $235 in all, above the $200 limit the task's "
                        "instruction gives the user (\"Your budget is $200 for any change; refuse anything above it.\").")


def test_a_count_the_user_gives_against_the_record_shown_before(tmp_path):
    def run_where(agent_says: str):
        return _tau(tmp_path, [
            _agent("I see the reservation Q4WZ8N to Boston."),
            _user("How many passengers are on it? I believe there were 3."),
            _agent(agent_says),
            # a request for a new booking is no claim about the record: nothing is said of it
            _user("Then please book 4 passengers on a new trip."),
        ], reward=1.0)

    run = run_where("Noted, I will go ahead on that basis.")  # the agent let the user's count stand
    said, looked = _turn_of(run, "there were 3"), _turn_of(run, "HAT907")
    assert _facts(run)[0] == (f"The user put the number of passengers at 3 (turn {said}); every record looked up before "
                              f"that lists 2 (the last: get_reservation_details at turn {looked}).")
    # the agent set the user right at once, with the record's count: no fact of the run's going wrong
    assert not any(f.startswith("The user put the number") for f in _facts(run_where("The reservation lists 2 passengers.")))


def test_expected_calls_item_by_item_and_the_change_never_made(tmp_path):
    expected = [{"name": "get_reservation_details", "kwargs": {"reservation_id": "Q4WZ8N"}},
                {"name": "update_reservation_flights", "kwargs": {
                    "reservation_id": "Q4WZ8N", "cabin": "economy", "payment_id": "gift_card_7730215",
                    "flights": [{"flight_number": "HAT311", "date": "2024-06-10"}]}},
                {"name": "update_reservation_passengers", "kwargs": {
                    "reservation_id": "Q4WZ8N", "passengers": [{"first_name": "Lena", "last_name": "Vogt",
                                                                "dob": "1988-03-04"}]}}]
    sent = dict(expected[1]["kwargs"], payment_id="credit_card_6604418")
    run = _tau(tmp_path, [_user("Move me to HAT311 on 2024-06-10 and pay with my gift card, and drop Ravi."),
                          *_tool("update_reservation_flights", sent, dict(TRIP))], reward=0.0, actions=expected)
    facts = _facts(run)
    changed = _turn_of(run, "credit_card_6604418")
    assert facts[0] == (f"update_reservation_flights at turn {changed} sent `payment_id` \"credit_card_6604418\" where "
                        "the task expected \"gift_card_7730215\". No earlier answer or user message held "
                        "\"credit_card_6604418\"; the expected \"gift_card_7730215\" was shown by get_reservation_details's "
                        f"answer (turn {_call_turn(run, 'get_reservation_details')}). Send such a value as the log gave it, "
                        "rather than composing it.")
    assert facts[1].startswith("The task expected update_reservation_passengers(reservation_id=\"Q4WZ8N\", passengers=") \
        and "and the run never made that change (the agent's last turn was " in facts[1]


def test_a_success_that_made_the_expected_change_says_where_its_values_came_from(tmp_path):
    change = {"reservation_id": "Q4WZ8N", "cabin": "economy", "payment_id": "gift_card_7730215",
              "flights": [{"flight_number": "HAT311", "date": "2024-06-10"}]}
    run = _tau(tmp_path, [_user("Move me to HAT311 on 2024-06-10, gift card please."),
                          *_tool("update_reservation_flights", change, dict(TRIP))], reward=1.0,
               actions=[{"name": "update_reservation_flights", "kwargs": change}])
    # said as what to do, with where each value came from (the record looked up, the user's words)
    assert _facts(run) == [f"Make the change the task expected as this run did, with the same arguments: "
                           f"update_reservation_flights at turn {_call_turn(run, 'update_reservation_flights')}, with "
                           f"`reservation_id` \"Q4WZ8N\" from the user (turn 3), `cabin` \"economy\" from "
                           f"get_reservation_details's answer (turn {_call_turn(run, 'get_reservation_details')}) and "
                           f"`payment_id` \"gift_card_7730215\" from get_reservation_details's answer (turn "
                           f"{_call_turn(run, 'get_reservation_details')})."]


def test_a_success_that_refused_quotes_the_refusal_and_the_record_value_it_names(tmp_path):
    run = _tau(tmp_path, [
        _agent("Your booking is in basic economy and has no travel insurance, so it cannot be changed."),
        _user("Then please pass me to a person."),
        *_tool("transfer_to_human_agents", {"summary": "User wants to change a booking."}, "Transfer successful"),
    ], reward=1.0, actions=[{"name": "get_reservation_details", "kwargs": {"reservation_id": "Q4WZ8N"}}],
        record=dict(TRIP, cabin="basic_economy", insurance="no"))  # look-ups only: no change expected
    looked, said = _call_turn(run, "get_reservation_details"), _turn_of(run, "cannot be changed")
    # what made the success: the refusal and the record value it names; the hand-off the task never asked
    # for is said to be none of its expected calls, not taught as the way to pass
    assert _facts(run) == [
        "Refuse a change the records rule out and make no change, as this run did (the task expected no change, and "
        "no transfer_to_human_agents call either: the hand-off at turn "
        f"{_call_turn(run, 'transfer_to_human_agents')} was not one it asked for): "
        f"get_reservation_details (turn {looked}) gave `cabin` \"basic_economy\"; the agent told the user at turn "
        f"{said}: \"Your booking is in basic economy and has no travel insurance, so it cannot be changed.\""]
    assert [i.key for i in compile_offline(run).insights][0].startswith("answer-from")


def test_a_success_that_refused_where_the_task_also_expected_a_hand_off_says_what_made_it_right(tmp_path):
    """The task expected only a hand-off; the run refused, handed off nothing, and passed. What made
    it right is the refusal and the record value it names, said with the hand-off it never made,
    not only "the run never made it and succeeded all the same" (tau-bench rater, step-0085)."""
    run = _tau(tmp_path, [
        _agent("Your booking is in basic economy and has no travel insurance, so it cannot be changed."),
        _user("I see. Thank you anyway."),
    ], reward=1.0, actions=[{"name": "get_reservation_details", "kwargs": {"reservation_id": "Q4WZ8N"}},
                            {"name": "transfer_to_human_agents", "kwargs": {"summary": "User wants a change."}}],
        record=dict(TRIP, cabin="basic_economy", insurance="no"))
    looked, said = _call_turn(run, "get_reservation_details"), _turn_of(run, "cannot be changed")
    facts = _facts(run)
    assert facts[0] == (
        "Refuse a change the records rule out and make no change, as this run did (the task expected a hand-off "
        f"too, which this run never made): get_reservation_details (turn {looked}) gave `cabin` \"basic_economy\"; "
        f"the agent told the user at turn {said}: \"Your booking is in basic economy and has no travel insurance, "
        "so it cannot be changed.\""), facts
    kf = compile_offline(run).in_short[0]
    assert kf.kind == "missed-change" and kf.about == ["transfer_to_human_agents"]  # counted as before


def test_an_expected_look_up_never_made_is_named(tmp_path):
    run = _tau(tmp_path, [_agent("Your flight is on 2024-06-09.")], reward=0.0,
               actions=[{"name": "get_reservation_details", "kwargs": {"reservation_id": "Q4WZ8N"}},
                        {"name": "get_user_details", "kwargs": {"user_id": "lena_vogt_3017"}}])
    given = _turn_of(run, "lena_vogt_3017, reservation")
    assert _facts(run) == ['The task expected the look-up get_user_details(user_id="lena_vogt_3017"), and the run '
                           f'never made it; the user had given "lena_vogt_3017" at turn {given}.']


@pytest.mark.parametrize("own, missed", [
    ("(350 - 122) * 2 + (499 - 127) * 2", False),  # the same sum written otherwise: made
    ("(350 - 122) + (499 - 127)", True),  # another sum: the expected one was not worked out
    ("2 ** 3000", True),  # not read as arithmetic: compared as written only
])
def test_an_expected_calculation_the_run_worked_out_otherwise_is_made(tmp_path, own, missed):
    from wikitrace.compilers.expected_calls import missed_lookups, missed_notes
    from wikitrace.compilers.reading import read_run

    run = _tau(tmp_path, [*_tool("calculate", {"expression": own}, "1200.0"), _agent("That is $1200.")], reward=0.0,
               actions=[{"name": "get_reservation_details", "kwargs": {"reservation_id": "Q4WZ8N"}},
                        {"name": "calculate", "kwargs": {"expression": "2 * ((350 - 122) + (499 - 127))"}}])
    r = read_run(run)
    assert bool(missed_lookups(r)) is missed
    assert any("calculate(" in note for note in missed_notes(r)) is missed


def test_an_expected_look_up_never_made_names_the_own_call_nearest_to_it_not_one_that_matched_another(tmp_path):
    """Round 17: "its own search_direct_flight call at turn 7 sent other arguments", where turn 7 was
    exactly the first expected search and turn 8 the one that differed from the second."""
    from wikitrace.compilers.expected_calls import missed_notes
    from wikitrace.compilers.reading import read_run

    out = {"origin": "DEN", "destination": "BOS", "date": "2024-06-09"}
    back = {"origin": "BOS", "destination": "DEN", "date": "2024-06-14"}
    run = _tau(tmp_path, [*_tool("search_direct_flight", out, []), *_tool("search_direct_flight", dict(back, date="2024-06-16"), []),
                          _agent("No flights.")], reward=0.0,
               actions=[{"name": "search_direct_flight", "kwargs": out}, {"name": "search_direct_flight", "kwargs": back}])
    r = read_run(run)
    first, second = [c.n for c in r.calls if c.name == "search_direct_flight"]
    [note] = [n for n in missed_notes(r) if "expected look-up" in n]
    assert note.endswith(f"(its own search_direct_flight call at turn {second} sent other arguments)."), note


@pytest.mark.parametrize("paid, noted", [(67, False), (68, True)])
def test_a_part_payment_the_task_expected_is_no_discrepancy(tmp_path, paid, noted):
    """A gift card holding 203 that pays 67 is noted as another value than its record's only when
    the log's expected call does not send that very amount."""
    from wikitrace.compilers.page_notes import check_notes
    from wikitrace.compilers.reading import read_run

    user = {"user_id": "lena_vogt_3017", "payment_methods": {"gift_card_7773485": {
        "source": "gift_card", "amount": 203, "id": "gift_card_7773485"}}}
    book = {"user_id": "lena_vogt_3017", "payment_methods": [{"payment_id": "gift_card_7773485", "amount": paid}]}
    run = _tau(tmp_path, [*_tool("get_user_details", {"user_id": "lena_vogt_3017"}, user),
                          *_tool("book_reservation", book, {"reservation_id": "HATHAT"}), _agent("Booked.")],
               reward=0.0, actions=[{"name": "book_reservation", "kwargs": {
                   "user_id": "lena_vogt_3017", "payment_methods": [{"payment_id": "gift_card_7773485", "amount": 67}]}}])
    r = read_run(run)
    [call] = [c for c in r.calls if c.name == "book_reservation"]
    notes, _flagged = check_notes(r, call)
    assert any("payment_methods[0].amount" in n for n in notes) is noted, notes


def test_a_hand_off_the_task_did_not_expect_comes_after_the_change_it_left_unmade(tmp_path):
    """A transfer changes no record: the change the task expected and the run never made is what it
    failed by, and leads; the unexpected hand-off is said after it."""
    run = _tau(tmp_path, [_agent("I cannot rename passengers on this booking. Shall I transfer you?"), _user("ok"),
                          *_tool("transfer_to_human_agents", {"summary": "rename a passenger"}, "Transfer successful")],
               reward=0.0, actions=[{"name": "update_reservation_passengers", "kwargs": {
                   "reservation_id": "Q4WZ8N", "passengers": [{"first_name": "Ravi", "last_name": "Vogt",
                                                                "dob": "1986-12-19"}]}}])
    facts = _facts(run)
    assert facts[0].startswith("The task expected update_reservation_passengers("), facts
    assert any(f.startswith("transfer_to_human_agents at turn") for f in facts[1:]), facts


def test_a_run_with_nothing_established_says_so_plainly(tmp_path):
    """Said in the words of what the log holds: a task with expected calls is told it has none to
    compare with only when it has some; a log with none at all is told it has no expected result."""
    run = _tau(tmp_path, [_agent("Your flight is on 2024-06-09.")], reward=0.0,
               actions=[{"name": "get_reservation_details", "kwargs": {"reservation_id": "Q4WZ8N"}}])
    [fact] = _facts(run)
    assert fact.startswith("The log records nothing that settles this run on its own")
    run = _tau(tmp_path, [_agent("Your flight is on 2024-06-09.")], reward=0.0)
    [fact] = _facts(run)
    assert fact.startswith("The log records no error left standing and no stop by the harness, and holds no expected "
                           "result to compare with."), fact


# --- every fixture of every importer: each fact checked against its log --------------------------------


def _rule_said(run: Run, by_n: dict, said: str) -> None:
    """The run's own rule beside a fact (rule_reasons.py): each quote is the system prompt's own
    words, and each field a look-up "gave" is in that turn's answer with that value."""
    system = next(t for t in run.turns if t.type == "message" and t.role == "system")
    prompt = " ".join((system.content or "").split())
    quotes, _, places = said.partition('."; ')
    for quoted in re.findall(r'"([^"]+)"', quotes + '."'):  # a case cut out of a sentence leaves "…" in its place
        assert all(piece.strip(" .") in prompt for piece in quoted.split("…") if piece.strip(" .")), quoted
    for place in places.rstrip(".").split("; "):
        m = re.match(r"(\S+) \(turn (\d+)\) gave (.+)", place)
        if m:
            answer = json.loads(by_n[int(m.group(2))].result)
            for key, value in re.findall(r'`(\w+)` ("[^"]*")', m.group(3)):
                assert json.dumps(answer.get(key)) == value, (place, key)


def _in_prompt(run: Run, quoted: str) -> None:
    prompt = " ".join((next(t for t in run.turns if t.type == "message" and t.role == "system").content or "").split())
    assert all(piece.strip(" .") in prompt for piece in quoted.split("…") if piece.strip(" .")), quoted


def _rule_allowed(run: Run, by_n: dict, text: str) -> str:
    """A rule said to allow the change (rule_verdicts.allowing): the clause is the prompt's words,
    names the field's value, and no condition word is in it; the field is the look-up's."""
    m = re.search(r' The system prompt\'s rule on (\w+) \(turn \d+\) has a case that allows this change(?: \(`(\w+)` ("[^"]*")(?: \((\d+) '
                  r'hours before the current time the system prompt gives\))?, (\w+) \(turn (\d+)\)\))?: "(.+?)"\.?$', text)
    if not m:
        return text
    clause = m.group(7)
    _in_prompt(run, clause)
    assert not re.search(r"\b(?:if|only|unless|not)\b", clause), text
    if m.group(2):
        answer = json.loads(by_n[int(m.group(6))].result)
        assert json.dumps(answer[m.group(2)]) == m.group(3), text
    span = re.search(r"within (\d+) hours", clause)
    if span:  # a span the record's time is inside, by the prompt's own now
        system = next(t for t in run.turns if t.type == "message" and t.role == "system")
        now = datetime.strptime(re.search(r"current time is (\S+ \S+)", system.content).group(1), "%Y-%m-%d %H:%M:%S")
        gap = now - datetime.fromisoformat(json.loads(m.group(3)))
        assert timedelta(0) <= gap <= timedelta(hours=int(span.group(1))) and int(m.group(4)) == gap // timedelta(hours=1)
    else:  # a case keyed by the record's value, with no condition of its own
        assert "within" not in clause and json.loads(m.group(3)).replace("_", " ").lower() in clause.lower(), text
    return text[:m.start()]


def _rule_breach(run: Run, by_n: dict, text: str) -> str:
    """A rule said to forbid the change (record_rules.py): the quote is the prompt's sentence, and
    what the call did is read back from the call, the look-up and the call's answer."""
    m = re.search(r' The system prompt\'s rule \(turn \d+\) forbids this change: "(.+?)"; here (.+?)\.(?= The system|$)',
                  text)
    if not m:
        return text
    _in_prompt(run, m.group(1))
    change = by_n[int(re.search(r"at turn (\d+)", text).group(1))]
    args = change.arguments
    done = m.group(2).replace("\\`", "`")
    sent = re.fullmatch(r'the call sent `(\w+)` ("[^"]*") where (\w+) \(turn (\d+)\) gave ("[^"]*")', done)
    gone = re.fullmatch(r'(\w+) \(turn (\d+)\) gave `(\w+)` ("[^"]*"), and after the call no item of `(\w+)` has `\3` \4 '
                        r'\((?:its answer at turn \d+ lists|the call sent|the run\'s answers show) (.+)\): the call changed `\3`', done)
    part = re.fullmatch(r'the call sent `(\w+)` ("[^"]*") \((\w+) \(turn (\d+)\) gave ("[^"]*")\) with (\d+) of the '
                        r'record\'s (\d+) `(\w+)` \((.+)\), leaving out (.+?)(; its answer at turn \d+ has no .+ in `\w+`: the call '
                        r'dropped (?:it|them))?', done)
    denied = re.fullmatch(r'(\w+) \(turn (\d+)\) gave `(\w+)` ("[^"]*"), and the call changed `(\w+)` \(it sent (.+), '
                          r'where the record had (.+)\)', done)
    assert sent or gone or part or denied, done
    if denied:  # the record holds the value the rule names, and the call's list is not the record's
        record = json.loads(by_n[int(denied.group(2))].result)
        assert json.dumps(record[denied.group(3)]) == denied.group(4), done
        assert json.loads(denied.group(4)).replace("_", " ").lower() in m.group(1).lower(), done
        assert json.dumps(args[denied.group(5)]) != json.dumps(record[denied.group(5)]), done
    if sent:
        assert json.dumps(args[sent.group(1)]) == sent.group(2) != sent.group(5), done
        assert json.dumps(json.loads(by_n[int(sent.group(4))].result)[sent.group(1)]) == sent.group(5), done
    if gone:
        record = json.loads(by_n[int(gone.group(2))].result)
        assert json.dumps(record[gone.group(3)]) == gone.group(4), done
        after = json.loads(change.result)[gone.group(5)] if "its answer" in done else args[gone.group(5)]
        if "its answer" in done:
            assert all(json.dumps(x[gone.group(3)]) != gone.group(4) for x in after), done
    if part:
        record = json.loads(by_n[int(part.group(4))].result)
        assert json.dumps(args[part.group(1)]) == part.group(2) and json.dumps(record[part.group(1)]) == part.group(5)
        assert len(args[part.group(8)]) == int(part.group(6)) < int(part.group(7)) == len(record[part.group(8)]), done
        if part.group(11):  # the record after the call holds only the items the call sent
            after = json.loads(change.result)[part.group(8)]
            assert len(after) == len(args[part.group(8)]), done
    return text[:m.start()] + text[m.end():]


def _said_about_rule(run: Run, by_n: dict, text: str) -> str:
    """What was said about a rule (rule_talk.py), checked and cut off the fact's end: the agent's
    refusal is its own sentence at that turn and the task expected that call; the user's words on
    the rule's condition are the user's own, at that turn."""
    m = re.search(r' The agent told the user at turn (\d+) that it could not: "(.+?)"; the task expected (\w+)'
                  r'(?:, which the rule quoted allows)?\.$', text)
    if m:
        said = by_n[int(m.group(1))]
        assert said.role == "assistant" and m.group(2).rstrip(" …") in " ".join((said.content or "").split()), text
        expected = [c.get("name") for c in json.loads((run.task.metadata or {}).get("expected_calls") or "[]")]
        assert m.group(3) in expected, text
        assert ", which the rule quoted allows" not in m.group(0) or " The system prompt's rule on " in text, text
        text = text[:m.start()]
    m = re.search(r' The user\'s reason, "(.+?)" \(turn (\d+)\), is not one of the ones the rule lists \("(.+?)"\): no '
                  r'user message before the call says (.+)\.$', text)
    if m:  # the user's stated reason, and none of the rule's listed words in what the user said before the change
        said, change = by_n[int(m.group(2))], int(re.search(r"at turn (\d+)", text).group(1))
        assert said.role == "user" and m.group(1).lower() in (said.content or "").lower(), text
        prompt = " ".join((next(t for t in run.turns if t.role == "system").content or "").split())
        assert m.group(3) in prompt, text
        users = " ".join((t.content or "").lower() for t in run.turns if t.role == "user" and t.turn < change)
        listed = re.findall(r'"([^"]+)"', m.group(4))
        assert listed and all(w in m.group(3) and w not in users for w in listed), text
        assert " The system prompt's rule on " in text, text
        text = text[:m.start()]
    m = re.search(r' The user\'s words on its condition \(turn (\d+)\): "(.+)"$', text)
    if m:
        said = by_n[int(m.group(1))]
        assert said.role == "user" and m.group(2).rstrip(" …") in " ".join((said.content or "").split()), text
        assert " The system prompt's rule on " in text, text
        text = text[:m.start()]
    return text


def _before(run: Run, n: int) -> str:
    """Every user message and answer before turn ``n``, as one text."""
    return "\n".join(x for t in run.turns if t.turn < n for x in (t.content if t.role == "user" else None, t.result)
                     if x)


def _rule_verdict(run: Run, by_n: dict, said: str) -> str:
    """What a quoted rule settles on the record's fields (rule_verdicts.py), checked and cut out:
    a span the record's time is past by the prompt's own now, an "only if" whose thing the record
    says it has none of, and the alternatives left quoted from the prompt."""
    m = re.search(r" On these fields, (.+?)\.(?: So (?:of this rule only (.+) could still have allowed|the rule did not "
                  r"allow) this (\w+)\.)?(?= |$)", said)
    if not m:
        return said
    system = next(t for t in run.turns if t.type == "message" and t.role == "system")
    prompt = " ".join((system.content or "").split())
    now = datetime.strptime(re.search(r"current time is (\S+ \S+)", prompt).group(1), "%Y-%m-%d %H:%M:%S")
    looked = {k: v for place in re.findall(r"\(turn (\d+)\) gave", said)
              for k, v in json.loads(by_n[int(place)].result).items()}
    for part in m.group(1).split("; "):
        span = re.fullmatch(r"`(\w+)` is more than (\d+) (hour|day|week)s? before the current time, so \"(.+)\" does "
                            r"not hold", part)
        only = re.fullmatch(r"`(\w+)` is (\"[^\"]*\"), so \"(only if .+)\" does not hold", part)
        assert span or only, part
        if span:
            gap = now - datetime.fromisoformat(looked[span.group(1)])
            assert gap > timedelta(**{span.group(3) + "s": int(span.group(2))}), part
            assert span.group(4) in prompt and span.group(4).startswith("within " + span.group(2)), part
        else:
            assert json.dumps(looked[only.group(1)]) == only.group(2) and only.group(2).lower() in ('"no"', '"none"')
            assert only.group(3) in prompt and only.group(1) in only.group(3), part
    for left in re.findall(r'"([^"]+)"', m.group(2) or ""):
        assert left in prompt, left
    return said[:m.start()] + said[m.end():]


def _why_said(run: Run, by_n: dict, text: str) -> str:
    """The reasons put before or after an expected-call fact (lookup_coverage.py, offers.py,
    unshown_values.py), each checked against the turns it names and cut off the fact."""
    expected = json.loads((run.task.metadata or {}).get("expected_calls") or "[]")
    sent = [t for t in run.turns if t.type == "function_call"]
    m = re.fullmatch(r"The run looked up (\d+) of the (\d+) `(\w+)` the record (\S+) returned at turn (\d+) lists"
                     r"(?: \((.+?)\))?, never (.+?); the task expected (.+), and the run never made (?:that change|those "
                     r"changes) \(the agent's last turn was \d+\)\. Look up every one of the `\3` a record lists before "
                     r"deciding which of them to change\.", text)
    if m:  # the list is in that answer; the ones named looked up were sent to look-ups, the others never sent at all
        listed = json.loads(by_n[int(m.group(5))].result)[m.group(3)]
        looked = re.split(r", | and ", m.group(6) or "") if m.group(6) else []
        never = re.split(r", | and ", m.group(7))
        assert len(listed) == int(m.group(2)) and len(looked) == int(m.group(1)) and set(looked) | set(never) == set(listed)
        assert all(any(x in json.dumps(t.arguments) and is_read_only(t) for t in sent) for x in looked), text
        for tools, items in re.findall(r"((?:\w+(?:, | and )?)+?) on ((?:[\w-]+(?:, | and )?)+)", m.group(8)):
            for tool in re.split(r", | and ", tools):
                for item in re.split(r", | and ", items):
                    assert item in never and not any(item in json.dumps(t.arguments) for t in sent), text
                    assert any(e["name"] == tool and item in json.dumps(e["arguments"]) for e in expected), text
        return ""
    m = re.match(r"The agent offered the (\w+) change at turn (\d+) \(\"(.+?)\"\); the user (?:agreed at turn (\d+)|"
                 r"answered at turn (\d+) \(\"(.+?)\"\)); no later agent message named the (\w+) again, and the run never "
                 r"made that change\. Come back to a change you offered until the user takes it or turns it down\. ", text)
    if m:
        tool, at, reply = m.group(1), int(m.group(2)), int(m.group(4) or m.group(5))
        assert by_n[at].role == "assistant" and m.group(3).rstrip(" …") in " ".join(by_n[at].content.split()), text
        assert by_n[reply].role == "user" and reply > at, text
        assert m.group(6) is None or m.group(6).rstrip(" …") in " ".join(by_n[reply].content.split()), text
        assert not any(t.role == "assistant" and t.type == "message" and m.group(7) in (t.content or "").lower()
                       for t in run.turns if t.turn > at), text
        assert not any(t.name == tool and not t.is_error for t in sent) and any(e["name"] == tool for e in expected)
        text = text[m.end():]
    m = re.fullmatch(r"The error (\w+) returned at turn (\d+) listed \"(.+?)\", (?:a name the question gives|the "
                     r"question's \"(.+?)\"), and no call sent it(?: as listed, only inside quote marks \(turns? ([\d, ]+)\))?"
                     r"(?:; it sent (\w+)\[(.+?)\] next \(turn (\d+)\))?: send the listed name as written\.", text)
    if m:  # qa_reasons.unsent_listed_name: listed by that error, the question's name, never sent as listed
        err, listed = by_n[int(m.group(2))], m.group(3)
        assert err.is_error and f"'{listed}'" in err.result or f'"{listed}"' in err.result, text
        assert (m.group(4) or listed) in " ".join(run.task.instruction.split()), text
        sent = [" ".join(str(t.arguments).split()) for t in run.turns if t.type == "function_call"]
        assert listed not in sent, text
        for n in re.findall(r"\d+", m.group(5) or ""):
            assert " ".join(str(by_n[int(n)].arguments).split()).strip("\"'") == listed, text
        if m.group(8):
            assert by_n[int(m.group(8))].name == m.group(6) and int(m.group(8)) > err.turn, text
        return
    m = re.match(r"The agent's message at turn (\d+) named this change \(\"(.+?)\"\), and the user agreed at turn (\d+)\. "
                 r"(?=The task expected (\w+)\()", text)
    if m:  # offers.agreed_unmade: the sentence names the change's action and a value it was to send; a yes
        at, reply, tool = int(m.group(1)), int(m.group(3)), m.group(4)
        said = m.group(2).rstrip(" …")
        assert by_n[at].role == "assistant" and said in " ".join(by_n[at].content.split()), text
        assert by_n[reply].role == "user" and reply > at and answer_kind(by_n[reply].content) == AGREES, text
        assert not re.search(r"\b(?:not|no|never|cannot|unable)\b|n't\b", said, re.I), text
        action = tool.split("_")[0]
        assert any(e["name"] == tool and any(isinstance(v, str) and v in said for v in e["arguments"].values())
                   for e in expected) and action in said.lower(), text
        text = text[m.end():]
    m = re.match(r"The agent offered the (\w+) change at turn (\d+), let the talk move on, and put it to the user again "
                 r"only at turn (\d+) \(\"(.+?)\"\); the user agreed at turn (\d+), in the message that ended the "
                 r"conversation, and the run never made that change\. Come back to an offered change as soon as the "
                 r"user's other questions are answered, while there are turns left to make it\. ", text)
    if m:  # offers.py: offered, the talk moved on, offered again and agreed to in the conversation's last message
        tool, first, at, reply = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(5))
        assert by_n[first].role == "assistant" and first < at < reply, text
        assert by_n[at].role == "assistant" and m.group(4).rstrip(" …") in " ".join(by_n[at].content.split()), text
        assert by_n[reply].role == "user" and not any(t.turn > reply and (t.role == "assistant" or t.type ==
                                                                           "function_call") for t in run.turns), text
        assert not any(t.name == tool and not t.is_error for t in sent) and any(e["name"] == tool for e in expected)
        text = text[m.end():]
    m = re.fullmatch(r"The user said \"(.+?)\" \(turn (\d+)\), but (\S+) \(turn (\d+)\) gives `(\w+)` \"(.+?)\"(?:; the "
                     r"agent repeated the user's word at turn (\d+)|; (no) message of the agent repeated the user's word)?"
                     r"(, and the run succeeded(?: all the same)?)?\. Act on what the record holds, not on the user's "
                     r"word for it: whatever turns on `\5` follows the record\.", text.replace("\\`", "`"))
    if m:  # record_claims.py: the user's words, the record's other value, the agent's echo
        said, record = by_n[int(m.group(2))], by_n[int(m.group(4))]
        assert said.role == "user" and m.group(1) in said.content, text
        assert record.name == m.group(3) and json.loads(record.result)[m.group(5)] == m.group(6), text
        assert m.group(6).lower() not in m.group(1).lower(), text
        assert m.group(7) is None or (by_n[int(m.group(7))].role == "assistant"
                                      and m.group(1).lower() in by_n[int(m.group(7))].content.lower()), text
        assert m.group(8) is None or not any(t.role == "assistant" and t.type == "message" and t.turn > record.turn
                                             and m.group(1).lower() in (t.content or "").lower() for t in run.turns), text
        assert bool(m.group(9)) == run.outcome.success, text
        assert m.group(9) != ", and the run succeeded all the same" or m.group(7), text
        return ""
    m = re.fullmatch(r"The (\S+) calls? at turns? ([\d, and]+) failed with errors naming ([\d, and-]+) \(the first: \"(.+)\"\), (?:a date|dates) "
                     r"already past by the current time the system prompt states \((.+)\)\. Compare the dates a change "
                     r"sends with the stated current time before sending it\.", text)
    if m:  # record_claims.py: every call failed, its error names a listed day it sent, each day before now
        now = m.group(5)
        assert now.split()[0] in (run.turns[0].content or ""), text
        days = re.findall(r"\d{4}-\d{2}-\d{2}", m.group(3))
        assert days and all(d < now.split()[0] for d in days), text
        for n in map(int, re.findall(r"\d+", m.group(2))):
            call = by_n[n]
            assert call.type == "function_call" and call.is_error and not is_read_only(call), text
            assert m.group(1) in (call.name, "change") and any(d in call.result and d in json.dumps(call.arguments)
                                                               for d in days), text
        return ""
    m = re.search(r" (\w+)\((.+?)\) answered nothing at turn (\d+); (.+?), which this call sent, (?:is|are) in the answer "
                  r"of (\w+) at turn (\d+), a look-up with the same arguments\.$", text)
    if m:  # unshown_values.py: an empty answer, and another look-up of the same arguments that gave the values sent
        empty, other = by_n[int(m.group(3))], by_n[int(m.group(6))]
        call = by_n[int(re.match(r"\S+ at turn (\d+)", text).group(1))]
        assert empty.name == m.group(1) and (empty.result or "").strip() in ("[]", "{}"), text
        assert other.name == m.group(5) and other.arguments == empty.arguments and empty.turn < call.turn, text
        for v in re.findall(r'"([^"]+)"', m.group(4)):
            assert v in (other.result or "") and v in json.dumps(call.arguments), text
        text = text[:m.start()]
    m = re.search(r" The expected `(\S+)` \"(\S+)\" appeared in no answer of the run: no look-up sent (.+?) together, as "
                  r"the expected call does \(the run's look-ups sent (.+)\)\. Look up with the values the change must "
                  r"send before choosing what to send\.$", text.replace("\\`", "`"))
    if m:  # unshown_values.py: the value is in no answer, the pair of values was sent by no look-up
        assert not any(m.group(2).lower() in (t.result or "").lower() for t in sent), text
        assert any(m.group(2) in json.dumps(e["arguments"]) for e in expected), text
        pairs = dict(re.findall(r"(\w+) \"([^\"]*)\"", m.group(3)))
        assert len(pairs) >= 2 and not any(isinstance(t.arguments, dict) and is_read_only(t) and
                                           all(t.arguments.get(k) == v for k, v in pairs.items()) for t in sent), text
        text = text.replace("\\`", "`")[:m.start()]
    m = re.search(r"\. The failed call sent `(\S+)` \"(\S+)\", which no earlier answer or user message held"
                  r"(?: \(the digits of \"\S+\" under another name\))?; \"(\S+)\", "
                  r"which the call at turn (\d+) sent, was shown by (?:the user \(turn (\d+)\)|\w+'s answer \(turn (\d+)\)), "
                  r"(only after|before) the failed call\. (?:Look such a value up \(\w+\) before sending it|Send such a value as the log "
                  r"gave it), rather than composing it\.$", text)
    if m:
        err = int(re.match(r"\S+(?: \(\S+\))? failed at turn (\d+)", text).group(1))
        shown = int(m.group(5) or m.group(6))
        assert m.group(2).lower() not in _before(run, err).lower(), text
        assert m.group(3) in json.dumps(by_n[int(m.group(4))].arguments), text
        assert m.group(3) in (by_n[shown].content or by_n[shown].result or "") and shown < int(m.group(4)), text
        assert (shown > err) == (m.group(7) == "only after"), text
        digits = re.search(r'\(the digits of "(\S+)" under another name\)', m.group(0))
        assert not digits or (re.sub(r"\D", "", digits.group(1)) == re.sub(r"\D", "", m.group(2))
                              and digits.group(1) == m.group(3)), text
        text = text[:m.start()] + "."
    m = re.search(r" No earlier answer or user message held \"(\S+)\"; the expected \"(\S+)\" was shown by "
                  r"(?:the user \(turn (\d+)\)|\w+'s answer \(turn (\d+)\))\. Send such a value as the log gave it, "
                  r"rather than composing it\.$", text)
    if m:
        call = int(re.match(r"\S+ at turn (\d+) sent", text).group(1))
        shown = int(m.group(3) or m.group(4))
        assert m.group(1).lower() not in _before(run, call).lower() and m.group(1) in json.dumps(by_n[call].arguments)
        assert m.group(2) in (by_n[shown].content or by_n[shown].result or "") and shown < call, text
        assert any(m.group(2) in json.dumps(e["arguments"]) for e in expected), text
        text = text[:m.start()]
    return text


def _charged_in_answer(run: Run, call: Turn, key: str, amount: float) -> None:
    """The change's answer holds entries under ``key`` that the latest earlier answer of the same
    record (a shared id field) lacked, and their ``amount`` values add up to ``amount``."""
    after = json.loads(call.result)
    earlier = [json.loads(t.result) for t in _calls(run) if t.turn < call.turn and not t.is_error
               and (t.result or "").lstrip().startswith("{")]
    before = next(b for b in reversed(earlier) if any(k.endswith("id") and after.get(k) == v for k, v in b.items()))
    new = [e for e in after[key] if e not in before[key]]
    assert new and sum(e["amount"] for e in new) == pytest.approx(amount), (key, new, amount)


def _money_said(text: str) -> list[float]:
    return [float(v.replace(",", "")) for v in re.findall(r"\$(\d[\d,]*(?:\.\d+)?)", text or "")]


def _listed_both(by_n: dict, text: str) -> str:
    """listed_apart.py: the answer named held an item with each value, and the figures said are
    those items' own; the rest of the text is returned for the other checks."""
    if not text:
        return text
    m = re.search(r" (\w+)'s answer at turn (\d+) listed both: \"(.+?)\" with (.+?), \"(.+?)\" \(sent\) with (.+?)\.$",
                  text.replace("\\`", "`"))
    if not m:
        return text
    answer = by_n[int(m.group(2))]
    assert answer.name == m.group(1) and not answer.is_error, text
    data = json.loads(answer.result)

    def item(value):
        stack = [data]
        while stack:
            node = stack.pop(0)
            if isinstance(node, dict):
                if value in node.values():
                    return node
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
        raise AssertionError(f"{value} not an item of the answer at turn {answer.turn}")

    def figure(node, path):
        for part in path.split("."):
            node = node[part]
        return node

    fields = re.findall(r"`([\w.]+)` ([\d.]+)", m.group(4))
    theirs, mine = item(m.group(3)), item(m.group(5))
    assert fields and [float(v) for v in re.findall(r"[\d.]+", m.group(6))] == [figure(mine, p) for p, _v in fields]
    assert all(figure(theirs, p) == float(v) for p, v in fields), text
    return text[:m.start()] + "." if not text[:m.start()].endswith(".") else text[:m.start()]


def _shown_said(run: Run, by_n: dict, text: str) -> bool:
    """agreed_terms.py and shown_conflicts.py: a yes to other amounts, a failed change against a
    count or a balance a look-up showed, a change on a record whose dates were all past."""
    m = re.fullmatch(r"(\S+) at turn (\d+) (paid|charged) \$([\d,.]+)(?: \(the new `(\w+)` entr(?:y|ies) of its answer\))?; "
                     r"the user's yes \(turn (\d+)\) answered the agent's message at turn (\d+), which named (.+?), and no "
                     r"message of the agent had put \$\4 to the user\.(?: It also sent (.+?), which that message did not "
                     r"name\.)? Put the total the call will charge to the user, and get a yes to that total, before making "
                     r"the change\.", text.replace("\\`", "`"))
    if m:
        call, yes, put = by_n[int(m.group(2))], by_n[int(m.group(6))], by_n[int(m.group(7))]
        amount = float(m.group(4).replace(",", ""))
        assert call.name == m.group(1) and not call.is_error and put.turn < yes.turn < call.turn, text
        assert yes.role == "user" and put.role == "assistant" and put.type == "message", text
        assert not any(t.type == "message" and t.role == "user" and yes.turn < t.turn < call.turn for t in run.turns)
        assert not any(t.type == "message" and t.role == "assistant" and put.turn < t.turn < yes.turn for t in run.turns)
        amounts, _, quoted = m.group(8).partition(" (\"")
        named = [float(v.replace(",", "")) for v in re.findall(r"\$([\d,.]+)", amounts)]
        assert named and all(v in _money_said(put.content) for v in named) and amount > max(named), text
        if quoted:  # the sentence that named the first amount, as the message wrote it
            said = quoted.removesuffix("\")").removesuffix("…")
            assert said in " ".join(put.content.split()) and _money_said(said), text
        assert not any(amount in _money_said(t.content) for t in run.turns if t.type == "message"
                       and t.role == "assistant" and t.turn < call.turn), text
        if m.group(3) == "paid":
            assert sum(v for p, v in _keyed(call.arguments) if p == "amount") == pytest.approx(amount), text
        else:
            _charged_in_answer(run, call, m.group(5), amount)
        for code in re.split(r", | and ", (m.group(9) or "").replace(" and more", "")) if m.group(9) else []:
            assert code in json.dumps(call.arguments) and code not in put.content, text
        return True
    m = re.fullmatch(r"(\S+) at turn (\d+) sent (\S+) with `(\w+)` \"(.+?)\", which (\S+)'s answer \(turn (\d+)\) showed "
                     r"with (\d+) under `(\w+)`\.`\5`(?:, fewer than the (\d+) `(\w+)` the call sent)?; the call failed "
                     r"\(\"(.+?)\"\)(?:, and the \1 that went through at turn (\d+) kept \3 with `\4` \"(.+?)\" instead)?\. "
                     r"Read what the look-up showed for the option before sending a change that needs it\.",
                     text.replace("\\`", "`"))
    if m:
        call, look = by_n[int(m.group(2))], by_n[int(m.group(7))]
        assert call.name == m.group(1) and call.is_error and not is_read_only(call) and look.turn < call.turn, text
        assert call.arguments[m.group(4)] == m.group(5) and m.group(3) in json.dumps(call.arguments), text
        assert m.group(3) in call.result and look.name == m.group(6) and not look.is_error, text
        shown = [o for o in _objs(json.loads(look.result)) if m.group(3) in o.values()]
        assert any(o.get(m.group(9), {}).get(m.group(5)) == int(m.group(8)) for o in shown), text
        n = int(m.group(8))
        assert n == 0 if m.group(10) is None else (n < int(m.group(10)) == len(call.arguments[m.group(11)])), text
        if m.group(13):  # a later change of the same tool went through with the item and another option
            kept = by_n[int(m.group(13))]
            assert kept.name == call.name and not kept.is_error and kept.turn > call.turn, text
            assert kept.arguments[m.group(4)] == m.group(14) != m.group(5) and m.group(3) in json.dumps(kept.arguments)
        return True
    m = re.fullmatch(r"(\S+) at turn (\d+) paid \$([\d,.]+) from (\S+), whose record in (\S+)'s answer \(turn (\d+)\) "
                     r"holds `(\w+)` \$([\d,.]+), less than that; the call failed \(\"(.+)\"\)\. Check a payment against the "
                     r"balance a look-up showed before sending it\.", text.replace("\\`", "`"))
    if m:
        call, look = by_n[int(m.group(2))], by_n[int(m.group(6))]
        paid, held = (float(x.replace(",", "")) for x in (m.group(3), m.group(8)))
        assert call.is_error and m.group(4) in call.result and look.turn < call.turn and held < paid, text
        assert any(p.get("amount") == paid and m.group(4) in p.values() for p in _objs(call.arguments)), text
        assert any(m.group(4) in (o.get("id"), *o.values()) and o.get(m.group(7)) == held
                   for o in _objs(json.loads(look.result))), text
        return True
    m = re.fullmatch(r"(\S+) at turn (\d+) went through on (\S+), whose `(\w+)` in (\S+)'s answer \(turn (\d+)\) are all "
                     r"dated (\S+)(?: to (\S+))?, before the current time the system prompt states \((.+)\)\. Compare a "
                     r"record's dates with the stated current time before acting on it\.", text.replace("\\`", "`"))
    if m:
        call, look = by_n[int(m.group(2))], by_n[int(m.group(6))]
        assert not call.is_error and m.group(3) in json.dumps(call.arguments) and look.turn < call.turn, text
        assert m.group(3) in json.dumps(look.arguments), text
        now = m.group(9)
        assert now.split()[0] in (run.turns[0].content or ""), text
        days = [e[k][:10] for e in json.loads(look.result)[m.group(4)] for k in e
                if isinstance(e[k], str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", e[k][:10])]
        assert days and min(days) == m.group(7) and max(days) == (m.group(8) or m.group(7)) < now.split()[0], text
        return True
    m = re.fullmatch(r"The agent told the user at turn (\d+) that the (\w+) had been (\w+) \(\"(.+)\"\), but no (\S+) call went "
                     r"through in this run, and the task expected one\. Tell the user only what a call's answer shows was "
                     r"done\.", text)
    if m:  # claimed_changes.py: the agent's own words claim the change; no call of its tool went through
        said = by_n[int(m.group(1))]
        assert said.type == "message" and said.role == "assistant", text
        quote = m.group(4).rstrip("…").strip()
        assert quote in " ".join(said.content.split()) and f"been {m.group(3)}" in quote.lower(), text
        assert m.group(2) in quote.split(" been ")[0], text
        expected = json.loads((run.task.metadata or {}).get("expected_calls") or "[]")
        assert any(e["name"] == m.group(5) for e in expected), text
        assert not any(t.type == "function_call" and t.name == m.group(5) and not t.is_error for t in run.turns), text
        return True
    m = re.fullmatch(r"The agent's report after its last change \((\S+), turn (\d+)\) named the (\w+) at turn (\d+) "
                     r"\(\"(.+)\"\), but no (\S+) call went through in this run, and the task expected one\. Before the "
                     r"report, make every change the request calls for\.", text)
    if m:  # claimed_changes._reported: the first message after the run's last call, a change that went through
        last, said = by_n[int(m.group(2))], by_n[int(m.group(4))]
        calls = [t for t in run.turns if t.type == "function_call"]
        assert last is calls[-1] and last.name == m.group(1) and not last.is_error, text
        assert said.role == "assistant" and said.type == "message" and said.turn > last.turn, text
        assert not any(t.role == "assistant" and t.type == "message" and last.turn < t.turn < said.turn
                       for t in run.turns), text
        quote = m.group(5).rstrip("…").strip()
        assert quote in " ".join(said.content.replace("**", "").split()) and m.group(3) in quote.lower(), text
        expected = json.loads((run.task.metadata or {}).get("expected_calls") or "[]")
        assert any(e["name"] == m.group(6) for e in expected), text
        assert not any(t.type == "function_call" and t.name == m.group(6) and not t.is_error for t in run.turns), text
        return True
    return False


def _objs(node):
    if isinstance(node, dict):
        yield node
        node = list(node.values())
    if isinstance(node, list):
        for v in node:
            yield from _objs(v)


def _keyed(node, key: str = ""):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _keyed(v, k)
    elif isinstance(node, list):
        for v in node:
            yield from _keyed(v, key)
    else:
        yield key, node


def _suggested_first(run: Run, by_n: dict, text: str) -> str:
    """``The agent suggested it at turn N ("…") before any user message said "cancel" in any form; the
    user first did at turn M.`` (offers.raised_first): the agent's message holds the sentence and a
    form of the word, no user message before it does, and turn M is the first user message that does
    (or none did before the change). Returns the text before it."""
    m = re.search(r' The agent suggested it at turn (\d+) \("(.+?)"\) before any user message said "(\w+)" in any form'
                  r'(?:; the user first did at turn (\d+)\.|, and none did before the (\S+) call\.'
                  r'|; the user agreed in their reply at turn (\d+) \("(.+)"\)\.)$', text)
    if not m:
        return text
    from wikitrace.compilers.rules import _stem

    n, word = int(m.group(1)), _stem(m.group(3))
    said = by_n[n]
    assert said.type == "message" and said.role == "assistant", text
    assert m.group(2).rstrip("…") in " ".join((said.content or "").split()) and word in m.group(2).lower(), text
    users = [t for t in run.turns if t.type == "message" and t.role == "user" and t.turn != 0]
    holds = [t.turn for t in users if any(_stem(w) == word for w in re.findall(r"[a-z]+", (t.content or "").lower()))]
    assert not [k for k in holds if k < n], text
    if m.group(4):
        assert holds and holds[0] == int(m.group(4)), text
    elif m.group(6):  # the user's first message after the suggestion, quoted, holding no form of the word
        reply = by_n[int(m.group(6))]
        assert reply in users and reply.turn == next(t.turn for t in users if t.turn > n), text
        assert m.group(7).rstrip("…").rstrip() in " ".join((reply.content or "").split()), text
        assert reply.turn not in holds, text
    else:
        change = next(t for t in run.turns if t.type == "function_call" and t.name == m.group(5) and t.turn > n)
        assert not [k for k in holds if k < change.turn], text
    return text[:m.start()]


def _cannot_first(run: Run, by_n: dict, text: str) -> str:
    """``At turn N, with no tool called (the run made no call at all), the agent told the user it
    could not: "…"`` (compilers/cannot_said.py): the run made no tool call, and turn N is an agent
    message holding the sentence. Returns the text after it."""
    m = re.match(r'At turn (\d+), with no tool called \((?:the run made (no call at all)|the run looked nothing up: its '
                 r'only calls? (?:was|were) (.+?))\), the agent told the user it could not: "(.+?)" (?=The task expected )',
                 text)
    if not m:
        return text
    said = by_n[int(m.group(1))]
    assert said.type == "message" and said.role == "assistant", text
    assert m.group(4).rstrip("…") in " ".join((said.content or "").split()), text
    calls = [t for t in run.turns if t.type == "function_call"]
    if m.group(2):
        assert not calls, text
    else:  # every call after the sentence, each named with its turn (a sum or a change: no look-up)
        named = re.findall(r"(\S+) at turn (\d+)", m.group(3))
        assert calls and all(t.turn > said.turn for t in calls), text
        assert [(t.name, str(t.turn)) for t in calls][:len(named)] == named, text
        assert len(named) == len(calls) or " more" in m.group(3), text
    return text[m.end():]


def _check(run: Run, text: str, turns: list[int]) -> None:
    by_n = {t.turn: t for t in run.turns}
    assert all(n in by_n for n in turns), (text, turns)
    text = _cannot_first(run, by_n, text)
    text = _said_about_rule(run, by_n, text)
    text = _rule_breach(run, by_n, text)
    text = _rule_allowed(run, by_n, text)
    if " The system prompt's rule on " in text:
        text, said = text.split(" The system prompt's rule on ", 1)
        _rule_said(run, by_n, _rule_verdict(run, by_n, said))
    text = _why_said(run, by_n, text)
    text = _listed_both(by_n, text)
    text = _suggested_first(run, by_n, text) if text else text
    if not text or _shown_said(run, by_n, text):
        return
    m = re.fullmatch(r"(\S+) at turn (\d+) was a change the task expected\.", text)
    if m:  # in_short._allowed_case: the change went through as one of the expected calls (its rule checked above)
        call = by_n[int(m.group(2))]
        expected = json.loads((run.task.metadata or {}).get("expected_calls") or "[]")
        assert call.name == m.group(1) and not call.is_error, text
        assert any(e.get("name") == call.name and e.get("arguments") == call.arguments for e in expected), text
        return
    m = re.fullmatch(r"(\S+)(?: \((\S+)\))? failed at turns? ([\d, and]+?)(?: and \d+ more)? \((?:the last: )?(?:\"(.*)\""
                     r"|(no output recorded))\), and no later (.+) call went through(?:; (?:it answered with (\S+)|(\S+) "
                     r"made a change) at turn (\d+) all the same)?\.", text)
    if m:  # a shell tool is named with the program it ran, the one no later call of went through
        ns = [int(x) for x in re.findall(r"\d+", m.group(3))]
        assert all(by_n[n].name == m.group(1) and by_n[n].type == "function_call" and by_n[n].is_error for n in ns), text
        assert m.group(6) == (m.group(2) or m.group(1)), text
        assert m.group(5) is None or not (by_n[ns[-1]].result or "").strip(), text
        if m.group(9):  # the first call after the error that went through and answered or changed something
            after = by_n[int(m.group(9))]
            assert after.type == "function_call" and not after.is_error and after.turn > ns[-1], text
            assert after.name == (m.group(7) or m.group(8)), text
            assert int(m.group(9)) in turns, (text, turns)
        return
    m = re.fullmatch(r"After `(.+)` failed at turn (\d+), (.+); (?:the same command|(.+)) then went through at turn (\d+)"
                     r"(?: and its tests passed \((.+)\))?\.", text.replace("\\`", "`"))
    if m:  # a failed check, file edits that went through between, then the same program going through
        err, fix = by_n[int(m.group(2))], by_n[int(m.group(5))]
        assert err.is_error and not fix.is_error and err.turn < fix.turn, text
        edits = [int(n) for n in re.findall(r"at turns? (\d+)", m.group(3))]
        assert edits and all(err.turn < n < fix.turn and not by_n[n].is_error for n in edits), text
        assert m.group(6) is None or m.group(6).rstrip("…") in " ".join((fix.result or "").split()), text
        return
    m = re.fullmatch(r"After `(.+)` reported failing tests at turn (\d+), (.+); the same command still reported failing "
                     r"tests at turn (\d+) \(\"(.+)\"\)(?:; (.+) (?:was|were) not among the failures it reported at turn "
                     r"(\d+))?(?:; (?:(\S+) at turn (\d+) then settled the run|the run then ended) with no edit after it)?\.",
                     text.replace("\\`", "`"))
    if m:  # a failing test run, file edits that went through, the same command failing again
        first, last = by_n[int(m.group(2))], by_n[int(m.group(4))]
        assert command_of(first) == command_of(last) and first.turn < last.turn, text
        assert command_of(first).startswith(m.group(1).rstrip("…")), text
        assert reports_failing_tests(first.result) and reports_failing_tests(last.result), text
        edits = [int(n) for n in re.findall(r"at turns? (\d+)", m.group(3))]
        assert edits and all(first.turn < n < last.turn and not by_n[n].is_error for n in edits), text
        assert m.group(5).rstrip("…") in " ".join((last.result or "").split()), text
        if m.group(6):  # each named test fails in the last report and in no line of the first
            assert int(m.group(7)) == first.turn, text
            for name in re.split(r", | and ", m.group(6)):
                assert f"FAILED {name}" in last.result and name not in first.result, text
        if text.endswith("with no edit after it."):  # no edit after that last report; the call that settled it
            later = [t for t in run.turns if t.turn > last.turn and t.type == "function_call"]
            assert not any(edit_of(t) is not None and not t.is_error for t in later), text
            assert m.group(8) is None or (by_n[int(m.group(9))].name == m.group(8) and int(m.group(9)) > last.turn), text
            assert m.group(8) is not None or not any(not is_read_only(t) and not t.is_error and not
                                                     is_test_report(t.result) for t in later), text
        return
    m = re.fullmatch(r"After the run's last file change \(turn (\d+)\), `(.+)` passed at turn (\d+) \((.+)\), yet the run "
                     r"was judged a failure: passing the tests it ran did not settle the task\.", text.replace("\\`", "`"))
    if m:
        edit, check = by_n[int(m.group(1))], by_n[int(m.group(3))]
        assert not run.outcome.success and not check.is_error and edit.turn < check.turn, text
        assert m.group(4).rstrip("…") in " ".join((check.result or "").split()), text
        return
    m = re.fullmatch(r"The run's file changes: (.+?)(?:; (\S+) at turn (\d+) ended the run(?: with a patch of (.+))?)?\.",
                     text.replace("\\`", "`"))
    if m:  # every change named went through, in a run judged a success; a patch's files are in its answer
        assert run.outcome.success, text
        for n in re.findall(r"at turns? (\d+)", m.group(1)):
            assert by_n[int(n)].type == "function_call" and not by_n[int(n)].is_error, text
        for n in re.findall(r"(\S+) at turn (\d+) changed a file the log does not name", m.group(1)):
            assert by_n[int(n[1])].name == n[0] and "[File: " not in (by_n[int(n[1])].result or ""), text
        if m.group(4):
            last = by_n[int(m.group(3))]
            assert all(f"diff --git a/{f}" in (last.result or "") for f in re.findall(r"`([^`]+)`", m.group(4))), text
        return
    m = re.fullmatch(r"The run chose (.+), then ended with .+? at turn (\d+)(?:, which scored ([\d.]+))?\.", text)
    if m:  # a successful purchase: each option it chose, sent word for word, listed on a page before it
        assert run.outcome.success and not by_n[int(m.group(2))].is_error, text
        assert not any(t.turn > int(m.group(2)) and not t.is_error for t in _calls(run)), text
        if m.group(3):
            assert float(m.group(3)) == pytest.approx(run.outcome.score, abs=1e-5), text
        for chosen, k, label, at in re.findall(r"(?:^|, | and )(.+?) among the (\d+) (.+?) options at turn (\d+) \(",
                                               m.group(1)):
            assert str(by_n[int(at)].arguments).strip().startswith(chosen.rstrip("…")), text
            assert any(t.turn < int(at) and re.search(rf"^\s*{re.escape(label)}\s*(?:\[[^\]]+\]){{{k}}}\s*$",
                                                       t.result or "", re.M) for t in _calls(run)), text
        return
    m = re.fullmatch(r"The run ended with (.+?) at turn (\d+) and scored ([\d.]+), short of a success(?:; (.+) at turn "
                     r"(\d+) had been refused \((.+)\) and was never sent again)?((?:; (?:it chose|at turn|the item).+)?)\.",
                     text)
    if m:  # a partial score of a failed run, the call that ended it, and a refused call never sent again
        _check_partial_reasons(run, by_n, m.group(7), text)
        last = by_n[int(m.group(2))]
        assert not run.outcome.success and 0 < run.outcome.score < 1 and float(m.group(3)) == pytest.approx(
            run.outcome.score, abs=1e-5), text
        assert not last.is_error and not any(t.turn > last.turn and not t.is_error for t in _calls(run)), text
        if m.group(5):
            refused = by_n[int(m.group(5))]
            assert refused.is_error and refused.turn < last.turn, text
            assert not any(t.turn > refused.turn and not t.is_error and t.arguments == refused.arguments
                           for t in _calls(run)), text
        return
    if text.startswith(("The log holds no expected result", "The log records no error left standing")):
        assert "expected_calls" not in run.task.metadata and not run.task.metadata.get("expected_answer"), text
        return
    m = re.fullmatch(r"The harness stopped the run: (.+?)\.(?: No answer had been given.+)?", text)
    if m:
        assert run.outcome.ended_by and run.outcome.ended_by.startswith("harness") or any(
            t.extra.get("written_by") == "harness" or t.type == "harness" for t in run.turns), text
        first = re.search(r" (\d+) of its (\d+) calls came before its first file edit \(turn (\d+)\)(?:, (\d+) of them "
                          r"failing \((.+?)\))?\.", text)
        if first:  # the calls before the first edit that went through, and how many of them failed
            calls = _calls(run)
            edit = by_n[int(first.group(3))]
            assert edit_of(edit) is not None and not edit.is_error, text
            assert not any(t.turn < edit.turn and edit_of(t) is not None and not t.is_error for t in calls), text
            before = [t for t in calls if t.turn < edit.turn]
            assert len(before) == int(first.group(1)) and len(calls) == int(first.group(2)), text
            assert sum(bool(t.is_error) for t in before) == int(first.group(4) or 0), text
        again = re.search(r" (\d+) of its (\d+) calls sent an earlier call's arguments again and got the same answer "
                          r"\((.+?)\)\.", text)
        if again:  # each pair: the same tool, arguments and answer, the repeat later
            calls = {t.turn: t for t in _calls(run)}
            pairs = re.findall(r"turn (\d+) repeated turn (\d+)", again.group(3))
            more = re.search(r" and (\d+) more$", again.group(3))
            assert len(pairs) + (int(more.group(1)) if more else 0) == int(again.group(1)), text
            assert int(again.group(2)) == len(calls), text
            for n, m_ in pairs:
                a, b = calls[int(n)], calls[int(m_)]
                assert b.turn < a.turn and (a.name, a.arguments, a.result) == (b.name, b.arguments, b.result), text
        m = re.search(r'the expected "(.+?)" appeared in no look-up that went through, only in (.+)\.$', text)
        if m:
            _only_in_errors(run, m.group(1), m.group(2), None)
        _held_in_another_form(run, text)
        return
    m = re.fullmatch(r'The answer "(yes|no)" \(turn (\d+)\) is a yes or no, but the question asks "(.+?)": it wants '
                     r'a thing named, not whether something holds\.', text)
    if m:  # in_short._wrong_kind: the run's answer was that word, and the question asks with that phrase
        assert str(by_n[int(m.group(2))].arguments).strip().rstrip(".!").casefold() == m.group(1), text
        assert m.group(3) in (run.task.instruction or ""), text
        assert m.group(3).split()[0].lower() in ("what", "which", "who", "whom", "whose", "when", "where", "how"), text
        return
    m = re.fullmatch(r'The answer "(.+)" \(turn (\d+)\) was judged (right|wrong)(.*)', text)
    if m:
        assert (m.group(3) == "right") == run.outcome.success, text
        assert " ".join(str(by_n[int(m.group(2))].arguments).split()).startswith(m.group(1).rstrip("…")), text
        at, given = int(m.group(2)), " ".join(str(by_n[int(m.group(2))].arguments).split())
        e = re.match(r'; "(.+?)" appears in what the look-up at turn (\d+) returned \("(.+)"\)\.', m.group(4))
        if e:  # the words around the answer on that page, as the page wrote them, the answer among them
            page = " ".join((by_n[int(e.group(2))].result or "").split())
            quoted = e.group(3).replace("\\", "").strip("…")
            words = re.findall(r"[^\W_]+", e.group(1).rstrip("…").casefold())  # as written, or word for word
            assert quoted in page and " ".join(words) in " ".join(re.findall(r"[^\W_]+", quoted.casefold())), text
        e = re.search(r'the task expected "(.+?)", which no look-up that went through had returned, only (the errors? .+?)\.'
                      r'(?: The answer|$)', text)
        if e:
            _only_in_errors(run, e.group(1), e.group(2), at)
        e = re.search(r'the task expected "(.+?)", which no look-up had returned; the page "(.+?)" was listed by '
                      r'(the errors? .+?)\.(?: The answer|$)', text)
        if e:  # error_listings.listed_as_title: the expected answer, its article dropped or a sense added
            from wikitrace.compilers.error_listings import _title_key

            assert _title_key(e.group(1)) == _title_key(e.group(2)) and e.group(1) != e.group(2), text
            _only_in_errors(run, e.group(2), e.group(3), at)
        _held_in_another_form(run, text)
        e = re.search(r"The run's answer appears in no look-up that went through, only in (the errors? .+)\.$", text)
        if e:
            _only_in_errors(run, given, e.group(1), at)
        e = re.search(r", though no page the run read before answering holds (.+), which the question names\.", text)
        if e:  # answer_facts._untied: each name is the question's, and no look-up before the answer holds it whole
            names = re.findall(r'"([^"]+)"', e.group(1))
            read = [t.result for t in run.turns if t.turn < at and t.type == "function_call" and not t.is_error
                    and t.result]
            assert names and all(n in " ".join(run.task.instruction.split()) for n in names), text
            assert not any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", page) for n in names for page in read), text
        low = given.casefold()
        before = [t for t in run.turns if t.turn < at]
        if m.group(4).startswith("; no look-up returned it and no earlier turn of the log held it"):
            assert not any(low in " ".join(str(x) for x in (t.content, t.result) if x).casefold() for t in before), text
        if m.group(4).startswith("; no look-up returned it as written: the question itself names it"):
            assert low in (run.task.instruction or "").casefold(), text
        e = re.match(r"; no look-up returned it: a reflection on an earlier trial, given to the run at turn (\d+), had "
                     r"named it\.$", m.group(4))
        if e:
            assert by_n[int(e.group(1))].role == "user" and run.task.metadata.get("reflections"), text
        if m.group(4).startswith("; no look-up"):  # and none returned it
            assert not any(t.type == "function_call" and not t.is_error and low in (t.result or "").casefold()
                           for t in before if t.turn != at), text
        return
    m = re.fullmatch(r"The edit at turn (\d+) wrote (.+?), (?:a name|names) no earlier turn of this log held as "
                     r"written(?:; the run succeeded with (?:it|them), but no turn before the edit showed (?:it|them) so "
                     r"written)?\.",
                     text.replace("\\`", "`"))
    if m:  # unseen_names.py: each name is in the edit and in no earlier turn; the other spelling is in one
        edit = by_n[int(m.group(1))]
        before = "\n".join([run.task.instruction or ""] + [json.dumps([t.content, t.arguments, t.result])
                                                           for t in run.turns if t.turn < edit.turn])
        for name, other in re.findall(r"`([^`]+)` \(the log showed `([^`]+)`\)", m.group(2)):
            assert name in json.dumps(edit.arguments) or name in str(edit.arguments), text
            assert not any(re.search(r"(?<![\w])" + re.escape(p) + r"(?![\w])", before) for p in name.split(".")), text
            assert other in before and other != name, text
        assert ("succeeded" in text) == run.outcome.success, text
        return
    m = re.fullmatch(r"(\S+) at turn (\d+) failed \(\"(.+)\"\), and the task expected no \1 call: this run succeeded "
                     r"because that change was refused, not because it held back from sending it\.", text)
    if m:  # a refused change of a tool the task expected no call of, never got through later
        call = by_n[int(m.group(2))]
        assert call.name == m.group(1) and call.is_error and run.outcome.success, text
        assert (call.result or "").startswith(m.group(3).rstrip("…")), text
        expected = json.loads(run.task.metadata.get("expected_calls") or "[]")
        assert not any(e["name"] == call.name for e in expected), text
        assert not any(t.type == "function_call" and t.name == call.name and not t.is_error and t.turn > call.turn
                       for t in run.turns), text
        return
    m = re.fullmatch(r"The run's last state-changing call, (\S+) at turn (\d+), went through\.", text)
    if m:
        call = by_n[int(m.group(2))]
        assert call.name == m.group(1) and not call.is_error and run.outcome.success, text
        return
    m = re.fullmatch(r"(\S+)(?: \((\S+)\))? failed at turn (\d+); a later (.+?) call went through at turn (\d+)(, sending "
                     r".+)?(; the failed call had sent its text inside quote marks, this one none)?"
                     r"(?:, on `([^`]+)`, a path (\S+) returned at turn (\d+)(?: \(the failed call named `([^`]+)`\))?)?\.",
                     text)
    if m:
        assert by_n[int(m.group(3))].name == m.group(1) and int(m.group(5)) > int(m.group(3)), text
        assert m.group(4) == (m.group(2) or m.group(1)), text
        if m.group(9):  # a call between the two whose answer holds the path the later call sent
            found, later, failed = by_n[int(m.group(10))], by_n[int(m.group(5))], by_n[int(m.group(3))]
            assert found.name == m.group(9) and int(m.group(3)) < found.turn < later.turn and not found.is_error, text
            assert m.group(8) in str(later.arguments) and m.group(8) in (found.result or ""), text
            assert m.group(11) is None or m.group(11) in str(failed.arguments), text
        return
    if _check_qa_fact(run, text):
        return
    m = re.fullmatch(r"The agent's comparison at turn (\d+) is wrong: (.+) \(it wrote \"(.+)\"\)\.", text)
    if m:  # the words are the agent's own, and arithmetic refutes them
        said = by_n[int(m.group(1))]
        assert said.role == "assistant" and m.group(3) in " ".join(filter(None, [said.content, said.reasoning,
                                                                                  json.dumps(said.arguments)])), text
        assert [wrong_phrase(c) for c in comparisons(m.group(3)) if not c.holds] == [m.group(2)], text
        return
    m = re.fullmatch(r"The agent's conclusion at turn (\d+) names the wrong side: by its own figures (.+) \((\d{4})\) comes "
                     r"before (.+) \((\d{4})\), so \"(.+?)\" picks (.+), not (.+) \(it wrote \"(.+)\"\)\.", text)
    if m:  # the agent's own words, read again: the same sides, the side its word picks is the other one
        said = by_n[int(m.group(1))]
        assert said.role == "assistant" and m.group(9) in " ".join(filter(None, [said.content, said.reasoning])), text
        [c] = [c for c in conclusions(m.group(9)) if c.reversed]
        assert (c.earlier, c.later, c.word, c.picks, c.named) == ((m.group(2), m.group(3)), (m.group(4), m.group(5)),
                                                                  m.group(6), m.group(7), m.group(8)), text
        assert int(m.group(3)) < int(m.group(5)) and re.search(r"\b(first|earlie|before|older|oldest|later|last|after|"
                                                                 r"younger|newe|recent)", run.task.instruction or "", re.I), text
        return
    m = re.fullmatch(r"(\S+) at turn (\d+) sent (.+?)(?: \(and \d+ more differences\))?\.", text)
    if m:  # a change that went through, beside the expected call of its tool
        call = by_n[int(m.group(2))]
        assert call.name == m.group(1) and not call.is_error and "expected_calls" in run.task.metadata, text
        return
    expected = json.loads(run.task.metadata.get("expected_calls") or "null")
    changes = [e for e in expected or [] if not is_read_only(Turn(0, "function_call", "assistant", name=e["name"],
                                                                      arguments=e["arguments"]))]
    made = [t for t in run.turns if t.type == "function_call" and not t.is_error and not is_read_only(t)]
    m = re.fullmatch(r"(\S+) at turn (\d+) went through, but the task expected (no change at all|no \S+ call)\.", text)
    if m:
        call = by_n[int(m.group(2))]
        assert call.name == m.group(1) and not call.is_error and expected is not None, text
        assert not changes if m.group(3) == "no change at all" else not any(e["name"] == call.name for e in changes)
        return
    m = re.fullmatch(r"(\S+) at turn (\d+) went through; the expected \S+ call differs from it in (.+), and the run still "
                     r"succeeded\.", text)
    if m:
        call = by_n[int(m.group(2))]
        keys = re.findall(r"`(\w+)`", m.group(3))
        assert run.outcome.success and not call.is_error and keys, text
        assert any(e["name"] == call.name and all(e["arguments"].get(k) != call.arguments.get(k) for k in keys)
                   for e in changes), text
        return
    m = re.fullmatch(r"The task expected (.+), and the run never made (?:that change|those changes) \(the agent's last turn "
                     r"was (\d+)\)\.", text)
    if m:  # each expected change named is one no change of the run made with those arguments
        named = [e for e in changes if f"{e['name']}(" in m.group(1)]
        assert named and any(not any(t.name == e["name"] and t.arguments == e["arguments"] for t in made)
                             for e in named), text
        return
    m = re.fullmatch(r"The task expected the look-ups? (.+), and the run never made (?:it|them)"
                     r"(?:; the user had given (.+))?\.", text)
    if m:  # each named look-up is one the task expected and no call of the run made with those arguments
        lookups = [e for e in expected or [] if e not in changes and f"{e['name']}(" in m.group(1)]
        assert lookups and not all(any(t.name == e["name"] and t.arguments == e["arguments"] and not t.is_error
                                       for t in run.turns if t.type == "function_call") for e in lookups), text
        for value, n in re.findall(r'"(.+?)" at turn (\d+)', m.group(2) or ""):  # the first user message holding it
            said = [t.turn for t in run.turns if t.type == "message" and t.role == "user"
                    and re.search(rf"(?<!\w){re.escape(value.lower())}(?!\w)", (t.content or "").lower())]
            assert said and said[0] == int(n) and any(value in json.dumps(e["arguments"]) for e in lookups), text
        return
    m = re.fullmatch(r"(\S+) at turn (\d+) went through, though the task expected no \1 call, and the run still "
                     r"succeeded\.", text)
    if m:  # a change of a tool no expected call names, in a run judged a success
        call = by_n[int(m.group(2))]
        assert run.outcome.success and call.name == m.group(1) and not call.is_error, text
        assert not any(e["name"] == call.name for e in changes), text
        return
    m = re.fullmatch(r"The task expected (.+); the run never made (?:it|them) and succeeded all the same\.", text)
    if m:
        assert run.outcome.success and any(f"{e['name']}(" in m.group(1) for e in changes), text
        return
    m = re.fullmatch(r"The run made the (?:change|\d+ changes) the task expected, with the same arguments: (.+)\.", text)
    if m:
        for name, n in re.findall(r"(\w+) at turn (\d+)", m.group(1)):
            call = by_n[int(n)]
            assert call.name == name and any(e["name"] == name and e["arguments"] == call.arguments for e in changes)
        assert run.outcome.success, text
        return
    m = re.fullmatch(r"The task expected no change(?:, and the run made none: .+|; the run's only state-changing calls? "
                     r"(?:was|were) (.+))\.", text)
    if m:
        assert expected is not None and not changes and run.outcome.success, text
        assert len(re.findall(r" at turn (\d+)", m.group(1) or "")) == len(made), text
        return
    m = re.fullmatch(r"(?:The (\S+) call at turn (\d+) gave ([\d,.]+)|(\S+) at turn (\d+) (?:paid \$([\d,.]+) in all|"
                     r"charged \$([\d,.]+) \(the new `(\w+)` entr(?:y|ies) of its answer\))), above "
                     r"the \$([\d,.]+) limit (?:the user gave at turn (\d+)|the task's instruction gives the user)"
                     r"(?: \(\"(.+?)\"\))?(.*)\.", text.replace("\\`", "`"))
    if m:
        n = int(m.group(2) or m.group(5))
        amount, limit = (float(x.replace(",", "")) for x in (m.group(3) or m.group(6) or m.group(7), m.group(9)))
        said = " ".join((by_n[int(m.group(10))].content if m.group(10) else run.task.instruction).split())
        assert amount > limit and f"{m.group(9)}" in said
        if m.group(11):  # the user's sentence with the limit, as they wrote it (cut at word ends around the figure)
            assert m.group(11).strip("…") in said and f"${m.group(9)}" in m.group(11).replace(",", ""), text
        if m.group(3):
            assert float(by_n[n].result) == amount and not any(t.turn > n for t in made), text
        if m.group(7):  # entries of that list in the change's answer that the same record shown before lacked
            _charged_in_answer(run, by_n[n], m.group(8), amount)
        tail = m.group(12)
        agreed = re.fullmatch(r" \(the user agreed at turn (\d+)\)| \(the user's yes at turn (\d+) answered the "
                              r"agent's message at turn (\d+), which named (.+)\)|", tail)
        assert agreed is not None, text
        if agreed.group(3):
            put = by_n[int(agreed.group(3))]
            assert put.role == "assistant" and by_n[int(agreed.group(2))].role == "user", text
            for v in re.findall(r"\$([\d,.]+)", agreed.group(4)):
                assert f"${v}" in put.content and float(v.replace(",", "")) != amount, text
        return
    m = re.fullmatch(r"The user put the number of (\w+) at (\d+) \(turn (\d+)\); every record looked up before that "
                     r"lists (\d+) \(the last: (\S+) at turn (\d+)\)\.", text)
    if m:
        said, record = by_n[int(m.group(3))], by_n[int(m.group(6))]
        assert said.role == "user" and stated_count(said.content, m.group(1)) == int(m.group(2)), text
        assert record.turn < said.turn, text
        assert len(json.loads(record.result)[m.group(1)]) == int(m.group(4)) != int(m.group(2)), text
        return
    m = re.fullmatch(r"The edit at turn (\d+) (?:replaced (?:a line|lines) of `(.+?)` no call before it had shown: no "
                     r"view of the file went through, and no earlier answer held (?:the line|any line) it replaced "
                     r"\(`(.+)`\)|changed `(.+?)`, which no call before it had shown: no view of it went through and no "
                     r"command naming it answered)\. Read the lines an edit replaces before writing it\.", text)
    if m:  # an edit of the file, no view of it before; the line it replaced in no earlier answer
        from wikitrace.runs.tool_kinds import VIEW, kind_of

        edit = by_n[int(m.group(1))]
        name = m.group(2) or m.group(4)
        assert edit_of(edit) is not None and edit_of(edit).file.endswith(name), text
        earlier = [t for t in run.turns if t.type == "function_call" and t.turn < edit.turn and not t.is_error]
        for t in earlier:
            k = kind_of(t, run.source.get("format"))
            assert not (k and k.kind == VIEW and k.target and k.target.endswith(name)), (t.turn, text)
        if m.group(3):
            line = m.group(3).rstrip("\u2026")
            values = edit.arguments.values() if isinstance(edit.arguments, dict) else [edit.arguments]
            assert any(line in " ".join(str(v).split()) for v in values), text
            assert not any(line in " ".join((t.result or "").split()) for t in earlier), text
        else:
            assert not any(name in str(t.arguments) and (t.result or "").strip() for t in earlier), text
        return
    assert text.startswith("The log records nothing that "), f"a fact with no check here: {text}"


_QUOTE_CHARS = "\"'\u201c\u201d\u2018\u2019`"


def _calls(run: Run) -> list[Turn]:
    return [t for t in run.turns if t.type == "function_call"]


def _standing_errors(run: Run, tool: str) -> list[Turn]:
    """The tool's errors after its last call that went through."""
    calls = [t for t in _calls(run) if t.name == tool]
    last_ok = max((t.turn for t in calls if not t.is_error), default=-1)
    return [t for t in calls if t.is_error and t.turn > last_ok]


def _similar(result: str) -> list[str]:
    listed = re.search(r"Similar: \[(.*)\]", result or "")
    return [x[1:-1] for x in re.findall(r"'[^']*'|\"[^\"]*\"", listed.group(1))] if listed else []


def _said_at(run: Run, n: int) -> str:
    t = next(t for t in run.turns if t.turn == n)
    return _flat(" ".join(x for x in (t.content, t.reasoning) if x))


def _names_alone(text: str, name: str) -> bool:
    """Whether ``text`` holds ``name`` as a name of its own: no capitalised word right after it,
    nor right before it within the sentence ("Missouri" in "the Missouri Compromise" is not)."""
    flat = " ".join(text.split())
    for m in re.finditer(r"(?<!\w)" + re.escape(" ".join(name.split())) + r"(?!\w)", flat, re.I):
        after, before = flat[m.end():].split()[:1], flat[:m.start()].split()[-1:]
        if after and re.fullmatch(r"[\"'(]?[A-Z].*", after[0]):
            continue
        if before and re.fullmatch(r"[\"'(]?[A-Z][^.!?]*", before[0]):
            continue
        return True
    return False


_SUBJECT = (r"(?P<subject>(?:The|Both|All \d+) (?:failed \S+ calls?|\S+ calls? after the one that went through at turn "
            r"\d+))")


def _subject(run: Run, subject: str) -> tuple[str, list[Turn]]:
    """The tool a fact's subject names and its standing errors, checked against the count and
    the turn of the last call of it that went through, as the subject says them."""
    m = re.fullmatch(r"(?:The|Both|All (\d+)) (?:failed )?(\S+) calls?(?: after the one that went through at turn (\d+))?",
                     subject)
    tool, errs = m.group(2), _standing_errors(run, m.group(2))
    count = int(m.group(1)) if m.group(1) else 2 if subject.startswith("Both") else 1
    assert len(errs) == count, subject
    ok = [t.turn for t in _calls(run) if t.name == tool and not t.is_error and t.turn < errs[0].turn]
    assert (ok[-1] == int(m.group(3))) if m.group(3) else not ok, subject
    return tool, errs


_REFLECTORS = (r"(?:The reflection|One of the \d+ reflections|Both reflections|All (\d+) reflections|(\d+) of the (\d+) "
               r"reflections)")


def _check_qa_fact(run: Run, text: str) -> bool:
    """The facts qa_facts.py and named_comparisons.py add for text-action QA logs, each checked
    against the turns it names: True when the text was one of them (and held)."""
    by_n = {t.turn: t for t in run.turns}
    m = re.fullmatch(r'Before answering at turn (\d+) the agent wrote "(.+)": it names "(.+?)" for what the question '
                     r'describes, which (?:the look-up at turn (\d+) had returned|no page the run read held) and no call '
                     r'of the run looked up\. Look up the thing the question describes by its name before answering '
                     r'about it\.', text)
    if m:  # unsearched_names: the name in the answer call's thought, in no call sent; the page that held it, if any
        at, name = int(m.group(1)), m.group(3)
        thought = " ".join((by_n[at].reasoning or "").split())
        assert m.group(2).strip("…") in thought and name in m.group(2), text
        calls = [t for t in run.turns if t.type == "function_call"]
        assert not any(name.casefold() in " ".join(str(t.arguments).split()).casefold() for t in calls), text
        held = [t.turn for t in calls if t.turn < at and not t.is_error
                and name.casefold() in " ".join((t.result or "").split()).casefold()]
        assert held[:1] == ([int(m.group(4))] if m.group(4) else []), text
        assert name.casefold() not in (run.task.instruction or "").casefold(), text
        return True
    m = re.fullmatch(_SUBJECT + r" put quote marks in (?:its|their) text, and (its error|every one of their errors|the "
                     r"errors? at turns? ([\d, and]+)) listed the quoted name without them \((.+) at turn (\d+), listed as "
                     r"([\'\"])(.+)\6\): send a name as the error's list writes it, without quote marks\.", text)
    if m:  # every standing error of the tool had quote marks in its text; the named ones listed a quoted part bare
        tool, errs = _subject(run, m.group("subject"))
        assert all(any(q in str(t.arguments) for q in _QUOTE_CHARS) for t in errs), text
        named = [t.turn for t in errs] if not m.group(3) else [int(x) for x in re.findall(r"\d+", m.group(3))]
        for n in named:
            quoted = re.findall(r'"([^"]+)"', str(by_n[n].arguments)) or [str(by_n[n].arguments).strip()[1:-1]]
            assert {q.casefold() for q in quoted} & {x.casefold() for x in _similar(by_n[n].result)}, (n, text)
        shown = by_n[int(m.group(5))]
        assert " ".join(str(shown.arguments).split()) == m.group(4) and m.group(7) in _similar(shown.result), text
        assert m.group(7).casefold() in str(shown.arguments).casefold() and m.group(7) != str(shown.arguments), text
        return True
    m = re.fullmatch(_SUBJECT + r" packed several calls into one argument \(turn (\d+) sent (.+?)(?: as one call)?\)(?:; the "
                     r"one-query (\S+) call at turn (\d+) went through)?: send one query per (\S+) call\.", text)
    if m:  # every standing error of the tool sent its own call form inside its argument
        tool, errs = _subject(run, m.group("subject"))
        joined = re.compile(rf"\]\s*,?\s*(?:and\s+)?{re.escape(tool)}\[")
        assert all(joined.search(str(t.arguments)) for t in errs), text
        assert _flat(f"{tool}[{by_n[int(m.group(2))].arguments}]").startswith(_flat(m.group(3).rstrip("…"))), text
        if m.group(5):
            single = by_n[int(m.group(5))]
            assert single.name == tool and not single.is_error and not joined.search(str(single.arguments)), text
        return True
    m = re.fullmatch(r"The errors? at turns? ([\d, and]+) listed (\d+) names?, and (?:no call sent (?:any of them|it) on its own|"
                     r"the run sent (\d+) of them \((.+?), turns? ([\d, and]+)(?:, before the errors?)?\))(?:; never (.+), made of the question's or "
                     r"the failed query's words| \((.+?)(?: (?:is|are) made of the question's or the failed query's words)?\))"
                     r": when (\S+) fails, send it the listed name that fits the question, as the list writes it, before "
                     r"rewording the query\.", text)
    if m:  # the named errors are the tool's standing ones, list the names; the names shown were never sent on their own
        tool = m.group(8)
        errs, ns = _standing_errors(run, tool), [int(x) for x in re.findall(r"\d+", m.group(1))]
        assert set(ns) <= {t.turn for t in errs} and run.outcome.success is False, text
        listed = {n for t in errs for n in _similar(t.result)}
        assert len(listed) == int(m.group(2)), text
        sent = {_flat(t.arguments).strip("\"'") for t in _calls(run)}
        for name in re.findall(r"'([^']+)'|\"([^\"]+)\"", m.group(6) or m.group(7) or ""):
            name = name[0] or name[1]
            assert name in listed and _flat(name) not in sent, (name, text)
        for name in re.findall(r"'([^']+)'|\"([^\"]+)\"", m.group(4) or ""):
            assert (name[0] or name[1]) in listed and _flat(name[0] or name[1]) in sent, text
        if text.split(": when ")[0].endswith(("before the error)", "before the errors)")):
            assert all(int(n) < ns[0] for n in re.findall(r"\d+", m.group(5))), text
        if not m.group(3):
            assert not listed & {s for s in sent}, text
        return True
    m = re.fullmatch(r"The expected \"(.+)\" stood among at least (\d+) names what (\S+) returned at turn (\d+) listed together, "
                     r"and the run looked up (?:none of them|(?:only )?(.+) of them \(turns? ([\d, and]+)\)) before "
                     r"answering: check each listed candidate against every condition of the question before answering\.",
                     text)
    if m:  # the expected answer is in that look-up's text, between commas; no call sent it; the named ones were sent
        gold, page = m.group(1), by_n[int(m.group(4))]
        assert gold.lower() == _flat(run.task.metadata["gold_answer"]) and run.outcome.success is False, text
        assert page.name == m.group(3) and not page.is_error and re.search(r"(?:,|and|as)\s+" + re.escape(gold)
                                                                         + r"\s*(?:,|and\b|\.|$)", page.result), text
        assert gold.lower() not in {_flat(t.arguments) for t in _calls(run)}, text
        holding = next(x for x in re.split(r"(?<=[.!?])\s+", page.result) if gold in x)
        assert len(re.findall(r",|\band\b|\bor\b", holding)) >= int(m.group(2)) - 1, text  # a list at least that long
        for n in re.findall(r"\d+", m.group(6) or ""):
            assert by_n[int(n)].turn > page.turn and _flat(by_n[int(n)].arguments) in _flat(page.result), text
        return True
    m = re.fullmatch(r"The question names two things, (.+); every word of the answer comes from (.+?) about (.+?), and "
                     r"(.+): an answer about both must be found in the look-ups of each\.", text)
    if m:  # the answer's own words are in the named look-ups of one thing, and in no other look-up that went through
        question = _flat(run.task.instruction)
        assert _flat(m.group(3)) in question and run.outcome.success is False, text
        answer = next(t for t in reversed(_calls(run)) if t.name == "Finish")
        words = {w.rstrip("s") for w in re.findall(r"\w{4,}", answer.arguments.lower())} - {
            w.rstrip("s") for w in re.findall(r"\w{4,}", question)}
        sources = [int(n) for n in re.findall(r"returned at turn (\d+)", m.group(2))]
        assert words and sources, text
        held = " ".join(by_n[n].result.lower() for n in sources)
        assert all(re.search(rf"\b{w}", held) for w in words), text
        for t in _calls(run):
            if t.turn not in sources and t.turn < answer.turn and not t.is_error and t.result:
                assert not any(re.search(rf"\b{w}s?\b", t.result.lower()) for w in words), (t.turn, text)
        return True
    m = re.fullmatch(r"(The task message|The agent's own thought) at turn (\d+) planned to (\S+) \"(.+)\" \(\"(.+)\"\), and "
                     r"no (\S+) call sent it before the answer at turn (\d+): make the planned look-up before answering\.",
                     text)
    if m:  # the plan is in that turn's words, and no call sent the answer, nor any look-up returned it
        said, plan, given, at = int(m.group(2)), _flat(m.group(5).rstrip("…")), m.group(4), int(m.group(7))
        assert plan in _said_at(run, said) and m.group(3) in plan and given.lower() in plan, text
        assert (by_n[said].role == "user") == (m.group(1) == "The task message"), text
        assert by_n[at].arguments == given and said <= at, text
        for t in _calls(run):
            if t.turn < at:
                assert given.lower() not in str(t.arguments).lower(), text
                assert t.is_error or given.lower() not in (t.result or "").lower(), text
        return True
    m = re.fullmatch(r"(?:The reflection|One of the \d+ reflections|Both reflections|All (\d+) reflections|(\d+) of the (\d+) "
                     r"reflections) the run was given at turn (\d+) already names? \"(.+?)\" \(\"(.+)\"\), and the run answered "
                     r"it at turn (\d+)(?:, from what (\S+)\[(.+)\] returned at turn (\d+), a page that sentence names)?: an "
                     r"answer a reflection already names needs a look-up showing it answers the question before it is given"
                     r"\.", text)
    if m:  # the quoted sentence is in the turn's message and in a reflection, holding the answer; the answer is that call's
        given, quote, told, at = m.group(5), _flat(m.group(6).strip("…")), by_n[int(m.group(4))], int(m.group(7))
        reflections = run.task.metadata.get("reflections") or []
        assert told.role == "user" and quote in _flat(told.content) and told.turn < at, text
        assert any(quote in _flat(x) for x in reflections) and given.lower() in quote, text
        assert by_n[at].name == "Finish" and " ".join(by_n[at].arguments.split()) == given and run.outcome.success is False, text
        naming = [x for x in reflections if _names_alone(x, given)]
        if m.group(1):
            assert len(naming) == len(reflections) == int(m.group(1)), text
        if m.group(2):
            assert len(naming) == int(m.group(2)) and len(reflections) == int(m.group(3)), text
        if m.group(10):
            src = by_n[int(m.group(10))]
            assert src.name == m.group(8) and not src.is_error and given.lower() in _flat(src.result), text
            holding = next(_flat(x) for x in reflections if quote in _flat(x))
            assert _flat(src.arguments) in holding, text  # the sentence the quote is cut from names it
        return True
    m = re.fullmatch(_REFLECTORS + r" the run was given at turn (\d+) already names? the query \"(.+?)\" \(\"(.+)\"\), and "
                     r"(?:the run's one call sending it failed|both calls sending it failed|all (\d+) calls sending it failed) "
                     r"\((\S+)\[(.+)\], turns? ([\d, and]+)\): a query a reflection names is a guess; once it fails, send "
                     r"a name its error lists instead of sending it again\.", text)
    if m:  # the quoted sentence is a reflection's, in the message of that turn, holding the query; every call sending it failed
        told, query, quote = by_n[int(m.group(4))], m.group(5), _flat(m.group(6).strip("…"))
        assert told.role == "user" and quote in _flat(told.content) and run.outcome.success is False, text
        assert any(quote in _flat(x) for x in run.task.metadata.get("reflections") or []), text
        assert query.lower() in quote.lower() and m.group(9) == query, text
        sending = [t for t in _calls(run) if _flat(t.arguments).strip("\"'").casefold() == query.casefold()]
        assert [t.turn for t in sending] == [int(x) for x in re.findall(r"\d+", m.group(10))], text
        assert all(t.is_error and t.name == m.group(8) and t.turn > told.turn for t in sending), text
        assert not m.group(7) or int(m.group(7)) == len(sending), text
        return True
    m = re.fullmatch(_REFLECTORS + r" the run was given at turn (\d+) already names? \"(.+?)\" \(\"(.+)\"\), and the run "
                     r"took its answer \"(.+?)\" from (\S+)\[(.+)\] at turn (\d+): when reflections on earlier attempts name the page an "
                     r"answer comes from, read what they say of it before answering from it\.", text)
    if m:  # the quoted sentence names the page's title; that page's text holds the answer given right after
        told, title, quote = by_n[int(m.group(4))], m.group(5), _flat(m.group(6).strip("…"))
        src, given = by_n[int(m.group(10))], m.group(7)
        assert told.role == "user" and quote in _flat(told.content) and run.outcome.success is False, text
        assert any(quote in _flat(x) for x in run.task.metadata.get("reflections") or []), text
        assert title.lower() in quote.lower() and src.name == m.group(8) and not src.is_error, text
        assert sum(title.lower() in _flat(x) for x in run.task.metadata.get("reflections") or []) >= 2, text
        assert _flat(src.arguments).startswith(title.lower()) and given.lower().rstrip("…") in _flat(src.result), text
        answer = [t for t in _calls(run) if t.name == "Finish"][-1]
        assert _flat(answer.arguments).startswith(given.lower().rstrip("…")) and told.turn < src.turn < answer.turn, text
        return True
    m = re.fullmatch(r"(?:The|A) reflection the run was given at turn (\d+) already names the expected answer \"(.+?)\" "
                     r"\(\"(.+)\"\)(?:, and (\S+)\[(.+)\] returned it at turn (\d+))?; the run (?:answered \"(.+)\" at turn "
                     r"(\d+)|ended without an answer): when a reflection names a candidate answer, look it up and give it "
                     r"once the page shows it meets the question's conditions\.", text)
    if m:  # the quote is a reflection's sentence in the turn's message, naming the expected answer the run did not give
        told, gold, quote = by_n[int(m.group(1))], m.group(2), _flat(m.group(3).strip("…"))
        reflections = run.task.metadata.get("reflections") or []
        assert gold == run.task.metadata["gold_answer"] and run.outcome.success is False, text
        assert told.role == "user" and quote in _flat(told.content) and gold.lower() in quote, text
        assert any(quote in _flat(x) for x in reflections), text
        assert gold.lower() not in _flat(run.task.instruction), text  # not a name the question gives
        if m.group(6):
            src = by_n[int(m.group(6))]
            assert src.name == m.group(4) and not src.is_error and gold.lower() in _flat(src.result), text
            assert src.turn > told.turn
        if m.group(8):
            at = by_n[int(m.group(8))]
            assert at.name == "Finish" and " ".join(at.arguments.split()).startswith(m.group(7).rstrip("…")), text
            assert gold.lower() not in m.group(7).lower(), text
        else:
            assert not any(t.name == "Finish" and not t.is_error for t in run.turns), text
        return True
    m = re.fullmatch(r"What (\S+)\[(.+)\] returned at turn (\d+) opens with the expected name \(\"(.+)\"\): answer with the "
                     r"name as the opening of the page about the thing writes it, no words added or dropped\.", text)
    if m:  # the page's text starts with the expected answer, then a parenthesis or a comma; the answer differs in words
        page, gold = by_n[int(m.group(3))], run.task.metadata["gold_answer"]
        assert page.name == m.group(1) and not page.is_error and run.outcome.success is False, text
        assert " ".join(page.result.split()).startswith(m.group(4).rstrip("…")), text
        assert re.match(re.escape(gold) + r"\s*[(,]", m.group(4)), text
        answer = next(t for t in reversed(_calls(run)) if t.name == "Finish")
        assert _flat(answer.arguments) != gold.lower() and page.turn < answer.turn, text
        return True
    m = re.fullmatch(_SUBJECT + r" sent a phrase that mixes the task's words with lower-case ones \((.+?)\)(?:, and no call "
                     r"sent a name their errors listed \((.+)\))?: send (\S+) one name, from the question or from an "
                     r"error's list, not a phrase\.", text)
    if m:  # every standing error of the tool sent a question word and a lower-case word outside parentheses
        tool, errs = _subject(run, m.group("subject"))
        assert tool == m.group(4), text
        question = {w.rstrip("s") for w in re.findall(r"\w{4,}", run.task.instruction.lower())}
        for t in errs:
            bare = re.sub(r"\([^()]*\)", " ", str(t.arguments))
            assert re.search(r"(?<![\w'])[a-z][a-z'-]{3,}", bare), (t.turn, text)
            assert {w.rstrip("s") for w in re.findall(r"\w{4,}", bare.lower())} & question, (t.turn, text)
        for q in re.findall(r"\"([^\"]+)\"", m.group(2)):
            assert any(_flat(t.arguments).startswith(_flat(q.rstrip("…"))) for t in errs), text
        if m.group(3):
            sent = {_flat(t.arguments) for t in _calls(run)}
            for name in re.findall(r"'([^']+)'|\"([^\"]+)\"", m.group(3)):
                name = name[0] or name[1]
                assert _flat(name) not in sent and any(name in (t.result or "") for t in errs), text
        return True
    m = re.fullmatch(r"What worked: (.+), and answer with what that page says; here (.+), which returned \"(.+)\"\.", text)
    if m:  # each named look-up went through, the last holds the answer, and each query came from where it says
        assert run.outcome.success, text
        steps = re.findall(r"(\S+)\[(.+?)\] at turn (\d+) \((a name from the question|a name the page at turn (\d+) gave|"
                           r"a name the error at turn (\d+) listed)\)", m.group(2))
        assert steps and len(steps) == len(m.group(1).split(", then ")), text
        question = _flat(run.task.instruction)
        for tool, query, n, how, page, err in steps:
            call = by_n[int(n)]
            assert call.name == tool and not call.is_error and _flat(call.arguments).startswith(_flat(query.rstrip("…"))), text
            if how == "a name from the question":
                assert all(w in re.findall(r"\w+", question) for w in re.findall(r"\w+", _flat(call.arguments))), text
            elif page:
                new = set(re.findall(r"\w+", _flat(call.arguments))) - set(re.findall(r"\w+", question))
                assert new and new <= set(re.findall(r"\w+", _flat(by_n[int(page)].result))), text
            else:
                assert by_n[int(err)].is_error and str(call.arguments) in _similar(by_n[int(err)].result), text
        last = by_n[int(steps[-1][2])]
        assert m.group(3).lower() in _flat(last.result) and m.group(3).lower() not in _flat(last.arguments), text
        return True
    m = re.fullmatch(r"The agent's comparison at turn (\d+) is wrong: the look-ups place (.+) at (\S+) \(turn (\d+)\) and "
                     r"(.+) at (\S+) \(turn (\d+)\) \(it wrote \"(.+)\"\)\.", text)
    if m:  # both coordinates are in the named look-ups, and the direction the agent wrote does not follow from them
        said = _said_at(run, int(m.group(1)))
        assert _flat(m.group(8)) in said, text
        lat = []
        for value, n in ((m.group(3), int(m.group(4))), (m.group(6), int(m.group(7)))):
            assert value in by_n[n].result, text
            d = re.fullmatch(r"(\d+(?:\.\d+)?)°(?:(\d+)′)?([NSEW])", value)
            lat.append((float(d.group(1)) + float(d.group(2) or 0) / 60) * (-1 if d.group(3) in "SW" else 1))
        word = re.search(r"\b(north|south|east|west)\b", m.group(8)).group(1)
        assert not (lat[0] > lat[1] if word in ("north", "east") else lat[0] < lat[1]), text
        return True
    m = re.fullmatch(r"The agent's comparison at turn (\d+) is wrong: the look-ups give (.+)'s birth year as (\d{4}) "
                     r"\(turn (\d+)\) and (.+)'s as (\d{4}) \(turn (\d+)\) \(it wrote \"(.+)\"\)\.", text)
    if m:  # both years open the named look-ups' pages, and the age the agent wrote does not follow from them
        assert _flat(m.group(8)) in _said_at(run, int(m.group(1))), text
        assert m.group(3) in by_n[int(m.group(4))].result[:300] and m.group(6) in by_n[int(m.group(7))].result[:300]
        older = " is older than " in m.group(8)
        assert (int(m.group(3)) > int(m.group(6))) == older, text
        return True
    m = re.fullmatch(r"The agent's comparison at turn (\d+) rests on no value a look-up returned: no look-up before it gave "
                     r"coordinates for (.+) or (.+) \(it wrote \"(.+)\"\): find the values compared before choosing\.", text)
    if m:  # a direction written by the agent, and no look-up before it held a coordinate
        n = int(m.group(1))
        assert _flat(m.group(4)) in _said_at(run, n) and re.search(r"\b(north|south|east|west)\b", m.group(4)), text
        assert not any("°" in (t.result or "") for t in _calls(run) if t.turn < n and not t.is_error), text
        return True
    m = re.fullmatch(r"(\S+) at turn (\d+) sent \"(.+)\", and (.+) stood in neither the task text it was given nor any "
                     r"answer before it(?: \(the agent's words: \"(.+)\"\))?; the answer \"(.+)\" came from (?:what that "
                     r"look-up returned|what \S+\[.+\] returned at turn (\d+)), and no look-up from turn \2 on held the "
                     r"expected \"(.+)\": take each next name from the question or a look-up's text, and search for the link "
                     r"itself before building on a name from memory\.", text)
    if m:  # each name is new to every text before the look-up; the answer came from the branch, the gold never did
        n = int(m.group(2))
        look = by_n[n]
        assert look.name == m.group(1) and " ".join(str(look.arguments).split()) == m.group(3), text
        before = " ".join([t.content or "" for t in run.turns if t.turn < n and t.type == "message" and t.role == "user"]
                          + [t.result or "" for t in _calls(run) if t.turn < n]).casefold()
        for name in re.findall(r'"([^"]+)"', m.group(4)):
            assert name in look.arguments and not re.search(rf"\b{re.escape(name.casefold())}\b", before), (name, text)
        if m.group(5):
            assert any(_flat(m.group(5)) in _flat(t.reasoning or "") for t in _calls(run) if t.turn <= n), text
        source = by_n[int(m.group(7))] if m.group(7) else look
        assert source.turn >= n and m.group(6).casefold() in (source.result or "").casefold(), text
        assert not any(m.group(8).casefold() in (t.result or "").casefold() for t in _calls(run) if t.turn >= n), text
        return True
    return False


def _held_in_another_form(run: Run, text: str) -> None:
    """``"X" as written, though Search's answer at turn 1 held 2 of its 3 main words in one
    sentence ("a", "b")``: no look-up that went through holds X as written, and one sentence of
    that answer holds each quoted word."""
    m = re.search(r'expected "(.+?)",? (?:which )?(?:no look-up had returned )?as written, though (\S+)\'s answer at turn (\d+) '
                  r'held (\d+) of its (\d+) main words in one sentence \((.+?)\)\.', text)
    if not m:
        return
    gold, call = m.group(1), next(t for t in run.turns if t.turn == int(m.group(3)))
    assert call.name == m.group(2) and not call.is_error, text
    assert not any(gold.lower() in (t.result or "").lower() for t in run.turns if t.type == "function_call" and not t.is_error)
    words = json.loads(f"[{m.group(6)}]")
    assert len(words) == int(m.group(4)) and 2 * len(words) > int(m.group(5)), text
    assert any(all(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", s) for w in words)
               for s in re.split(r"(?<=[.!?])\s+|\n+", call.result or "")), text


def _only_in_errors(run: Run, name: str, clause: str, before: int | None) -> None:
    """``the errors Search answered at turns 4, 5 and 6; the agent sent it to Search at turn 5``:
    the turns named are every error before ``before`` whose text holds the name (beyond the words
    it repeats from its own call), and the call
    named after them sent the name itself."""
    m = re.fullmatch(r"the errors? (.+?) (?:answered|returned) at turns? ([\d, and]+?)(?: and \d+ more)?"
                     r"(?:; the agent sent it to (\S+) at turn (\d+)(, which failed too)?|; no (?:later call|call before "
                     r"turn (\d+)) sent it)", clause)
    assert m, clause
    word = re.compile(r"(?<![\w.])" + re.escape(name.lower()) + r"(?!\w)")
    holding = [t.turn for t in run.turns if t.type == "function_call" and t.is_error and (before is None or t.turn < before)
               and word.search((t.result or "").lower().replace(" ".join(str(t.arguments).split()).lower() or "\0", " "))]
    named = [int(x) for x in re.findall(r"\d+", m.group(2))]
    assert named == holding[:len(named)] and (len(named) == len(holding) or " more" in clause), (clause, holding)
    if m.group(3):
        sent = next(t for t in run.turns if t.turn == int(m.group(4)))
        assert sent.name == m.group(3) and word.search(str(sent.arguments).lower()) and sent.turn > named[0], clause
        assert bool(m.group(5)) == bool(sent.is_error), clause
    else:  # no call after the first error (and before the turn named) sent the name
        until = int(m.group(6)) if m.group(6) else None
        assert not [t for t in run.turns if t.type == "function_call" and t.turn > named[0]
                    and (until is None or t.turn < until) and word.search(str(t.arguments).lower())], clause


def test_the_rule_beside_a_fact_is_checked_like_the_fact(tmp_path):
    """A fact that carries the run's own rule is checked as the fact, and the rule's quotes and
    record fields against the log (the importer fixtures below carry none: no expected calls)."""
    from test_rule_reasons import _booked

    run = _booked(tmp_path)
    [fact] = compile_offline(run).in_short
    assert " The system prompt's rule on " in fact.text
    _check(run, fact.text, fact.turns)
    with pytest.raises(AssertionError):
        _check(run, fact.text.replace('`membership` "platinum"', '`membership` "bronze"'), fact.turns)


def test_what_was_said_about_a_rule_is_checked_like_the_fact(tmp_path):
    """The agent's refusal and the user's words on a rule's condition (rule_talk.py) are checked
    against the turns they name."""
    from test_rule_reasons import _cancelled, _refused

    run = _refused(tmp_path, True)
    [fact] = [f for f in compile_offline(run).in_short if f.kind == "missed-change"]
    assert " that it could not: " in fact.text
    _check(run, fact.text, fact.turns)
    with pytest.raises(AssertionError):
        _check(run, fact.text.replace("cannot be changed", "cannot be renamed"), fact.turns)
    run, fact = _cancelled(tmp_path, [_user("Cancel K2PL7Q please."), _agent("Is it illness, or a storm?"),
                                      _user("A storm, yes.")])
    assert " The user's words on its condition " in fact.text
    _check(run, fact.text, fact.turns)
    with pytest.raises(AssertionError):
        _check(run, fact.text.replace("A storm, yes.", "Illness, yes."), fact.turns)


def test_every_fact_on_every_importer_fixture_holds():
    seen, compiled = 0, [r for r in RUNS if r.outcome is not None]  # a run with no verdict is not compiled
    for run in compiled:
        comp = compile_offline(run)
        assert 1 <= len(comp.in_short) <= 3, run.run_id
        for fact in comp.in_short:
            _check(run, fact.text, fact.turns)
            seen += 1
    assert seen >= len(compiled) >= 25


def test_a_failed_fix_says_what_it_changed_and_what_the_tests_said_after_it():
    """Failing test, edit, failing test: the page leads with the edit and the tests that now fail,
    not with "no later python call went through" alone (the check above reads it)."""
    facts = [f.text for r in RUNS for f in compile_offline(relabeled(r, False)).in_short]
    said = [t for t in facts if "the same command still reported failing tests" in t]
    assert any("Edit changed" in t and "were not among the failures it reported at turn 1" in t for t in said), said
    assert any("str_replace_editor changed" in t for t in said), said


def test_the_facts_carry_their_kind_for_the_lessons_that_count_them(tmp_path):
    """The insight layer counts facts by kind (corpus/checked_facts.py): each checked fact says
    which kind it is, and a change's fact names the tool and every argument that differed."""
    path = tmp_path / "react_reflexion_2q.txt"
    path.write_text(REFLEXION, encoding="utf-8")
    _right, wrong = sorted(_load(path), key=lambda r: not r.outcome.success)
    facts = compile_offline(wrong).in_short
    assert (facts[0].kind, facts[0].about) == ("comparison", ["1983 is later than 1958"])
    assert facts[1].kind == "answer-seen"
    expected = [{"name": "update_reservation_flights", "kwargs": {
        "reservation_id": "Q4WZ8N", "cabin": "economy", "payment_id": "gift_card_7730215",
        "flights": [{"flight_number": "HAT311", "date": "2024-06-10"}]}},
                {"name": "update_reservation_passengers", "kwargs": {
                    "reservation_id": "Q4WZ8N", "passengers": [{"first_name": "Lena", "last_name": "Vogt",
                                                                "dob": "1988-03-04"}]}}]
    sent = dict(expected[0]["kwargs"], payment_id="credit_card_6604418", cabin="business")
    run = _tau(tmp_path, [_user("Move me to HAT311 on 2024-06-10 in business, and pay with my card."),
                          *_tool("update_reservation_flights", sent, dict(TRIP))], reward=0.0, actions=expected)
    facts = compile_offline(run).in_short
    assert facts[0].kind == "arguments"
    assert [a.split("@")[0] for a in facts[0].about] == ["update_reservation_flights.cabin",
                                                         "update_reservation_flights.payment_id"]
    assert facts[0].about[0] == "update_reservation_flights.cabin@user"  # "business" is the user's own word
    assert facts[1].kind == "missed-change"
    assert facts[1].about == ["update_reservation_passengers"]  # the unmade change's tool, for the insight's lead


def _kinds(run: Run) -> list[tuple[str, list[str]]]:
    from wikitrace.corpus.checked_facts import run_facts

    return [(f["kind"], f.get("about", [])) for f in run_facts(compile_offline(run))]


def test_a_success_keeps_the_kind_of_each_fact_so_lessons_can_weigh_failures_against_it(tmp_path):
    """A successful run's facts carry the kind a failed run's would: the insight layer counts a kind
    on both sides before a lesson leads with it."""
    change = {"reservation_id": "Q4WZ8N", "cabin": "economy", "payment_id": "gift_card_7730215",
              "flights": [{"flight_number": "HAT311", "date": "2024-06-10"}]}
    handed = {"summary": "The user wants a refund for a basic economy ticket."}
    run = _tau(tmp_path, [_user("Move me to HAT311 on 2024-06-10, gift card please."),
                          *_tool("update_reservation_flights", dict(change, cabin="business"), dict(TRIP)),
                          *_tool("transfer_to_human_agents", handed, "Transfer successful")], reward=1.0,
               actions=[{"name": "update_reservation_flights", "kwargs": change}])
    assert _kinds(run) == [("arguments", ["update_reservation_flights.cabin"]),
                           ("unexpected-change", ["transfer_to_human_agents"])]
    # a task whose expected list is empty expects no change: a hand-off is then unexpected, as on a failed run
    run = _tau(tmp_path, [*_tool("transfer_to_human_agents", handed, "Transfer successful")], reward=1.0, actions=[])
    assert run.task.metadata.get("expected_calls") == "[]"
    assert _kinds(run) == [("unexpected-change", ["transfer_to_human_agents"])]
    assert _facts(run)[0].startswith("The task expected no change; the run's only state-changing call was "
                                     "transfer_to_human_agents at turn ")
    # a change on such a task: the note says the task expected no call at all, not look-ups only
    from wikitrace.compilers.expected_calls import change_notes
    from wikitrace.compilers.reading import read_run

    run = _tau(tmp_path, [*_tool("cancel_reservation", {"reservation_id": "Q4WZ8N"}, dict(TRIP))], reward=0.0, actions=[])
    reading = read_run(run)
    (cancel,) = [c for c in reading.calls if c.name == "cancel_reservation"]
    assert change_notes(reading, cancel) == [
        "The calls the log records as expected for this task include no cancel_reservation call; it expected no call at all."]


@pytest.mark.parametrize("success", [True, False], ids=["as-success", "as-failure"])
def test_every_fact_holds_on_every_fixture_run_under_either_verdict(success):
    """Logs with no verdict of their own (Claude Code, SWE-agent trajectories, ATIF) are the ones
    an outcomes table labels either way; each fact must hold of the log under both labels."""
    from fixture_runs import relabeled
    seen = 0
    for run in RUNS:
        run = relabeled(run, success)
        for fact in compile_offline(run).in_short:
            _check(run, fact.text, fact.turns)
            seen += 1
    assert seen >= len(RUNS)


# --- why expected changes were not made: records never looked up, offers let drop, values never shown ---

PROFILE = {"name": {"first_name": "Lena", "last_name": "Vogt"}, "membership": "gold",
           "payment_methods": {"gift_card_7730215": {"source": "gift_card", "amount": 80, "id": "gift_card_7730215"},
                               "credit_card_4410963": {"source": "credit_card", "last_four": "0963",
                                                       "id": "credit_card_4410963"}},
           "reservations": ["Q4WZ8N", "M7TR2D", "PX51KA", "ZB08HE"]}


def test_changes_on_listed_records_never_looked_up_are_said_with_the_records_and_what_to_do(tmp_path):
    def cabin(rid):
        return {"name": "update_reservation_flights", "kwargs": {
            "reservation_id": rid, "cabin": "economy", "payment_id": "gift_card_7730215",
            "flights": [{"flight_number": "HAT907", "date": "2024-06-09"}]}}
    expected = [cabin("Q4WZ8N"), cabin("PX51KA"), cabin("ZB08HE")]
    run = _tau(tmp_path, [*_tool("get_user_details", {"user_id": "lena_vogt_3017"}, PROFILE),
                          *_tool("get_reservation_details", {"reservation_id": "M7TR2D"}, dict(TRIP, reservation_id="M7TR2D")),
                          _agent("Shall I move Q4WZ8N to economy?"), _user("Yes."),
                          *_tool("update_reservation_flights", expected[0]["kwargs"], dict(TRIP))],
               reward=0.0, actions=expected, instruction="You are lena_vogt_3017. Downgrade all your trips to economy.")
    facts = compile_offline(run).in_short
    [fact] = [f for f in facts if f.kind == "missed-change"]
    profile = _call_turn(run, "get_user_details")
    assert fact.text.startswith(
        f"The run looked up 2 of the 4 `reservations` the record get_user_details returned at turn {profile} lists "
        "(Q4WZ8N and M7TR2D), never PX51KA and ZB08HE; the task expected update_reservation_flights on PX51KA and "
        "ZB08HE, and the run never made those changes (the agent's last turn was ")
    assert fact.text.endswith("Look up every one of the `reservations` a record lists before deciding which of them "
                              "to change.") and profile in fact.turns
    assert facts[0] == fact  # why the run failed comes first
    _check(run, fact.text, fact.turns)
    with pytest.raises(AssertionError):  # the check reads the list: a wrong count fails it
        _check(run, fact.text.replace("2 of the 4", "2 of the 5"), fact.turns)
    # every listed record looked up: the changes were missed for another reason, and no such sentence is written
    looked_all = _tau(tmp_path, [*_tool("get_user_details", {"user_id": "lena_vogt_3017"}, PROFILE),
                                 *[m for rid in ("M7TR2D", "PX51KA", "ZB08HE") for m in _tool(
                                     "get_reservation_details", {"reservation_id": rid}, dict(TRIP, reservation_id=rid))]],
                      reward=0.0, actions=expected)
    assert not any("never PX51KA" in f or "Look up every" in f for f in _facts(looked_all))


CERTIFICATE = {"name": "send_certificate", "kwargs": {"user_id": "lena_vogt_3017", "amount": 100}}


@pytest.mark.parametrize("reply, later, said", [
    ("Hmm, I'm not certain. First tell me when my flight leaves?", "It leaves on 2024-06-09.", True),
    ("No, thank you. When does my flight leave?", "It leaves on 2024-06-09.", False),  # turned down: nothing to follow
    ("Hmm, maybe. When does my flight leave?", "It leaves on 2024-06-09; the certificate can wait.", False),
])
def test_an_offered_change_the_run_let_drop_is_said_with_the_offer_and_the_answer(tmp_path, reply, later, said):
    run = _tau(tmp_path, [_user("My flight was delayed for hours, I am upset. There were 3 passengers on it, I believe."),
                          _agent("I see."),  # the user's count is let stand: a checked fact of its own
                          _agent("I am sorry. As a gold member you can get a $100 travel certificate. Would you like me "
                                 "to issue this certificate to your account?"),
                          _user(reply), _agent(later)], reward=0.0, actions=[CERTIFICATE])
    facts = compile_offline(run).in_short
    [fact] = [f for f in facts if f.kind == "missed-change"]
    offered, answered = _turn_of(run, "travel certificate"), _turn_of(run, reply[:12])
    if not said:
        assert not fact.text.startswith("The agent offered"), fact.text
        return
    assert fact.text.startswith(
        f"The agent offered the send_certificate change at turn {offered} (\"As a gold member you can get a "
        "$100 travel certificate. Would you like me to issue this certificate to your account?\"); the user answered at "
        f"turn {answered} (\"{reply}\"); no later agent message named the certificate again, and the run never made that "
        "change. Come back to a change you offered until the user takes it or turns it down. The task expected "
        "send_certificate(amount=100, user_id=\"lena_vogt_3017\")"), fact.text
    assert offered in fact.turns and answered in fact.turns
    assert facts[0] == fact and facts[1].kind == "count"  # the offer let drop leads; the checked count comes after
    _check(run, fact.text, fact.turns)


def test_an_offer_made_again_and_agreed_to_as_the_user_ended_the_talk_says_both_offers(tmp_path):
    """The agent offered the certificate, answered the user's other questions, and offered it again
    only when the user was about to leave: the user's yes ended the conversation, so the page names
    the first offer and the late one, and says to come back to it while turns are left."""
    offer = "As a gold member you can get a $100 travel certificate. Would you like me to issue this certificate?"
    again = "If everything is in order, I can proceed with issuing the $100 certificate."
    run = _tau(tmp_path, [_user("My flight was delayed for hours, I am upset."), _agent(offer),
                          _user("How many passengers are on my reservation?"), _agent("The reservation lists 2."),
                          _user("I thought 3, but never mind."), _agent(again),
                          _user("Sure, please go ahead and issue the certificate. ###STOP###")],
               reward=0.0, actions=[CERTIFICATE], end=False)
    [fact] = [f for f in compile_offline(run).in_short if f.kind == "missed-change"]
    first, late, yes = _turn_of(run, "As a gold member"), _turn_of(run, "If everything"), _turn_of(run, "Sure, please")
    assert fact.text.startswith(
        f"The agent offered the send_certificate change at turn {first}, let the talk move on, and put it to the user "
        f"again only at turn {late} (\"If everything is in order, I can proceed with issuing the $100 certificate.\"); "
        f"the user agreed at turn {yes}, in the message that ended the conversation"), fact.text
    assert {first, late, yes} <= set(fact.turns)
    _check(run, fact.text, fact.turns)


def test_a_failed_call_with_a_value_nothing_showed_names_where_the_right_one_came_from(tmp_path):
    change = {"reservation_id": "Q4WZ8N", "cabin": "economy", "payment_id": "credit_card_7730215",
              "flights": [{"flight_number": "HAT311", "date": "2024-06-10"}]}
    right = dict(change, payment_id="credit_card_4410963")
    run = _tau(tmp_path, [_user("Move me to HAT311 on 2024-06-10 and use my credit card."),
                          *_tool("update_reservation_flights", change, "Error: payment method not found"),
                          *_tool("get_user_details", {"user_id": "lena_vogt_3017"}, PROFILE),
                          *_tool("update_reservation_flights", right, dict(TRIP))],
               reward=1.0, actions=[{"name": "update_reservation_flights", "kwargs": right}])
    failed, profile = _turn_of(run, "credit_card_7730215"), _call_turn(run, "get_user_details")
    fixed = _turn_of(run, "\"credit_card_4410963\", \"flights")
    [fact] = [f for f in _facts(run) if " failed at turn " in f]
    assert fact == (f"update_reservation_flights failed at turn {failed}; a later update_reservation_flights call went "
                    f"through at turn {fixed}. The failed call sent `payment_id` \"credit_card_7730215\", which no earlier "
                    f"answer or user message held; \"credit_card_4410963\", which the call at turn {fixed} sent, was shown by "
                    f"get_user_details's answer (turn {profile}), only after the failed call. Look such a value up "
                    "(get_user_details) before sending it, rather than composing it.")
    [kf] = [f for f in compile_offline(run).in_short if f.text == fact]
    _check(run, kf.text, kf.turns)
    # the id the user gave is no value made up, even when the call failed for another reason
    told = _tau(tmp_path, [_user("Move me to HAT311 on 2024-06-10 and pay with credit_card_7730215."),
                           *_tool("update_reservation_flights", change, "Error: payment method not found"),
                           *_tool("get_user_details", {"user_id": "lena_vogt_3017"}, PROFILE),
                           *_tool("update_reservation_flights", right, dict(TRIP))],
                reward=1.0, actions=[{"name": "update_reservation_flights", "kwargs": right}])
    assert not any("which no earlier answer or user message held" in f for f in _facts(told))
    # an id built from the digits of the right one under another name is said to be so
    built = _tau(tmp_path, [_user("Move me to HAT311 on 2024-06-10 and use my credit card."),
                            *_tool("update_reservation_flights", dict(change, payment_id="gift_card_4410963"),
                                   "Error: payment method not found"),
                            *_tool("get_user_details", {"user_id": "lena_vogt_3017"}, PROFILE),
                            *_tool("update_reservation_flights", right, dict(TRIP))],
                 reward=1.0, actions=[{"name": "update_reservation_flights", "kwargs": right}])
    [kf] = [f for f in compile_offline(built).in_short if " failed at turn " in f.text]
    assert "which no earlier answer or user message held (the digits of \"credit_card_4410963\" under another name); " \
        in kf.text, kf.text
    _check(built, kf.text, kf.turns)
    with pytest.raises(AssertionError):
        _check(built, kf.text.replace('digits of "credit_card_4410963"', 'digits of "credit_card_4410964"'), kf.turns)


def test_an_extra_change_after_the_expected_ones_were_made_is_not_called_a_wrong_version_of_one(tmp_path):
    """The task expected one cancellation, the run made it, then cancelled a second booking: the
    second is an extra change, not "sent Z9PL2K where the task expected Q4WZ8N" (the run did send
    Q4WZ8N, in the call before)."""
    run = _tau(tmp_path, [_user("Cancel Q4WZ8N please. And my other booking Z9PL2K too."),
                          *_tool("cancel_reservation", {"reservation_id": "Q4WZ8N"}, dict(TRIP, status="cancelled")),
                          *_tool("cancel_reservation", {"reservation_id": "Z9PL2K"},
                                 dict(TRIP, reservation_id="Z9PL2K", status="cancelled"))],
               reward=0.0, actions=[{"name": "cancel_reservation", "kwargs": {"reservation_id": "Q4WZ8N"}}])
    facts = _facts(run)
    second = [t.turn for t in run.turns if t.type == "function_call" and t.name == "cancel_reservation"][1]
    assert not any("where the task expected" in f for f in facts), facts
    assert any(f.startswith(f"cancel_reservation at turn {second} went through, but the task expected no other "
                            "cancel_reservation call.") for f in facts), facts


def test_every_unexpected_change_and_every_kind_of_fact_is_kept_though_the_page_has_room_for_three(tmp_path):
    # the insight layer counts a run per kind of fact and per change it names, and links its page: a
    # hand-off past the page's room still went through, and a differing change past it is still shown
    run = _tau(tmp_path, [
        _user("Cancel it, and send me a certificate for the trouble."),
        *_tool("cancel_reservation", {"reservation_id": "Q4WZ8N"}, dict(TRIP, status="cancelled")),
        *_tool("send_certificate", {"user_id": "lena_vogt_3017", "amount": 100}, "Certificate added"),
        *_tool("update_reservation_flights", {"reservation_id": "Q4WZ8N", "cabin": "business",
                                              "flights": TRIP["flights"], "payment_id": "gift_card_7730215"}, dict(TRIP)),
        *_tool("transfer_to_human_agents", {"summary": "User wants more."}, "Transfer successful"),
        *_tool("update_reservation_baggages", {"reservation_id": "Q4WZ8N", "total_baggages": 3, "nonfree_baggages": 0,
                                               "payment_id": "gift_card_7730215"}, dict(TRIP)),
    ], reward=0.0, actions=[{"name": "update_reservation_baggages",
                             "kwargs": {"reservation_id": "Q4WZ8N", "total_baggages": 2, "nonfree_baggages": 0,
                                        "payment_id": "gift_card_7730215"}}])
    facts = compile_offline(run).in_short
    shown = [f.about[0] for f in facts if f.kind == "unexpected-change"]
    assert shown == ["cancel_reservation", "send_certificate", "update_reservation_flights"]  # the page's room
    named = {a for f in facts if f.kind == "unexpected-change" for a in f.about}
    assert named == {"cancel_reservation", "send_certificate", "update_reservation_flights", "transfer_to_human_agents"}
    assert facts[-1].kind == "arguments" and "turn " in facts[-1].text and "total_baggages" in facts[-1].text


def _check_partial_reasons(run, by_n: dict, said: str, text: str) -> None:
    """What a partly scored purchase left out: each clause holds on the turns it names."""
    if not said:
        return
    calls = _calls(run)
    for label, k, at in re.findall(r"; it chose no (.+?) option of the (\d+) listed at turn (\d+), while", said):
        page = by_n[int(at)].result or ""
        group = re.search(rf"^\s*{re.escape(label)}\s*((?:\[[^\]]+\]){{2,}})\s*$", page, re.M)
        assert group, text
        options = re.findall(r"\[([^\]]+)\]", group.group(1))
        assert len(options) == int(k), text
        assert not any(t.turn > int(at) and not t.is_error and str(t.arguments).strip() in options for t in calls), text
    for at, chosen, label in re.findall(r"; at turn (\d+) it chose (.+?) among the (.+?) options, while", said):
        assert str(by_n[int(at)].arguments).strip().startswith(chosen.rstrip("…")), text
    for opened, price, at, limit in re.findall(r"; the item it opened at turn (\d+) was listed at (\$[\d.,]+)(?: to \$[\d.,]+)? "
                                               r"\(turn (\d+)\), above the task's limit \(\"(.+?)\"\)", said):
        listed = by_n[int(at)].result or ""
        item = str(by_n[int(opened)].arguments).strip()
        assert re.search(rf"\[{re.escape(item)}\][^\[]*?{re.escape(price)}", listed), text
        assert limit in (run.task.instruction or ""), text
        bound = float(re.search(r"\d[\d,]*(?:\.\d+)?", limit).group(0).replace(",", ""))
        assert float(price[1:].replace(",", "")) > bound, text
    rest = re.sub(r"; (?:it chose no .+? option of the \d+ listed at turn \d+|at turn \d+ it chose .+? among the .+? "
                  r"options), while .+?(?=; it chose|; at turn|; the item|$)", "", said)
    rest = re.sub(r"; the item it opened at turn \d+ was listed at .+? above the task's limit \(\".+?\"\)", "", rest)
    assert not rest, (rest, text)


def test_a_change_the_user_agreed_to_and_the_run_never_made_says_where_it_was_put(tmp_path):
    """The agent wrote "I will upgrade Q4WZ8N and then cancel both reservations", the user agreed,
    and only the other booking was cancelled (tau step-0134): the missed change's fact says which
    message put it to the user and when the user agreed, not only that it was never made."""
    run = _tau(tmp_path, [
        _agent("To proceed, I will first upgrade reservation Q4WZ8N to economy and then cancel both reservations. "
               "Please confirm."),
        _user("Yes, please proceed with both."),
        *_tool("cancel_reservation", {"reservation_id": "ZZ9PLK"}, {"reservation_id": "ZZ9PLK", "status": "cancelled"}),
        _agent("Reservation ZZ9PLK has been cancelled."),
    ], reward=0.0, actions=[{"name": "cancel_reservation", "kwargs": {"reservation_id": "Q4WZ8N"}},
                            {"name": "cancel_reservation", "kwargs": {"reservation_id": "ZZ9PLK"}}])
    put, yes = _turn_of(run, "cancel both reservations"), _turn_of(run, "proceed with both")
    fact = next(f for f in _facts(run) if "never made that change" in f)
    assert fact.startswith(f"The agent's message at turn {put} named this change (\"To proceed, I will first upgrade "
                           f"reservation Q4WZ8N to economy and then cancel both reservations.\"), and the user agreed "
                           f"at turn {yes}. The task expected cancel_reservation(reservation_id=\"Q4WZ8N\")"), fact
    _check(run, fact, [put, yes])
    # a message saying it cannot is no promise
    run = _tau(tmp_path, [_agent("I cannot cancel Q4WZ8N, as it is basic economy. Shall I go on?"), _user("Yes."),
                          *_tool("cancel_reservation", {"reservation_id": "ZZ9PLK"},
                                 {"reservation_id": "ZZ9PLK", "status": "cancelled"})],
               reward=0.0, actions=[{"name": "cancel_reservation", "kwargs": {"reservation_id": "Q4WZ8N"}},
                                    {"name": "cancel_reservation", "kwargs": {"reservation_id": "ZZ9PLK"}}])
    assert not any("named this change" in f for f in _facts(run))


def test_a_flight_sent_from_a_listing_that_held_the_expected_one_shows_the_figures_apart(tmp_path):
    """The run was asked for the cheapest economy flight and sent HAT132 at $190 from a search that
    listed HAT172 at $102 (tau step-0056): the fact shows the figure whose name the task's words
    make up (prices.economy), for both, from that answer."""
    listing = [{"flight_number": "HAT132", "prices": {"economy": 190, "business": 287},
                "available_seats": {"economy": 8, "business": 10}},
               {"flight_number": "HAT172", "prices": {"economy": 102, "business": 360},
                "available_seats": {"economy": 2, "business": 15}}]
    move = {"reservation_id": "Q4WZ8N", "cabin": "economy", "payment_id": "gift_card_7730215",
            "flights": [{"flight_number": "HAT132", "date": "2024-06-11"}]}
    run = _tau(tmp_path, [
        *_tool("search_direct_flight", {"origin": "LGA", "destination": "PHL", "date": "2024-06-11"}, listing),
        _agent("The cheapest economy flight is HAT132 at $190. Shall I move you?"), _user("Yes, please."),
        *_tool("update_reservation_flights", move, {"reservation_id": "Q4WZ8N"}),
    ], reward=0.0, instruction="You are lena_vogt_3017. Move to the cheapest economy flight on June 11.",
        actions=[{"name": "update_reservation_flights", "kwargs": dict(move, flights=[
            {"flight_number": "HAT172", "date": "2024-06-11"}])}])
    searched = _call_turn(run, "search_direct_flight")
    fact = next(f for f in _facts(run) if "where the task expected" in f)
    assert fact.endswith(f" search_direct_flight's answer at turn {searched} listed both: \"HAT172\" with "
                         "`prices.economy` 102, \"HAT132\" (sent) with 190."), fact
    _check(run, fact, [searched])


HALTED_YES_NO = HALTED.split("Question:", 1)[0] + """Question: Are Varn Mills and Orlo Foods both headquartered in Kessel?
Thought 1: I should search Varn Mills.
Action 1: Search[Varn Mills]
Observation 1: Varn Mills is a food maker headquartered in Orlo, Kessel.
Thought 2: Look up where Orlo Foods is.
Action 2: Lookup[locations]
Observation 2: No Results
Thought 3: Search Orlo Foods.
Action 3: Search[Orlo Foods]
Observation 3: Could not find [Orlo Foods]. Similar: ['Orlo', 'Orlo Athletic'].
Correct answer: no

"""


def test_a_yes_or_no_answer_is_never_said_to_be_returned_by_a_look_up(tmp_path):
    """A Lookup answering "No Results" does not hold the expected "no": a yes or a no is a
    judgement, and the harness's stop says nothing of where it stood (HotpotQA rater, step-0407)."""
    path = tmp_path / "react_reflexion_1q.txt"
    path.write_text(HALTED_YES_NO, encoding="utf-8")
    [run] = _load(path)
    stop = next(f for f in _facts(run) if f.startswith("The harness stopped the run"))
    assert "look-up" not in stop and '"no"' not in stop, stop


def test_a_change_nobody_asked_for_says_the_agent_raised_it_first(tmp_path):
    """The user asked to move a flight; the agent suggested cancelling the trip instead, the user
    took it up, and the task expected no change: the fact on the cancellation names the turn the
    agent brought it up and the turn the user first spoke of it."""
    cancelled = dict(TRIP, status="cancelled")
    messages = [_user("Can you move my flight to June 12?"),
                _agent("There are no seats on June 12. You could cancel the reservation instead, since it has "
                       "travel insurance."),
                _user("Hmm, alright, cancel it then."),
                *_tool("cancel_reservation", {"reservation_id": "Q4WZ8N"}, cancelled),
                _agent("Your reservation Q4WZ8N is cancelled.")]
    run = _tau(tmp_path, messages, reward=0.0, actions=[])
    texts = [f.text for f in compile_offline(run).in_short]
    suggested, took_up = _turn_of(run, "You could cancel"), _turn_of(run, "cancel it then")
    fact = next(t for t in texts if "cancel_reservation at turn" in t and "went through" in t)
    kf = next(f for f in compile_offline(run).in_short if f.text == fact)
    _check(run, kf.text, kf.turns)
    with pytest.raises(AssertionError):  # the word the user first said, a turn too early
        _check(run, kf.text.replace(f"first did at turn {took_up}", f"first did at turn {took_up - 1}"), kf.turns)
    assert (f"The agent suggested it at turn {suggested} (\"You could cancel the reservation instead, since it has "
            f"travel insurance.\") before any user message said \"cancel\" in any form; the user first did at turn "
            f"{took_up}.") in fact


def test_a_change_the_user_asked_for_first_is_not_said_to_be_the_agents(tmp_path):
    cancelled = dict(TRIP, status="cancelled")
    messages = [_user("Please cancel my reservation."),
                _agent("You could cancel it under its insurance. Shall I go ahead?"), _user("Yes."),
                *_tool("cancel_reservation", {"reservation_id": "Q4WZ8N"}, cancelled),
                _agent("Your reservation Q4WZ8N is cancelled.")]
    run = _tau(tmp_path, messages, reward=0.0, actions=[])
    texts = [f.text for f in compile_offline(run).in_short]
    assert any("cancel_reservation at turn" in t for t in texts)
    assert not any("The agent suggested it" in t for t in texts)


def test_a_hand_off_the_user_took_up_in_other_words_says_they_agreed(tmp_path):
    """The agent offered a transfer and the user answered "Yes, please connect me with a human agent":
    no user message said "transfer", yet saying none did would mislead (tau-bench rater, step-0028).
    The fact quotes their reply as the yes it was."""
    messages = [_user("Can you move my flight to June 12?"),
                _agent("There are no seats on June 12. Would you like me to transfer you to a human agent?"),
                _user("Yes, please connect me with a human agent. Thank you!"),
                *_tool("transfer_to_human_agents", {"summary": "move a flight"}, "Transfer successful")]
    run = _tau(tmp_path, messages, reward=0.0, actions=[])
    offered, reply = _turn_of(run, "Would you like me"), _turn_of(run, "connect me with")
    kf = next(f for f in compile_offline(run).in_short if "The agent suggested it" in f.text)
    _check(run, kf.text, kf.turns)
    assert kf.text.endswith(f"before any user message said \"transfer\" in any form; the user agreed in their reply at "
                            f"turn {reply} (\"Yes, please connect me with a human agent. Thank you!\").")
    assert {offered, reply} <= set(kf.turns)
    with pytest.raises(AssertionError):  # another turn than their reply
        _check(run, kf.text.replace(f"reply at turn {reply}", f"reply at turn {offered}"), kf.turns)


def test_a_look_up_never_answered_names_the_change_made_after_it_all_the_same():
    """The SWE-agent trial whose grep the shell could not parse (turn 6) edited NumberParser.java at
    turn 7 without resending it: the fact names that edit, the consequence a reader looks for
    (SWE-bench rater, insight-0004), and links its turn; the checker reads both off the log."""
    from pathlib import Path

    path = Path(__file__).parent / "fixtures" / "importers" / "coding_corpus" / "swe-claude" / "acme__jsonkit-101.traj"
    [run] = [r for r in load._read(path, load.detect(path)) if isinstance(r, Run)]
    run = relabeled(run, False)
    fact = next(f for f in compile_offline(run).in_short if "no later grep call went through" in f.text)
    assert fact.text.endswith("; str_replace_editor made a change at turn 7 all the same."), fact.text
    assert 7 in fact.turns
    _check(run, fact.text, fact.turns)
    with pytest.raises(AssertionError):  # a turn that is not the change
        _check(run, fact.text.replace("at turn 7 all", "at turn 5 all"), fact.turns)


WRONG_YES = """
########################################
BEGIN TRIAL 1
Trial summary: Correct: 0, Incorrect: 1, Halted: 0
#######################################
------------- BEGIN CORRECT AGENTS -------------

------------- BEGIN INCORRECT AGENTS -----------

Question: Are Varn Mills and Orlo Foods both headquartered in Kessel?
Thought 1: I should search Varn Mills.
Action 1: Search[Varn Mills]
Observation 1: Varn Mills is a food maker headquartered in Orlo, Kessel.
Thought 2: Search Orlo Foods.
Action 2: Search[Orlo Foods]
Observation 2: Orlo Foods is a bakery chain headquartered in Brask, south of Kessel.
Thought 3: Both are in Kessel, so the answer is yes.
Action 3: Finish[yes]
Observation 3: Answer is INCORRECT
Correct answer: no

------------- BEGIN HALTED AGENTS --------------

"""


def test_a_wrong_yes_or_no_is_not_said_to_be_missing_from_the_look_ups(tmp_path):
    """The expected "no" is worked out from the pages, never read off one: the wrong "yes" is set
    beside it without "which no look-up had returned", which means nothing for a yes or a no
    (HotpotQA rater, step-0194), and the agent's own words come with it."""
    path = tmp_path / "react_reflexion_1q.txt"
    path.write_text(WRONG_YES, encoding="utf-8")
    [run] = _load(path)
    fact = next(f for f in _facts(run) if f.startswith('The answer "yes"'))
    assert fact.startswith('The answer "yes" (turn ') and '; the task expected "no". ' in fact, fact
    assert "look-up" not in fact.split("The agent's words with it")[0], fact


def test_the_last_change_made_as_expected_says_the_run_stopped_there_with_changes_unmade(tmp_path):
    """The run made the cancel the task expected and ended, leaving the expected passenger update
    unmade: its cause is where the run stopped, said in the decision, not the cancel being wrong
    (tau-bench rater, step-0033: "a correct call ranked Cause 1")."""
    cancelled = dict(TRIP, status="cancelled")
    passengers = {"reservation_id": "Q4WZ8N", "passengers": [{"first_name": "Ravi", "last_name": "Vogt",
                                                               "dob": "1986-12-19"}]}
    run = _tau(tmp_path, [_agent("Shall I cancel reservation Q4WZ8N?"), _user("Yes, please."),
                          *_tool("cancel_reservation", {"reservation_id": "Q4WZ8N"}, cancelled),
                          _agent("It is cancelled.")], reward=0.0,
               actions=[{"name": "cancel_reservation", "kwargs": {"reservation_id": "Q4WZ8N"}},
                        {"name": "update_reservation_passengers", "kwargs": passengers}])
    n = _call_turn(run, "cancel_reservation")
    decisions = [e.decision for e in compile_offline(run).evidence]
    assert (f"Called cancel_reservation at turn {n}, after the user agreed; the run made no change after it, and 1 "
            "change the task expected was never made.") in decisions, decisions
    from test_page_sentences import _checked

    _checked(run)  # each sentence of the page's items held to its check, this one's ending too


LISTED_WRONG = """
########################################
BEGIN TRIAL 1
Trial summary: Correct: 0, Incorrect: 1, Halted: 0
#######################################
------------- BEGIN CORRECT AGENTS -------------

------------- BEGIN INCORRECT AGENTS -----------

Question: Which short film by the maker of Tin Owl won the 1991 Corran Prize?
Thought 1: Search the maker.
Action 1: Search["Tin Owl"]
Observation 1: Could not find ["Tin Owl"]. Similar: ['Tin Owl (film)', 'Paper Heron', 'Mira Sand'].
Thought 2: It must be Mira Sand.
Action 2: Finish[Mira Sand]
Observation 2: Answer is INCORRECT
Correct answer: Paper Heron

------------- BEGIN HALTED AGENTS --------------

"""


def test_a_wrong_answer_s_cause_names_the_error_that_listed_the_expected_one(tmp_path):
    """The expected "Paper Heron" stood in the Search error's list of near names and nowhere else:
    the cause's support says so, as In short does, rather than that no look-up had returned it
    (HotpotQA rater, step-0266), and the page checker reads the error back."""
    path = tmp_path / "react_reflexion_1q.txt"
    path.write_text(LISTED_WRONG, encoding="utf-8")
    [run] = _load(path)
    assert run.outcome.label == "failure" and any(t.name == "Finish" for t in run.turns if t.type == "function_call")
    err = next(t.turn for t in run.turns if t.type == "function_call" and "Similar" in (t.result or ""))
    supports = [e.support for e in compile_offline(run).evidence]
    assert any(s.startswith('This answer ended the run and was judged wrong; the task expected "Paper Heron", which no '
                            f"look-up that went through had returned, only the error Search answered at turn {err}")
               for s in supports), supports
    from test_page_sentences import _checked

    _checked(run)
