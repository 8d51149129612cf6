"""When successful runs made a state-changing call and when they withheld it, learned from the
record the call acted on, and said on the change's lessons with the counts.

Fixtures in the shape of tau-bench's result file (a list of records with the task id, reward and
the chat as OpenAI messages with ``tool_calls``); the shop, its tools, people, ids and values are
made up. Nothing in the code names these tools or fields: a field that separates becomes the
lesson, one that does not is never claimed, and a set without successes says "not shown"."""

from __future__ import annotations

import re

import json
from pathlib import Path

from tau_messages import tool as _tool
from wikitrace.build import BuildOptions, build
from wikitrace.compilers.reading import read_run
from wikitrace.compilers.record_facts import record_patterns, stated_now
from wikitrace.corpus.conditions import learn
from wikitrace.runs import load

POLICY = ("# Ferry Desk Policy\n\nThe current time is 2031-03-04 10:00:00 UTC.\n\n"
          "- Before voiding a booking, read it back to the traveller and get a clear yes.\n"
          "- A booking may be voided when the rules on its fare allow it.\n")



def _booking(task: int, fare: str, seat: str, age_days: int) -> dict:
    return {"booking_id": f"FB{task:03d}Q", "holder_id": f"otto_vale_{task:04d}", "route": "ISLAND_LOOP",
            "fare": fare, "seat": seat, "created_at": f"2031-02-{28 - age_days:02d}T08:30:00",
            "legs": [{"leg": f"LV{task:03d}", "date": "2031-03-20"}], "status": "active"}


def _record(task: int, trial: int, booking: dict, void: bool, success: bool) -> dict:
    bid = booking["booking_id"]
    traj = [{"role": "system", "content": POLICY},
            {"role": "user", "content": f"Hello, I can no longer travel. Please void my booking {bid}."},
            *_tool("get_booking", {"booking_id": bid}, booking)]
    if void:
        traj += [{"role": "assistant", "content": f"I will void booking {bid} ({booking['fare']} fare). Shall I go ahead?"},
                 {"role": "user", "content": "Yes, please."},
                 *_tool("void_booking", {"booking_id": bid}, dict(booking, status="void")),
                 {"role": "assistant", "content": f"Booking {bid} is void."}]
    else:
        traj += [{"role": "assistant", "content": f"I'm sorry, booking {bid} cannot be voided under its fare."}]
    traj.append({"role": "user", "content": "Alright, thank you. ###STOP###"})
    reward = 1.0 if success else 0.0
    return {"task_id": task, "reward": reward, "trial": trial, "traj": traj,
            "info": {"task": {"user_id": booking["holder_id"], "actions": [], "outputs": [],
                              "instruction": f"You are {booking['holder_id']}; you want booking {bid} voided."},
                     "source": "user", "reward_info": {"reward": reward, "actions": []}}}


def _compile(tmp_path: Path, records: list[dict]) -> dict:
    path = tmp_path / "ferry-results.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[path], out=out, offline=True, quiet=True))
    return json.loads((out / "corpus.json").read_text())


def _lesson(data: dict, key: str) -> dict:
    (entry,) = [i for i in data["insights"] if i["key"] == key]
    return entry


def _separating_set() -> list[dict]:
    """Six tasks whose "flex" bookings the successful trials voided, and six whose "saver" bookings
    they looked up and left (a failed trial voided each of those anyway). Seats are mixed alike on
    both sides, and the booking ages too."""
    records = []
    for task in range(12):
        fare = "flex" if task < 6 else "saver"
        booking = _booking(task, fare, "aisle" if task % 2 else "window", age_days=3 + task % 3)
        records.append(_record(task, 0, booking, void=fare == "flex", success=True))
        records.append(_record(task, 1, booking, void=True, success=fare == "flex"))
    return records


def test_a_run_keeps_the_fields_of_the_record_it_looked_up_and_the_record_its_change_acted_on(tmp_path):
    booking = _booking(4, "saver", "aisle", age_days=2)
    path = tmp_path / "one.json"
    path.write_text(json.dumps([_record(4, 0, booking, void=True, success=False)]))
    (run,) = list(load._read(path, load.detect(path)))
    r = read_run(run)
    assert stated_now(r).isoformat() == "2031-03-04T10:00:00"
    patterns = record_patterns(r)
    acted = [p for p in patterns if p.startswith("acted|")]
    assert len(acted) == 1 and acted[0].startswith("acted|void_booking|booking_id|")
    digest = acted[0].rsplit("|", 1)[1]
    (rec,) = [p for p in patterns if p.startswith(f"rec|{digest}|")]  # one pattern per record
    fields = dict(json.loads(rec.split("|", 2)[2]))
    # plain fields kept; ids, nested lists and prose left out; the date against the stated now
    assert fields == {"route": "ISLAND_LOOP", "fare": "saver", "seat": "aisle", "status": "active",
                      "created_at (against now)": "earlier"}  # 2031-02-26 08:30, six days before
    assert "FB004Q" not in json.dumps(sorted(patterns))  # the id itself is kept only as a digest


