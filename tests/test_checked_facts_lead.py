"""A lesson leads with the checked fact (compilers/in_short.py) that most of its failed runs share,
counted exactly and with links to those runs; where no kind of fact covers most of them, the
lesson is left as it was."""

from __future__ import annotations

import json
import re
from pathlib import Path

from wikitrace.build import BuildOptions, build
from wikitrace.corpus.insights import gather

SEP = "########################################"


def _agent(question: str, steps: list[tuple[str, str, str]], closing: str, answer: str, gold: str) -> str:
    lines = [f"Question: {question}"]
    for k, (thought, action, seen) in enumerate(steps, 1):
        lines += [f"Thought {k}: {thought}", f"Action {k}: {action}", f"Observation {k}: {seen}"]
    k = len(steps) + 1
    lines += [f"Thought {k}: {closing}", f"Action {k}: Finish[{answer}]",
              f"Observation {k}: Answer is {'CORRECT' if answer == gold else 'INCORRECT'}", f"Correct answer: {gold}", ""]
    return "\n".join(lines)


def _pair(a: str, ya: int, b: str, yb: int, what: str) -> list[tuple[str, str, str]]:
    return [(f"I need the years of both.", f"Search[{a}]", f"{a} (born {ya}) is a {what}."),
            (f"Now {b}.", f"Search[{b}]", f"{b} (born {yb}) is a {what}.")]


# invented people; each question compares two birth years
WRONG = [  # the agent writes the comparison backwards
    ("Which potter was born first, Ilsa Brann or Oto Fell?", _pair("Ilsa Brann", 1984, "Oto Fell", 1962, "potter"),
     "1984 (Ilsa Brann) < 1962 (Oto Fell), so Ilsa Brann was born first.", "Ilsa Brann", "Oto Fell"),
    ("Which rower was born first, Pim Ardo or Kai Stell?", _pair("Pim Ardo", 1990, "Kai Stell", 1971, "rower"),
     "1990 (Pim Ardo) < 1971 (Kai Stell), so Pim Ardo was born first.", "Pim Ardo", "Kai Stell"),
    ("Which poet was born first, Nell Quist or Abe Morrow?", _pair("Nell Quist", 1948, "Abe Morrow", 1939, "poet"),
     "1948 (Nell Quist) < 1939 (Abe Morrow), so Nell Quist was born first.", "Nell Quist", "Abe Morrow"),
]
OTHER = [  # wrong without a comparison: the agent guessed
    ("Which cellist was born first, Rue Damsel or Tor Vanke?", _pair("Rue Damsel", 1977, "Tor Vanke", 1955, "cellist"),
     "Rue Damsel sounds older.", "Rue Damsel", "Tor Vanke"),
]
RIGHT = [
    ("Which jockey was born first, Lia Pemb or Ovo Crane?", _pair("Lia Pemb", 1966, "Ovo Crane", 1981, "jockey"),
     "1966 (Lia Pemb) < 1981 (Ovo Crane), so Lia Pemb was born first.", "Lia Pemb", "Lia Pemb"),
    ("Which judge was born first, Sam Oaker or Ula Tev?", _pair("Sam Oaker", 1973, "Ula Tev", 1950, "judge"),
     "1950 (Ula Tev) < 1973 (Sam Oaker), so Ula Tev was born first.", "Ula Tev", "Ula Tev"),
] + [  # enough successes for the one-sided Fisher test to tell the backwards comparisons apart
    (f"Which {job} was born first, {a} or {b}?", _pair(a, ya, b, yb, job), f"{ya} ({a}) < {yb} ({b}), so {a} was born first.",
     a, a) for job, a, ya, b, yb in (("baker", "Eda Voss", 1951, "Rik Palm", 1970), ("sculptor", "Ona Till", 1944, "Dov Reem", 1968),
                                     ("diver", "Kes Arbo", 1980, "Uma Lind", 1992), ("chemist", "Tal Moen", 1938, "Ivo Sark", 1959),
                                     ("tailor", "Ren Ostby", 1961, "Bea Kuhl", 1979), ("glazier", "Aud Penn", 1957, "Lor Vesk", 1966))
]


