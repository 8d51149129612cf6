"""Insight pages about final answers show concrete cases and counts that hold for the runs.

The fixture is a Reflexion/ReAct text log (the shape the HotpotQA logs have: trials, the
correct / incorrect / halted blocks, numbered Thought / Action / Observation lines, the
harness's verdict and the gold answer it printed) with invented questions and pages:
three questions answered with more words than expected, two with fewer, one answer read
wrong off a page, and successes that took their answer from a look-up.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from wikitrace.build import BuildOptions, build
from wikitrace.corpus.answer_cases import length_rule, versus

SEP = "########################################"


def _agent(question: str, steps: list[tuple[str, str, str]], answer: str, gold: str, correct: bool) -> str:
    lines = [f"Question: {question}"]
    for k, (thought, action, seen) in enumerate(steps, 1):
        lines += [f"Thought {k}: {thought}", f"Action {k}: {action}", f"Observation {k}: {seen}"]
    k = len(steps) + 1
    lines += [f"Thought {k}: So the answer is {answer}.", f"Action {k}: Finish[{answer}]",
              f"Observation {k}: Answer is {'CORRECT' if correct else 'INCORRECT'}", f"Correct answer: {gold}", ""]
    return "\n".join(lines)


def _trial(n: int, correct: list[str], incorrect: list[str]) -> str:
    return "\n".join([SEP, f"BEGIN TRIAL {n}", f"Trial summary: Correct: {len(correct)}, Incorrect: {len(incorrect)}, "
                      "Halted: 0", "#######################################",
                      "------------- BEGIN CORRECT AGENTS -------------", "", *correct,
                      "------------- BEGIN INCORRECT AGENTS -----------", "", *incorrect,
                      "------------- BEGIN HALTED AGENTS --------------", "", ""])


# (question, look-ups, answer given, expected answer)
TOO_LONG = [
    ("Which river runs past the mill town of Brindlecombe?",
     [("Search Brindlecombe.", "Search[Brindlecombe]",
       "Brindlecombe is a mill town on the River Wendle and the Orrin Canal, in the county of Farrow.")],
     "River Wendle and Orrin Canal", "River Wendle"),
    ("What instrument did the composer Talvi Marsk play?",
     [("Search Talvi Marsk.", "Search[Talvi Marsk]",
       "Talvi Marsk (1901 - 1977) was a composer from the island of Hent. Marsk played the cello in the Hent Quartet.")],
     "Talvi Marsk cello", "cello"),
    ("In which year did the Quillon Bridge open to traffic?",
     [("Search Quillon Bridge.", "Search[Quillon Bridge]",
       "The Quillon Bridge was built from 1931 to 1934 over the Sarle estuary and opened in 1934.")],
     "1931-1934", "1934"),
]
TOO_SHORT = [
    ("Which gallery in Porthaven shows the Lenning collection?",
     [("Search Lenning collection.", "Search[Lenning collection]",
       "The Lenning collection of coastal paintings has hung in the Harbour Gallery Porthaven since 1990.")],
     "Harbour Gallery", "Harbour Gallery Porthaven"),
    ("At which edition of the Vessa Film Days did Grey Tide premiere?",
     [("Search Grey Tide.", "Search[Grey Tide (film)]",
       "Grey Tide is a 2015 drama film. It premiered at the Vessa Film Days in 2015 and won its jury prize.")],
     "Vessa Film Days", "12th Vessa Film Days"),
]
# a wrong answer written near-verbatim from a page, and one whose words the page holds only far apart
MISREAD = ("What kind of fairs is the village of Oddenby known for?",
           [("Search Oddenby.", "Search[Oddenby]",
             "Oddenby is a village in the Lurr valley. Oddenby is known for its cedar tree planting festival, held "
             "each spring since 1950.")],
           "cedar tree planting festivals", "cedar tree planting festival")
SCATTERED = ("What trades built the town of Pellow Creek?",
             [("Search Pellow Creek.", "Search[Pellow Creek]",
               "Pellow Creek grew after silver was found in its hills in 1870. The railway came in 1881 and brought "
               "settlers from the coast, who opened stores, a school, a bank, two hotels and a newspaper, and the "
               "town kept growing for decades until its mining ended; later cattle grazed the valley and ranching "
               "took over.")],
             "silver mining and cattle ranching", "silver mining")
SUCCESSES = [
    ("Which country is the port of Elbrin in?",
     [("Search Elbrin.", "Search[Elbrin]", "Elbrin is a port city in Norland, on the Teel Sea.")], "Norland"),
    ("Who founded the Carrow Press?",
     [("Search Carrow Press.", "Search[Carrow Press]", "The Carrow Press was founded by Ida Venn in 1922.")], "Ida Venn"),
    ("What sport did the father of Mila Oster play?",
     [("Search Mila Oster.", "Search[Mila Oster]", "Mila Oster is a painter, the daughter of Rune Oster."),
      ("Search Rune Oster.", "Search[Rune Oster]", "Rune Oster was a Norlandic handball player.")], "handball"),
]


RETRY = (" You have attempted to answer following question before and failed. The following reflection(s) give a "
         "plan to avoid failing to answer the question in the same way you did previously. Use them to improve your "
         "strategy of correctly answering the given question.\nReflections:\n- I answered too quickly; read the page "
         "again.")


def _log() -> str:
    """Two trials: the successes succeed in the first; every other question fails in both, the
    second time with the reflection the harness adds to a retried question."""
    wrong = [*TOO_LONG, *TOO_SHORT, MISREAD, SCATTERED]
    first = _trial(1, [_agent(q, steps, a, a, True) for q, steps, a in SUCCESSES],
                   [_agent(q, steps, given, gold, False) for q, steps, given, gold in wrong])
    second = _trial(2, [], [_agent(q + RETRY, steps, given, gold, False) for q, steps, given, gold in wrong])
    return first + "\n" + second


def _build(tmp_path: Path, name: str = "out") -> Path:
    log = tmp_path / "react_invented_trials.txt"
    if not log.exists():
        log.write_text(_log())
    out = tmp_path / name
    build(BuildOptions(inputs=[log], out=out, offline=True, quiet=True))
    return out


def _insight(out: Path, key: str) -> tuple[dict, str]:
    data = json.loads((out / "corpus.json").read_text())
    (entry,) = [i for i in data["insights"] if i["key"] == key]
    return entry, (out / "insight" / f"{entry['id']}.md").read_text()


def _turns(out: Path, step: str) -> list[dict]:
    return [json.loads(line) for line in (out / "raw" / step / "solver.full.jsonl").read_text().splitlines()]


def _cases(page: str) -> list[tuple[str, str]]:
    block = page.split("## Cases\n", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^- \[(step-\d+)\]\(\.\./compilation/step-\d+\.md\): (.+)$", block, re.M)


def _plain(md: str) -> str:
    return re.sub(r"\\([\[\]`<>\\])", r"\1", md)


def test_each_answer_lesson_shows_true_cases_from_distinct_tasks(tmp_path):
    out = _build(tmp_path)
    for key, questions in (("answer|Finish|extra", [*TOO_LONG, SCATTERED]), ("answer|Finish|partial", TOO_SHORT)):
        entry, page = _insight(out, key)
        cases = _cases(page)
        assert len(cases) == min(3, len(questions))  # one per task, though each task failed in two trials
        asked = set()
        for step, text in cases:
            turns = _turns(out, step)
            asked.add(turns[0]["content"])
            finish = next(t for t in turns if t.get("name") == "Finish")
            m = re.match(r'answered Finish\[(.+?)\], expected "(.+?)"; (.+)$', _plain(text))
            assert m, text
            assert m.group(1) == finish["arguments"]
            gold = next(g for q, _s, _a, g in questions if q == turns[0]["content"])
            assert m.group(2) == gold
            seen = re.match(r"the expected words appear in what the look-up at turn (\d+) \((\w+)\[(.+?)\]\) returned: "
                            r'"…?(.+?)…?"$', m.group(3))
            if seen:  # the quoted words are that look-up's own, and hold the expected answer
                look = next(t for t in turns if str(t.get("turn")) == seen.group(1))
                assert look["name"] == seen.group(2) and look["arguments"] == seen.group(3)
                assert seen.group(4) in look["result"] and gold in seen.group(4)
            else:  # no look-up held the expected answer as written
                assert m.group(3).startswith("no look-up before it returned the expected words")
                assert not any(gold in (t.get("result") or "") for t in turns)
        assert len(asked) == len(cases)


def test_the_too_long_and_too_short_pages_count_both_and_link_each_other(tmp_path):
    out = _build(tmp_path)
    long_entry, long_page = _insight(out, "answer|Finish|extra")
    short_entry, short_page = _insight(out, "answer|Finish|partial")
    assert long_entry["counts"]["runs"] == 8 and short_entry["counts"]["runs"] == 4  # two trials each
    for page, other in ((long_page, short_entry), (short_page, long_entry)):
        assert ("Of the 12 runs whose answer differed from the expected one only by words added or left out (runs of "
                "6 tasks), 8 (of 4 tasks) answered with every expected word plus others, and 4 (of 2 tasks) with only "
                "part of the expected words.") in page
        # each page shows its own slip's counts, not the other's again (the other page has them)
        # joined: "River Wendle and Orrin Canal", "silver mining and cattle ranching" (two trials each);
        # the question's own words: "Talvi Marsk cello" (two trials)
        assert ("Too long: in 4 of 8 the answer joined more items" in page) == (page is long_page)
        assert ("in 2 of 8 every added word was already in the question" in page) == (page is long_page)
        # the whole form "Harbour Gallery Porthaven" was on the page; "12th Vessa Film Days" never was
        assert ("Too short: in 2 of 4 the whole expected form appears in what a look-up before the answer returned"
                in page) == (page is short_page)
        assert ("By what the expected answer was: a number or year: 2 too long, 0 too short; a name: 2 too long, "
                "4 too short; a phrase: 4 too long, 0 too short.") in page
        assert f"The opposite slip has its own page: [{other['title']}]({other['id']}.md)" in page
    assert long_entry["length_rule"] == short_entry["length_rule"]
    # the rule both counts give is advice on both pages, so neither reads as the opposite of the other
    rule = next(x for x in long_entry["length_rule"] if x.startswith("So: "))[4:]
    assert all(f"Either way: {rule}" in e["guideline"] for e in (long_entry, short_entry))


def test_what_successes_did_is_said_with_the_test_verdict_and_never_as_a_cause_when_it_does_not_separate(tmp_path):
    out = _build(tmp_path)
    _entry, page = _insight(out, "answer|Finish|extra")
    lines = page.split("against the failed runs here:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    followed = next(x for x in lines if x.startswith("- searched a name an earlier look-up's answer had shown ("))
    # 0 of 8 failed runs here, 1 of 3 successful runs (the Mila Oster question): too few to tell
    assert "0 of the 8 failed runs here, 1 of 3 successful runs" in followed
    assert "not shown to separate them" in followed and "more often" not in followed
    assert not any("answered with words a look-up" in x for x in lines)  # a form lesson: left out there
    # the verdict follows the test alone: the same pattern separates once the runs show it does
    many = [{"followed": False, "answered": 1}] * 12
    won = [{"followed": True, "answered": 1}] * 10 + [{"followed": False, "answered": 1}] * 2
    said = versus([({"outcome": "failure", "step": f"step-{k:04d}"}, {"case": {"given": "x", **c}})
                   for k, c in enumerate(many)], won)
    assert said[0].startswith("searched a name an earlier look-up's answer had shown (a query with words beyond the "
                              "task text's, all of them in one earlier answer given without an error): 0 of the 12 failed runs here, "
                              "10 of 12 successful runs of this task type; successful runs did this more often")
    alike = versus([({"outcome": "failure", "step": f"step-{k:04d}"}, {"case": {"given": "x", **c}})
                    for k, c in enumerate(won)], won)
    assert "not shown to separate them" in alike[0] and "more often" not in alike[0]


def test_the_length_rule_says_only_what_its_counts_show():
    long_cases = [({"step": "step-0001", "task_id": "a"}, {"relation": "more", "shape": "name", "joined": True,
                                                           "extra_in_task": False})]
    said = " ".join(length_rule(long_cases, []))
    assert "1 (of 1 tasks) answered with every expected word plus others, and 0 (of 0 tasks)" in said
    assert "Too short" not in said and "question already states" not in said
    assert said.endswith("So: give one item when the question asks for one, not a list joined with a comma or \"and\".")
    assert length_rule([], []) == []


def test_a_near_verbatim_answer_is_close_to_the_look_up_it_copied(tmp_path):
    out = _build(tmp_path)
    data = json.loads((out / "corpus.json").read_text())
    step_of = {r["instruction"]: r["step"] for r in data["runs"]}
    page = (out / "compilation" / f"{step_of[MISREAD[0]]}.md").read_text()
    assert ('`argument` is "cedar tree planting festivals": no earlier turn holds it as written, but it is close to '
            'Search\'s answer at turn 1: "cedar tree planting festival".') in _plain(page)
    # the words of this answer stand only far apart in the page: no passage is quoted as its source,
    # only how many of its words one sentence holds
    far = _plain((out / "compilation" / f"{step_of[SCATTERED[0]]}.md").read_text())
    assert ('`argument` is "silver mining and cattle ranching", close to what Search returned at turn 1 (3 of its 4 '
            'main words).') in far
    assert "close to Search's answer" not in far


def test_rebuilds_are_byte_identical(tmp_path):
    first, second = _build(tmp_path, "one"), _build(tmp_path, "two")
    for page in sorted((first / "insight").glob("*.md")):
        assert page.read_bytes() == (second / "insight" / page.name).read_bytes()
    cases = [[l.get("case") for l in r["lessons"]] for r in json.loads((first / "corpus.json").read_text())["runs"]]
    assert any(any(c) for c in cases)
    assert cases == [[l.get("case") for l in r["lessons"]]
                     for r in json.loads((second / "corpus.json").read_text())["runs"]]


def _entry(k: int, success: bool, case: dict) -> dict:
    key = "procedure|Finish:looked-up" if success else "answer|Finish|not-found"
    return {"step": f"step-{k:04d}", "run_id": f"r{k}", "task_id": f"t{k}", "instruction": f"question {k}?",
            "task_type": None, "apps": None, "outcome": "success" if success else "failure", "title": "",
            "patterns": [], "lessons": [{"key": key, "title": key, "guideline": "Do the thing.", "applicability": "",
                                         "detail": "", "worked": success, "case": {"tool": "Finish", "turn": 3,
                                                                                   "given": "x", **case}}]}


def test_only_a_choice_that_separates_becomes_advice():
    from wikitrace.corpus.insights import gather

    took = {"held": {"turn": 2, "call": "Search[y]", "text": "x"}, "answered": 2, "in_task": False}
    guessed = {"answered": 2, "in_task": False}
    runs = [_entry(k, True, took) for k in range(12)] + [_entry(12 + k, False, guessed) for k in range(12)]
    (failed,) = [i for i in gather(runs) if i["key"] == "answer|Finish|not-found"]
    assert failed["guideline"].endswith(" Successful runs of this task type did so more often than the failed runs "
                                        "here: answer in the words a look-up returned, as written (counts under "
                                        "Evidence).")
    assert any(x.startswith("answered with words a look-up had returned as written (the whole answer, word for word, "
                            "in what a look-up before it returned without an error; yes/no answers not counted, nor a "
                            "wrong answer of one lower-case word): 0 of the 12 failed runs here, 12 of 12 "
                            "successful runs of this task type whose question did not name the expected answer; "
                            "successful runs did this more often") for x in failed["versus"])
    # the same runs with the choice spread alike over both outcomes: no advice, and "not shown" on the page
    runs = [_entry(k, True, took if k % 2 else guessed) for k in range(12)] + \
           [_entry(12 + k, False, took if k % 2 else guessed) for k in range(12)]
    (failed,) = [i for i in gather(runs) if i["key"] == "answer|Finish|not-found"]
    assert failed["guideline"] == "Do the thing."
    assert all("not shown to separate them" in x for x in failed["versus"])


def test_the_words_a_look_up_returned_are_not_counted_where_every_answer_here_is_a_yes_or_a_no():
    """A yes or a no is never counted as a look-up's words: on a page whose answers are all yes or no,
    "0 of the 12 failed runs answered in a look-up's words" holds by how the count is made, and is
    neither said nor advised."""
    from wikitrace.corpus.insights import gather

    took = {"held": {"turn": 2, "call": "Search[y]", "text": "x"}, "answered": 2, "in_task": False}
    said_no = {"answered": 2, "in_task": False, "given": "no"}
    runs = [_entry(k, True, took) for k in range(12)] + [_entry(12 + k, False, said_no) for k in range(12)]
    (failed,) = [i for i in gather(runs) if i["key"] == "answer|Finish|not-found"]
    assert failed["guideline"] == "Do the thing."
    assert not any(x.startswith("answered with words a look-up had returned") for x in failed["versus"])


def test_a_choice_most_failed_runs_here_made_too_is_said_not_to_suffice_instead_of_advised():
    from wikitrace.corpus.insights import gather

    took = {"held": {"turn": 2, "call": "Search[y]", "text": "x"}, "answered": 2, "in_task": False}
    guessed = {"answered": 2, "in_task": False}
    # successes all answered in a look-up's words, and so did 7 of the 12 failed runs: it separates, yet
    # telling the failed runs' kind of task to do it would repeat what those runs did
    runs = [_entry(k, True, took) for k in range(30)] + [_entry(30 + k, False, took if k < 7 else guessed)
                                                         for k in range(12)]
    (failed,) = [i for i in gather(runs) if i["key"] == "answer|Finish|not-found"]
    assert any("successful runs did this more often" in x for x in failed["versus"] if x.startswith("answered with"))
    assert "answer in the words a look-up returned" not in failed["guideline"]
    assert failed["guideline"].endswith("Answering in a look-up's own words, as written, did not suffice: 7 of the 12 "
                                        "failed runs here did so too.")
    # nor is it advised again from the trials of the same task, though the difference stays listed
    from wikitrace.corpus.trials import advice

    for e in runs:
        e["patterns"] = ["said|Finish|shown"] if e["lessons"][0]["case"].get("held") else []
    for k in range(5):  # the failed runs that guessed share their tasks with successes
        runs[37 + k]["task_id"] = f"t{k}"
    (failed,) = [i for i in gather(runs) if i["key"] == "answer|Finish|not-found"]
    top = failed["same_task"]["differences"][0]
    assert top["text"].startswith("gave a Finish answer whose words beyond the task text it was given all came from earlier answers")
    assert top["runs"] == 5 and advice(failed) == ""


def _option(k: int, success: bool, answered: int) -> dict:
    entry = _entry(k, success, {"answered": answered, "in_task": True})
    if not success:
        entry["lessons"][0]["key"] = "answer|Finish|option"
    return entry


def test_look_each_option_up_is_advised_only_when_the_failed_runs_did_not():
    from wikitrace.corpus.insights import gather

    for failed_answered, looked in ((2, True), (1, False)):
        runs = [_option(k, True, 2) for k in range(5)] + [_option(5 + k, False, failed_answered) for k in range(4)]
        (page,) = [i for i in gather(runs) if i["key"] == "answer|Finish|option"]
        if looked:  # every failed run made the successes' look-ups: looking them up was not what failed
            assert page["guideline"].startswith("When the request names the options, looking each one up is not "
                                                "enough: find for each the fact the request compares them on")
            assert page["guideline"].endswith("(4 of the 4 failed runs here made at least 2 distinct look-ups "
                                              "answered without an error).")
        else:
            assert page["guideline"].startswith("Do the thing.")


def test_a_verdict_or_a_click_is_never_said_to_come_from_a_look_up(tmp_path):
    """FEVER verdicts and WebShop purchases (the importer fixtures of those printouts): the case
    shows the calls before the last one, what the last of them returned, and the score."""
    fixtures = Path(__file__).parent / "fixtures" / "importers" / "react_notebook"
    for name, ending in (("fever", "answered Finish["), ("webshop", "ended with click[Buy Now]")):
        out = tmp_path / name
        build(BuildOptions(inputs=[fixtures / f"{name}_printout.txt"], out=out, offline=True, quiet=True))
        answers = {e["id"] for e in json.loads((out / "corpus.json").read_text())["insights"]
                   if any(not c.get("checked") for c in e.get("cases") or [])}  # not a failed page's checked fact
        lines = [text for page in sorted((out / "insight").glob("insight-*.md")) if page.stem in answers
                 for _step, text in _cases(page.read_text())]
        assert lines
        for text in map(_plain, lines):
            assert text.startswith(ending) and "; its calls before it: " in text and re.search(r"; score [\d.]+$", text)
            assert "the expected words appear in" not in text and "stand in the look-up" not in text


def test_a_one_word_lower_case_answer_is_never_said_to_stand_in_a_look_up(tmp_path):
    """"no" is a word of most pages: a yes/no answer is worked out, not read off one."""
    log = tmp_path / "react_yes_no.txt"
    log.write_text(_trial(1, [_agent("Were both Arlo Penn and Tova Rusk born in Norland?",
                                     [("Search Arlo Penn.", "Search[Arlo Penn]",
                                       "Arlo Penn (born 1950 in Norland) is a sculptor. He has no children."),
                                      ("Search Tova Rusk.", "Search[Tova Rusk]",
                                       "Tova Rusk (born 1961 in Estmark) is a poet; no prize was given to her.")],
                                     "no", "no", True)], []))
    out = tmp_path / "out"
    build(BuildOptions(inputs=[log], out=out, offline=True, quiet=True))
    (case,) = [c for page in (out / "insight").glob("insight-*.md") if "## Cases" in page.read_text()
               for c in _cases(page.read_text())]
    assert _plain(case[1]).startswith("answered Finish[no]; its look-ups before it: Search[Arlo Penn], Search[Tova Rusk]")



def test_a_success_whose_answer_no_page_held_teaches_no_procedure(tmp_path):
    """A right name no look-up returned and the question never gave passed by the model's own
    knowledge or by luck: its log shows no way to the answer another run could copy, so it teaches no
    "settle with Finish" page, and its own page says it taught none."""
    log = tmp_path / "react_own.txt"
    log.write_text(_trial(1, [_agent("Who founded the publisher Norland Press?",
                                     [("Search Norland Press.", "Search[Norland Press]",
                                       "Norland Press is a small publisher in Estmark, known for poetry.")],
                                     "Kira Moss", "Kira Moss", True),
                              _agent("Which of Jon Reddy and Pete Vance has been a member of more bands?",
                                     [("Search Jon Reddy.", "Search[Jon Reddy]",
                                       "Jonathan Reddy is a singer who has fronted five bands."),
                                      ("Search Pete Vance.", "Search[Pete Vance]",
                                       "Peter Vance has been a member of two bands.")],
                                     "Jon Reddy", "Jon Reddy", True)], []))
    out = tmp_path / "out"
    build(BuildOptions(inputs=[log], out=out, offline=True, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    titles = {i["title"] for i in data["insights"]}
    assert not any("no look-up" in t for t in titles), titles
    own = next(r for r in data["runs"] if "Norland" in r["instruction"])
    assert own["insights"] == []
    page = (out / "compilation" / f"{own['step']}.md").read_text()
    assert "## Insights from this run\n- None: this run's log shows no step another run could copy or avoid.\n" in page
    # one of the options a "which of" question names, chosen once both were looked up, is a way to copy:
    # its page says to look each option up and answer with the question's spelling
    assert "Settle with Finish, naming the option the look-ups favour, as the question spells it" in titles
    option = next(i for i in data["insights"] if i["title"].startswith("Settle with Finish, naming the option"))
    assert option["key"] == "procedure|Finish:option"
    assert "once each option it names was looked up and their pages compared on what it asks" in option["guideline"]


def test_runs_naming_an_option_of_a_which_question_share_one_ending_whatever_the_look_ups_wrote(tmp_path):
    """A success that named the right option (a look-up wrote it word for word) and failed runs that
    named the other one end the same way: their page counts them together, and the check the failed
    runs teach ("compare the options") is what its What to do says to make first."""
    question = "Which of Jon Reddy and Pete Vance has been a member of more bands?"
    steps = [("Search Jon Reddy.", "Search[Jon Reddy]", "Jon Reddy is a singer who has fronted five bands."),
             ("Search Pete Vance.", "Search[Pete Vance]", "Pete Vance has been a member of two bands.")]
    log = tmp_path / "react_options.txt"
    other = "Which of Ada Lorn and Bo Keel has written more novels?"
    novels = [("Search Ada Lorn.", "Search[Ada Lorn]", "Ada Lorn has written nine novels."),
              ("Search Bo Keel.", "Search[Bo Keel]", "Bo Keel has written four novels.")]
    log.write_text(_trial(1, [_agent(question, steps, "Jon Reddy", "Jon Reddy", True)],
                          [_agent(question, steps, "Pete Vance", "Jon Reddy", False),
                           _agent(other, novels, "Bo Keel", "Ada Lorn", False)]))
    out = tmp_path / "out"
    build(BuildOptions(inputs=[log], out=out, offline=True, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    assert all("procedure|Finish:option" in r["patterns"] for r in data["runs"]), [r["patterns"] for r in data["runs"]]
    page = next(i for i in data["insights"] if i["key"] == "procedure|Finish:option")
    assert page["contrast"]["failed_met"] == 2 and page["contrast"]["success_met"] == 1
    assert "the check to make first: \"Compare the named options on what is asked before Finish\"" in page["advice"]


def test_an_answer_is_an_asked_option_only_where_a_question_offers_it_beside_another():
    from wikitrace.compilers.arguments import asked_option

    question = "Which of Jon Reddy and Pete Vance has been a member of more bands?"
    assert asked_option(question, "Jon Reddy") and asked_option(question, "pete vance")
    assert asked_option("Who was born first, ABBA or KISS?", "ABBA")
    assert asked_option('Which movie was filmed first "The Guest" or "You\'re Next"?', "You're Next")
    # words the question states that are no option asked between: the clue, not a choice
    assert not asked_option("What battle was fought on October 28, 1776 near White Plains, New York?", "White Plains")
    assert not asked_option("Which band has more members?", "band")
    assert not asked_option("Is Oasis or Ash the older band.", "Ash")  # no question mark: no question
    # "or" offers the choice in any question, with no which or who: "Is A or B written more for ...?"
    either = "Is Velvetpark or Shape magazine written more for a queer readership?"
    assert asked_option(either, "Velvetpark") and asked_option(either, "Shape magazine")
    assert not asked_option("Were Jon Reddy and Pete Vance in the same band?", "Pete Vance")  # "and" asks no choice
    assert not asked_option(question, "Reddy and")  # not a whole item


def test_a_success_s_source_line_lists_each_look_up_as_sent_an_error_said_as_one(tmp_path):
    """The first Search sent the title in quote marks and failed (the marks are why); the source
    line shows it as sent, marked as an error, beside the look-up that went through."""
    log = tmp_path / "react_quoted.txt"
    log.write_text(_trial(1, [_agent("Which band covered If You Ever Get Lonesome?",
                                     [("Search the song.", 'Search["If You Ever Get Lonesome"]',
                                       'Could not find ["If You Ever Get Lonesome"]. Similar: [\'Wren and Ash (duo)\'].'),
                                      ("Search the band.", "Search[Wren and Ash (duo)]",
                                       "Wren and Ash is a country duo who covered If You Ever Get Lonesome in 2014.")],
                                     "Wren and Ash", "Wren and Ash", True)], []))
    out = tmp_path / "out"
    build(BuildOptions(inputs=[log], out=out, offline=True, quiet=True))
    pages = "".join(p.read_text() for p in (out / "insight").glob("insight-*.md"))
    assert ("looked up Search\\[\"If You Ever Get Lonesome\"\\] (an error) and Search\\[Wren and Ash (duo)\\]"
            in pages), pages


def test_a_retry_whose_argument_a_later_answer_sent_names_that_call(tmp_path):
    """The agent searched the name it then answered: the retry's line names the Finish that sent the
    same argument; and where a trial line names the look-up that held the answer, one that searched
    the answer itself is said as such, not as a look-up that returned it."""
    log = tmp_path / "react_echo.txt"
    right = _agent("Which war does the Tarn Hollow Memorial commemorate?",
                   [("Search the memorial.", "Search[Tarn Hollow Memorial]",
                     "Could not find [Tarn Hollow Memorial]. Similar: ['Tarn Hollow', 'Crimean Memorial']."),
                    ("It must be the Crimean War.", "Search[Crimean War]",
                     "The Crimean War was fought from 1853 to 1856.")], "Crimean War", "Crimean War", True)
    log.write_text(_trial(1, [right], []))
    out = tmp_path / "out"
    build(BuildOptions(inputs=[log], out=out, offline=True, quiet=True))
    page = next((out / "compilation").glob("step-*.md")).read_text()
    assert "called it again at turn 2 with the argument changed; Finish at turn 3 sent the same argument." in page
    [run] = json.loads((out / "corpus.json").read_text())["runs"]
    assert run["decisive"]["answer"]["found"] == {"tool": "Search", "turn": 2, "query": "Crimean War", "echo": True}
    from wikitrace.corpus.trial_wording import _answer_found

    assert _answer_found({"found": {"tool": "Search", "query": "Crimean War", "echo": True}}) == \
        ", a name it had searched itself (Search\\[Crimean War\\])"
    assert _answer_found({"found": {"tool": "Search", "query": "Crimean War"}}) == \
        ", which Search\\[Crimean War\\] had returned"


def test_a_yes_or_no_answer_settles_as_a_verdict_not_as_an_answer_no_look_up_held(tmp_path):
    """"no" is chosen between two, as a verdict label is: its run's procedure is the verdict one, and
    the page for answers no look-up returned (names from memory) keeps only those."""
    log = tmp_path / "react_yesno.txt"
    log.write_text(_trial(1, [_agent("Are Arlo Penn and Tova Rusk both painters?",
                                     [("Search Arlo Penn.", "Search[Arlo Penn]", "Arlo Penn is a Danish painter."),
                                      ("Search Tova Rusk.", "Search[Tova Rusk]", "Tova Rusk is a Swedish sculptor.")],
                                     "no", "no", True)], []))
    out = tmp_path / "out"
    build(BuildOptions(inputs=[log], out=out, offline=True, quiet=True))
    [run] = json.loads((out / "corpus.json").read_text())["runs"]
    assert "procedure|Finish:label" in run["patterns"] and "procedure|Finish:own" not in run["patterns"]


def test_the_leave_out_clause_yields_where_a_too_short_answer_dropped_a_word_the_question_states():
    # "Albany New York" for "Albany" (the question says New York) is too long; "Stedelijk Museum" for
    # "Stedelijk Museum Amsterdam" (the question says Amsterdam) is too short: the museum's name holds it
    long_cases = [({"step": "step-0001", "task_id": "a", "instruction": "Which city in New York hosts the fair?"},
                   {"given": "Albany New York", "expected": "Albany", "extra_in_task": True})]
    short = ({"step": "step-0002", "task_id": "b", "instruction": "Which museum in Amsterdam shows the painting?"},
             {"given": "Stedelijk Museum", "expected": "Stedelijk Museum Amsterdam"})
    plain = " ".join(length_rule(long_cases, []))
    assert "leave out the words the question already states." in plain and "unless" not in plain
    said = " ".join(length_rule(long_cases, [short]))
    assert "in 1 of 1 a word left out was one the question states." in said
    assert "leave out the words the question already states, unless they are part of the name of the thing asked for" in said


def test_a_failed_answer_case_names_what_the_successful_trial_of_its_task_answered(tmp_path):
    """The first trial answered with the studio the page named first; the retry read on and answered
    right. The failed run's case on its answer page shows the answer that worked beside its own."""
    question = "Which studio took over the Lantern Run games after Kell Games?"
    steps = [("Search Lantern Run.", "Search[Lantern Run]",
              "Lantern Run is a series first made by Kell Games. In 2012 Orrin Studios took over the series.")]
    log = tmp_path / "react_retry.txt"
    log.write_text(_trial(1, [], [_agent(question, steps, "Kell Games", "Orrin Studios", False)]) + "\n"
                   + _trial(2, [_agent(question + RETRY, steps, "Orrin Studios", "Orrin Studios", True)], []))
    out = tmp_path / "out"
    build(BuildOptions(inputs=[log], out=out, offline=True, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    lost = next(r["step"] for r in data["runs"] if r["outcome"] == "failure")
    won = next(r["step"] for r in data["runs"] if r["outcome"] == "success")
    entry = next(i for i in data["insights"] if i["key"].startswith("answer|Finish|"))
    case = next(c["text"] for c in entry["cases"] if c["step"] == lost)
    assert case.startswith("answered Finish[Kell Games], expected \"Orrin Studios\""), case
    assert f". The successful trial {won} of its task answered \"Orrin Studios\" at its turn 2" in case, case
    assert "this run" not in case


def test_a_name_the_agent_gave_the_thing_asked_and_never_looked_up_is_said_with_its_thought(tmp_path):
    """"The trophy … is the Little Brown Stein", then an answer about the trophy with no look-up of it:
    the page names the skipped step. A name used as a word before a noun ("a South Korean film") is not."""
    from wikitrace.compilers.offline import compile_offline
    from wikitrace.runs import load

    question = "The trophy given to the winner of the game between Ardo College and Belt College is made of what?"
    steps = [("Search the game.", "Search[Ardo-Belt game]", "The Ardo-Belt game is a college rivalry played since 1901.")]

    def run_of(thought: str) -> object:
        text = _agent(question, steps, "pewter", "oak", False).replace("Thought 2: So the answer is pewter.",
                                                                       f"Thought 2: {thought}")
        log = tmp_path / "react_trophy.txt"
        log.write_text(_trial(1, [], [text]))
        return next(r for r in load._read(log, load.detect(log)) if hasattr(r, "turns"))

    said = "The trophy given to the winner of the game is the Golden Oak Cup. It is made of pewter."
    facts = [f.text for f in compile_offline(run_of(said)).in_short]
    assert any(f.startswith('Before answering at turn 2 the agent wrote "The trophy given to the winner of the game is '
                            'the Golden Oak Cup. It is made of pewter.": it names "Golden Oak Cup" for what the question '
                            'describes, which no page the run read held and no call of the run looked up.')
               for f in facts), facts
    adjective = "The trophy given to the winner of the game is a Golden Oak trophy of pewter."
    assert not any("for what the question describes" in f for f in (x.text for x in compile_offline(run_of(adjective)).in_short))


def test_the_cases_show_first_the_failed_runs_whose_task_a_trial_answered_rightly():
    """A failed answer's case can show what a successful trial of its question answered and which
    look-up gave it; so the runs whose question has such a trial come first (each part in step
    order), before those whose question no trial answered."""
    from wikitrace.corpus.answer_cases import pick

    def member(n: int, task: str) -> tuple[dict, dict]:
        return ({"step": f"step-{n:04d}", "outcome": "failure", "task_id": task},
                {"case": {"tool": "Finish", "given": f"a{n}", "expected": f"b{n}"}})

    members = [member(1, "q1"), member(2, "q2"), member(3, "q3"), member(4, "q4")]
    answered = {"q2", "q4"}
    picked = pick(members, won=lambda e: e["task_id"] in answered)
    assert [e["step"] for e, _c in picked] == ["step-0002", "step-0004", "step-0001"]
    assert [e["step"] for e, _c in pick(members)] == ["step-0001", "step-0002", "step-0003"]


def test_a_case_says_when_only_an_error_s_list_offered_the_expected_answer(tmp_path):
    """No look-up that went through returned the expected name, but the failed Search's list of near
    names held it: the case says so, and calls the look-up before that error the last one that went
    through, not the last look-up (a rater found that false where the error came after it)."""
    steps = [("Search Ama Dorr.", "Search[Ama Dorr]", "Ama Dorr is a boxer from Wenlow who fought twelve title bouts."),
             ("Search her next fight.", "Search[Ama Dorr next fight in Wenlow]",
              "Could not find [Ama Dorr next fight in Wenlow]. Similar: ['Ida Lusk (boxer)', 'Wenlow Arena', "
              "'Kara Moss'].")]
    question = "Whom did the boxer Ama Dorr fight next in Wenlow?"
    log = tmp_path / "react_listed_trials.txt"
    log.write_text(_trial(1, [], [_agent(question, steps, "Kara Moss", "Ida Lusk", False)]))
    out = tmp_path / "out"
    build(BuildOptions(inputs=[log], out=out, offline=True, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    cases = [c["text"] for i in data["insights"] for c in i.get("cases") or []]
    turns = [t for t in _turns(out, "step-0000") if t.get("type") == "function_call"]
    err = next(t["turn"] for t in turns if "Similar" in (t.get("result") or ""))
    first = next(t["turn"] for t in turns if (t.get("result") or "").startswith("Ama Dorr is"))
    assert any(f'no look-up that went through returned the expected words, but the error at turn {err} '
               f'(Search[Ama Dorr next fight in Wenlow]) listed "Ida Lusk"' in c
               and f"the last look-up that went through (turn {first}, Search[Ama Dorr])" in c for c in cases), cases