def test_a_separating_field_becomes_the_lesson_with_its_counts(tmp_path):
    data = _compile(tmp_path, _separating_set())
    conds = {c.key: c for c in learn(data["runs"])["void_booking"]}
    c = conds["booking_id"]
    assert (c.made, c.withheld, c.against, c.against_runs) == (6, 6, 6, 6)
    assert (c.field, c.value, c.side, c.separates) == ("fare", "saver", "withheld", True)
    assert (c.withheld_with, c.withheld_shown, c.made_with, c.made_shown) == (6, 6, 0, 6)
    assert c.p == 0.0011  # 1 / C(12, 6): every saver left, every flex voided

    failed = _lesson(data, "went-through|void_booking")
    assert failed["title"] == "Before void_booking, check the fare of the record it acts on"
    assert failed["guideline"].startswith(
        "Before void_booking, look up the record `booking_id` points at and check `fare`: successful runs made "
        "void_booking on 6 records and looked up 6 records without making it (12 tasks); `fare` was \"saver\" in 6 "
        "of the 6 they did not make it on and in 0 of the 6 they made it on (one-sided Fisher p = 0.0011). Where it "
        "has `fare` \"saver\", make void_booking only where a rule gives the request a reason: successful runs did "
        "not make it on 6 of the 6 such records.")
    assert "Failed runs made void_booking on 6 records that a successful trial of the same task did not make it " \
           "on (6 runs: " in failed["guideline"]
    assert "seat" not in failed["guideline"]  # the field that does not separate is not claimed
    assert "rules say of it" not in failed["guideline"]  # the quoted rule is gone
    # the successful runs' way to the change is on the same page, after the check, not a page of its own
    assert not [i for i in data["insights"] if i["key"].startswith("procedure|")]
    assert failed["counts"]["success"] == 12
    assert failed["advice"].startswith("Before void_booking, look up the record `booking_id` points at and check `fare`.")
    # said as the successful runs' way, with their counts, not as an order nobody gave
    assert re.search(r"The 12 successful runs here settled the task this way: look with get_booking \(12 of 12\), then "
                     r"call void_booking, taking booking_id from the task statement \(12 of the 12 successful runs "
                     r"here\)\.$", failed["advice"]), failed["advice"]


def test_a_field_spread_alike_over_both_sides_is_not_claimed(tmp_path):
    records = []
    for task in range(12):
        fare = "flex" if task % 2 else "saver"  # both fares voided and both left, in equal shares
        booking = _booking(task, fare, "aisle" if task % 4 < 2 else "window", age_days=3)
        keep = task < 6
        records.append(_record(task, 0, booking, void=keep, success=True))
        records.append(_record(task, 1, booking, void=True, success=keep))
    data = _compile(tmp_path, records)
    (c,) = learn(data["runs"])["void_booking"]
    assert (c.made, c.withheld) == (6, 6) and not c.separates
    entry = _lesson(data, "went-through|void_booking")
    g, unshown = entry["guideline"], entry["unshown"]
    assert ("Which field of the record `booking_id` points at decides void_booking is not shown: successful runs "
            "made void_booking on 6 records and looked up 6 records without making it (12 tasks), and no field value "
            "is shown to separate them.") in unshown
    assert "not shown" not in g  # what was not shown is evidence, not advice
    assert "`fare`" not in g + unshown and "`seat`" not in g + unshown and "Fisher" not in g + unshown
    page = next((tmp_path / "corpus" / "insight").glob(f"{entry['id']}.md")).read_text()
    assert "decides void_booking is not shown" in page.split("## Evidence", 1)[1].split("## Sources", 1)[0]
    assert "not shown" not in page.split("## What to do", 1)[1].split("## Evidence", 1)[0]
    assert _lesson(data, "went-through|void_booking")["title"] != "Before void_booking, check the fare of the record it acts on"


def test_a_set_of_failures_only_says_not_shown(tmp_path):
    records = [_record(task, trial, _booking(task, "saver", "aisle", 3), void=True, success=False)
               for task in range(3) for trial in range(2)]
    data = _compile(tmp_path, records)
    (c,) = learn(data["runs"])["void_booking"]
    assert (c.made, c.withheld, c.field, c.separates) == (0, 0, None, False)
    g = _lesson(data, "went-through|void_booking")["unshown"]
    assert g == ("When to make void_booking is not shown: no successful trial of these tasks made it, or "
                 "looked up the record `booking_id` points at and did not make it.")
    assert "`fare`" not in g


