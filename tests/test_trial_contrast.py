"""Trials of the same task set against each other on the compilation pages.

What a reader relies on: a success whose task also failed says first what those failed trials
did otherwise, with their count and links, in place of a line that only restated the run; a
failure says where it parted from a successful trial of its task; a task run once gets no such
line; and adding or forgetting a trial resets the other trials' pages exactly as compiling
everything again would.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
from fixture_runs import RUNS, relabeled
from tau_messages import agent, tool, user
from test_add import ok, same_corpus

from wikitrace.compilers.offline import compile_offline
from wikitrace.compilers.reading import read_run
from wikitrace.corpus import trial_contrast
from wikitrace.runs.model import Outcome, count_steps

POLICY = "# Airline Agent Policy\n\nThe current time is 2024-06-01 10:00:00 EST.\n"
TRIP = {"reservation_id": "Q4WZ8N", "user_id": "lena_vogt_3017", "origin": "DEN", "destination": "BOS",
        "flight_type": "one_way", "cabin": "economy",
        "flights": [{"origin": "DEN", "destination": "BOS", "flight_number": "HAT907", "date": "2024-06-09"}],
        "passengers": [{"first_name": "Lena", "last_name": "Vogt", "dob": "1988-03-04"}],
        "payment_history": [{"payment_id": "gift_card_7730215", "amount": 320}], "insurance": "no"}
PROFILE = {"user_id": "lena_vogt_3017", "payment_methods": {
    "gift_card_7730215": {"source": "gift_card", "id": "gift_card_7730215", "amount": 90},
    "credit_card_6604418": {"source": "credit_card", "id": "credit_card_6604418", "last_four": "4418"}}}
GIFT, CARD = "gift_card_7730215", "credit_card_6604418"


def _change(payment: str) -> dict:
    return {"reservation_id": "Q4WZ8N", "cabin": "economy", "payment_id": payment,
            "flights": [{"flight_number": "HAT311", "date": "2024-06-10"}]}


def _trial(task: int, trial: int, payment: str, reward: float) -> dict:
    """One tau-bench result record: the user asks for the gift card; the agent pays with ``payment``."""
    traj = [{"role": "system", "content": POLICY}, user("Hi, I need to move my Boston flight."),
            agent("Sure. Your user id and reservation id, please?"), user("lena_vogt_3017, reservation Q4WZ8N."),
            *tool("get_user_details", {"user_id": "lena_vogt_3017"}, PROFILE),
            *tool("get_reservation_details", {"reservation_id": "Q4WZ8N"}, TRIP),
            user("Move me to HAT311 on 2024-06-10 and pay with the gift card."),
            agent("HAT311 on 2024-06-10, the fare difference charged. Shall I go ahead?"), user("Yes."),
            *tool("update_reservation_flights", _change(payment), dict(TRIP, flights=_change(payment)["flights"])),
            agent("Done: you are on HAT311."), user("Thanks. ###STOP###")]
    task_text = {"user_id": "lena_vogt_3017", "outputs": [],
                 "instruction": f"You are lena_vogt_3017 (task {task}). Move flight Q4WZ8N to HAT311 on 2024-06-10 "
                                "and pay with your gift card.",
                 "actions": [{"name": "update_reservation_flights", "kwargs": _change(GIFT)}]}
    return {"task_id": task, "reward": reward, "trial": trial, "traj": traj,
            "info": {"task": task_text, "source": "user", "reward_info": {"reward": reward, "info": {}, "actions": []}}}


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def _in_short(corpus: Path, step: str) -> list[str]:
    page = (corpus / "compilation" / f"{step}.md").read_text(encoding="utf-8")
    return [ln for ln in page.split("## In short\n", 1)[1].split("\n## ", 1)[0].splitlines() if ln.startswith("- ")]


WON, LOST_1, LOST_2, ALONE = (_trial(12, 0, GIFT, 1.0), _trial(12, 1, CARD, 0.0), _trial(12, 2, CARD, 0.0),
                              _trial(13, 0, GIFT, 1.0))


def test_a_success_names_what_its_failed_trials_sent_instead_and_links_them(tmp_path):
    out = tmp_path / "c"
    ok("compile", str(_write(tmp_path / "results.json", [WON, LOST_1, LOST_2, ALONE])), "--out", str(out),
       "--offline", "-q")
    steps = {r["run_id"]: r["step"] for r in json.loads((out / "corpus.json").read_text())["runs"]}
    won, lost, alone = steps["task-12-trial-0"], [steps["task-12-trial-1"], steps["task-12-trial-2"]], steps["task-13-trial-0"]
    first = _in_short(out, won)[0]
    links = ", ".join(f"[{s}]({s}.md)" for s in lost)
    # said as what to do, with the latest look-up that showed the value, then what the failed trials did
    assert re.match(rf"- Send `payment_id` {GIFT} in update_reservation_flights, from get_reservation_details's answer "
                    rf"\(turn \d+\), as this run did: both failed trials of this task sent `payment_id` {CARD} in "
                    rf"update_reservation_flights \({re.escape(links)}\)\.", first), first
    shown = re.search(r"answer \(turn (\d+)\)", first).group(1)
    log = [json.loads(ln) for ln in (out / "raw" / won / "solver.full.jsonl").read_text(encoding="utf-8").splitlines()]
    assert next(t for t in log if t["turn"] == int(shown))["name"] == "get_reservation_details"
    # the line says more than "made the change the task expected", which it replaces
    assert not any("Make the change the task expected" in ln for ln in _in_short(out, won))
    for step in lost:
        said = _in_short(out, step)[1]
        assert said.startswith(f"- The successful trial [{won}]({won}.md) of this task sent `payment_id` {GIFT} in "
                               f"update_reservation_flights at its turn ") and said.split("; ")[1].startswith(
            f"this run sent {CARD}.")
    # a task run once: its page is what the run alone gives
    assert [ln for ln in _in_short(out, alone) if "](step-" in ln] == []
    assert re.match(r"- Make the change the task expected as this run did, with the same arguments: "
                    r"update_reservation_flights at turn \d+, with \\`reservation_id\\` \"Q4WZ8N\" from the user \(turn \d+\), "
                    r"\\`cabin\\` \"economy\" from get_reservation_details's answer \(turn \d+\) and \\`payment_id\\` "
                    r"\"gift_card_7730215\" from get_reservation_details's answer \(turn \d+\)\.",
                    _in_short(out, alone)[0]), _in_short(out, alone)[0]
    for target in re.findall(r"\]\((step-\d+\.md)\)", first):
        assert (out / "compilation" / target).is_file()


def test_adding_a_trial_resets_the_pages_of_its_task_as_compiling_all_does_and_forget_undoes_it(tmp_path):
    a = _write(tmp_path / "a.json", [WON, ALONE])
    b = _write(tmp_path / "b.json", [LOST_1])
    ok("compile", str(a), "--out", str(tmp_path / "added"), "--offline", "-q")
    alone_page = (tmp_path / "added" / "compilation" / "step-0000.md").read_bytes()
    assert not any("](step-" in ln for ln in _in_short(tmp_path / "added", "step-0000"))
    ok("add", str(b), "--corpus", str(tmp_path / "added"))
    # the success's page (not added, not compiled again) now sets itself against the new failed trial
    assert _in_short(tmp_path / "added", "step-0000")[0].startswith(f"- Send `payment_id` {GIFT} in update_reservation_flights")
    assert f"the failed trial of this task sent `payment_id` {CARD} in update_reservation_flights ([step-0002](step-0002.md))" \
        in _in_short(tmp_path / "added", "step-0000")[0]
    ok("compile", str(a), str(b), "--out", str(tmp_path / "together"), "--offline", "-q")
    same_corpus(tmp_path / "added", tmp_path / "together")
    ok("forget", "step-0002", "--corpus", str(tmp_path / "added"))
    assert (tmp_path / "added" / "compilation" / "step-0000.md").read_bytes() == alone_page


REFLEXION = """
########################################
BEGIN TRIAL 1
Trial summary: Correct: 1, Incorrect: 1, Halted: 0
#######################################
------------- BEGIN CORRECT AGENTS -------------