def _log() -> str:
    correct = [_agent(*q) for q in RIGHT]
    incorrect = [_agent(*q) for q in WRONG + OTHER]
    return "\n".join([SEP, "BEGIN TRIAL 1", f"Trial summary: Correct: {len(correct)}, Incorrect: {len(incorrect)}, "
                      "Halted: 0", "#######################################",
                      "------------- BEGIN CORRECT AGENTS -------------", "", *correct,
                      "------------- BEGIN INCORRECT AGENTS -----------", "", *incorrect,
                      "------------- BEGIN HALTED AGENTS --------------", "", ""])


def _build(tmp_path: Path) -> Path:
    log = tmp_path / "react_invented_years.txt"
    log.write_text(_log())
    out = tmp_path / "out"
    build(BuildOptions(inputs=[log], out=out, offline=True, quiet=True))
    return out


def test_a_lesson_whose_failed_runs_compared_backwards_leads_with_it(tmp_path):
    out = _build(tmp_path)
    data = json.loads((out / "corpus.json").read_text())
    backwards = {r["step"] for r in data["runs"] if any(f["kind"] == "comparison" for f in r.get("facts") or [])}
    questions = {r["step"]: r.get("instruction") or "" for r in data["runs"]}
    assert sorted(questions[s].split(",")[0] for s in backwards) == sorted(q[0].split(",")[0] for q in WRONG)
    leads = [i for i in data["insights"] if i.get("checked", {}).get("kind") == "comparison"]
    assert leads, [i["guideline"] for i in data["insights"]]
    for entry in leads:
        failed = {s["step"] for s in entry["sources"] if s["outcome"] == "failure"}
        counted = failed & backwards
        assert 2 * len(counted) > len(failed)
        assert entry["checked"]["steps"] == sorted(counted)
        assert entry["guideline"].startswith(
            f"In {len(counted)} of the {len(failed)} failed runs here the agent's comparison of two numbers, or the "
            "side it concluded from one, went the wrong way (in the first of them ")
        assert "is later than" in entry["guideline"].split(")", 1)[0]
        page = (out / "insight" / f"{entry['id']}.md").read_text()
        line = page.split(f"The {len(counted)} failed runs where the agent's comparison", 1)[1].split("\n", 1)[0]
        linked = re.findall(r"\[(step-\d+)\]\(\.\./compilation/\1\.md\)", line)
        assert linked == sorted(counted)
    # a successful run's comparison holds: no run that succeeded carries the fact
    assert not backwards & {r["step"] for r in data["runs"] if r["outcome"] == "success"}


def _entry(k: int, success: bool, facts: list[dict]) -> dict:
    key = "went-through|book_trip"
    return {"step": f"step-{k:04d}", "run_id": f"r{k}", "task_id": f"t{k}", "instruction": f"please book trip {k}",
            "task_type": "travel", "apps": None, "outcome": "success" if success else "failure", "title": "",
            "patterns": [key], "facts": facts,
            "lessons": [{"key": key, "title": "Book it right", "guideline": "Check the booking.",
                         "applicability": "In travel tasks.", "detail": "turn 4", "worked": success}]}


def _args(*names: str) -> dict:
    return {"kind": "arguments", "about": [f"book_trip.{n}" for n in names]}


def _user_args(*names: str) -> dict:  # every differing value credited to the user (compilers/value_sources.py)
    return {"kind": "arguments", "about": [f"book_trip.{n}@user" for n in names]}


def test_arguments_that_differed_are_counted_per_run_most_often_first():
    runs = [_entry(0, False, [_args("fare"), _user_args("seats"), _user_args("seats")]),  # once per argument; ties by name
            _entry(1, False, [_user_args("seats")]),
            _entry(2, False, [_args("fare", "meal", "bags")]),
            _entry(3, False, [{"kind": "missed-change"}]),
            _entry(4, True, [_user_args("seats")])]  # a success is not one of the failed runs counted
    runs += [_entry(k, True, []) for k in range(5, 14)]  # successes enough for the contrast to tell
    (entry,) = gather(runs)
    assert entry["guideline"] == (
        "In 3 of the 4 failed runs here a change the run sent differed from the task's expected call in its arguments "
        "(fare of book_trip in 2; seats of book_trip in 2, 2 of them with the values sent taken from what the user said; "
        "bags of book_trip in 1; others less often): before book_trip, check `fare` against what the user asked "
        "for. Check the booking.")
    assert entry["checked"]["steps"] == ["step-0000", "step-0001", "step-0002"]