def test_adding_a_trial_that_tips_the_condition_leaves_what_compiling_all_writes(tmp_path):
    """The learned condition is read from every run of the type at each gather: an added run
    that changes its counts rewrites those lessons exactly as compiling everything would, and
    the lessons keep their ids."""
    from test_add import ok, same_corpus

    records = _separating_set()
    head, tail = tmp_path / "head.json", tmp_path / "tail.json"
    head.write_text(json.dumps(records[:-2]))
    tail.write_text(json.dumps(records[-2:]))
    ok("compile", str(head), "--out", str(tmp_path / "added"), "--offline", "-q")
    before = {i["key"]: i["id"] for i in json.loads((tmp_path / "added" / "corpus.json").read_text())["insights"]}
    ok("add", str(tail), "--corpus", str(tmp_path / "added"))
    ok("compile", str(head), str(tail), "--out", str(tmp_path / "together"), "--offline", "-q")
    same_corpus(tmp_path / "added", tmp_path / "together")
    after = json.loads((tmp_path / "added" / "corpus.json").read_text())["insights"]
    assert all(before[i["key"]] == i["id"] for i in after if i["key"] in before)
    g = _lesson({"insights": after}, "went-through|void_booking")["guideline"]
    assert "looked up 6 records without making it (12 tasks)" in g  # the added task's record counted


def _seat_record(task: int) -> dict:
    """A task of the same shop that asks for no voiding: a seat move on a booking."""
    booking = _booking(task, "flex", "window", age_days=4)
    bid = booking["booking_id"]
    traj = [{"role": "system", "content": POLICY},
            {"role": "user", "content": f"Hi, could you move me to an aisle seat on {bid}?"},
            *_tool("get_booking", {"booking_id": bid}, booking),
            *_tool("move_seat", {"booking_id": bid, "seat": "aisle"}, dict(booking, seat="aisle")),
            {"role": "user", "content": "Great, thanks. ###STOP###"}]
    return {"task_id": task, "reward": 1.0, "trial": 0, "traj": traj,
            "info": {"task": {"user_id": booking["holder_id"], "actions": [], "outputs": [],
                              "instruction": f"You are {booking['holder_id']}; move to an aisle seat on {bid}."},
                     "source": "user", "reward_info": {"reward": 1.0, "actions": []}}}


def test_a_record_the_user_asked_to_change_counts_as_withheld_though_no_trial_changed_it(tmp_path):
    """Tasks whose users asked to void a booking they named, where every trial looked it up and
    left it (none voided it): the first messages say the change's cue word, so those bookings
    are records the successful runs withheld the change on."""
    records = [_record(task, 0, _booking(task, "flex", "aisle", 3), void=True, success=True) for task in range(6)]
    records += [_record(task, trial, _booking(task, "saver", "aisle", 3), void=False, success=True)
                for task in range(6, 10) for trial in range(2)]
    records += [_seat_record(task) for task in range(10, 16)]
    records.append(_record(6, 2, _booking(6, "saver", "aisle", 3), void=True, success=False))
    data = _compile(tmp_path, records)
    (c,) = learn(data["runs"])["void_booking"]
    assert (c.made, c.withheld, c.against, c.against_runs) == (6, 4, 1, 1)
    assert (c.field, c.value, c.side, c.separates, c.p) == ("fare", "saver", "withheld", True, 0.0048)
    assert "(one-sided Fisher p = 0.0048)" in _lesson(data, "went-through|void_booking")["guideline"]


def test_runs_reading_the_same_record_text_keep_their_own_fields():
    """Runs that read a record in the same words share what was read; one that read it again with
    more fields sees the first value of each, and the others do not gain its fields."""
    from wikitrace.corpus.conditions import _cases

    plain = 'rec|r1|[["cabin", "basic"], ["cabin", "business"]]'
    more = 'rec|r1|[["cabin", "economy"], ["status", "gold"]]'
    runs = [{"step": f"step-{i}", "outcome": "success", "task_id": i,
             "patterns": ["acted|cancel_reservation|reservation_id|r1", *pats]}
            for i, pats in enumerate([[plain], [plain, more], [plain]])]
    sides, _failed, _runs = _cases(runs)
    made = sides[("cancel_reservation|reservation_id", "made")]
    assert made[("id:0", "r1")] == {"cabin": "basic"}
    assert made[("id:1", "r1")] == {"cabin": "basic", "status": "gold"}
    assert made[("id:2", "r1")] == {"cabin": "basic"}


def test_a_failed_trial_that_made_the_change_without_looking_the_record_up_is_counted(tmp_path):
    """The page counts the failed runs that made the change on a record a successful trial left:
    a failed trial that voided the booking straight from the user's words, with no look-up, is one
    of them (it was left out, so the page said 6 runs where 7 had voided those bookings)."""
    records = _separating_set()
    booking = _booking(7, "saver", "aisle", age_days=3)
    blind = _record(7, 2, booking, void=True, success=False)
    blind["traj"] = [m for i, m in enumerate(blind["traj"]) if i not in (2, 3)]  # no get_booking call or answer
    assert not any("get_booking" in json.dumps(m) for m in blind["traj"])
    data = _compile(tmp_path, records + [blind])
    c = {c.key: c for c in learn(data["runs"])["void_booking"]}["booking_id"]
    assert (c.against, c.against_runs) == (6, 7)
    assert "(7 runs: " in _lesson(data, "went-through|void_booking")["guideline"]
