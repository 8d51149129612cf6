"""Trial comparisons kept between commands (corpus/same_task_memo.py): an `add` reuses the
comparisons of insight groups whose runs did not change, and must never show one made from
runs that have since changed, gone or come."""

import copy
import json

from wikitrace.corpus import same_task_memo
from wikitrace.corpus.insights import gather
from wikitrace.corpus.same_task_memo import SameTaskMemo


def _run(n: int, task: str, outcome: str, cabin: str, looked: bool) -> dict:
    """A run entry as corpus.json holds it: a booking that went through, with or without the
    look-up first; successful trials take the cabin from the user's reply."""
    patterns = ["went-through|book_reservation", f"set|book_reservation|cabin|{cabin}", "count|book_reservation|1"]
    if looked:
        patterns.insert(0, "did|get_user_details")
    if outcome == "success":
        patterns.append("from|book_reservation|cabin:reply")
    return {"step": f"step-{n:04d}", "run_id": f"run-{n}", "task_id": task, "task_type": "airline", "apps": None,
            "outcome": outcome, "steps": 9, "instruction": f"Book flight {task}", "title": "Booked",
            "compiler": "offline", "content_hash": f"sha256:{n:064x}", "insights": ["insight-0000"],
            "redactions": None, "patterns": patterns,
            "lessons": [{"key": "went-through|book_reservation", "title": "Check the booking before sending it",
                         "guideline": "Check each argument of book_reservation.", "applicability": "Bookings.",
                         "detail": f"run {n} booked", "worked": outcome == "success"}]}


def _corpus() -> list[dict]:
    runs = []
    for n in range(12):
        task = str(n % 3)
        ok = n % 2 == 0
        runs.append(_run(n, task, "success" if ok else "failure", "economy" if ok else "business", looked=ok))
    return runs


def _memo_of(runs) -> dict:
    memo = SameTaskMemo()
    gather(copy.deepcopy(runs), memo=memo)
    return json.loads(json.dumps(memo.used))  # as the next command reads it back


def _same_task(runs, memo=None):
    return [e["same_task"] for e in gather(copy.deepcopy(runs), memo=memo)]


def test_the_comparisons_are_reused_when_their_runs_are_unchanged():
    runs = _corpus()
    fresh = _same_task(runs)
    assert fresh[0] and fresh[0]["differences"], "the fixture must give a comparison to keep"
    memo = SameTaskMemo(_memo_of(runs))
    assert _same_task(runs, memo) == fresh
    assert memo.used == memo.known  # every result came from the memo


def test_a_run_edited_forgotten_or_added_is_never_served_from_the_memo():
    runs = _corpus()
    kept = _memo_of(runs)
    edited = copy.deepcopy(runs)
    edited[1]["patterns"] = ["went-through|book_reservation", "did|get_user_details",
                             "set|book_reservation|cabin|economy", "count|book_reservation|1"]  # now as the winners
    forgotten = [r for r in runs if r["step"] not in ("step-0004", "step-0010")]  # task 1's successful trials
    added = runs + [_run(12, "0", "failure", "first", looked=False)]
    for changed in (edited, forgotten, added):
        fresh = _same_task(changed)
        assert fresh != _same_task(runs), "the change must change the comparison, or the test proves nothing"
        assert _same_task(changed, SameTaskMemo(copy.deepcopy(kept))) == fresh


def test_a_memo_of_other_code_or_damaged_is_not_read_and_a_saved_one_reads_back(tmp_path):
    (tmp_path / ".wikitrace").mkdir()
    runs = _corpus()
    memo = SameTaskMemo()
    gather(copy.deepcopy(runs), memo=memo)
    same_task_memo.save(tmp_path, memo, {"airline"}, {"airline"})
    assert same_task_memo.load(tmp_path).known == memo.used
    path = tmp_path / ".wikitrace" / same_task_memo.FILE
    raw = json.loads(path.read_text())
    path.write_text(json.dumps({**raw, "code": "0" * 64}))  # made by another version of the comparing code
    assert same_task_memo.load(tmp_path).known == {}
    path.write_text('{"format": "wikitrace-same-task/1", "code": ')  # cut short
    assert same_task_memo.load(tmp_path).known == {}


