"""A failure's mistake that other trials of its task made too, said on its page.

What a reader relies on: when the trials of a task keep making one mistake (the same wrong
answer, the same call form failing, the same argument sent otherwise), each of their failure
pages says so once, with a count the reader can recount from the links, and whether any trial
succeeded; a task whose trials went wrong in different ways gets no such line; a mistake a
successful trial made too is not called one; and a retry that was handed a reflection naming
the expected answer, and let it go, is told so with the reflection's words.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fixture_runs import IMPORTERS, RUNS, relabeled
from test_add import ok, same_corpus
from test_trial_contrast import CARD, GIFT, _in_short, _trial, _write

from wikitrace.build import BuildOptions, build
from wikitrace.compilers.offline import compile_offline
from wikitrace.compilers.trial_record import answer_norm
from wikitrace.corpus.trial_recur import recurring
from wikitrace.runs import load
from wikitrace.runs.model import Run

RETRIES = IMPORTERS / "react_reflexion" / "react_reflexion_retries.txt"
_LINK = re.compile(r"\[(step-\d+)\]\(step-\d+\.md\)")


def _build(tmp_path: Path, *inputs: Path) -> tuple[Path, dict[str, dict]]:
    out = tmp_path / "c"
    ok("compile", *map(str, inputs), "--out", str(out), "--offline", "-q")
    runs = json.loads((out / "corpus.json").read_text())["runs"]
    return out, {r["run_id"]: r for r in runs}


def _recur(lines: list[str]) -> list[str]:
    return [ln for ln in lines if "(this run and [" in ln]


def test_trials_that_gave_the_same_wrong_answer_say_so_counted_and_linked(tmp_path):
    out, runs = _build(tmp_path, RETRIES)
    steps = {t: runs[f"react_reflexion_retries-q001-t{t}"]["step"] for t in (1, 2, 3)}
    for t, step in steps.items():
        [line] = _recur(_in_short(out, step))
        assert line.startswith("- All 3 trials of this task answered \"Tom Arlen\" (this run and "), line
        assert sorted(_LINK.findall(line)) == sorted(s for s in steps.values() if s != step)
        # each trial's look-up had returned the expected "Ida Fenn": the advice is that fact's, which all three share
        # trial 1 was handed no reflection; the retries were, and still gave it: after that clause the
        # advice is a sentence of its own, so it is not read as the reflections' words
        advice = (". Reread" if t > 1 else ": reread") + " what the look-ups returned for the thing asked before answering."
        assert "none succeeded" in line and advice in line, line
        assert ("and this run opened with" in line) == (t > 1), line
        assert ("#turn-0)" in line) == (t > 1), line  # the reflections' turn is cited only where they are named
    assert "opened with 2 reflections on earlier failed trials" in _recur(_in_short(out, steps[3]))[0]


def test_trials_that_went_wrong_in_different_ways_get_no_such_line(tmp_path):
    out, runs = _build(tmp_path, RETRIES)
    for q in ("q002", "q003"):  # 1908 then 1921; Tas then Marlow
        for t in (1, 2):
            lines = _in_short(out, runs[f"react_reflexion_retries-{q}-t{t}"]["step"])
            assert not _recur(lines) and not any("trials of this task" in ln for ln in lines), lines


def test_a_failure_beside_a_success_counts_the_failed_trials_that_shared_its_answer(tmp_path):
    out, runs = _build(tmp_path, RETRIES)
    won = runs["react_reflexion_retries-q004-t3"]["step"]
    for t, other in ((1, 2), (2, 1)):
        [line] = _recur(_in_short(out, runs[f"react_reflexion_retries-q004-t{t}"]["step"]))
        head, tail = line.split(" Both failed trials of this task answered \"Vesk United\" (this run and ")
        assert f"The successful trial [{won}]" in head and "answered \"Orla FC\"" in head
        assert _LINK.findall(tail) == [runs[f"react_reflexion_retries-q004-t{other}"]["step"]]
        assert "none succeeded" not in line
        # no checked fact says why; the page each trial saw "Vesk United" on never says "2015", which the question asks about
        assert ("one of the 2 look-ups that first returned it to these trials (this run's: the Search for \"Pia Stam\" at turn 1) "
                "mentions \"2015\", which the question names") in tail, tail  # "none" or, after a reflection, "None"


def test_a_call_form_every_trial_failed_with_is_counted_across_them(tmp_path):
    out, runs = _build(tmp_path, RETRIES)
    one, two = (runs[f"react_reflexion_retries-q005-t{t}"]["step"] for t in (1, 2))
    [line] = _recur(_in_short(out, two))
    assert line.startswith("- In both trials of this task, every Search error each trial never got past came from "
                           "an argument that packed several calls into one (this run and "), line
    assert _LINK.findall(line) == [one]
    assert "end one Search call per query" in line  # "send", or "Send" opening its own sentence


def test_tau_trials_that_sent_the_same_wrong_argument_say_so_and_trials_that_differ_do_not(tmp_path):
    same = [_trial(21, k, CARD, 0.0) for k in range(3)]  # each pays with the card the user did not ask for
    mixed = [_trial(22, 0, CARD, 0.0), _trial(22, 1, GIFT, 0.0)]  # one sent the card, one the asked-for gift card
    out, runs = _build(tmp_path, _write(tmp_path / "results.json", same + mixed))
    by_task: dict[str, list[dict]] = {}
    for r in runs.values():
        by_task.setdefault(str(r["task_id"]), []).append(r)
    for r in by_task["21"]:
        [line] = _recur(_in_short(out, r["step"]))
        assert line.startswith("- All 3 trials of this task sent `payment_id` in update_reservation_flights otherwise "
                               "than the task expected (this run and "), line
        assert len(_LINK.findall(line)) == 2 and "check `payment_id` against what the user asked for and the rules on the record it names" in line  # an id names a record
    for r in by_task["22"]:
        assert not _recur(_in_short(out, r["step"]))


def _entry(step: str, outcome: str, facts: list[dict], answer: str | None = None) -> dict:
    decisive = {"answer": {"text": answer, "turn": 3}} if answer else {}
    return {"step": step, "outcome": outcome, "facts": facts, "decisive": decisive}


def test_answers_that_held_the_expected_words_with_others_or_part_of_them_are_told_to_fix_their_form():
    """Each trial's look-up held the expected span; one answer added words to it, another gave a
    part: what they share is the answer's form, not a misreading, so "reread" is not the advice."""
    seen = {"kind": "answer-seen"}
    trials = [_entry("step-0004", "failure", [{"kind": "answer-extra"}, seen], "from the port of Baltimore to Sandy Hook, Maryland"),
              _entry("step-0054", "failure", [{"kind": "answer-partial"}, seen], "Sandy Hook, Maryland")]
    said, _turns = recurring(trials[0], trials)
    assert said.endswith(": give the words the question asks for exactly as the look-up wrote them, none added and "
                         "none dropped, before answering."), said
    unseen = [_entry(t["step"], "failure", t["facts"][:1], t["decisive"]["answer"]["text"]) for t in trials]
    said, _turns = recurring(unseen[0], unseen)  # no look-up had returned the span: nothing to copy it from
    assert said.endswith(": give just the words the question asks for, none added and none dropped, before "
                         "answering."), said
    # every answer added words the look-up wrote around the span: what to leave out is the advice
    extra = [_entry("step-0004", "failure", [{"kind": "answer-extra"}, seen], "Albany, New York"),
             _entry("step-0054", "failure", [{"kind": "answer-extra"}, seen], "Albany, New York")]
    said, _turns = recurring(extra[0], extra)
    assert said.endswith(": give only the words the question asks for, leaving out the words the look-up wrote around "
                         "them, before answering."), said
    misread = [_entry("step-0004", "failure", [seen], "Sandy Hook, Maryland"),
               _entry("step-0054", "failure", [{"kind": "answer-partial"}, seen], "Sandy Hook, Maryland")]
    said, _turns = recurring(misread[0], misread)  # one answer's words were all there: the shared fact leads
    assert said.endswith(": reread what the look-ups returned for the thing asked before answering."), said