Question: Which lighthouse keeper wrote the logbook kept at Skarvik?
Thought 1: I should search the Skarvik lighthouse.
Action 1: Search[Skarvik lighthouse]
Observation 1: Skarvik lighthouse was kept from 1890 to 1931 by Maren Tolle, whose logbook survives in the town archive.
Thought 2: The keeper who wrote the logbook is Maren Tolle.
Action 2: Finish[Maren Tolle]
Observation 2: Answer is CORRECT
Correct answer: Maren Tolle

------------- BEGIN INCORRECT AGENTS -----------

Question: Which lighthouse keeper wrote the logbook kept at Skarvik?
Thought 1: I should search the logbook.
Action 1: Search[Skarvik logbook]
Observation 1: The Skarvik logbook was transcribed in 1975 by the archivist Ivar Brenne.
Thought 2: So it is Ivar Brenne.
Action 2: Finish[Ivar Brenne]
Observation 2: Answer is INCORRECT
Correct answer: Maren Tolle

"""


def _reflexion_out(tmp_path, text: str) -> tuple:
    """A Reflexion log of one question (``text``) compiled offline: the corpus folder and each
    outcome's step."""
    path = tmp_path / "react_reflexion_1q.txt"
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "c"
    ok("compile", str(path), "--out", str(out), "--offline", "-q")
    return out, {r["outcome"]: r["step"] for r in json.loads((out / "corpus.json").read_text())["runs"]}


def test_a_qa_success_names_the_look_up_and_the_answer_its_failed_retry_gave(tmp_path):
    path = tmp_path / "react_reflexion_1q.txt"
    path.write_text(REFLEXION, encoding="utf-8")
    out = tmp_path / "c"
    ok("compile", str(path), "--out", str(out), "--offline", "-q")
    runs = {r["outcome"]: r["step"] for r in json.loads((out / "corpus.json").read_text())["runs"]}
    won, lost = runs["success"], runs["failure"]
    assert _in_short(out, won)[0] == (
        f"- Look up Search\\[Skarvik lighthouse\\] and answer from what it returns (\"Maren Tolle\"), as this run did: "
        f"the failed trial of this task answered \"Ivar Brenne\" ([{lost}]({lost}.md)), and that look-up never went "
        f"through there. (turns [1](../raw/{won}/turns.md#turn-1), [2](../raw/{won}/turns.md#turn-2))")
    assert not any("was judged right" in ln for ln in _in_short(out, won))
    assert any(ln.startswith(f"- The successful trial [{won}]({won}.md) of this task answered \"Maren Tolle\"")
               and "this run answered \"Ivar Brenne\", and no such look-up of this run went through" in ln
               for ln in _in_short(out, lost))


def test_an_answer_copied_whole_from_a_look_up_is_counted_as_a_value_a_look_up_returned(tmp_path):
    """The failed trial answered with the observation's own sentence: its page says the answer
    appears in that look-up, so the ending it is counted under says a look-up returned it, not
    that no look-up held it word for word."""
    copied = REFLEXION.replace("Action 2: Finish[Ivar Brenne]",
                               "Action 2: Finish[The Skarvik logbook was transcribed in 1975 by the archivist Ivar Brenne]")
    assert copied != REFLEXION
    out, _runs = _reflexion_out(tmp_path, copied)
    [lost] = [r for r in json.loads((out / "corpus.json").read_text())["runs"] if r["outcome"] == "failure"]
    assert "procedure|Finish:looked-up" in lost["patterns"] and "procedure|Finish:own" not in lost["patterns"]


def test_a_right_answer_no_look_up_returned_is_said_to_come_from_what_the_agent_knew(tmp_path):
    """The successful trial searched a page that never names the keeper and answered right anyway:
    its page says no look-up returned the answer, so a reader does not copy the look-up as the way
    to it; the trial line says the same of its answer."""
    memory = REFLEXION.replace("Skarvik lighthouse was kept from 1890 to 1931 by Maren Tolle, whose logbook survives in "
                               "the town archive.", "Skarvik lighthouse stands on the north cape and was lit in 1890.")
    assert memory != REFLEXION
    out, runs = _reflexion_out(tmp_path, memory)
    page = (out / "compilation" / f"{runs['success']}.md").read_text(encoding="utf-8")
    said = "\n".join(_in_short(out, runs["success"]))
    assert said == (f"- The failed trial of this task answered \"Ivar Brenne\" ([{runs['failure']}]({runs['failure']}.md)); "
                    "this run answered \"Maren Tolle\", which no look-up of this run returned. "
                    f"(turn [2](../raw/{runs['success']}/turns.md#turn-2))"), said
    assert "which Search\\[Skarvik lighthouse\\] had returned" not in page
    data = json.loads((out / "corpus.json").read_text())
    # nor is the way it ended taught as a procedure: its log shows no way to the answer to copy
    assert not any(i["key"].startswith("procedure|Finish:own") for i in data["insights"])
    assert next(r for r in data["runs"] if r["step"] == runs["success"])["insights"] == []


