"""The values a task expected the agent to tell the user (tau-bench's ``info.task.outputs``):
a failure that never wrote one says so, with the answer that held it; a success whose failed
trials made the same changes says it wrote the value they never did (compilers/expected_outputs.py,
corpus/trial_contrast.py). Logs that record no expected outputs get none of these sentences."""

from __future__ import annotations

import json
import re

from fixture_runs import RUNS, relabeled
from tau_messages import agent, tool, user
from test_add import ok
from test_trial_contrast import GIFT, POLICY, PROFILE, TRIP, _change, _in_short, _write

from wikitrace.compilers.expected_outputs import told
from wikitrace.compilers.offline import compile_offline
from wikitrace.compilers.reading import read_run
from wikitrace.runs import load
from wikitrace.runs.model import Run

SAID = "The fare difference comes to $1,410.00 in all, paid from your gift card."


def _trial(trial: int, reward: float, closing: str, outputs=("1410",)) -> dict:
    """Both trials make the same change; only what the agent writes at the end differs."""
    traj = [{"role": "system", "content": POLICY}, user("Hi, I need to move my Boston flight; what will it cost?"),
            agent("Sure. Your user id and reservation id, please?"), user("lena_vogt_3017, reservation Q4WZ8N."),
            *tool("get_user_details", {"user_id": "lena_vogt_3017"}, PROFILE),
            *tool("get_reservation_details", {"reservation_id": "Q4WZ8N"}, TRIP),
            user("Move me to HAT311 on 2024-06-10 and pay with the gift card. Yes, go ahead."),
            *tool("calculate", {"expression": "1730 - 320"}, "1410.0"),
            *tool("update_reservation_flights", _change(GIFT), dict(TRIP, flights=_change(GIFT)["flights"])),
            agent(closing), user("Thanks. ###STOP###")]
    task = {"user_id": "lena_vogt_3017", "outputs": list(outputs),
            "instruction": "You are lena_vogt_3017. Move flight Q4WZ8N to HAT311 on 2024-06-10, pay with your gift "
                           "card, and ask what it cost in all.",
            "actions": [{"name": "update_reservation_flights", "kwargs": _change(GIFT)}]}
    return {"task_id": 21, "reward": reward, "trial": trial, "traj": traj,
            "info": {"task": task, "source": "user", "reward_info": {"reward": reward, "info": {}, "actions": []}}}


def _load(tmp_path, record: dict) -> Run:
    path = _write(tmp_path / "one.json", [record])
    [run] = [r for r in load._read(path, load.detect(path)) if isinstance(r, Run)]
    return run


def test_a_number_counts_as_written_in_its_usual_spellings_and_not_inside_another(tmp_path):
    assert [t.turn is not None for t in told(read_run(_load(tmp_path, _trial(0, 1.0, SAID))))] == [True]
    inside = _trial(0, 0.0, "Done: you paid $21,410 less than last time.")
    assert [t.turn for t in told(read_run(_load(tmp_path, inside)))] == [None]
    decimals = _trial(0, 0.0, "Done: the difference was 1410.50 dollars.")
    assert [t.turn for t in told(read_run(_load(tmp_path, decimals)))] == [None]


def test_the_importer_keeps_the_expected_outputs_only_when_the_task_has_some(tmp_path):
    assert json.loads(_load(tmp_path, _trial(0, 1.0, SAID)).task.metadata["expected_outputs"]) == ["1410"]
    assert "expected_outputs" not in _load(tmp_path, _trial(0, 1.0, SAID, outputs=())).task.metadata


def test_a_failure_that_never_wrote_the_expected_value_says_so_with_the_answer_that_held_it(tmp_path):
    run = _load(tmp_path, _trial(1, 0.0, "Done: you are on HAT311."))
    held = next(t.turn for t in run.turns if t.name == "calculate")
    texts = [f.text for f in compile_offline(run).in_short]
    assert (f"The task expected the agent to tell the user 1410 (the log records it among the task's expected "
            f"outputs); no agent message of the run wrote it; calculate's answer at turn {held} held 1410.") in texts
    run = _load(tmp_path, _trial(1, 0.0, SAID))  # written: a failure decided elsewhere gets no such sentence
    assert not any("expected the agent to tell the user" in f.text for f in compile_offline(run).in_short)


def test_a_value_written_only_beside_a_tool_call_is_said_to_be_no_message_to_the_user(tmp_path):
    """tau-bench keeps the text of an assistant message that also calls a tool beside the call: the
    user never reads it. A run that wrote the total only there is told so (tau-bench rater, step-0052)."""
    record = _trial(1, 0.0, "Done: you are on HAT311.")
    beside = next(m for m in record["traj"] if m.get("tool_calls")
                  and m["tool_calls"][0]["function"]["name"] == "update_reservation_flights")
    beside["content"] = "The fare difference is $1,410. I will now move your flight."
    run = _load(tmp_path, record)
    change = next(t.turn for t in run.turns if t.name == "update_reservation_flights")
    fact = next(f for f in compile_offline(run).in_short if "expected the agent to tell the user 1410" in f.text)
    assert fact.text.endswith(f"; the words it sent beside its update_reservation_flights call at turn {change} gave "
                              "1410, but words sent beside a call are no message to the user."), fact.text
    assert change in fact.turns
    assert "beside its" not in " ".join(f.text for f in compile_offline(_load(tmp_path, _trial(1, 0.0, "Done."))).in_short)