def test_a_mistake_a_successful_trial_made_too_is_not_called_one():
    handoff = [{"kind": "unexpected-change", "about": ["transfer_to_human_agents"]}]
    trials = [_entry("step-0001", "failure", handoff), _entry("step-0051", "failure", handoff),
              _entry("step-0101", "success", handoff)]
    assert recurring(trials[0], trials) is None
    alone = trials[:2]  # without the success it is a mistake both failed trials share
    said, _turns = recurring(alone[0], alone)
    assert "made a `transfer_to_human_agents` change the task did not expect" in said


def test_answers_are_compared_as_trials_compare_them_and_a_lone_answer_is_no_pattern():
    trials = [_entry("step-0002", "failure", [], "The Lune"), _entry("step-0052", "failure", [], "lune"),
              _entry("step-0102", "failure", [], "Tas")]
    said, turns = recurring(trials[0], trials)
    assert said.startswith("2 of the 3 trials of this task answered \"The Lune\"") and turns == [3]
    assert "not [step-0102](step-0102.md)" in said
    assert recurring(trials[2], trials) is None


def test_answers_that_differ_only_by_words_added_are_one_answer_and_the_line_shows_the_other_form():
    trials = [_entry("step-0003", "failure", [], "Hemmel Days Festival"),
              _entry("step-0053", "failure", [], "Hemmel Days Festival in Sun Valley, Idaho"),
              _entry("step-0103", "failure", [], "Sir Ada Corr"), _entry("step-0153", "failure", [], "Ada Corr")]
    said, _turns = recurring(trials[0], trials)
    assert said.startswith("2 of the 4 trials of this task answered \"Hemmel Days Festival\" or a form of it with words "
                           "added or dropped only at its ends (\"Hemmel Days Festival in Sun Valley, Idaho\")"), said
    said, _turns = recurring(trials[3], trials)  # a title before the name: the same answer
    assert said.startswith("2 of the 4 trials of this task answered \"Ada Corr\" or a form of it"), said
    # a bare "no" is no name: it is not the same answer as "no change"
    yes_no = [_entry("step-0004", "failure", [], "no"), _entry("step-0054", "failure", [], "no change")]
    assert recurring(yes_no[0], yes_no) is None