def test_a_wrong_answer_of_a_task_no_trial_s_look_up_answered_says_so_on_its_lesson(tmp_path):
    """No look-up of either trial returned "Maren Tolle" (the successful one answered from what it
    knew): the lesson the failed trial teaches says its task was one whose pages never held the
    answer; once a trial's look-up returns it, the sentence goes."""
    def lesson_of(text: str, name: str) -> str:
        path = tmp_path / name / "react_reflexion_1q.txt"
        path.parent.mkdir()
        path.write_text(text, encoding="utf-8")
        out = tmp_path / name / "c"
        ok("compile", str(path), "--out", str(out), "--offline", "-q")
        data = json.loads((out / "corpus.json").read_text())
        lost = next(r["step"] for r in data["runs"] if r["outcome"] == "failure")
        lesson = next(i for i in data["insights"] if lost in [s["step"] for s in i["sources"]])
        return (out / "insight" / f"{lesson['id']}.md").read_text(encoding="utf-8")

    memory = REFLEXION.replace("Skarvik lighthouse was kept from 1890 to 1931 by Maren Tolle, whose logbook survives in "
                               "the town archive.", "Skarvik lighthouse stands on the north cape and was lit in 1890.")
    said = ("In 1 of the 1 tasks of the failed runs here (1 of the 1 runs), no look-up of any trial returned the expected "
            "answer as written")
    assert said in " ".join(lesson_of(memory, "never").split())
    assert said not in " ".join(lesson_of(REFLEXION, "held").split())


def test_a_yes_given_to_a_which_question_is_said_to_be_the_wrong_kind_of_answer(tmp_path):
    """The failed trial answered "yes" to "Which lighthouse keeper …?": its page leads with the kind
    of answer the question asked for, before the value it missed."""
    yes = REFLEXION.replace("Action 2: Finish[Ivar Brenne]", "Action 2: Finish[yes]")
    assert yes != REFLEXION
    out, runs = _reflexion_out(tmp_path, yes)
    assert _in_short(out, runs["failure"])[0].startswith(
        "- The answer \"yes\" (turn 2) is a yes or no, but the question asks \"Which lighthouse\": it wants a thing "
        "named, not whether something holds.")


QUOTED = """
########################################
BEGIN TRIAL 1
Trial summary: Correct: 1, Incorrect: 0, Halted: 1
#######################################
------------- BEGIN CORRECT AGENTS -------------

Question: Which film did Orla Venn shoot first, "The Tide" or "Saltmarsh"?
Thought 1: I need to search The Tide.
Action 1: Search[The Tide]
Observation 1: Could not find [The Tide]. Similar: ['The Tide (2012 Irish film)', 'Tide (band)']
Thought 2: I can search The Tide (2012 Irish film).
Action 2: Search[The Tide (2012 Irish film)]
Observation 2: The Tide is a 2012 Irish drama shot in 2010 by Orla Venn, two years after Saltmarsh (2008).
Thought 3: Saltmarsh was shot first.
Action 3: Finish[Saltmarsh]
Observation 3: Answer is CORRECT
Correct answer: Saltmarsh

------------- BEGIN INCORRECT AGENTS -----------

------------- BEGIN HALTED AGENTS --------------

Question: Which film did Orla Venn shoot first, "The Tide" or "Saltmarsh"?
Thought 1: I need to search "The Tide".
Action 1: Search["The Tide"]
Observation 1: Could not find ["The Tide"]. Similar: ['The Tide (2012 Irish film)', 'Tide (band)']
Thought 2: I can search "The Tide (2012 Irish film)".
Action 2: Search["The Tide (2012 Irish film)"]
Observation 2: Could not find ["The Tide (2012 Irish film)"]. Similar: ['The Tide (2012 Irish film)']
Correct answer: Saltmarsh

"""


def test_a_qa_success_says_its_failed_trial_sent_the_same_name_in_quote_marks(tmp_path):
    path = tmp_path / "react_reflexion_quoted.txt"
    path.write_text(QUOTED, encoding="utf-8")
    out = tmp_path / "c"
    ok("compile", str(path), "--out", str(out), "--offline", "-q")
    runs = {r["outcome"]: r["step"] for r in json.loads((out / "corpus.json").read_text())["runs"]}
    won, lost = runs["success"], runs["failure"]
    assert _in_short(out, won)[0].startswith(
        f"- Look up Search\\[The Tide (2012 Irish film)\\] (the name its Search error at turn 1 listed) without quote marks and answer from what it returns "
        f"(\"Saltmarsh\"), as this run did: the failed trial of this task gave no answer ([{lost}]({lost}.md)), and that "
        f"look-up never went through there: it sent that name inside quote marks."), _in_short(out, won)


_GREY = """Question: Which city was the band Grey Harbor formed in?
Thought 1: I need to search Grey Harbor.
Action 1: Search[Grey Harbor]
Observation 1: Could not find [Grey Harbor]. Similar: ['Grey Harbor (band)', 'Grays Harbor']
Thought 2: I can search Grey Harbor (band).
Action 2: Search[Grey Harbor (band)]
Observation 2: Grey Harbor is a rock band formed in Tacoma in 2004, later based in Portland.
"""
# the success and one failed trial read the same page; the other failed trial never searched the band
SOME_LOOKED = f"""
########################################
BEGIN TRIAL 1
Trial summary: Correct: 1, Incorrect: 2, Halted: 0
#######################################
------------- BEGIN CORRECT AGENTS -------------

{_GREY}Thought 3: It was formed in Tacoma.
Action 3: Finish[Tacoma]
Observation 3: Answer is CORRECT
Correct answer: Tacoma

------------- BEGIN INCORRECT AGENTS -----------

{_GREY}Thought 3: It is based in Portland.
Action 3: Finish[Portland]
Observation 3: Answer is INCORRECT
Correct answer: Tacoma

Question: Which city was the band Grey Harbor formed in?
Thought 1: I need to search Grays Harbor.
Action 1: Search[Grays Harbor]
Observation 1: Grays Harbor is a bay in Washington, near Aberdeen.
Thought 2: The band is from Aberdeen.
Action 2: Finish[Aberdeen]
Observation 2: Answer is INCORRECT
Correct answer: Tacoma

------------- BEGIN HALTED AGENTS --------------

"""