def test_no_lead_where_no_kind_of_fact_covers_most_failed_runs():
    runs = [_entry(0, False, [_args("seats")]), _entry(1, False, [{"kind": "missed-change"}]),
            _entry(2, False, []), _entry(3, False, [{"kind": "time"}])]
    (entry,) = gather(runs)
    assert entry["guideline"] == "Check the booking."
    assert "checked" not in entry


def test_a_claim_in_the_agents_words_comes_before_a_broader_fact():
    runs = [_entry(k, False, [{"kind": "missed-change"}, {"kind": "time"}]) for k in range(3)]  # as many tasks each
    (entry,) = gather(runs)
    assert entry["guideline"].startswith(
        "In 3 of the 3 failed runs here the agent claimed a time window that the record's own date and the log's "
        "current time contradict: work out the time from the record's own date and the current time the prompt "
        "gives before calling book_trip.")


def test_a_source_is_named_only_where_it_covers_most_runs_of_the_argument():
    mixed = {"kind": "arguments", "about": ["book_trip.fare@answer"]}
    runs = [_entry(0, False, [_user_args("fare")]), _entry(1, False, [mixed]), _entry(2, False, [_args("fare")])]
    (entry,) = gather(runs)
    assert entry["guideline"].startswith("In 3 of the 3 failed runs here a change the run sent differed from the "
                                         "task's expected call in its arguments (fare of book_trip in 3): ")


def _hand_off_run(k: int, task: int, success: bool, handed_off: bool, words: list[str]) -> dict:
    key = "hand-off|pass_to_person" if handed_off else "idle|none"
    return {"step": f"step-{k:04d}", "run_id": f"r{k}", "task_id": f"t{task}", "instruction": f"request {task}",
            "task_type": "shop", "apps": None, "outcome": "success" if success else "failure", "title": "",
            "patterns": [key, *(f"asks|{w}" for w in words)],
            "lessons": [{"key": key, "title": key, "guideline": "Hand off when no tool can do it.",
                         "applicability": "In shop tasks.", "detail": "turn 3", "worked": success}]}


def test_a_hand_off_lesson_names_the_word_its_successful_hand_offs_were_asked_in_only_when_it_separates():
    # successful hand-offs of 6 tasks whose first message says "passing"; 12 other tasks that do not
    runs = ([_hand_off_run(k, k, True, True, ["passing", "refund"]) for k in range(6)]
            + [_hand_off_run(10 + k, 10 + k, False, True, ["refund"]) for k in range(2)]
            + [_hand_off_run(20 + k, 20 + k, k % 2 == 0, False, ["refund", "order"]) for k in range(10)])
    (entry,) = [i for i in gather(runs) if i["key"].startswith("hand-off|")]
    assert entry["guideline"].endswith(
        "The successful hand-offs here answered first messages that say \"pass\" or a longer form of it "
        "(6 of their 6 tasks; 0 of the type's other 12 tasks).")
    # the same runs with the word spread over every task: nothing is said
    runs = [dict(r, patterns=[*r["patterns"], "asks|passing"]) for r in runs]
    (entry,) = [i for i in gather(runs) if i["key"].startswith("hand-off|")]
    assert "answered first messages" not in entry["guideline"]


def test_a_value_from_a_tool_answer_is_not_said_to_come_from_a_look_up():
    """value_sources credits a value to any earlier answer, a change's as well as a look-up's (a new
    booking's id comes from the booking call's answer): the lead names it as a tool's answer."""
    from_answer = {"kind": "arguments", "about": ["book_trip.fare@answer"]}
    (entry,) = gather([_entry(k, False, [from_answer]) for k in range(2)])
    assert "2 of them with the values sent taken from a tool's earlier answer" in entry["guideline"]
    assert "look-up" not in entry["guideline"]


