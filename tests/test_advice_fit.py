"""A sentence of advice that fits fewer than half of a lesson's own failed runs is not written
anywhere on the page (advice set aside still reads as advice); the option-comparison advice ("find the fact for every option") fits
only the failed runs whose own words had not already compared the options' values."""

from __future__ import annotations

from wikitrace.corpus.advice_fit import register, weigh
from wikitrace.corpus.insights import gather


def _run(k: int, task: str, success: bool, facts: list[dict], answer: str = "Oto Fell", gold: str = "Ilsa Brann") -> dict:
    key = "answer|Finish|option"
    case = {"turn": 3, "tool": "Finish", "given": answer, "lookups": 2, "answered": 2, "followed": False,
            "expected": gold, "relation": "same" if success else "other", "shape": "name", "in_task": True,
            "seen": {"turn": 2, "call": f"Search[{gold}]", "text": f"{gold} (born 1950) is a potter."}, "looked": True}
    return {"step": f"step-{k:04d}", "run_id": f"r{k}", "task_id": task, "instruction": f"Which potter was born first ({task})?",
            "task_type": None, "apps": None, "outcome": "success" if success else "failure", "title": "",
            "patterns": ["idle|lookups"], "facts": facts,
            "lessons": [{"key": key if not success else "procedure|Finish", "title": "Compare the named options",
                         "guideline": "Compare the named options on what is asked before Finish.",
                         "applicability": "In tasks of this kind.", "detail": "turn 3", "worked": success,
                         "case": case}]}


BACKWARDS = {"kind": "comparison", "about": ["1985 is later than 1965"]}


def _option_page(backwards_runs: int) -> dict:
    """Eleven failed runs of three questions, ``backwards_runs`` of them with a checked backwards
    comparison (all trials of one question), and successful runs that looked both options up."""
    failed = [_run(k, "q-tennis" if k < backwards_runs else f"q-{k % 2}", False, [BACKWARDS] if k < backwards_runs else [])
              for k in range(11)]
    won = [_run(20 + k, f"w{k}", True, [], answer="Ilsa Brann") for k in range(9)]
    return next(i for i in gather(failed + won) if i["key"] == "answer|Finish|option")


def test_the_option_advice_is_dropped_when_most_failed_runs_already_compared_the_values():
    entry = _option_page(6)
    assert "find for each the fact the request compares them on" not in entry["guideline"]
    assert not any("find for each the fact" in n for n in entry.get("set_aside", [])), entry.get("set_aside")


def test_the_option_advice_stays_when_it_fits_most_failed_runs():
    entry = _option_page(2)
    assert "find for each the fact the request compares them on" in entry["guideline"]
    assert not [n for n in entry.get("set_aside", []) if n.startswith("Not advised here")]


def test_weigh_keeps_half_and_drops_fewer_and_leaves_unregistered_sentences():
    members = [({"step": f"step-{k:04d}", "task_id": f"t{k}", "outcome": "failure"}, {}) for k in range(4)]
    entry = {"guideline": "Do A. Do B. Do C."}
    register(entry, "Do A.", [members[0][0], members[1][0]])  # half: stays
    register(entry, "Do B.", [members[0][0]], "the others did B")  # a quarter: moves
    weigh(entry, members)
    assert entry["guideline"] == "Do A. Do C."
    assert "set_aside" not in entry
    assert "_fits" not in entry