def test_a_qa_success_names_which_failed_trials_made_its_look_up(tmp_path):
    """Of two failed trials, one made the success's look-up and answered otherwise, one never made it:
    the line names the trial the look-up went through in, rather than tacking "in 1 of them" onto the
    last trial it listed (HotpotQA rater, step-0246)."""
    path = tmp_path / "react_reflexion_some.txt"
    path.write_text(SOME_LOOKED, encoding="utf-8")
    out = tmp_path / "c"
    ok("compile", str(path), "--out", str(out), "--offline", "-q")
    runs = json.loads((out / "corpus.json").read_text())["runs"]
    won = next(r["step"] for r in runs if r["outcome"] == "success")
    same = next(r["step"] for r in runs if r["outcome"] == "failure" and "Portland" in json.dumps(r))
    line = _in_short(out, won)[0]
    assert f"; that look-up went through in 1 of them ([{same}]({same}.md))" in line, line


# --- every importer's runs: each line is true of the two trials it sets against each other -------


def _entry(run, step: str) -> dict:
    comp = compile_offline(run)
    return {"step": step, "outcome": run.outcome.label, "task_id": "same", "task_type": "t",
            **trial_contrast.entry_field(comp)}


def _cut_before_last_change(run):
    """The run as a failed trial that stopped before its last change that went through, or None."""
    writes = [c for c in read_run(run).calls if c.writes and not c.error]
    if not writes:
        return None
    cut = copy.deepcopy(run)
    cut.turns = [t for t in cut.turns if t.turn < writes[-1].n]
    cut.outcome = Outcome(success=False, steps=count_steps(cut.turns), score=None, ended_by=None)
    return cut


def _went_through(run) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for c in read_run(run).calls:
        if c.writes and not c.error:
            out.setdefault(c.name, []).append(c.n)
    return out


# a call a line says a trial made: "made the change cancel_reservation(…)", "made the submit call", "edited X"
_MADE = r"(?:made the change ([^\s(]+)|made the ([^\s(]+) call|(edit)ed [^\s(]+)"


def _made_name(m: re.Match) -> str:
    return m.group(1) or m.group(2) or m.group(3)


def _holds(line: str, mine, theirs) -> None:
    """Each claim the line makes of this run (``mine``) and of the other trial (``theirs``)."""
    own, other = _went_through(mine), _went_through(theirs)
    claims = 0
    for name in re.findall(r"this run's (\S+?)\(", line) + re.findall(r"this run's (\S+) went through", line):
        assert name in own, line
        claims += 1
    m = re.search(r"this run made no (\S+) call that went through", line)
    if m:
        assert m.group(1) not in own, line
        claims += 1
    m = re.search(_MADE + r".*? at its turn (\d+)", line)
    if m:
        assert int(m.group(4)) in other.get(_made_name(m), []), line
        claims += 1
    m = re.search(r"trials? of this task made no (\S+) call that went through", line)
    if m:
        assert m.group(1) not in other, line
        claims += 1
    m = re.match(r"(?:Make (?:the )?([^\s(,]+)|(Edit) [^\s(,]+).*?as this run did at turn (\d+): .* never made it", line)
    if m:  # an instruction: this run made the call; the other trial did not (its calls are this run's up to the cut)
        name = m.group(1) or m.group(2).lower()
        assert int(m.group(3)) in own.get(name, []) and int(m.group(3)) not in other.get(name, []), line
        claims += 1
    m = re.match(r"Make no (\S+) change, as this run had none go through: .* made the change (\S+?)[( ]", line)
    if m:
        assert m.group(1) not in own and m.group(2) in other, line
        claims += 1
    m = re.search(_MADE + r".*? at its turn (\d+).*; this run never made it", line)
    if m:  # this run's calls are the other trial's up to the cut: the same act would have the same turn
        assert int(m.group(4)) not in own.get(_made_name(m), []), line
        claims += 1
    m = re.search(r"after (\S+?)\(.*?\) at its turn (\d+), a look-up this run never made", line)
    if m:  # the other trial's look-up at that turn; this run made no such call at that turn
        calls = {t.turn: t.name for t in theirs.turns if t.type == "function_call"}
        assert calls.get(int(m.group(2))) == m.group(1), line
    m = re.search(r"changed the same files? as this run \(([^)]*)\)", line)
    if m:  # every file named was changed by a call of each run that went through
        for name in m.group(1).split(", "):
            for run in (mine, theirs):
                assert any(name in str(t.arguments) and not t.is_error for t in run.turns
                           if t.type == "function_call"), line
        claims += 1
    if "(the change the task expected)" in line:  # only where the log records the calls the task expected
        assert (mine.task.metadata or {}).get("expected_calls"), line
    assert claims or "made the same" in line or "answered" in line or "gave no answer" in line, line


@pytest.mark.parametrize("run", [r for r in RUNS if _cut_before_last_change(r) is not None], ids=lambda r: r.run_id)
def test_every_importers_trials_get_lines_true_of_both(run):
    won, lost = relabeled(run, True), _cut_before_last_change(run)
    entries = [_entry(won, "step-0000"), _entry(lost, "step-0001")]
    made = trial_contrast.lines(entries)
    assert set(made) == {"step-0000", "step-0001"}
    (w_text, w_turns, _), (f_text, f_turns, _) = made["step-0000"], made["step-0001"]
    assert "[step-0001](step-0001.md)" in w_text and "[step-0000](step-0000.md)" in f_text
    _holds(w_text, won, lost)
    _holds(f_text, lost, won)
    turns = {t.turn for t in won.turns}
    assert set(w_turns) <= turns and set(f_turns) <= {t.turn for t in lost.turns}
    # trials of one outcome only: no line for either
    assert trial_contrast.lines([entries[0], {**entries[0], "step": "step-0002"}]) == {}


# --- the sets of acts each trial made: which act one made and the other did not ------------------

TWO = {"user_id": "lena_vogt_3017", "payment_methods": PROFILE["payment_methods"], "reservations": ["Q4WZ8N", "K2P7RD"]}


def _chat(task: int, trial: int, reward: float, steps: list[dict], actions: list | None = None) -> dict:
    """A tau-bench result record whose agent makes ``steps`` (messages and tool pairs) after the user's ask."""
    opening = [user("Hi, please sort out my two trips."), agent("Sure. Your user id, please?")]
    traj = [{"role": "system", "content": POLICY}, *opening, user("It is lena_vogt_3017."), *steps,
            agent("All done."), user("Thanks. ###STOP###")]
    task_text = {"user_id": "lena_vogt_3017", "outputs": [], "instruction": f"You are lena_vogt_3017 (task {task}).",
                 "actions": actions or []}
    return {"task_id": task, "reward": reward, "trial": trial, "traj": traj,
            "info": {"task": task_text, "source": "user", "reward_info": {"reward": reward, "info": {}, "actions": []}}}