def _handing_off(k: int, task: int, success: bool, facts: list[dict]) -> dict:
    e = _hand_off_run(k, task, success, True, [])
    e["facts"] = facts
    return e


UNEXPECTED = {"kind": "unexpected-change", "about": ["pass_to_person"]}
MISSED = {"kind": "missed-change"}


def test_a_fact_the_successful_runs_of_the_pattern_met_as_often_does_not_lead_and_is_said_aside():
    """Any kind of fact, not one named case: a hand-off the tasks never list as expected is
    "unexpected" in the successful hand-offs too, so it does not lead; the expected change the
    failed runs never made, which no successful run lacked, does. The page says the first under
    Evidence with both counts."""
    failed = [_handing_off(k, k, False, [UNEXPECTED] + ([MISSED] if k < 5 else [])) for k in range(6)]
    won = [_handing_off(10 + k, 10 + k, True, [UNEXPECTED]) for k in range(8)]
    (entry,) = gather(failed + won)
    assert entry["guideline"].startswith("In 5 of the 6 failed runs here the task expected a change the run never "
                                         "made: make every change the request asks for before ending.")
    assert "did not expect" not in entry["guideline"]
    assert entry["set_aside"] == [
        "In 6 of the 6 failed runs here a state-changing call the task did not expect went through (pass_to_person "
        "in 6); the same kind of fact on pass_to_person held in 8 of the 8 successful runs of this task type that "
        "handed off with pass_to_person: not shown to set failed runs apart."]
    # the same failed runs against successful hand-offs that were all expected: now it separates, and leads
    (entry,) = gather(failed + [_handing_off(10 + k, 10 + k, True, []) for k in range(8)])
    assert entry["guideline"].startswith("In 6 of the 6 failed runs here a state-changing call the task did not "
                                         "expect went through (pass_to_person in 6): check that the request calls for "
                                         "a change with pass_to_person and the rules allow it as sent.")
    assert "set_aside" not in entry


def test_successful_runs_count_against_a_change_fact_only_on_the_tools_the_failed_runs_name():
    """A hand-off's summary worded otherwise than expected is an argument difference of the
    hand-off, not of a booking: successful runs whose only differing arguments are a hand-off's do
    not count against failed runs whose booking's arguments differed. Counted on the same tools,
    the booking fact separates and leads; the page names the tools it counted on."""
    booking = {"kind": "arguments", "about": ["book_trip.bags"]}
    summary = {"kind": "arguments", "about": ["pass_to_person.summary"]}
    failed = [_travel(k, False, [booking], []) for k in range(4)]
    won = [_travel(10 + k, True, [summary], []) for k in range(4)] + [_travel(20 + k, True, [], []) for k in range(4)]
    (entry,) = gather(failed + won)
    assert entry["guideline"].startswith("In 4 of the 4 failed runs here a change the run sent differed from the "
                                         "task's expected call in its arguments (bags of book_trip in 4)")
    assert "not a proven cause" not in entry["guideline"]
    # the same successes, their differences now on the booking too: it no longer separates, and leads hedged
    won = [_travel(10 + k, True, [booking], []) for k in range(4)] + [_travel(20 + k, True, [], []) for k in range(4)]
    (entry,) = gather(failed + won)
    assert "is not shown to set these failed runs apart from the successful ones" in entry["guideline"]


def test_the_lead_prefers_the_fact_of_most_distinct_tasks_and_says_when_runs_repeat_one():
    """Six trials of one question are one mistake: the kind covering more tasks leads, and a count
    of runs that repeat tasks says how many tasks they are."""
    one_task = [_entry(k, False, [{"kind": "comparison", "about": ["5 is more than 3"]}]) for k in range(6)]
    for e in one_task:
        e["task_id"] = "same"
    spread = [_entry(10 + k, False, [MISSED]) for k in range(4)]
    for e in one_task[:1]:
        e["facts"].append(MISSED)
    (entry,) = gather(one_task + spread)
    # comparison: 6 of 10 runs but 1 of 5 tasks; missed change: 5 of 10 runs, 5 of 5 tasks
    assert entry["guideline"].startswith("In 5 of the 10 failed runs here (all 5 of their tasks) the task expected a "
                                         "change the run never made")
    for e in spread:
        e["facts"] = []
    (entry,) = gather(one_task + spread)
    assert entry["guideline"].startswith("In 6 of the 10 failed runs here (all trials of 1 of their 5 tasks) the agent's "
                                         "comparison of two numbers, or the side it concluded from one, went the wrong way")