def test_a_task_type_not_gathered_keeps_its_results_and_a_gone_one_drops_them(tmp_path):
    (tmp_path / ".wikitrace").mkdir()
    memo = SameTaskMemo({"retail": {"a" * 64: "null"}, "gone": {"b" * 64: "null"}})
    gather(copy.deepcopy(_corpus()), memo=memo)
    same_task_memo.save(tmp_path, memo, {"airline", "retail"}, {"airline"})
    back = same_task_memo.load(tmp_path).known
    assert set(back) == {"airline", "retail"} and back["retail"] == {"a" * 64: "null"}


def test_a_damaged_entry_is_made_again_and_a_memo_that_cannot_be_written_costs_only_speed(tmp_path):
    runs = _corpus()
    fresh = _same_task(runs)
    broken = {kind: {key: text[:-3] for key, text in results.items()} for kind, results in _memo_of(runs).items()}
    assert _same_task(runs, SameTaskMemo(broken)) == fresh  # each cut entry compared again, not a traceback
    other = {kind: {key: '"a comparison"' for key in results} for kind, results in _memo_of(runs).items()}
    assert _same_task(runs, SameTaskMemo(other)) == fresh  # read whole but of another shape: compared again
    memo = SameTaskMemo()
    gather(copy.deepcopy(runs), memo=memo)
    (tmp_path / ".wikitrace").write_text("a file where the folder should be")
    same_task_memo.save(tmp_path, memo, {"airline"}, {"airline"})  # no error: the next command compares again
    assert same_task_memo.load(tmp_path).known == {}


def test_kept_pattern_digests_serve_only_the_runs_they_were_counted_from():
    """The pattern tally keeps each run's patterns digest (corpus/pattern_tally.py): an add's
    comparisons read it for the runs carried over, and the digests, results and pages are those
    of hashing every run; a run no longer carried over is hashed again."""
    from wikitrace.corpus.pattern_tally import KindTally, PatternTally

    def kept_of(runs):
        tally = PatternTally()
        gather(copy.deepcopy(runs), tally=tally)
        return {k: KindTally.from_json(json.loads(json.dumps(t.as_json()))) for k, t in tally.counted.items()}

    runs = _corpus()
    fresh_memo = SameTaskMemo()
    fresh = gather(copy.deepcopy(runs), memo=fresh_memo)
    memo, tally = SameTaskMemo(), PatternTally(kept_of(runs[:10]), {r["step"] for r in runs[:10]})
    assert gather(copy.deepcopy(runs), memo=memo, tally=tally) == fresh
    assert tally.reused and memo.used == fresh_memo.used
    edited = copy.deepcopy(runs)  # run 1 compiled again with other patterns: not carried over
    edited[1]["patterns"] = ["went-through|book_reservation", "did|get_user_details",
                             "set|book_reservation|cabin|economy", "count|book_reservation|1"]
    lied = kept_of(runs[:10])
    lied["airline"].digests[edited[1]["step"]] = "0" * 64  # never read: the tally is not used at all
    edited_memo = SameTaskMemo()
    edited_fresh = gather(copy.deepcopy(edited), memo=edited_memo)
    assert edited_memo.used != fresh_memo.used, "the edit must change a comparison's digest"
    for kept in (kept_of(runs[:10]), lied):
        memo, tally = SameTaskMemo(), PatternTally(kept, {r["step"] for r in runs[:10]} - {edited[1]["step"]})
        assert gather(copy.deepcopy(edited), memo=memo, tally=tally) == edited_fresh
        assert not tally.reused and memo.used == edited_memo.used


def test_a_kept_tally_without_digests_is_not_read(tmp_path):
    from wikitrace.corpus import pattern_tally
    from wikitrace.corpus.pattern_tally import PatternTally

    (tmp_path / ".wikitrace").mkdir()
    tally = PatternTally()
    gather(copy.deepcopy(_corpus()), tally=tally)
    pattern_tally.save(tmp_path, tally, "c" * 64)
    assert set(pattern_tally.load(tmp_path, "c" * 64, set()).kept) == {"airline"}
    path = tmp_path / ".wikitrace" / pattern_tally.FILE
    raw = json.loads(path.read_text())
    del raw["kinds"]["airline"]["digests"]  # as a tally of the format before digests were kept
    path.write_text(json.dumps(raw))
    assert pattern_tally.load(tmp_path, "c" * 64, set()).kept == {}


