"""Which insights a budgeted prompt keeps for a new task (agent/relevance.py).

The corpus is written in the shape the compiler writes today (corpus.json entries with
``sources``, ``counts`` and a ``key``; persona-style airline instructions, several trials
per task, one hand-off lesson nearly every run teaches). The new task's words match the
booking insights' text better than the flight-change ones, but the past tasks most like
it are flight changes: their lessons must come first, through the prompt index and
through corpus.json alike.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_agent_index import write  # noqa: E402

from wikitrace.agent.corpusdata import load_corpus  # noqa: E402
from wikitrace.agent.index_reader import open_index  # noqa: E402
from wikitrace.agent.prompt import build_prompt  # noqa: E402
from wikitrace.agent.relevance import priority_order  # noqa: E402

BOOK = ("You are {who}. You want to book a one way flight from {a} to {b} on May {d} in economy. "
        "You want to pay with your credit card and you do not want travel insurance.")
CHANGE = ("You are {who}. Your reservation {code} has a flight from {a} to {b} on May {d}. You want to "
          "change it to a later flight on the same day, keeping the cabin. If asked, you pay the difference "
          "with the gift card.")
CANCEL = ("You are {who}. You want to cancel reservation {code} because your plans changed, and you want "
          "the refund on the original payment.")
TASKS = [  # template, who, cities, code, day, outcomes of its trials
    (BOOK, "mia_li_3668", ("New York", "Seattle"), "", 20, ("failure", "failure", "success")),
    (BOOK, "raj_brown_5782", ("Denver", "Boston"), "", 14, ("failure", "success")),
    (BOOK, "omar_khan_1130", ("Miami", "Chicago"), "", 9, ("failure", "failure")),
    (CHANGE, "ivan_rossi_8555", ("Newark", "Phoenix"), "Q4P9DL", 21, ("failure", "success", "success")),
    (CHANGE, "sofia_kim_7287", ("Houston", "Denver"), "K1NW8N", 12, ("success", "failure")),
    (CHANGE, "liam_khan_2521", ("Dallas", "Atlanta"), "4NQLHD", 23, ("failure", "success")),
    (CANCEL, "emma_kim_9957", ("", ""), "MDCLVA", 1, ("success", "failure")),
    (CANCEL, "amelia_rossi_1297", ("", ""), "SI5UKW", 1, ("failure", "failure")),
]


def _lessons(template: str, outcome: str) -> list[tuple[str, str, str, str]]:
    """(key, title, guideline, applicability) a run of this task teaches."""
    out = [("hand-off|transfer_to_human_agents", "When to hand off with transfer_to_human_agents",
            "Call transfer_to_human_agents only when the request is outside what the tools can do.",
            "In airline tasks.")]
    if template is BOOK:
        out.append(("went-through|book_reservation", "Before book_reservation, check the flight, the cabin "
                    "and the payment for the booking",
                    "Before book_reservation, read the flight's price and the user's payment methods, "
                    "then book the one way flight in economy.", "In airline tasks that book a flight.")
                   if outcome == "failure" else
                   ("procedure|book_reservation", "Settle with book_reservation after search_direct_flight",
                    "To settle the task: search the flight, then book it with book_reservation paid by the "
                    "credit card the user named.", "In airline tasks that end with book_reservation."))
    elif template is CHANGE:
        out.append(("error|update_reservation_flights|Error: payment method not found",
                    "update_reservation_flights answers \"Error: payment method not found\"",
                    "Ask which payment method on file to use before calling update_reservation_flights; "
                    "call it again with payment_id changed.",
                    "In airline tasks, whenever update_reservation_flights answers with this error.")
                   if outcome == "success" else
                   ("went-through|update_reservation_flights", "Before update_reservation_flights, check the "
                    "request and the rules on it",
                    "Before update_reservation_flights, confirm the new flight number and the fare difference.",
                    "In airline tasks that change a reservation's flights."))
    else:
        out.append(("went-through|cancel_reservation", "Check that the rules allow cancel_reservation",
                    "Cancel only within 24 hours of booking or with insurance.",
                    'In airline tasks whose first message says "cancel" or a longer form of it, before calling '
                    "cancel_reservation."))
    return out


def airline_corpus() -> dict:
    runs, lessons = [], {}
    step = 0
    for task_no, (template, who, (a, b), code, day, outcomes) in enumerate(TASKS):
        text = template.format(who=who, a=a, b=b, code=code, d=day)
        for trial, outcome in enumerate(outcomes):
            sid = f"step-{step:04d}"
            for lesson in _lessons(template, outcome):
                lessons.setdefault(lesson, []).append((sid, outcome))
            runs.append({"step": sid, "run_id": f"{task_no}-{trial}", "task_id": str(task_no), "task_type": "airline",
                         "apps": None, "outcome": outcome, "steps": 10 + step, "instruction": text,
                         "title": f"[{outcome}] {text[:60]}", "compiler": "offline",
                         "content_hash": f"sha256:{step:064x}", "insights": []})
            step += 1
    insights = []
    for n, ((key, title, guideline, applicability), sources) in enumerate(lessons.items()):
        iid = f"insight-{n:04d}"
        wins = sum(o == "success" for _, o in sources)
        insights.append({"id": iid, "key": key, "title": title, "guideline": guideline,
                         "applicability": applicability, "task_type": "airline", "apps": None, "compiler": "offline",
                         **({"cue": "cancel"} if "cancel" in applicability else {}),  # as corpus/applies.py writes
                         "source_step": sources[0][0], "source_outcome": sources[0][1],
                         "counts": {"runs": len(sources), "success": wins, "failure": len(sources) - wins},
                         "sources": [{"step": s, "outcome": o, "detail": "turn 9"} for s, o in sources]})
        for s, _ in sources:  # each run links the (at most three) lessons it taught
            runs[int(s.split("-")[1])]["insights"].append(iid)
    return {"format": "wikitrace-corpus/1", "wikitrace_version": "0.1.0", "mount_path": "/work/corpus",
            "compiler": {"name": "offline", "model": None}, "counts": {"runs": len(runs), "insights": len(insights)},
            "runs": runs, "insights": insights, "retired": {"steps": [], "insights": []},
            "build": {"built_at": "2026-01-01T00:00:00Z", "stats": {}, "skipped": []}}


NEW_CHANGE = ("You are noah_silva_4410. Your reservation XJ3L2C has a flight from Boston to Miami on May 18. "
              "You want to change it to a later flight on the same day; book whatever economy seat is left and "
              "pay the difference with your card.")


@pytest.fixture(params=["index", "corpus.json"])
def corpus(request, tmp_path):
    return write(tmp_path / "c", airline_corpus(), index=request.param == "index")


def _titles(root, ids):
    data = load_corpus(root)
    return [data.insight_by_id[i].title for i in ids]


def test_the_call_the_task_will_need_ranks_first(corpus):
    assert (open_index(corpus) is not None) == (corpus / "index" / "prompt.bin").exists()
    data = load_corpus(corpus)
    full = build_prompt(corpus, NEW_CHANGE)
    order = [i.title for i in priority_order(data, NEW_CHANGE, full.similar_runs, None)]
    # the lesson the flight-change runs taught comes before every booking lesson, though the
    # task shares more words with the booking insights ("book", "economy", "seat", "pay")
    change = [k for k, t in enumerate(order) if "update_reservation_flights" in t]
    book = [k for k, t in enumerate(order) if "book_reservation" in t]
    assert change and book and max(change) < min(book), order
    assert "update_reservation_flights" in order[0]
    # the lesson nearly every run teaches is not what this task is about
    assert order.index("When to hand off with transfer_to_human_agents") > max(change)
    # a budget that holds two insights shows exactly the two flight-change lessons
    tight = build_prompt(corpus, NEW_CHANGE, budget=full.tokens - 200)
    for budget in range(full.tokens - 200, 0, -40):
        p = build_prompt(corpus, NEW_CHANGE, budget=budget)
        if len(p.insight_ids) == 2:
            tight = p
            break
    assert len(tight.insight_ids) == 2
    assert all("update_reservation_flights" in t for t in _titles(corpus, tight.insight_ids))


def test_a_success_lesson_beside_the_failures(corpus):
    # a booking task: its nearest tasks taught mostly failure lessons; the success lesson
    # ("Settle with book_reservation") is shown next to them even at a two-insight budget
    task = ("You are ava_lee_1234. You want to book a one way flight from Seattle to Denver on May 11 in "
            "economy. You want to pay with your credit card and you do not want travel insurance.")
    full = build_prompt(corpus, task)
    for budget in range(full.tokens, 0, -40):
        p = build_prompt(corpus, task, budget=budget)
        if len(p.insight_ids) == 2:
            break
    titles = _titles(corpus, p.insight_ids)
    entries = {i["id"]: i for i in airline_corpus()["insights"]}
    sides = {("success" if entries[i]["counts"]["success"] > entries[i]["counts"]["failure"] else "failure")
             for i in p.insight_ids}
    assert sides == {"success", "failure"}, titles
    assert any("book_reservation" in t for t in titles)


def test_index_and_corpus_json_rank_alike(tmp_path):
    data = airline_corpus()
    with_index = write(tmp_path / "i", data, index=True)
    without = write(tmp_path / "j", data, index=False)
    for task in (NEW_CHANGE, "cancel my trip", "zzz", ""):
        for budget in (None, 300, 900):
            a, b = build_prompt(with_index, task, budget=budget), build_prompt(without, task, budget=budget)
            assert a.insight_ids == b.insight_ids and a.left_out_ids == b.left_out_ids


# a user's first message, as an agent receives it: it says the cancellation lesson's cue and shares
# the cities, the day and "flight" with a flight-change task of the corpus, which BM25 ranks nearest
CANCEL_REQUEST = "Hi! I need to cancel my flight from Newark to Phoenix on May 21."


def test_a_request_saying_a_lessons_cue_gets_that_lesson_first(corpus):
    data = load_corpus(corpus)
    full = build_prompt(corpus, CANCEL_REQUEST)
    assert full.similar_runs[0].instruction.startswith("You are ivan_rossi_8555")  # the nearest task is a change
    order = [i.title for i in priority_order(data, CANCEL_REQUEST, full.similar_runs, None)]
    assert "cancel_reservation" in order[0], order
    for budget in range(full.tokens, 0, -20):
        p = build_prompt(corpus, CANCEL_REQUEST, budget=budget)
        if len(p.insight_ids) == 1:
            break
    assert _titles(corpus, p.insight_ids) == ["Check that the rules allow cancel_reservation"]


def test_a_request_saying_no_cue_keeps_the_nearest_tasks_order(corpus):
    # "move me to a later departure" holds no insight's cue: the flight-change runs nearest to it
    # still decide, as before
    task = "You are noah_silva_4410. Reservation XJ3L2C, Newark to Phoenix on May 21: move me to a later departure."
    data = load_corpus(corpus)
    full = build_prompt(corpus, task)
    order = [i.title for i in priority_order(data, task, full.similar_runs, None)]
    assert "update_reservation_flights" in order[0], order