def _cancel(rid: str) -> list[dict]:
    return [agent(f"Cancel {rid}, the whole trip?"), user("Yes."),
            *tool("cancel_reservation", {"reservation_id": rid}, dict(TRIP, reservation_id=rid, status="cancelled"))]


def _lines(tmp_path, records: list[dict]) -> dict[str, list[str]]:
    out = tmp_path / "c"
    ok("compile", str(_write(tmp_path / "results.json", records)), "--out", str(out), "--offline", "-q")
    steps = {r["run_id"]: r["step"] for r in json.loads((out / "corpus.json").read_text())["runs"]}
    return {run_id: [ln for ln in _in_short(out, step) if "](step-" in ln] for run_id, step in steps.items()}


def test_the_act_a_success_made_and_its_failed_trial_did_not_is_the_line_not_another_id_of_the_same_tool(tmp_path):
    """The success cancelled both reservations, the failed trial only K2P7RD: the line names the
    cancel of Q4WZ8N the failed trial never made, not "it sent K2P7RD where this run sent Q4WZ8N"."""
    look = [*tool("get_user_details", {"user_id": "lena_vogt_3017"}, TWO)]
    expected = [{"name": "cancel_reservation", "kwargs": {"reservation_id": rid}} for rid in ("Q4WZ8N", "K2P7RD")]
    made = _lines(tmp_path, [_chat(3, 0, 1.0, look + _cancel("Q4WZ8N") + _cancel("K2P7RD"), expected),
                             _chat(3, 1, 0.0, look + _cancel("K2P7RD"), expected)])
    [won], [lost] = made["task-3-trial-0"], made["task-3-trial-1"]
    assert won.startswith("- Make cancel_reservation(reservation_id Q4WZ8N), `reservation_id` from "
                          "get_user_details's answer (turn 4), as this run did at turn 7 (the change the task expected): "
                          "the failed trial of this task never made it ([step-0001](step-0001.md))."), won
    # its last words reported the cancel it did make (K2P7RD): no "told the user instead" for Q4WZ8N
    assert "K2P7RD" not in won and "told the user instead" not in won
    assert lost.startswith("- The successful trial [step-0000](step-0000.md) of this task made the change "
                           "cancel_reservation(reservation_id Q4WZ8N) at its turn 7, `reservation_id` from "
                           "get_user_details's answer (its turn 4); this run never made it."), lost


def test_a_failure_that_never_made_the_look_up_a_success_took_its_value_from_is_told_so(tmp_path):
    look = [*tool("get_user_details", {"user_id": "lena_vogt_3017"}, TWO)]
    made = _lines(tmp_path, [_chat(4, 0, 1.0, look + _cancel("Q4WZ8N")),
                             _chat(4, 1, 0.0, [agent("I need the reservation id to go on."), user("I don't have it.")])])
    [lost] = made["task-4-trial-1"]
    assert ("made the change cancel_reservation(reservation_id Q4WZ8N) at its turn 7, `reservation_id` from "
            "get_user_details's answer (its turn 4), a look-up this run never made; this run made no calls at all.") in lost


def test_a_failure_that_made_calls_but_not_the_change_is_not_told_it_made_none(tmp_path):
    look = [*tool("get_user_details", {"user_id": "lena_vogt_3017"}, TWO)]
    made = _lines(tmp_path, [_chat(5, 0, 1.0, look + _cancel("Q4WZ8N")),
                             _chat(5, 1, 0.0, look + [agent("Which reservation?"), user("I don't know.")])])
    [lost] = made["task-5-trial-1"]
    assert lost.endswith("; this run never made it."), lost
    assert "no calls at all" not in lost


def test_a_difference_another_success_shares_with_the_failure_does_not_lead(tmp_path):
    """One success handed off, another made no change at all, the failure booked: what parts the
    successes from the failure is the booking, not the hand-off."""
    hand_off = [*tool("transfer_to_human_agents", {"summary": "The user wants both trips sorted out by a person."},
                      "Transfer successful")]
    booking = {"user_id": "lena_vogt_3017", "origin": "DEN", "destination": "BOS", "flight_type": "one_way",
               "cabin": "economy", "flights": [{"flight_number": "HAT311", "date": "2024-06-10"}],
               "payment_methods": [{"payment_id": GIFT, "amount": 90}]}
    booked = [agent("Book HAT311 on 2024-06-10?"), user("Yes."),
              *tool("book_reservation", booking, dict(TRIP, reservation_id="ZZ41QH"))]
    made = _lines(tmp_path, [_chat(6, 0, 1.0, hand_off), _chat(6, 1, 1.0, []), _chat(6, 2, 0.0, booked)])
    [first] = made["task-6-trial-0"]
    assert first.startswith("- Make no book_reservation change, as this run had none go through: the failed trial of this task "
                            "made the change book_reservation(user_id lena_vogt_3017, origin DEN)"), first
    [lost] = made["task-6-trial-2"]
    assert "made no book_reservation call that went through; this run's book_reservation(" in lost


def test_a_failure_that_never_fetched_the_record_a_success_acted_on_is_told_so(tmp_path):
    """Both trials looked the user up; only the success then fetched K2P7RD, and cancelled it."""
    look = [*tool("get_user_details", {"user_id": "lena_vogt_3017"}, TWO)]
    fetch = [*tool("get_reservation_details", {"reservation_id": "K2P7RD"}, dict(TRIP, reservation_id="K2P7RD"))]
    made = _lines(tmp_path, [_chat(7, 0, 1.0, look + fetch + _cancel("K2P7RD")), _chat(7, 1, 0.0, look)])
    [lost] = made["task-7-trial-1"]
    assert re.search(r"made the change cancel_reservation\(reservation_id K2P7RD\) at its turn \d+, .*, after "
                     r"get_reservation_details\(K2P7RD\) at its turn 5, a look-up this run never made; this run never "
                     r"made it\.", lost), lost