def _found(entry: dict, turn: int, query: str, unmet: list[str]) -> dict:
    entry["decisive"]["answer"].update(found={"tool": "Search", "turn": turn, "query": query}, unmet=unmet)
    return entry


def test_a_shared_answer_names_the_question_s_name_no_page_it_was_seen_in_gave():
    trials = [_found(_entry("step-0005", "failure", [], "Ines Ward"), 2, "Night of the Heron", ["Davy"]),
              _found(_entry("step-0055", "failure", [], "Ines Ward"), 3, "Night of the Heron (film)", ["Davy", "2014"]),
              _entry("step-0105", "failure", [], "Tom Kerr")]
    said, turns = recurring(trials[0], trials)
    assert said.endswith(": none of the 2 look-ups that first returned it to these trials (this run's: the Search for \"Night of "
                         "the Heron\" at turn 2) mentions \"Davy\", which the question names; before answering, find a "
                         "page that ties the answer to \"Davy\" as well."), said
    assert turns == [2, 3]
    trials[1]["decisive"]["answer"]["unmet"] = ["2014"]  # the other trial's page named Davy: no name is unmet by both
    said, _turns = recurring(trials[0], trials)
    assert "Davy" not in said and "fits every part of the task" in said


def test_the_question_s_names_a_page_never_held_skip_its_first_word_titles_and_the_answer():
    from wikitrace.compilers.qa_reasons import unmet_names

    question = "Which contest in California honours the novelist Emperor Ned Vail's son? Name the 1954 winner."
    page = "The Vail Days Festival is held in Sun Valley, Idaho. Ned Vail founded it."
    # "Which" and "Name" open sentences; "Emperor Ned Vail" is held without its first word; the possessive goes
    assert unmet_names(question, page, "Vail Days Festival") == ["California", "1954"]
    assert unmet_names(question, page + " California, 1954.", "x") == []


def test_a_name_written_around_a_nickname_in_quote_marks_is_held():
    """HotpotQA step-0126's page began 'Gerald Allen "Jerry" Roush': the question's "Jerry Roush" is
    there, and a page saying it was not was counted false by a rater."""
    from wikitrace.compilers.qa_reasons import unmet_names

    question = "Which band had the lead vocalist Jerry Roush?"
    assert unmet_names(question, 'Gerald Allen "Jerry" Roush is an American musician.', "x") == []
    assert unmet_names(question, "Gerald Allen \u201cJerry\u201d Roush is an American musician.", "x") == []
    assert unmet_names(question, "Gerald Allen Roush is an American musician.", "x") == ["Jerry Roush"]



