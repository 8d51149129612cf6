"""A settle recipe names where to take an argument from only when most of its successful runs
took it from there, with the count; the look-ups it names are those most of them made first."""

from __future__ import annotations

from wikitrace.corpus.insights import gather


def _settled(k: int, took: dict[str, str], looked: list[str], success: bool = True) -> dict:
    key = "procedure|change_order"
    return {"step": f"step-{k:04d}", "run_id": f"r{k}", "task_id": f"t{k}", "instruction": f"change order {k}",
            "task_type": "shop", "apps": None, "outcome": "success" if success else "failure", "title": "",
            "patterns": sorted([key, *(f"took|change_order|{a}|{w}" for a, w in took.items()),
                                *(f"before|change_order|{x}" for x in looked)]),
            "lessons": [{"key": key, "title": "Settle with change_order",
                         "guideline": "To settle the task: look with list_items, then call change_order, taking "
                                      "order_id and item from list_items. Keep it short.",
                         "applicability": "In shop tasks.", "detail": "turn 5", "worked": success}]}


def test_a_source_is_named_only_where_most_successful_runs_took_it():
    runs = [_settled(0, {"order_id": "answer:get_order", "item": "answer:list_items"}, ["get_order", "list_items"]),
            _settled(1, {"order_id": "answer:get_order", "item": "reply"}, ["get_order"]),
            _settled(2, {"order_id": "reply", "item": "mixed"}, ["get_order", "list_items"])]
    (entry,) = gather(runs)
    assert entry["guideline"] == (
        "To settle the task: look with get_order (3 of 3) and list_items (2 of 3), then call change_order, taking "
        "order_id from get_order (2 of the 3 successful runs here). Keep it short.")


def test_no_majority_drops_the_clause_and_one_run_keeps_its_own_words():
    runs = [_settled(0, {"item": "answer:list_items"}, ["list_items"]),
            _settled(1, {"item": "reply"}, ["list_items"])]
    (entry,) = gather(runs)
    assert "taking" not in entry["guideline"]
    assert entry["guideline"].startswith("To settle the task: look with list_items (2 of 2), then call change_order.")
    (entry,) = gather(runs[:1])
    assert "taking order_id and item from list_items" in entry["guideline"]