def test_a_success_whose_change_met_an_error_is_not_said_to_have_made_none(tmp_path):
    """The success asked for the booking and met an error; the failure booked: the success's line
    says its booking did not go through, never that it made no such call."""
    booking = {"user_id": "lena_vogt_3017", "origin": "DEN", "destination": "BOS", "flight_type": "one_way",
               "cabin": "economy", "flights": [{"flight_number": "HAT311", "date": "2024-06-10"}],
               "payment_methods": [{"payment_id": GIFT, "amount": 90}]}
    asked = [agent("Book HAT311 on 2024-06-10?"), user("Yes.")]
    refused = [*asked, *tool("book_reservation", booking, "Error: flight HAT311 not available on 2024-06-10")]
    booked = [*asked, *tool("book_reservation", booking, dict(TRIP, reservation_id="ZZ41QH"))]
    made = _lines(tmp_path, [_chat(7, 0, 1.0, refused), _chat(7, 1, 0.0, booked)])
    [first] = made["task-7-trial-0"]
    assert first.startswith("- Make no book_reservation change, as this run had none go through: "), first
    assert "made none" not in first


def test_a_failed_trial_alike_in_what_went_through_is_not_said_to_have_made_the_same_calls():
    """Trials are compared on the calls that went through (an error is no decision): a failed trial
    whose changes match this success's is said to have had the same calls go through, not to have
    made the same calls (tau step-0196 also sent three bookings that all failed, then hit the step
    limit)."""
    from wikitrace.corpus.trial_success import success_line

    made = ["did|get_user_details", "did|book_reservation", "set|book_reservation|flights|ab12",
            "count|book_reservation|1"]
    booked = {"changes": [{"tool": "book_reservation", "turn": 5, "values": {}}]}
    won = {"step": "step-0001", "outcome": "success", "patterns": made, "decisive": booked}
    alike = {"step": "step-0002", "outcome": "failure", "patterns": made, "decisive": booked}
    other = {"step": "step-0003", "outcome": "failure", "patterns": ["did|get_user_details"], "decisive": {"changes": []}}
    text, _turns, _firm = success_line(won, [alike, other], [won])
    assert "1 other failed trial ([step-0002](step-0002.md)) had the same calls go through as this run" in text, text
    assert "made the same calls" not in text


REFLECTED = REFLEXION.replace(
    "Question: Which lighthouse keeper wrote the logbook kept at Skarvik?\nThought 1: I should search the Skarvik "
    "lighthouse.",
    "Question: Which lighthouse keeper wrote the logbook kept at Skarvik?You have attempted to answer following "
    "question before and failed. The following reflection(s) give a plan to avoid failing to answer the question in "
    "the same way you did previously. Use them to improve your strategy of correctly answering the given question.\n"
    "Reflections:\n- I answered with the archivist, but the keeper Maren Tolle wrote it. I should search the "
    "lighthouse.\nThought 1: I should search the Skarvik lighthouse.", 1)


def test_a_success_whose_reflection_named_the_answer_says_so_beside_the_look_up(tmp_path):
    """The look-up returned an answer the retry's reflection had already named: the page does not
    make the look-up the step that found it."""
    assert REFLECTED != REFLEXION
    out, runs = _reflexion_out(tmp_path, REFLECTED)
    assert _in_short(out, runs["success"])[0].startswith(
        "- Look up Search\\[Skarvik lighthouse\\] and answer from what it returns (\"Maren Tolle\"), as this run did "
        "(a reflection it was given had named the answer before Search\\[Skarvik lighthouse\\] returned it): ")


def test_a_success_line_quotes_what_a_failed_trial_told_the_user_instead_of_the_change(tmp_path):
    """The failed trial refused the cancel the task expected: the success's line says so in its
    words, so a reader sees the refusal the successful trial did not make."""
    look = [*tool("get_user_details", {"user_id": "lena_vogt_3017"}, TWO)]
    refused = "I'm sorry, basic economy reservations cannot be cancelled."
    expected = [{"name": "cancel_reservation", "kwargs": {"reservation_id": "Q4WZ8N"}}]
    made = _lines(tmp_path, [_chat(6, 0, 1.0, look + _cancel("Q4WZ8N"), expected),
                             _chat(6, 1, 0.0, look + [agent(refused), user("Oh well.")], expected)])
    [won] = made["task-6-trial-0"]
    assert f"[step-0001](step-0001.md) told the user instead (its turn 5): \"{refused}\"." in won, won


BASIC = dict(TRIP, cabin="basic_economy")


def _refusal_trials(success_first: list[dict] = (), failed_after: list[dict] = ()) -> tuple[list[dict], str]:
    """Task 7: the failed trial read the reservation (cabin basic_economy) and told the user it could
    not change the passenger for that; the successful trial read the same record and made the change
    (after ``success_first``; the failed trial goes on with ``failed_after``)."""
    read = [agent("Which reservation?"), user("Q4WZ8N, the passenger name on it."),
            *tool("get_reservation_details", {"reservation_id": "Q4WZ8N"}, BASIC)]
    new = {"reservation_id": "Q4WZ8N", "passengers": [{"first_name": "Mira", "last_name": "Vogt", "dob": "1990-01-02"}]}
    expected = [{"name": "update_reservation_passengers", "kwargs": new}]
    refusal = "Unfortunately, with basic economy reservations, changes to passenger names are not allowed."
    change = [agent("Change the passenger to Mira Vogt?"), user("Yes."),
              *tool("update_reservation_passengers", new, dict(BASIC, passengers=new["passengers"]))]
    return [_chat(7, 0, 1.0, read + list(success_first) + change, expected),
            _chat(7, 1, 0.0, read + [agent(refusal), user("That is a pity.")] + list(failed_after), expected)], refusal