def test_a_lesson_one_run_taught_says_so_and_points_to_the_counted_lesson_of_its_tool(tmp_path):
    """One run's recipe stays a page of its own (its run keeps the link, ids stay stable), says it
    is one run's experience, and links the type's lesson on the same tool drawn from most runs."""
    counted = [_entry(k, False, [MISSED]) for k in range(3)]
    alone = dict(_entry(9, False, []), patterns=["error|book_trip|no seats"])
    alone["lessons"] = [{"key": "error|book_trip|no seats", "title": "book_trip answers \"no seats\"",
                         "guideline": "Pick another flight.", "applicability": "In travel tasks.", "detail": "turn 5",
                         "worked": False}]
    entries = {e["key"]: e for e in gather(counted + [alone])}
    one, many = entries["error|book_trip|no seats"], entries["went-through|book_trip"]
    assert one["guideline"] == "Pick another flight."  # "Seen in 1 run" opens its Evidence: said once
    assert one["one_run"] == {"see": many["id"], "tool": "book_trip", "runs": "3 runs", "title": many["title"]}
    assert "one_run" not in many
    from wikitrace.corpus.checked_facts import links
    from wikitrace.corpus.layout import Linker, insight_doc

    runs, line = links(one, Linker(insight_doc(one["id"]), "/corpus/"), lambda t: t)
    assert runs == ""  # no checked fact leads it: no list of runs
    assert line == (f"The lesson of this task type's runs on book_trip, counted over 3 runs: "
                    f"[{many['title']}]({many['id']}.md).")


def _travel(k: int, success: bool, facts: list[dict], patterns: list[str], task: int | None = None) -> dict:
    e = _entry(k, success, facts)
    e["patterns"] = sorted({*e["patterns"], *patterns})
    e["task_id"] = f"t{k if task is None else task}"
    return e