def test_a_name_held_with_a_middle_name_or_by_a_page_read_before_the_answers_is_not_unmet(tmp_path):
    """Round 17 (HotpotQA): step-0370 was told to "find a page that ties the answer to 'Kent Baer'",
    where its first look-up's page ("Kent Lex Baer ... defensive coordinator at the University of
    Montana") led, by the run's own searches, to the page of the stadium it answered."""
    from wikitrace.compilers.qa_reasons import unmet_names

    question = "What stadium does the team who has Kent Baer as the defensive coordinator play its home games?"
    assert unmet_names(question, "Kent Lex Baer (born 1951) is a coach.", "x") == []
    assert unmet_names(question, "Kent is a county. Baer is a name.", "x") == ["Kent Baer"]
    printout = tmp_path / "react_reflexion_chain.txt"
    printout.write_text("".join(f"""########################################
BEGIN TRIAL {n}
Trial summary: Correct: 0, Incorrect: 1, Halted: 0
#######################################
------------- BEGIN CORRECT AGENTS -------------

------------- BEGIN INCORRECT AGENTS -----------

Question: {question}
Thought 1: I need to search Kent Baer.
Action 1: Search[Kent Baer]
Observation 1: Kent Lex Baer (born May 2, 1951) is the defensive coordinator at the University of Montana.
Thought 2: I need to search the University of Montana.
Action 2: Search[University of Montana]
Observation 2: The University of Montana plays its home games at Grizzly Field.
Thought 3: The answer is Grizzly Field (trial {n}).
Action 3: Finish[Grizzly Field]
Observation 3: Answer is INCORRECT
Correct answer: Boyd Stadium

------------- BEGIN HALTED AGENTS --------------

""" for n in (1, 2)), encoding="utf-8")
    out = tmp_path / "out"
    build(BuildOptions(inputs=[printout], out=out, offline=True, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    assert all("unmet" not in (r["decisive"].get("answer") or {}) for r in data["runs"]), data["runs"]
    page = (out / "compilation" / f"{data['runs'][0]['step']}.md").read_text()
    assert "find a page that ties the answer" not in page and "find a look-up whose text shows it fits" in page


def test_every_such_line_over_the_importer_fixtures_recounts(tmp_path):
    """Built from every importer fixture at once: each line's counts equal the trials it links
    (this run among them) and the task's failed trials in corpus.json; each linked trial gave
    the answer the line names; the line is only on tasks with two failed trials or more."""
    out = tmp_path / "all"
    ok("compile", str(IMPORTERS), "--out", str(out), "--offline", "-q")
    runs = json.loads((out / "corpus.json").read_text())["runs"]
    by_step = {r["step"]: r for r in runs}
    seen = unmets = nevers = 0
    for r in runs:
        for line in _recur(_in_short(out, r["step"])):
            seen += 1
            group = re.search(r"\(this run and ((?:\[step-\d+\]\(step-\d+\.md\)|[^()])*)\)", line).group(1)
            made, _, others = group.partition("; not ")
            holders = [r["step"]] + _LINK.findall(made)
            task = [x for x in runs if x["task_id"] == r["task_id"] and x.get("task_type") == r.get("task_type")]
            failed = [x for x in task if x["outcome"] == "failure"]
            assert len(failed) >= 2 and r["outcome"] == "failure", line
            assert sorted(holders + _LINK.findall(others)) == sorted(x["step"] for x in failed), line
            m = re.search(r"(?:All|all) (\d+)|(\d+) of the (\d+)|(?:In b|B|b)oth ", line)
            k = len(holders)
            if m.group(1):
                assert int(m.group(1)) == k == len(failed), line
            elif m.group(2):
                assert (int(m.group(2)), int(m.group(3))) == (k, len(failed)), line
            else:
                assert k == len(failed) == 2, line
            said = re.search(r"trials of this task answered \"([^\"]+)\"", line)
            if said:
                for s in holders:  # as trials compare answers: case, punctuation and articles aside, words added
                    mine, named = answer_norm(by_step[s]["decisive"]["answer"]["text"]), answer_norm(said.group(1))
                    assert f" {named} " in f" {mine} " or f" {mine} " in f" {named} ", line
                    if mine != named:
                        assert "or a form of it with words added or dropped only at its ends" in line, line
                for x in failed:  # a trial left out gave no such form: neither answer whole inside the other
                    if x["step"] not in holders and (x["decisive"].get("answer") or {}).get("text"):
                        mine, named = answer_norm(x["decisive"]["answer"]["text"]), answer_norm(said.group(1))
                        assert f" {named} " not in f" {mine} " and f" {mine} " not in f" {named} ", line
            unmet = re.search(r"\(this run's: the (\S+) for \"(.+?)\" at turn (\d+)\) mentions (.+), which the question "
                              r"names", line) or re.search(r"first returned it to this run \(the (\S+) for \"(.+?)\" at turn (\d+)\) never "
                                                          r"mentions (.+), which the question names", line)
            if unmet:  # each name is the question's, and the look-up named (this run's) never held it
                unmets += 1
                run = next(x for x in RUNS if x.run_id == r["run_id"])
                page = next(t for t in run.turns if t.turn == int(unmet.group(3)))
                assert page.name == unmet.group(1) and " ".join(str(page.arguments).split()).startswith(unmet.group(2))
                for name in re.findall(r"\"([^\"]+)\"", unmet.group(4)):
                    assert name in run.task.instruction and name.casefold() not in (page.result or "").casefold(), line
            never = re.search(r"No look-up that went through in the (\d+) trials of this task returned the expected "
                              r"answer as written(?:, though the list of near names an error gave held it in (\d+) of "
                              r"them \((.+?)\): send a name such a list offers when it fits the question)?\.", line)
            if never:  # every trial's log: no call that went through holds the expected answer, in any form
                nevers += 1
                assert int(never.group(1)) == len(task), line
                by_step = {}
                for x in task:
                    trial = next(t for t in RUNS if t.run_id == x["run_id"])
                    by_step[x["step"]] = trial
                    gold = trial.task.metadata["gold_answer"].casefold()
                    assert not any(t.type == "function_call" and not t.is_error and gold in (t.result or "").casefold()
                                   for t in trial.turns), line
                if never.group(2):  # each trial named: its error at that turn listed the expected answer
                    named = re.findall(r"\[(step-\d+)\]\(step-\d+\.md\) at its turn (\d+)", never.group(3))
                    assert len(named) == int(never.group(2)), line
                    for st, turn in named:
                        err = next(t for t in by_step[st].turns if t.turn == int(turn))
                        gold = by_step[st].task.metadata["gold_answer"].casefold()
                        assert err.is_error and gold in (err.result or "").casefold(), line
    assert seen >= 7  # the retries fixture's trials are read: the check is not empty
    assert unmets >= 2  # and the question's names a page never gave are checked somewhere


def test_a_reflection_naming_the_expected_answer_is_told_where_the_run_let_it_go():
    """Over every importer fixture, labelled either way: the sentence is on a failed run only,
    its quote is a sentence of a reflection the run was given, that sentence names the expected
    answer, the question does not, and the run did not give it."""
    seen = 0
    for run in RUNS:
        for success in (True, False):
            labelled = relabeled(run, success)
            for fact in compile_offline(labelled).in_short:
                if "already names the expected answer" not in fact.text:
                    continue
                seen += 1
                assert not success and run.source.get("format") == "react-text", run.run_id
                gold = run.task.metadata["gold_answer"]
                m = re.search(r"expected answer \"([^\"]+)\" \(\"(.+?)\"\)", fact.text)
                assert m.group(1) == gold and gold in m.group(2), fact.text
                assert any(m.group(2).strip("…") in " ".join(x.split()) for x in run.task.metadata["reflections"])
                assert gold.casefold() not in run.task.instruction.casefold()
                answered = re.search(r"the run answered \"([^\"]+)\"", fact.text)
                assert answered is None or answered.group(1) != gold
    assert seen >= 1


def test_adding_a_trial_that_repeats_a_mistake_resets_its_siblings_as_compiling_all_does(tmp_path):
    """Two trials that sent the same wrong argument get the line; a third that does too, added
    later, changes both earlier pages to count three, byte for byte as one compile of all three
    writes them; forgetting it brings the two pages back."""
    a = _write(tmp_path / "a.json", [_trial(31, 0, CARD, 0.0), _trial(31, 1, CARD, 0.0)])
    b = _write(tmp_path / "b.json", [_trial(31, 2, CARD, 0.0)])
    added = tmp_path / "added"
    ok("compile", str(a), "--out", str(added), "--offline", "-q")
    before = (added / "compilation" / "step-0000.md").read_bytes()
    assert _recur(_in_short(added, "step-0000"))[0].startswith("- Both trials of this task sent `payment_id`")
    ok("add", str(b), "--corpus", str(added))
    assert _recur(_in_short(added, "step-0000"))[0].startswith("- All 3 trials of this task sent `payment_id`")
    ok("compile", str(a), str(b), "--out", str(tmp_path / "together"), "--offline", "-q")
    same_corpus(added, tmp_path / "together")
    ok("forget", "step-0002", "--corpus", str(added))
    assert (added / "compilation" / "step-0000.md").read_bytes() == before


def _failed_entry(run, step: str) -> dict:
    from wikitrace.corpus import trial_contrast
    from wikitrace.corpus.checked_facts import run_facts

    comp = compile_offline(run)
    return {"step": step, "outcome": "failure", "task_id": "same", "task_type": "t", "facts": run_facts(comp),
            **trial_contrast.entry_field(comp)}


@pytest.mark.parametrize("run", RUNS, ids=lambda r: f"{r.source.get('format')}:{r.run_id}")
def test_every_importers_failure_twice_gets_a_line_true_of_its_log_or_none(run):
    """Every importer fixture's run, judged a failure and counted as two trials of one task: the
    line names a mistake its own page states (its answer as the log gave it, a change the log's
    expected calls name, a checked fact's kind), speaks of the task's expected calls only where
    the log records them and of reflections only where the run was given some; or it is absent,
    when the page states no such mistake."""
    from wikitrace.corpus import trial_contrast
    from wikitrace.corpus.trial_recur import items

    failed = relabeled(run, False)
    one, two = _failed_entry(failed, "step-0001"), {**_failed_entry(failed, "step-0001"), "step": "step-0002"}
    made = trial_contrast.lines([one, two])
    if not items(one):
        assert made == {}, made
        return
    text, turns, _ = made["step-0001"]
    assert text.startswith(("Both trials of this task ", "In both trials of this task, ", "Neither of the 2 trials")), text
    assert "[step-0002](step-0002.md)" in text and "none succeeded" in text
    assert set(turns) <= {t.turn for t in failed.turns}
    said = re.search(r"answered \"(.+?)\" \(this run", text)
    if said:
        answers = [t for t in failed.turns if t.type == "function_call" and not t.is_error and isinstance(t.arguments, str)]
        assert any(" ".join(t.arguments.split()).startswith(said.group(1).rstrip("…").replace("\\", "")) for t in answers)
    if "the task expected" in text or "the task did not expect" in text:
        assert (failed.task.metadata or {}).get("expected_calls"), text
    assert ("reflection" in text) == bool((failed.task.metadata or {}).get("reflections")) or "reflection" not in text
    if "and this run opened with" in text:
        assert (failed.task.metadata or {}).get("reflections"), text


def test_a_task_of_many_trials_links_some_and_counts_the_rest():
    """Twelve failed trials that gave one answer, two that gave another: eight are linked, the
    rest counted, and the numbers still add up to the task's trials."""
    trials = [_entry(f"step-{k:04d}", "failure", [], "Tas") for k in range(12)]
    trials += [_entry("step-0100", "failure", [], "Wend"), _entry("step-0101", "failure", [], "Wend")]
    said, _turns = recurring(trials[0], trials)
    assert said.startswith("12 of the 14 trials of this task answered \"Tas\" (this run and ")
    assert len(_LINK.findall(said)) == 8 and " and 3 more; not 2 more)" in said, said


def _did(step: str, *tools: str) -> dict:
    """A failed trial that never made the expected cancel, with the changes that went through instead."""
    decisive = {"changes": [{"tool": t, "turn": 9 + k, "values": {}} for k, t in enumerate(tools)]} if tools else {"reads": []}
    return {"step": step, "outcome": "failure", "facts": [{"kind": "missed-change", "about": ["cancel_reservation"]}],
            "decisive": decisive}


def test_an_expected_change_no_trial_made_says_what_each_did_there_not_to_make_it():
    """"Make the cancel when asked" restates the task, and on a record the rule forbids cancelling it
    is wrong: the line says instead where each trial went (another change, a hand-off, nothing)."""
    trials = [_did("step-0010", "book_reservation"), _did("step-0060", "transfer_to_human_agents"),
              _did("step-0110", "book_reservation"), _did("step-0160"),
              _did("step-0210", "update_reservation_flights", "cancel_reservation")]
    # its cancel went to another reservation than the one the task expected
    trials[-1]["facts"].append({"kind": "arguments", "about": ["cancel_reservation.reservation_id@9"]})
    said, _turns = recurring(trials[0], trials)
    assert "when the request asks for it" not in said and "make the `cancel_reservation`" not in said
    assert said.endswith(". Instead, this run and [step-0110](step-0110.md) made a `book_reservation` change; "
                         "[step-0060](step-0060.md) handed off with `transfer_to_human_agents`; "
                         "[step-0160](step-0160.md) made no change that went through; [step-0210](step-0210.md) made "
                         "`update_reservation_flights` and `cancel_reservation` changes other than the expected one."), said
    unrecorded = [{**t, "decisive": {}} for t in trials[:2]]  # an entry without its changes: nothing is said of any
    said, _turns = recurring(unrecorded[0], unrecorded)
    assert said.endswith("and none succeeded.") and "Instead" not in said, said


FORMS = IMPORTERS / "react_reflexion" / "react_reflexion_forms.txt"


def test_trials_that_gave_one_answer_in_another_form_are_counted_as_giving_it(tmp_path):
    # trial 2 of each question wrote trial 1's answer otherwise: with "the" and "and" added to a
    # list, or without its accents; trial 3 gave another answer
    out, runs = _build(tmp_path, FORMS)
    for q, forms in (("q001", ("Corran, Marsh Coast, United Isles", "Corran, the Marsh Coast, and the United Isles")),
                     ("q002", ("Dāvid Bēla", "David Bela"))):
        steps = [runs[f"react_reflexion_forms-{q}-t{t}"]["step"] for t in (1, 2, 3)]
        for t in (0, 1):
            [line] = [ln for ln in _recur(_in_short(out, steps[t])) if "answered" in ln]
            assert line.startswith(f"- 2 of the 3 trials of this task answered \"{forms[t]}\" or a form of it "
                                   f"(\"{forms[1 - t]}\") (this run and [{steps[1 - t]}]"), line
            assert f"; not [{steps[2]}]" in line, line
        assert not any("answered" in ln for ln in _recur(_in_short(out, steps[2])))


def test_a_trial_that_made_one_of_several_expected_changes_is_not_said_to_have_made_none():
    """The task expected two cancels; a trial made one of them, as expected, and left out the other:
    the line says no trial made every expected cancel, and that trial's cancel is no change "other
    than the expected one" (tau step-0183 made one of three expected flight changes exactly)."""
    trials = [_did("step-0010", "book_reservation"), _did("step-0060", "cancel_reservation")]
    said, _turns = recurring(trials[0], trials)
    assert said.startswith("Neither of the 2 trials of this task made every `cancel_reservation` change the task "
                           "expected"), said
    assert said.endswith("[step-0060](step-0060.md) made a `cancel_reservation` change."), said
    # its record marks that cancel as the one the task expected, sent alike: the line says so, so a
    # reader sees the trials' common miss is the other cancel, not how this one was sent
    trials[1]["decisive"]["changes"][0]["expected"] = True
    said, _turns = recurring(trials[0], trials)
    assert said.endswith("[step-0060](step-0060.md) made one of the expected `cancel_reservation` changes as "
                         "written."), said
    # two expected cancels made as written are counted as two (the same one sent twice is one)
    trials[1]["decisive"]["changes"] += [{"tool": "cancel_reservation", "turn": 12, "values": {"reservation_id": "B"},
                                          "expected": True},
                                         {"tool": "cancel_reservation", "turn": 13, "values": {"reservation_id": "B"},
                                          "expected": True}]
    said, _turns = recurring(trials[0], trials)
    assert said.endswith("[step-0060](step-0060.md) made 2 of the expected `cancel_reservation` changes as "
                         "written."), said
    some = [_did("step-0010", "book_reservation"), _did("step-0060"), {**_did("step-0110"), "facts": []}]
    said, _turns = recurring(some[0], some)
    assert said.startswith("2 of the 3 trials of this task left out a `cancel_reservation` change the task expected"), said


def test_a_change_line_takes_the_article_its_tool_name_needs():
    """"made an `update_reservation_flights` change", "left out an `update_...` change": the
    article is chosen with the tool's name, not patched into the rendered line."""
    trials = [{"step": s, "outcome": "failure", "decisive": {"changes": []},
               "facts": [{"kind": "unexpected-change", "about": ["update_reservation_flights"]}]}
              for s in ("step-0010", "step-0060")]
    said, _turns = recurring(trials[0], trials)
    assert "made an `update_reservation_flights` change the task did not expect" in said, said
    missed = [{**_did("step-0010"), "facts": [{"kind": "missed-change", "about": ["update_reservation_baggages"]}]},
              {**_did("step-0060"), "facts": [{"kind": "missed-change", "about": ["update_reservation_baggages"]}]},
              {**_did("step-0110"), "facts": []}]
    said, _turns = recurring(missed[0], missed)
    assert said.startswith("2 of the 3 trials of this task left out an `update_reservation_baggages` change"), said


STALE = """
########################################
BEGIN TRIAL 1
Trial summary: Correct: 0, Incorrect: 1, Halted: 0
#######################################
------------- BEGIN INCORRECT AGENTS -----------

Question: At which stadium does the team coached by Ivo Rask play its home games?
Thought 1: I should search Ivo Rask.
Action 1: Search[Ivo Rask]
Observation 1: Ivo Rask is the defensive coordinator of the Norland Foxes, who play at Fen Field.
Thought 2: So the stadium is Fen Field.
Action 2: Finish[Fen Field]
Observation 2: Answer is INCORRECT
Correct answer: Brakka Arena

########################################
BEGIN TRIAL 2
Trial summary: Correct: 0, Incorrect: 1, Halted: 0
#######################################
------------- BEGIN INCORRECT AGENTS -----------

Question: At which stadium does the team coached by Ivo Rask play its home games?You have attempted to answer following question before and failed. The following reflection(s) give a plan to avoid failing to answer the question in the same way you did previously. Use them to improve your strategy of correctly answering the given question.
Reflections:
- I answered Fen Field without checking the team. I should search the Norland Foxes.
Thought 1: I should search the Norland Foxes.
Action 1: Search[Norland Foxes]
Observation 1: The Norland Foxes are a college team. Their home ground is Fen Field.
Thought 2: So it is Fen Field.
Action 2: Finish[Fen Field]
Observation 2: Answer is INCORRECT
Correct answer: Brakka Arena

"""


def test_a_task_whose_trials_never_had_the_expected_answer_returned_says_so(tmp_path):
    """Both trials gave the same answer and no page either read held the expected one: the line
    says no look-up returned it, so a reader does not take the advice for the whole story."""
    path = tmp_path / "react_reflexion_stale.txt"
    path.write_text(STALE, encoding="utf-8")
    out = tmp_path / "c"
    ok("compile", str(path), "--out", str(out), "--offline", "-q")
    steps = [r["step"] for r in json.loads((out / "corpus.json").read_text())["runs"]]
    lines = [ln for st in steps for ln in _in_short(out, st) if "trials of this task answered" in ln]
    assert lines and all("No look-up that went through in the 2 trials of this task returned the expected answer "
                         "as written." in ln for ln in lines), lines
    # a page that held it, in either trial, and the sentence is not written
    path.write_text(STALE.replace("who play at Fen Field.", "who play at Fen Field (Brakka Arena from 2026)."),
                    encoding="utf-8")
    ok("compile", str(path), "--out", str(tmp_path / "d"), "--offline", "-q")
    assert not any("No look-up that went through" in ln for st in steps for ln in _in_short(tmp_path / "d", st))


def test_a_task_whose_expected_answer_only_an_errors_list_offered_says_which_trial_it_was_offered_to(tmp_path):
    """The second trial's search failed with a list of near names holding the expected answer, which
    no trial then sent: the line says no page returned it, and where the list offered it."""
    offered = STALE.replace(
        "Thought 1: I should search the Norland Foxes.\nAction 1: Search[Norland Foxes]\n"
        "Observation 1: The Norland Foxes are a college team. Their home ground is Fen Field.",
        "Thought 1: I should search the Norland Foxes stadium.\nAction 1: Search[Norland Foxes stadium]\n"
        "Observation 1: Could not find [Norland Foxes stadium]. Similar: ['Brakka Arena', 'Norland Foxes'].")
    assert offered != STALE
    path = tmp_path / "react_reflexion_offered.txt"
    path.write_text(offered, encoding="utf-8")
    out = tmp_path / "c"
    ok("compile", str(path), "--out", str(out), "--offline", "-q")
    runs = json.loads((out / "corpus.json").read_text())["runs"]
    second = runs[-1]["step"]
    lines = [ln for r in runs for ln in _in_short(out, r["step"]) if "No look-up that went through" in ln]
    assert lines and all(f"as written, though the list of near names an error gave held it in 1 of them "
                         f"([{second}]({second}.md) at its turn 1): send a name such a list offers" in ln
                         for ln in lines), lines


def test_an_answer_a_page_wrote_with_middle_names_is_not_said_to_be_in_no_look_up(tmp_path):
    """Round 18 (HotpotQA): step-0425's "The run's answer appears in no look-up, only in the user message"
    stood beside a look-up that wrote "Sir Patrick John Thompson Vallance"; the page now says the
    name was there, written with its middle names."""
    from wikitrace.compilers.qa_reasons import name_with_middle

    assert name_with_middle("Sir Patrick John Thompson Vallance is a physician.", "Patrick Vallance") == \
        "Patrick John Thompson Vallance"
    assert name_with_middle("Patrick met Ada and Vallance.", "Patrick Vallance") is None
    question = "Which physicist, named Patrick Vallance by some, advised the government on science?"
    printout = tmp_path / "react_reflexion_middle.txt"
    printout.write_text(f"""########################################
BEGIN TRIAL 1
Trial summary: Correct: 0, Incorrect: 1, Halted: 0
#######################################
------------- BEGIN CORRECT AGENTS -------------

------------- BEGIN INCORRECT AGENTS -----------

Question: {question}
Thought 1: I need to search the adviser.
Action 1: Search[Chief Scientific Adviser]
Observation 1: Sir Patrick John Thompson Vallance has served as the Chief Scientific Adviser.
Thought 2: It is Patrick Vallance.
Action 2: Finish[Patrick Vallance]
Observation 2: Answer is INCORRECT
Correct answer: Frederick Alexander

------------- BEGIN HALTED AGENTS --------------

""", encoding="utf-8")
    [run] = [r for r in load._read(printout, load.detect(printout)) if isinstance(r, Run)]
    facts = [f.text for f in compile_offline(run).in_short]
    assert any("The run's answer appears in no look-up as written, only in the user message at turn 0; what Search returned "
               "at turn 1 wrote it \"Patrick John Thompson Vallance\"." in f for f in facts), facts


def test_an_answer_cut_short_in_its_entry_still_counts_as_holding_a_shorter_one_past_the_cut():
    """HotpotQA step-0047 answered a whole sentence holding step-0260's answer after its 120th
    character; its entry keeps the answer cut there, and the page said step-0047 had not given that
    answer. The entry keeps the whole answer's words beside the cut text for this comparison."""
    from wikitrace.compilers.trial_record import answer_norm
    from wikitrace.corpus.trial_recur import items

    phrase = "widely regarded as the greatest writer in the English language and the world's pre-eminent dramatist"
    long = "William Shakespeare is an English playwright, poet and actor, " + phrase + ". He is often called the Bard."
    cut = _entry("step-0047", "failure", [], long[:119] + "…")
    cut["decisive"]["answer"]["words"] = answer_norm(long)
    mine = _entry("step-0260", "failure", [], phrase)
    said, _turns = recurring(mine, [mine, cut])
    assert said.startswith("Both trials of this task answered") and "(this run and [step-0047](step-0047.md))" in said
    assert ("answer", answer_norm(long)) in items(cut)
    del cut["decisive"]["answer"]["words"]  # an entry with the cut text alone: no mistake is found shared
    assert recurring(mine, [mine, cut]) is None