def test_a_refusal_that_named_a_record_value_is_answered_by_the_success_that_made_the_change_on_that_record(tmp_path):
    """The failed trial's reason ("basic economy") is a value of the record both trials read: the
    success's page and the failure's page say it did not stop the change, and the lesson drawn from
    the success tells a reader not to refuse for it."""
    records, refusal = _refusal_trials([])
    made = _lines(tmp_path, records)
    [won], [lost] = made["task-7-trial-0"], made["task-7-trial-1"]
    assert (f"[step-0001](step-0001.md) told the user it could not (its turn 7): \"{refusal}\", naming `cabin` "
            "\"basic_economy\", which get_reservation_details(Q4WZ8N) showed it (its turn 6); this run looked up "
            "the same record and the change went through, so that value did not stop it.") in won, won
    assert ("this run never made it, telling the user it could not (its turn 7) and naming `cabin` \"basic_economy\" "
            "of the same record, which the successful trial had looked up too.") in lost, lost
    lesson = next(p.read_text(encoding="utf-8") for p in (tmp_path / "c" / "insight").glob("insight-*.md")
                  if "key: \"procedure|update_reservation_passengers\"" in p.read_text(encoding="utf-8"))
    todo = lesson.split("## What to do\n", 1)[1].split("\n## ", 1)[0]
    assert todo.rstrip().endswith("Do not refuse update_reservation_passengers for \\`cabin\\` \"basic_economy\": a failed trial "
                         "of the same task refused it for that value, and this run made it on the same record."), todo
    assert (f"[step-0001](../compilation/step-0001.md) told the user it could not make it (its turn 7): \"{refusal}\", "
            "naming `cabin` \"basic_economy\", which get_reservation_details(Q4WZ8N) showed it (its turn 6); this run "
            "looked up the same record and the change went through.") in lesson, lesson
    # the failed trial's own lesson says what not to refuse on, in What to do
    data = json.loads((tmp_path / "c" / "corpus.json").read_text())
    refused = next(i for i in data["insights"] if "step-0001" in [s["step"] for s in i["sources"]])
    page = (tmp_path / "c" / "insight" / f"{refused['id']}.md").read_text(encoding="utf-8")
    todo = page.split("## What to do\n", 1)[1].split("\n## ", 1)[0]
    assert "Do not refuse update_reservation_passengers for \\`cabin\\` \"basic_economy\"" in todo, todo
    assert (f"step-0001 told the user it could not (its turn 7): \"{refusal}\"; step-0000 looked up the same record "
            "(get_reservation_details(Q4WZ8N)) and made that change.") in page, page


def test_a_refusal_is_not_answered_by_a_success_that_changed_the_record_first(tmp_path):
    """Both trials added a bag to the reservation, the success before its passenger change: the
    record it changed the passenger on was no longer the one the failed trial's refusal read, so no
    page says the value it named did not stop the change."""
    bags = {"reservation_id": "Q4WZ8N", "total_baggages": 1, "nonfree_baggages": 0, "payment_id": GIFT}
    add = [agent("Add one bag?"), user("Yes."), *tool("update_reservation_baggages", bags, dict(BASIC, total_baggages=1))]
    records, refusal = _refusal_trials(add, add)
    made = _lines(tmp_path, records)
    text = "\n".join(made["task-7-trial-0"] + made["task-7-trial-1"])
    assert "this run never made it." in text and refusal  # the same lines, without the answer
    assert "did not stop it" not in text and "naming `cabin`" not in text, text


def test_a_hand_off_the_task_did_not_expect_is_not_what_set_a_success_apart(tmp_path):
    """Task 8 expected no change: the successful trial refused and handed off (a hand-off the task
    did not ask for), the failed trial cancelled. The lines set them apart by the cancel, never by
    telling a reader to make the hand-off."""
    look = [*tool("get_user_details", {"user_id": "lena_vogt_3017"}, TWO)]
    handoff = [agent("I cannot cancel this one; let me hand you over."),
               *tool("transfer_to_human_agents", {"summary": "Wants a cancel the rules do not allow."},
                     "Transfer successful")]
    made = _lines(tmp_path, [_chat(8, 0, 1.0, look + handoff, []), _chat(8, 1, 0.0, look + _cancel("Q4WZ8N"), [])])
    [won], [lost] = made["task-8-trial-0"], made["task-8-trial-1"]
    assert "transfer_to_human_agents" not in won + lost, (won, lost)
    assert won.startswith("- Make no cancel_reservation change, as this run had none go through: the failed trial of "
                          "this task made the change cancel_reservation(reservation_id Q4WZ8N)"), won
    data = json.loads((tmp_path / "c" / "corpus.json").read_text())
    success = next(r for r in data["runs"] if r["outcome"] == "success")
    assert success["decisive"]["unasked"] == ["transfer_to_human_agents"]
    assert not any("transfer_to_human_agents" in d["text"] for i in data["insights"]
                   for d in (i.get("same_task") or {}).get("differences", []))


def test_a_success_that_only_handed_off_is_not_said_to_have_answered_after_a_look_up(tmp_path):
    """Its only call was a hand-off the task did not expect: it is read as a run that made no call
    (it asked the user and changed nothing), so it teaches no lesson (it passed because its task
    needed no change), not one "after 1 look-up call"; a run that also looked something up counts
    that look-up alone."""
    handoff = [agent("I cannot do this; let me hand you over."),
               *tool("transfer_to_human_agents", {"summary": "Wants a cancel the rules do not allow."},
                     "Transfer successful")]
    looked = [*tool("get_user_details", {"user_id": "lena_vogt_3017"}, TWO)]
    _lines(tmp_path, [_chat(9, 0, 1.0, handoff, []), _chat(10, 0, 1.0, looked + handoff, [])])
    data = json.loads((tmp_path / "c" / "corpus.json").read_text())
    lessons = {int(r["task_id"]): r["lessons"] for r in data["runs"]}
    assert lessons[9] == [], lessons[9]
    detail = lessons[10][0]["detail"]
    assert detail.startswith("answered after 1 look-up call; handed off with transfer_to_human_agents at turn "), detail
    assert "which the task did not expect" in detail


def test_a_success_whose_failed_trials_made_the_same_look_up_and_said_more_is_told_to_give_the_answer_alone(tmp_path):
    """One failed trial read the same page as the success and answered with more words than the
    answer; another searched elsewhere. What parts the success from the first is how much it gave,
    not the look-up: the line says so, rather than that every failed trial went another way
    (HotpotQA rater, step-0363)."""
    wordy = REFLEXION.replace("Trial summary: Correct: 1, Incorrect: 1", "Trial summary: Correct: 1, Incorrect: 2").replace(
        "------------- BEGIN INCORRECT AGENTS -----------\n", """------------- BEGIN INCORRECT AGENTS -----------

Question: Which lighthouse keeper wrote the logbook kept at Skarvik?
Thought 1: I should search the Skarvik lighthouse.
Action 1: Search[Skarvik lighthouse]
Observation 1: Skarvik lighthouse was kept from 1890 to 1931 by Maren Tolle, whose logbook survives in the town archive.
Thought 2: The keeper is Maren Tolle, whose logbook survives.
Action 2: Finish[Maren Tolle, whose logbook survives]
Observation 2: Answer is INCORRECT
Correct answer: Maren Tolle
""")
    out, runs = _reflexion_out(tmp_path, wordy)
    won = runs["success"]
    lead = _in_short(out, won)[0]
    assert lead.startswith("- Give the answer alone, as Search\\[Skarvik lighthouse\\] returned it (\"Maren Tolle\"), "
                           "as this run did: "), lead
    assert "Maren Tolle, whose logbook survives" in lead and "Ivar Brenne" in lead