def test_an_unmade_change_is_named_with_how_the_successful_runs_made_it():
    """The lead names the change the failed runs never made (counted per run) and says how many
    successful runs of the task type made it, with the look-up most of them made before it."""
    missed = {"kind": "missed-change", "about": ["add_bags"]}
    failed = [_travel(k, False, [missed], []) for k in range(3)]
    failed.append(_travel(3, False, [{"kind": "missed-change", "about": ["add_bags", "pass_to_person"]}], []))
    won = [_travel(10 + k, True, [], ["went-through|add_bags", "before|add_bags|find_trip",
                                      *(["before|add_bags|find_user"] if k == 0 else [])], task=10 + k // 2)
           for k in range(4)]
    won += [_travel(20 + k, True, [], []) for k in range(6)]
    (entry,) = gather(failed + won)
    assert entry["guideline"].startswith(
        "In 4 of the 4 failed runs here a change the task expected never went through (add_bags in 4; "
        "pass_to_person in 1): before ending, make every change the request calls for, add_bags most often missed here: "
        "4 successful runs (of 2 tasks) of this task type made it, calling find_trip (in 4 of them) before it.")
    # the same with one unmade change only: that change is the advice itself
    (entry,) = gather([_travel(k, False, [missed], []) for k in range(4)] + won)
    assert "make the add_bags change the request calls for: 4 successful runs" in entry["guideline"]
    # no successful run made it: the page says none shows how, instead of inventing a way
    (entry,) = gather([_travel(k, False, [missed], []) for k in range(4)] + won[4:])
    assert "no successful run of this task type made a add_bags change, so none shows how" in entry["guideline"]


def test_a_change_a_successful_trial_of_the_same_task_did_without_is_not_advised():
    """The failed trials never made the hand-off the task expected, but a successful trial of the
    same task made none either: leaving it unmade did not decide them, so no lead tells the next
    agent to make it."""
    missed = {"kind": "missed-change", "about": ["add_bags"]}
    failed = [_travel(k, False, [missed], [], task=1) for k in range(3)]
    won = [_travel(10, True, [], ["did|add_bags", "went-through|add_bags"], task=1), _travel(11, True, [], [], task=1)]
    won += [_travel(20 + k, True, [], ["did|add_bags", "went-through|add_bags"]) for k in range(4)]
    (entry,) = gather(failed + won)
    assert "add_bags" not in entry["guideline"] and "make every change" not in entry["guideline"]
    # every successful trial of their task made it: the lead stands
    won[1] = _travel(11, True, [], ["did|add_bags", "went-through|add_bags"], task=1)
    (entry,) = gather(failed + won)
    assert "make the add_bags change the request calls for" in entry["guideline"]


def test_an_unproven_argument_leads_marked_with_its_rule_and_the_successful_runs_count():
    """No fact separates the outcomes, yet most failed runs sent one argument wrong and the
    successful runs did not: it leads, says it is no proven cause, gives the successful runs'
    count for that same argument (no p: it does not separate them); the rule on that
    argument another run's prompt quotes is named."""
    rule = {"kind": "rule", "about": ["book_trip", "bags", '"Two bags travel free."', "arguments"]}
    failed = [_travel(k, False, [_args("bags")], []) for k in range(3)] + [_travel(3, False, [_args("fare")], [])]
    won = [_travel(10, True, [_args("fare")], []), _travel(11, True, [], [])]
    quoting = _travel(30, False, [rule], ["other|x"])
    quoting["lessons"][0]["key"] = quoting["patterns"][0] = "error|book_trip|Error: x"
    entries = gather(failed + won + [quoting])
    entry = next(e for e in entries if e["key"] == "went-through|book_trip")
    # what to do leads; the argument most of them sent otherwise follows, said not to set them apart
    assert entry["guideline"].startswith(
        "Before book_trip, check each argument against what the user asked for and the records looked up, and `bags` "
        "against the system prompt's rule on it (step-0030's prompt: \"Two bags travel free.\"); the commonest "
        "difference, `bags`, is not shown to set these failed runs apart from the successful ones. In 4 of the 4 "
        "failed runs here a change the run sent differed from the task's expected call in its arguments (bags of "
        "book_trip in 3; fare of book_trip in 1). Of the 2 successful runs of this task type whose change with "
        "book_trip went through, 0 showed the same for bags of book_trip.")
    assert "set_aside" not in entry
    # the successful runs sent that argument wrong as often: it stays under Evidence, not in the lead
    won = [_travel(10, True, [_args("bags")], []), _travel(11, True, [_args("bags")], [])]
    entry = next(e for e in gather(failed + won) if e["key"] == "went-through|book_trip")
    assert entry["guideline"] == "Check the booking."
    assert len(entry["set_aside"]) == 1


def test_a_rule_lesson_keeps_its_rule_first_when_the_argument_fact_does_not_separate():
    """A rule page's runs broke that rule for sure; an argument most of them also sent otherwise,
    not shown to set them apart, is a finding under Evidence, not advice leading the page."""
    rule_key, rule = "rule|ab12cd34ef", ('Check each state-changing call against this rule of the system prompt before '
                                         'making it: "Two certificates may not pay for one trip."')
    failed = [_travel(k, False, [_args("bags")], [rule_key]) for k in range(3)] + [
        _travel(3, False, [_args("fare")], [rule_key])]
    for e in failed:
        e["lessons"][0].update(key=rule_key, title="Keep the rule: Two certificates may not pay for one trip",
                               guideline=rule)
    won = [_travel(10, True, [_args("fare")], []), _travel(11, True, [], [])]
    entry = next(e for e in gather(failed + won) if e["key"] == rule_key)
    assert entry["guideline"] == rule, entry["guideline"]  # the argument that differed is no advice of the rule's
    assert any("`bags`, is not shown to set these failed runs apart from the successful ones" in line
               for line in entry["set_aside"])


def test_failed_runs_that_made_no_call_lead_with_it_and_what_successful_runs_looked_up():
    def idle(k, success, patterns):
        e = _travel(k, success, [], patterns)
        e["patterns"] = patterns
        e["lessons"][0]["key"] = "direct|answer"
        return e
    failed = [idle(k, False, ["idle|none"]) for k in range(3)] + [idle(3, False, ["did|find_trip"])]
    won = [idle(10 + k, True, ["did|find_trip", "went-through|book_trip", "did|book_trip"]) for k in range(3)]
    won.append(idle(13, True, ["idle|none"]))
    (entry,) = gather(failed + won)
    assert entry["guideline"].startswith(
        "In 3 of the 4 failed runs here the agent answered without a single tool call (1 successful run of this "
        "task type did so too): look the request's records up with find_trip before answering, as most successful "
        "runs did (find_trip in 3). ")
    # what to do keeps the instruction, the counts stand under Evidence
    assert entry["advice"].startswith("Look the request's records up with find_trip before answering, as most "
                                      "successful runs did.")
    # most failed runs did call a tool: nothing is said of calls
    (entry,) = gather(failed[:1] + [idle(4 + k, False, ["did|find_trip"]) for k in range(2)] + won)
    assert "without a single tool call" not in entry["guideline"]


def test_a_contrast_with_every_success_of_the_type_reads_the_same_after_an_unrelated_success_is_added():
    """A lead or set-aside note weighed against all of the task type's successful runs says how
    many of them showed the fact, not the type's total or a p that moves with it: adding a
    successful run that shows nothing of the sort leaves the insight page's text as it was (only
    the pages a run joins or is counted on change on ``add``)."""
    from wikitrace.corpus.fact_weights import TYPE_WIDE, aside_note, weak_note

    failed = [{"step": f"step-{i:04d}", "task_id": str(i)} for i in range(4)]
    won = [{"step": f"step-{10 + i:04d}", "task_id": str(10 + i)} for i in range(6)]
    more = won + [{"step": "step-0099", "task_id": "99"}]
    before = weak_note(failed[:3], failed, won[:1], won, TYPE_WIDE, "", "arguments")
    after = weak_note(failed[:3], failed, won[:1], more, TYPE_WIDE, "", "arguments")
    assert before == after and "1 successful run of this task type showed the same" in before[0], before
    note = aside_note("arguments", failed[:3], failed, "a change differed", won[:2], won, TYPE_WIDE)
    assert note == aside_note("arguments", failed[:3], failed, "a change differed", won[:2], more, TYPE_WIDE), note


def test_the_test_against_the_successes_that_met_the_error_counts_every_failed_run_that_met_it():
    """19 of a page's 212 failed sources showed a fact and none of the 35 successes that met the
    error did. 216 failed runs met the error in all: set like against like, 19 of 216 against 0 of
    35 is p = 0.051, no separation; counting the sources alone said p = 0.049."""
    from wikitrace.corpus.fact_weights import weak_note

    failed = [{"step": f"step-{i:04d}", "task_id": str(i)} for i in range(212)]
    won = [{"step": f"step-{1000 + i:04d}", "task_id": str(1000 + i)} for i in range(35)]
    among = "runs of this task type that met this error"
    alone, apart = weak_note(failed[:19], failed, [], won, among, "", "arguments")
    assert apart and "p = 0.049" in alone, alone
    note, apart = weak_note(failed[:19], failed, [], won, among, "", "arguments", failed_met=216)
    assert not apart and "Fisher" not in note and "0 showed the same." in note, note


def test_a_fact_on_the_lessons_own_tool_leads_before_one_only_on_another_tool():
    # both kinds cover every failed run; the differing arguments are of another change than the
    # lesson's, so what they say of book_trip is less than the unasked book_trip that went through
    other = {"kind": "arguments", "about": ["add_bags.payer"]}
    runs = [_entry(k, False, [other, {"kind": "unexpected-change", "about": ["book_trip"]}]) for k in range(3)]
    runs += [_entry(k, True, []) for k in range(3, 12)]
    (entry,) = gather(runs)
    assert entry["guideline"].startswith("In 3 of the 3 failed runs here a state-changing call the task did not "
                                         "expect went through (book_trip in 3): check that the request calls for "
                                         "a change with book_trip and the rules allow it as sent.")


def test_facts_the_same_runs_hold_are_one_note_under_evidence_said_without_a_p():
    """Two kinds of fact held by exactly the same failed runs (and the same successful ones) are one
    finding: one note names both and the tools of both, once, in plain words; a fact other runs hold
    keeps a note of its own."""
    from wikitrace.corpus.checked_facts import _aside_notes

    failed = [_entry(k, False, [UNEXPECTED, {"kind": "missed-change", "about": ["add_bags"]}]) for k in range(3)]
    failed += [_entry(3, False, [])]
    won = [_entry(10 + k, True, []) for k in range(4)]
    runs_of = {"unexpected-change": failed[:3], "missed-change": failed[:3], "other": failed[1:]}
    said = {"unexpected-change": "a call the task did not expect went through",
            "missed-change": "a change the task expected never went through", "other": "something else held"}
    notes = _aside_notes(["unexpected-change", "missed-change", "other"], runs_of, failed, said, {}, won,
                         "runs of this task type that met it")
    assert notes[0] == ("In 3 of the 4 failed runs here a call the task did not expect went through, and a change the "
                        "task expected never went through; the same kind of fact on add_bags or pass_to_person held "
                        "in 0 of the 4 successful runs of this task type that met it: not shown to set failed runs "
                        "apart."), notes[0]
    assert len(notes) == 2 and notes[1].startswith("In 3 of the 4 failed runs here something else held;")
    assert not any("Fisher" in n for n in notes)


def _rule_run(k: int, success: bool, facts: list[dict]) -> dict:
    key, title = "rule|abc123", "Keep the rule: Payment: each booking can use at most one travel voucher"
    return {"step": f"step-{k:04d}", "run_id": f"r{k}", "task_id": f"t{k}", "instruction": f"please book trip {k}",
            "task_type": "travel", "apps": None, "outcome": "success" if success else "failure", "title": "",
            "patterns": [key] if not success else [], "facts": facts,
            "lessons": [{"key": key, "title": title, "guideline": "Check each booking against the payment rule.",
                         "applicability": "In travel tasks.", "detail": "turn 4", "worked": success}]}


def _rule_fact(quote: str) -> dict:
    return {"kind": "rule", "about": ["book_trip", "bags", f'"{quote}"', "arguments", "tier=gold"]}


def test_a_rule_lesson_is_not_led_by_another_rule_of_the_prompt():
    """A run that broke the payment rule also broke the bag rule: the payment rule's page leads with
    neither the bag rule nor its quote (tau-bench rater: a payment title over baggage advice)."""
    bags = _rule_fact("Gold members get 3 free checked bags …")
    runs = [_rule_run(k, False, [bags]) for k in range(3)] + [_rule_run(k, True, []) for k in range(3, 9)]
    (entry,) = gather(runs)
    assert "free checked bags" not in entry["guideline"] and "bags" not in (entry.get("checked") or {}).get("said", "")
    own = _rule_fact("Payment: each booking can use at most one travel voucher, and no more")
    runs = [_rule_run(k, False, [own]) for k in range(3)] + [_rule_run(k, True, []) for k in range(3, 9)]
    (entry,) = gather(runs)
    assert "at most one travel voucher" in entry["guideline"], entry["guideline"]


def test_a_rule_lesson_keeps_a_change_fact_its_runs_share_as_a_finding_not_advice():
    """Every failed run that broke the payment rule also made a booking the task did not expect, and
    no successful run did (a fact that separates them): on the rule's page it is a finding under
    Evidence, not a second lesson in What to do (tau-bench raters: "keep one lesson per page")."""
    unasked = {"kind": "unexpected-change", "about": ["book_trip"]}
    runs = [_rule_run(k, False, [unasked]) for k in range(4)] + [_rule_run(k, True, []) for k in range(4, 10)]
    (entry,) = gather(runs)
    assert entry["guideline"] == "Check each booking against the payment rule.", entry["guideline"]
    assert any("a state-changing call the task did not expect went through (book_trip in 4)" in line
               for line in entry["set_aside"]), entry.get("set_aside")
    assert "checked" not in entry
