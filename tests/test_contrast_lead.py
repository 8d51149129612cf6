"""A lesson that quotes the system prompt's rule on its call leads with the contrast instead,
when the runs show the call separates the outcomes; where they do not, it is left as written."""

from __future__ import annotations

from wikitrace.corpus.insights import gather

RULE = ("Hand the request off with transfer_to_human_agents when none of the other tools can do what it asks, "
        "and say why in the hand-off. The system prompt's rule on it: \"Transfer only when you cannot help.\"")


def _run(k: int, success: bool, handed_off: bool) -> dict:
    key = "hand-off|transfer_to_human_agents" if handed_off else "idle|none"
    return {"step": f"step-{k:04d}", "run_id": f"r{k}", "task_id": f"t{k}", "instruction": f"request {k}",
            "task_type": "shop", "apps": None, "outcome": "success" if success else "failure", "title": "",
            "patterns": [key], "lessons": [{"key": key, "title": key, "guideline": RULE if handed_off else "Ask first.",
                                            "applicability": "In shop tasks.", "detail": f"turn 3: {key}",
                                            "worked": success}]}


def _hand_off(runs: list[dict]) -> dict:
    (entry,) = [i for i in gather(runs) if i["key"].startswith("hand-off|")]
    return entry


def test_a_quoted_rule_gives_way_to_a_contrast_that_separates():
    runs = ([_run(k, True, True) for k in range(9)] + [_run(9 + k, False, True) for k in range(2)]
            + [_run(20 + k, False, False) for k in range(9)] + [_run(40 + k, True, False) for k in range(2)])
    entry = _hand_off(runs)
    assert entry["contrast"]["verdict"] == "success"
    assert entry["guideline"] == (
        "Runs of this task type that handed off with transfer_to_human_agents: 9 successful, 2 failed; they "
        "succeeded more often than the runs that did not. Hand the request off with "
        "transfer_to_human_agents when none of the other tools can do what it asks, and say why in the hand-off.")


def test_a_quoted_rule_stays_where_the_contrast_does_not_separate():
    runs = ([_run(k, k % 2 == 0, True) for k in range(8)] + [_run(20 + k, k % 2 == 0, False) for k in range(8)])
    entry = _hand_off(runs)
    assert entry["contrast"]["verdict"] not in ("success", "failure")
    assert entry["guideline"] == RULE


LONG_RULE = ("Before changing any order (adding items, changing the address, switching the delivery day or cancelling it), "
             "read the change back to the customer and wait for their explicit yes before going ahead.")


def _rule_run(k: int, success: bool, broke: bool) -> dict:
    key = "rule|ab12cd34ef"
    guide = f'Before each call this rule covers, do what it asks: "{LONG_RULE}"'
    return {"step": f"step-{k:04d}", "run_id": f"r{k}", "task_id": f"t{k}", "instruction": f"request {k}",
            "task_type": "shop", "apps": None, "outcome": "success" if success else "failure", "title": "",
            "patterns": [key] if broke else [], "lessons": [{"key": key, "title": "Keep the rule", "guideline": guide,
                                                             "applicability": "In shop tasks.", "detail": "turn 3",
                                                             "worked": success}]}


def test_a_rule_page_with_a_separating_contrast_leads_with_it_and_quotes_the_rule_short():
    runs = ([_rule_run(k, False, True) for k in range(9)] + [_rule_run(10 + k, True, True) for k in range(2)]
            + [_rule_run(20 + k, True, False) for k in range(9)] + [_rule_run(40 + k, False, False) for k in range(2)])
    (entry,) = gather(runs)
    assert entry["contrast"]["verdict"] == "failure"
    assert entry["guideline"] == (
        "Runs of this task type that plainly broke this rule (a reply in the user's own words left in doubt): 2 "
        "successful, 9 failed; they failed more often than the runs "
        "that did not. Before each call this rule covers, do what it asks: \"Before changing any order (adding items, "
        "changing the address, switching the delivery day or …\"")
    # where the runs do not show the rule separates them, the page keeps the whole quote and leads with no count
    alike = [_rule_run(k, k % 2 == 0, k % 4 < 2) for k in range(16)]
    (entry,) = gather(alike)
    assert entry["guideline"] == f'Before each call this rule covers, do what it asks: "{LONG_RULE}"'


def test_a_rule_pages_count_says_what_it_leaves_out():
    """A confirmation rule's count takes only the changes the log plainly shows without a yes; a
    reader who finds a successful run that changed after the user's own words must not read "0
    successful broke it" as "no successful run changed without a yes"."""
    from wikitrace.corpus.contrast_words import contrast_sentence

    said = contrast_sentence({"title": "Keep the rule: ask first", "contrast": {
        "pattern": "rule|31f656c6a2", "failed_met": 12, "success_met": 0, "verdict": "failure"}})
    # round 18: a request naming what the change acts on is counted, words that may agree are not; both said
    assert said.startswith("Runs of this task type that broke this rule (counting the changes the log plainly shows "
                           "against it, a request that names what the change acts on among them; one the log leaves in "
                           "doubt, such as a change made after the user answered in their own words without naming it, "
                           "is not counted): 12 failed, 0 successful.")


def _qa_run(k: int, success: bool, facts: list[dict]) -> dict:
    key = "procedure|Finish:label" if success else "answer|Finish"
    return {"step": f"step-{k:04d}", "run_id": f"r{k}", "task_id": f"t{k}", "instruction": f"question {k}",
            "task_type": "qa", "apps": None, "outcome": "success" if success else "failure", "title": "",
            "patterns": [key], "facts": facts,
            "lessons": [{"key": key, "title": "Settle with Finish, giving the verdict" if success else "Answer right",
                         "guideline": ("To settle the task: look with Search, then end with Finish giving the verdict "
                                       "the look-ups support.") if success else "Reread the question.",
                         "applicability": "In qa tasks.", "detail": "turn 3", "worked": success}]}


def test_the_verdict_page_says_which_failed_runs_gave_a_verdict_to_a_question_asking_for_a_thing():
    """The successful runs' way (answer yes or no) is right only for a question asking whether
    something holds; the failed runs that said "yes" to "During what war ..." are counted and named
    under the page's Evidence, while What to do keeps the procedure (the slip has its own page)."""
    wrong = [{"kind": "wrong-kind", "about": ["Finish"]}]
    runs = ([_qa_run(k, True, []) for k in range(3)] + [_qa_run(10 + k, False, wrong) for k in range(2)]
            + [_qa_run(20, False, [])])
    (verdict,) = [e for e in gather(runs) if e["key"] == "procedure|Finish:label"]
    assert verdict["advice"].startswith("To settle the task: look with Search, then end with Finish giving the verdict "
                                        "the look-ups support.")
    assert "yes or no" not in verdict["advice"]
    assert ("2 failed runs of this task type gave Finish a yes or no where the question asked what, which or who: the "
            "way these runs settled fits only a question asking whether something holds.") in verdict["counted"]
    assert verdict["mistake_runs"]["steps"] == ["step-0010", "step-0011"]