BOTH = """
########################################
BEGIN TRIAL 1
Trial summary: Correct: 1, Incorrect: 1
#######################################
------------- BEGIN CORRECT AGENTS -------------

Question: Are both Vessla and Trumbo a genus of mosses?
Thought 1: I need to search Vessla and Trumbo.
Action 1: Search[Vessla]
Observation 1: Vessla is a genus of mosses found in northern bogs.
Thought 2: Now Trumbo.
Action 2: Search[Trumbo]
Observation 2: Trumbo is a genus of lichens.
Thought 3: Vessla is a moss, Trumbo a lichen. So not both.
Action 3: Finish[no]
Observation 3: Answer is CORRECT
Correct answer: no

------------- BEGIN INCORRECT AGENTS -----------

Question: Are both Vessla and Trumbo a genus of mosses?
Thought 1: I need to search Vessla.
Action 1: Search[Vessla]
Observation 1: Vessla is a genus of mosses found in northern bogs.
Thought 2: Now Trumbo.
Action 2: Search[Trumbo]
Observation 2: Trumbo is a genus of lichens.
Thought 3: Trumbo is not a moss, Vessla is.
Action 3: Finish[no, yes]
Observation 3: Answer is INCORRECT
Correct answer: no

"""


def test_a_verdict_whose_failed_trial_gave_one_for_each_part_is_told_to_give_only_the_answer(tmp_path):
    """The success answered "no" to a both-question; its failed trial read the same pages and
    answered "no, yes", a verdict for each part. No look-up returned either answer, so there is no
    look-up to copy: what parts them is the words beside the answer, and the line says so."""
    out, runs = _reflexion_out(tmp_path, BOTH)
    lead = _in_short(out, runs["success"])[0]
    assert lead.startswith("- Give only the answer asked for (\"no\"), nothing beside it, as this run did: the failed "
                           "trial of this task answered \"no, yes\""), lead
    # a failed trial that gave another verdict altogether is no case of words beside the answer
    (tmp_path / "other").mkdir()
    out, runs = _reflexion_out(tmp_path / "other", BOTH.replace("Finish[no, yes]", "Finish[yes]"))
    assert "nothing beside it" not in _in_short(out, runs["success"])[0]


def test_a_yes_or_no_is_shown_with_the_agents_words_that_chose_it(tmp_path):
    """No look-up returns a yes or a no: the answer rests on the agent's own reading, which its
    page's In short quotes beside the verdict, right or wrong (HotpotQA rater: a success page said
    nothing of what made it right)."""
    head, _incorrect = BOTH.split("------------- BEGIN INCORRECT AGENTS -----------", 1)
    alone = head.replace("Incorrect: 1", "Incorrect: 0") + "------------- BEGIN INCORRECT AGENTS -----------\n\n"
    out, runs = _reflexion_out(tmp_path, alone)  # no failed trial: the answer's own fact leads
    won = "\n".join(_in_short(out, runs["success"]))
    assert ("The answer \"no\" (turn 3) was judged right. The agent's words with it: \"Vessla is a moss, Trumbo a "
            "lichen. So not both.\"") in won, won
    (tmp_path / "both").mkdir()
    out, runs = _reflexion_out(tmp_path / "both", BOTH.replace("Finish[no, yes]", "Finish[yes]"))
    lost = "\n".join(_in_short(out, runs["failure"]))
    assert "judged wrong" in lost and "The agent's words with it: \"Trumbo is not a moss, Vessla is.\"" in lost, lost


YEARS = """
########################################
BEGIN TRIAL 1
Trial summary: Correct: 1, Incorrect: 0
#######################################
------------- BEGIN CORRECT AGENTS -------------

Question: Vera Lisk sang for a band that disbanded in what year?
Thought 1: I need to search Vera Lisk.
Action 1: Search[Vera Lisk]
Observation 1: Vera Lisk is a singer, crowned Miss Northvale 2004, and the voice of Saltgrass.
Thought 2: Now the band Saltgrass.
Action 2: Search[Saltgrass]
Observation 2: Saltgrass was a folk band active from 1996 to 2004, when it disbanded.
Thought 3: Saltgrass disbanded in 2004.
Action 3: Finish[2004]
Observation 3: Answer is CORRECT
Correct answer: 2004

------------- BEGIN INCORRECT AGENTS -----------

"""


def test_a_right_answer_one_look_up_held_is_quoted_in_its_words_and_one_many_held_is_not(tmp_path):
    """A success's In short quotes the words around its answer from the look-up that held it, the
    sentence that settled the question; a year two pages hold is not quoted from the first of them
    (a pageant title is no source of when a band disbanded)."""
    out, runs = _reflexion_out(tmp_path, YEARS.replace("crowned Miss Northvale 2004", "crowned Miss Northvale"))
    lead = _in_short(out, runs["success"])[0]
    assert "appears in what the look-up at turn 2 returned (\"Saltgrass was a folk band active from 1996 to 2004, " \
           "when it disbanded.\")" in lead, lead
    (tmp_path / "two").mkdir()
    out, runs = _reflexion_out(tmp_path / "two", YEARS)
    lead = _in_short(out, runs["success"])[0]
    assert "returned." in lead and "(\"" not in lead, lead


def test_a_page_of_a_way_that_worked_shows_the_success_beside_its_failed_trial(tmp_path):
    """The page successful runs taught (how they settled the task) shows, for a success with a failed
    trial of its task, the line its own page leads with, what it did and what the failed trial did
    instead, in place of one more "answered X" case (HotpotQA raters: show a worked pair)."""
    out, runs = _reflexion_out(tmp_path, REFLEXION)
    data = json.loads((out / "corpus.json").read_text())
    way = next(e for e in data["insights"] if e["key"].startswith("procedure|Finish"))
    (case,) = [c for c in way["cases"] if c["step"] == runs["success"]]
    lead = _in_short(out, runs["success"])[0]  # "- Look up Search\[Skarvik lighthouse\] and answer ..."
    assert case["text"].startswith("Look up Search[Skarvik lighthouse] and answer from what it returns"), case
    assert lead.startswith("- Look up Search\\[Skarvik lighthouse\\] and answer from what it returns"), lead
    assert runs["failure"] in case["text"] and "Ivar Brenne" in case["text"] and case.get("outcome") == "success"