def _count_lines(monkeypatch) -> list[int]:
    """How many times the trial lines are worked out from the runs (not read back from a memo)."""
    from wikitrace.corpus import trial_contrast

    made = [0]
    real = trial_contrast.lines
    made_for: list[list[str]] = []  # the steps of each task whose lines were worked out

    def counted(entries, *args, **kwargs):
        made[0] += 1
        made_for.append([e["step"] for e in entries])
        return real(entries, *args, **kwargs)

    monkeypatch.setattr(trial_contrast, "lines", counted)
    made.append(made_for)
    return made


def test_trial_lines_kept_by_the_memo_give_the_same_cases_and_never_outlive_their_runs(tau_bench_corpus, monkeypatch):
    """The insight cases quote each run's line against the other trials of its task; an `add`
    reads the lines back for tasks whose trials are unchanged, and works them out again for a task
    one of whose trials changed, was forgotten or was added."""
    runs = json.loads((tau_bench_corpus[0] / "corpus.json").read_text())["runs"]
    made = _count_lines(monkeypatch)
    fresh = gather(copy.deepcopy(runs))
    assert made[0] > 10, "the dev runs must have tasks with trials of both outcomes"
    assert any(c.get("outcome") == "success" or "successful trial" in c["text"]
               for e in fresh for c in e.get("cases") or []), "the cases must quote trial lines"
    kept = _memo_of(runs)
    made[0] = 0
    memo = SameTaskMemo(copy.deepcopy(kept))
    assert gather(copy.deepcopy(runs), memo=memo) == fresh
    assert made[0] == 0 and memo.used == memo.known
    # kept lines of another shape (a damaged or hand-edited file) are made again, never handed out
    damaged = {kind: {k: (json.dumps([{s: "a line" for s in json.loads(v)[0]}, {}]) if k.startswith("lines:") else v)
                      for k, v in results.items()} for kind, results in kept.items()}
    assert damaged != kept
    made[0] = 0
    assert gather(copy.deepcopy(runs), memo=SameTaskMemo(damaged)) == fresh
    assert made[0] > 0

    # a failed trial whose decisive calls changed (compiled again), and a task losing a trial: of a task
    # whose lines the cases read
    by_task: dict = {}
    for r in runs:
        by_task.setdefault(r["task_id"], []).append(r)
    read = {s for steps in made[1] for s in steps}
    mixed = next(t for t, rs in by_task.items() if {r["outcome"] for r in rs} == {"success", "failure"} and len(rs) > 2
                 and rs[0]["step"] in read)
    edited = copy.deepcopy(runs)
    loser = next(r for r in edited if r["task_id"] == mixed and r["outcome"] == "failure")
    loser["decisive"] = {**(loser.get("decisive") or {}),  # a change it never made before
                         "changes": [{"tool": "cancel_reservation", "turn": 99, "values": {"reservation_id": "ZZ9ZZ9"}}]}
    forgotten = [r for r in runs if r["step"] != next(r["step"] for r in by_task[mixed] if r["outcome"] == "success")]
    task_steps = {r["step"] for r in by_task[mixed]}
    for changed in (edited, forgotten):
        made[0] = 0
        expect = gather(copy.deepcopy(changed))
        again, fresh_tasks = made[0], [set(steps) for steps in made[1][-made[0]:]]
        made[0] = 0
        assert gather(copy.deepcopy(changed), memo=SameTaskMemo(copy.deepcopy(kept))) == expect
        memo_tasks = [set(steps) for steps in made[1][-made[0]:]] if made[0] else []
        assert made[0] < again  # only the changed task's lines were worked out again
        # where the cases read the changed task's lines, they were worked out again, never served
        assert [t for t in fresh_tasks if t & task_steps] == [t for t in memo_tasks if t & task_steps]
        if changed is edited:  # its trials are all still there: the cases read its lines as before
            assert [t for t in memo_tasks if t & task_steps], "the edit must be read, or the test proves nothing"