def test_trials_with_the_same_changes_are_told_apart_by_the_value_only_the_success_wrote(tmp_path):
    out = tmp_path / "c"
    ok("compile", str(_write(tmp_path / "results.json", [_trial(0, 1.0, SAID), _trial(1, 0.0, "Done.")])),
       "--out", str(out), "--offline", "-q")
    steps = {r["run_id"]: r["step"] for r in json.loads((out / "corpus.json").read_text())["runs"]}
    won, lost = steps["task-21-trial-0"], steps["task-21-trial-1"]
    log = [json.loads(ln) for ln in (out / "raw" / won / "solver.full.jsonl").read_text(encoding="utf-8").splitlines()]
    wrote = next(t["turn"] for t in log if t.get("role") == "assistant" and t.get("content") == SAID)
    assert (f"- The failed trial of this task, [{lost}]({lost}.md), made the same state-changing calls as this run; "
            f"what separated them: this run wrote 1410 (turn {wrote}), which the task expected the agent to tell the "
            f"user; it never wrote it.") in " ".join(_in_short(out, won))
    assert any(ln.startswith(f"- The successful trial [{won}]({won}.md) of this task made the same state-changing "
                             f"calls as this run; what separated them: it wrote 1410 (its turn {wrote}), which the "
                             "task expected the agent to tell the user; this run never wrote it.")
               for ln in _in_short(out, lost)), _in_short(out, lost)
    assert not any("not in those calls" in ln for ln in _in_short(out, won) + _in_short(out, lost))


def test_no_log_without_expected_outputs_gets_these_sentences():
    """Every importer fixture, read as a success and as a failure: none records expected outputs."""
    for run in [relabeled(r, success) for r in RUNS for success in (False, True)]:
        assert "expected_outputs" not in (run.task.metadata or {})
        texts = " ".join(f.text for f in compile_offline(run).in_short)
        assert not re.search(r"tell the user \S+ \(the log records|which the task expected the agent to tell", texts)


def _asked(trial: int, reward: float, looked: bool) -> dict:
    """A question answered from the profile: only the successful trial looks it up."""
    said = "Your gift card holds 320 dollars." if looked else "I'm unable to see your balances."
    traj = [{"role": "system", "content": POLICY}, user("Hi, how much is on my gift card? I'm lena_vogt_3017."),
            *(tool("get_user_details", {"user_id": "lena_vogt_3017"}, PROFILE) if looked else []),
            agent(said), user("Thanks. ###STOP###")]
    task = {"user_id": "lena_vogt_3017", "outputs": [], "actions": [],
            "instruction": "You are lena_vogt_3017. Ask what your gift card holds."}
    return {"task_id": 22, "reward": reward, "trial": trial, "traj": traj,
            "info": {"task": task, "source": "user", "reward_info": {"reward": reward, "info": {}, "actions": []}}}


def test_a_success_without_changes_is_told_apart_by_the_look_up_its_failed_trials_never_made(tmp_path):
    out = tmp_path / "c"
    ok("compile", str(_write(tmp_path / "results.json", [_asked(0, 1.0, True), _asked(1, 0.0, False)])),
       "--out", str(out), "--offline", "-q")
    steps = {r["run_id"]: r["step"] for r in json.loads((out / "corpus.json").read_text())["runs"]}
    won, lost = steps["task-22-trial-0"], steps["task-22-trial-1"]
    assert (f"- The failed trial of this task, [{lost}]({lost}.md), made no state-changing call either; what separated "
            "them: this run called get_user_details, which it never did.") in " ".join(_in_short(out, won))


def test_a_failure_that_told_another_figure_says_which_one_its_report_gave(tmp_path):
    """The run wrote a total, a wrong one: the sentence says the figure its report gave instead, so
    a reader sees it told the user something and the total was what went wrong."""
    run = _load(tmp_path, _trial(1, 0.0, "Done: you are on HAT311, and the fare difference is $1,290."))
    said = next(t.turn for t in run.turns if t.type == "message" and "$1,290" in (t.content or ""))
    texts = [f.text for f in compile_offline(run).in_short]
    assert any(t.startswith("The task expected the agent to tell the user 1410") and
               t.endswith(f"; its report at turn {said} gave $1,290 instead.") for t in texts), texts


def test_the_tell_the_user_lesson_is_taught_only_by_a_run_that_told_no_such_figure(tmp_path):
    """A run that wrote no figure learns to tell the value; one that told a wrong total of that size
    did tell the user, so that lesson is not its own (its page says which figure it gave)."""
    silent = compile_offline(_load(tmp_path, _trial(1, 0.0, "Done: you are on HAT311.")))
    wrong = compile_offline(_load(tmp_path, _trial(1, 0.0, "Done: you are on HAT311; the difference is $1,290.")))
    assert "untold" in [i.key for i in silent.insights]
    assert "untold" not in [i.key for i in wrong.insights]
    assert "untold" in wrong.patterns  # still counted as a run that never wrote the expected value
