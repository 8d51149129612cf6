"""The descent judge: trigger / target / effect per descent (paper §5.2, Appendix E.1),
over the loopback fake OpenAI server, and the offline rules."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fake_openai import error, reply
from helpers import REPO
from wikitrace.agent.descent_judge import DescentJudge, JudgeClient, judge_file, judge_json, majority
from wikitrace.agent.descent_rules import AXES, Label
from wikitrace.llm.config import resolve
from wikitrace.runs.model import Turn

EXAMPLE = REPO / "examples" / "descent_transcript.json"


def _burst_quote(transcript: str, k: int) -> tuple[str, int]:
    """The agent's words in the message that opens burst k (what a careful judge quotes)."""
    part = transcript.split(f">>>>> BURST {k} START", 1)[1]
    m = re.search(r"--- message (\d+) \(assistant\) ---\ntext\| (.+)", part)
    return m.group(2), int(m.group(1))


def _axis(body: dict) -> tuple[str, int, str | None]:
    last = body["messages"][-1]["content"]
    if "That label cannot be used" in last:
        axis_msg = body["messages"][-3]["content"]
    else:
        axis_msg = last
    axis = re.search(r"Axis: (\w+)", axis_msg).group(1)
    k = int(re.search(r"Label burst (\d+) only", axis_msg).group(1))
    judge = re.search(r"Independent judgement (\d+) of", axis_msg)
    return axis, k, judge.group(1) if judge else None


def judge_answer(codes: dict[str, str] | None = None, effect_votes: list[str] | None = None):
    """A fake model that labels every burst validly, quoting the burst's opening message."""
    def answer(body):
        axis, k, j = _axis(body)
        quote, msg = _burst_quote(body["messages"][2]["content"], k)
        code = (codes or {}).get(axis) or AXES[axis][-1]
        if axis == "effect" and effect_votes and j is not None:
            code = effect_votes[int(j) - 1]
        return {"burst": k, "code": code, "quote": quote, "msg": msg, "note": f"{axis} decided by the test"}
    return answer


def make_judge(tmp_path, judges=3, **kw) -> DescentJudge:
    opts = dict(cache_dir=tmp_path / "cache", timeout=2.0, max_attempts=2, backoff=0.001, max_backoff=0.01, seed=1)
    opts.update(kw)
    return DescentJudge(JudgeClient(resolve("judge-model", None), **opts), judges=judges)


def run(judge, path=EXAMPLE):
    judged = judge_file(path, judge, "/work/corpus", "/work/tools")
    return judged, judge_json(judged, judge)


def labels(data):
    return [d["labels"] for r in data["runs"] for d in r["descents"] if d["labels"]]


# --- offline ---------------------------------------------------------------------------------

def test_offline_labels_the_example_transcript_and_says_so():
    judged, data = run(DescentJudge(None))
    assert data["judge"] == "offline" and data["judge_reason"] == "no LLM configured"
    got = labels(data)
    assert [(g["trigger"]["code"], g["target"]["code"]) for g in got] == [
        ("routine check", "procedure"), ("setback", "specific fact")]
    assert all(g[a]["judge"] == "offline" for g in got for a in AXES)
    # evidence is the agent's own words at the message that opened the run
    assert got[1]["trigger"]["msg"] == 6 and "amount exceeds the total" in got[1]["trigger"]["quote"]
    dist = data["distributions"]
    assert dist["bursts"] == 2
    assert {r["code"]: r["share"] for r in dist["trigger"]}["setback"] == 0.5
    assert [r["code"] for r in dist["effect"]] == list(AXES["effect"])


def _turns(*items):
    out = []
    for i, it in enumerate(items):
        kind, payload = it[0], it[1:]
        if kind == "user":
            out.append(Turn(i, "message", role="user", content=payload[0]))
        elif kind == "say":
            out.append(Turn(i, "message", role="assistant", content=payload[0]))
        else:  # call: name, args, result, is_error, reasoning
            name, args, result = payload[:3]
            err = payload[3] if len(payload) > 3 else False
            why = payload[4] if len(payload) > 4 else None
            out.append(Turn(i, "function_call", role="assistant", name=name, arguments=args, result=result,
                            is_error=err, reasoning=why))
    return out


MEMORY = ('<memory_documents>\n<insight id="insight-0001">\n- **Insight:** Call ship_parcel with the '
          'weight in grams.\n- **Source:** step-0004 (failure)\n</insight>\n<insight id="insight-0002">\n'
          '- **Insight:** Weigh first.\n- **Source:** step-0002 (success)\n</insight>\n</memory_documents>\n'
          'Task: ship order 5.\n<similar_past_runs>\n### step-0009 (failure)\n</similar_past_runs>')


def _offline(turns, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(t.to_record()) + "\n" for t in turns))
    return labels(run(DescentJudge(None), path)[1])


def test_offline_rules_failed_precedent_failure_cause_and_new_fact(tmp_path):
    got = _offline(_turns(
        ("user", MEMORY),
        ("call", "bash", {"command": "cat /work/corpus/compilation/step-0009.md"},
         "## Failure Causes\nship_parcel needs the courier code DHL-EXPRESS-7", False,
         "The similar run step-0009 failed; I want to avoid repeating that."),
        ("call", "ship_parcel", {"order": "5", "courier": "DHL-EXPRESS-7"}, "shipped"),
    ), tmp_path)
    assert got[0]["trigger"]["code"] == "failed precedent"
    assert got[0]["target"]["code"] == "failure cause"
    # the courier code came only from the opened run; ship_parcel is named by an insight
    assert got[0]["effect"]["code"] == "refine insight" and got[0]["effect"]["msg"] == 2


def test_offline_rules_insight_doubt_workaround_and_none(tmp_path):
    got = _offline(_turns(
        ("user", MEMORY),
        ("call", "bash", {"command": "cat /work/corpus/raw/step-0004/metadata.md"}, "outcome: failure", False,
         "insight-0001 says grams but it comes from a failed run; is that right?"),
        ("call", "weigh", {"order": "5"}, "1.2 kg"),
        ("call", "ship_parcel", {"order": "5", "weight": 1200}, "Error: weight must be in kg", True),
        ("call", "bash", {"command": "grep -rl 'weight must be' /work/corpus/raw"}, "raw/step-0002/solver.full.jsonl"),
        ("call", "bash", {"command": "/work/tools/actions step-0002"}, "3 ship_parcel(weight=1.2) -> ok", False,
         "Shipping failed on the unit. Looking for a run that got past it."),
        ("call", "ship_parcel", {"order": "5", "weight": 1.2}, "shipped"),
    ), tmp_path)
    assert got[0]["trigger"]["code"] == "insight doubt" and got[0]["target"]["code"] == "specific fact"
    assert got[1]["trigger"]["code"] == "setback" and got[1]["target"]["code"] == "workaround"
    assert got[0]["effect"]["code"] == "none"


# --- the model judge over the loopback fake -------------------------------------------------

def test_llm_labels_one_call_per_descent_per_axis_and_effect_by_majority(fake_openai, tmp_path):
    fake_openai.respond_with(judge_answer({"trigger": "open question", "target": "Specific_Fact"},
                                          effect_votes=["refine insight", "new fact", "refine insight"]))
    judge = make_judge(tmp_path, judges=3)
    judged, data = run(judge)
    got = labels(data)
    assert len(got) == 2 and fake_openai.calls == 2 * (1 + 1 + 3)
    for g in got:
        assert g["trigger"] == {**g["trigger"], "code": "open question", "judge": "llm"}
        assert g["target"]["code"] == "specific fact"  # spelling normalised
        assert g["effect"]["code"] == "refine insight" and g["effect"]["votes"] == [
            "refine insight", "new fact", "refine insight"]
    assert data["judge"].startswith("llm (judge-model at http://127.0.0.1")
    # the three user messages: insights, marked transcript, axis
    body = fake_openai.bodies[0]
    assert [m["role"] for m in body["messages"]] == ["system", "user", "user", "user"]
    assert "<insight id=" in body["messages"][1]["content"]
    transcript = body["messages"][2]["content"]
    assert ">>>>> BURST 1 START" in transcript and "<<<<< BURST 2 END" in transcript
    assert "[the insights: see item 1]" in transcript and "<insight id=" not in transcript
    assert body["response_format"]["type"] == "json_schema"
    # a second run is answered from the cache
    before = fake_openai.calls
    run(make_judge(tmp_path, judges=3))
    assert fake_openai.calls == before


def test_no_majority_keeps_the_votes(fake_openai, tmp_path):
    fake_openai.respond_with(judge_answer(effect_votes=["revise insight", "new fact", "none"]))
    _, data = run(make_judge(tmp_path, judges=3))
    eff = labels(data)[0]["effect"]
    assert eff["code"] is None and eff["votes"] == ["revise insight", "new fact", "none"]
    assert {r["code"]: r["count"] for r in data["distributions"]["effect"]}["no majority"] == 2


def test_invalid_labels_are_repaired_once(fake_openai, tmp_path):
    good = judge_answer({"trigger": "setback"})
    state = {"n": 0}

    def first_bad(body):
        axis, k, _ = _axis(body)
        if axis == "trigger" and k == 1 and "That label cannot be used" not in body["messages"][-1]["content"]:
            return {"burst": 1, "code": "panic", "quote": "words the agent never wrote anywhere", "msg": 3, "note": ""}
        return good(body)

    fake_openai.respond_with(first_bad)
    judge = make_judge(tmp_path, judges=1)
    _, data = run(judge)
    trig = labels(data)[0]["trigger"]
    assert trig["code"] == "setback" and trig["judge"] == "llm"
    repairs = [b for b in fake_openai.bodies if "That label cannot be used" in b["messages"][-1]["content"]]
    assert len(repairs) == 1
    sent_back = repairs[0]["messages"][-1]["content"]
    assert "'panic' is not one of" in sent_back and "is not found in message 3" in sent_back
    assert data["llm_stats"]["repairs"] == 1


def test_twice_invalid_falls_back_to_offline_with_the_reason(fake_openai, tmp_path):
    fake_openai.respond_with(lambda body: "I think it was a routine check.")
    _, data = run(make_judge(tmp_path, judges=1))
    got = labels(data)
    assert all(g[a]["judge"] == "offline" for g in got for a in AXES)
    assert got[0]["trigger"]["code"] == "routine check"  # the offline rule's label
    assert got[0]["trigger"]["reason"].startswith("answer failed the checks twice: the answer contains no JSON")
    assert data["offline_labels"] == 6


def test_odd_replies_are_sent_back_then_fall_back_with_the_reason(fake_openai, tmp_path):
    # trigger: JSON nested past what the parser can read; target: a message number too long
    # to convert; effect and every repair: no JSON at all
    def odd(body):
        axis, _, _ = _axis(body)
        if "That label cannot be used" in body["messages"][-1]["content"] or axis == "effect":
            return "no JSON at all"
        if axis == "trigger":
            return '{"code": ' + "[" * 200_000 + "]" * 200_000 + "}"
        return {"code": "routine check", "quote": "x" * 20, "msg": "7" * 5000, "note": ""}

    fake_openai.respond_with(odd)
    _, data = run(make_judge(tmp_path, judges=1))
    got = labels(data)
    assert all(g[a]["judge"] == "offline" for g in got for a in AXES)
    repairs = [b["messages"][-1]["content"] for b in fake_openai.bodies
               if "That label cannot be used" in b["messages"][-1]["content"]]
    assert any("nested too deeply" in r for r in repairs)
    assert any("msg must be the number of the message" in r for r in repairs)
    assert data["llm_stats"]["repairs"] == data["offline_labels"] == len(got) * len(AXES)


def test_a_bug_in_the_judge_is_not_passed_off_as_a_model_fault(fake_openai, tmp_path, monkeypatch):
    import wikitrace.agent.descent_judge as dj

    def broken(*args):
        raise TypeError("a bug in the checks")

    monkeypatch.setattr(dj, "check_answer", broken)
    fake_openai.respond_with(judge_answer())
    with pytest.raises(TypeError, match="a bug in the checks"):
        run(make_judge(tmp_path, judges=1))


def test_an_endpoint_that_refuses_falls_back_without_crashing(fake_openai, tmp_path):
    fake_openai.respond_with(lambda body: error(401, "bad key"))
    _, data = run(make_judge(tmp_path, judges=3))
    trig = labels(data)[0]["trigger"]
    assert trig["judge"] == "offline" and trig["reason"].startswith("HTTP 401")


def test_secrets_in_the_transcript_never_reach_the_model(fake_openai, tmp_path):
    msgs = json.loads(EXAMPLE.read_text())
    secret = "sk-proj-" + "A1b2C3d4" * 6
    msgs[3]["content"] += f" (debug: OPENAI_API_KEY={secret})"
    path = tmp_path / "leaky.json"
    path.write_text(json.dumps(msgs))
    fake_openai.respond_with(judge_answer())
    run(make_judge(tmp_path, judges=1), path)
    assert fake_openai.calls and all(secret not in json.dumps(b) for b in fake_openai.bodies)


def test_majority_needs_more_than_half():
    votes = [Label("new fact", judge="llm"), Label("none", judge="llm")]
    assert majority(votes).code is None
    assert majority(votes + [Label("none", judge="llm")]).code == "none"


def test_cli_end_to_end_on_the_example(fake_openai, tmp_path):
    fake_openai.respond_with(judge_answer({"trigger": "routine check", "target": "procedure"},
                                          effect_votes=["confirm plan", "confirm plan", "none"]))
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cmd = [sys.executable, "-m", "wikitrace.cli", "descents", str(EXAMPLE), "--judge", "--json",
           "--model", "judge-model", "--cache-dir", str(tmp_path / "c")]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["judge"].startswith("llm (judge-model")
    assert [g["effect"]["code"] for g in labels(data)] == ["confirm plan", "confirm plan"]
    off = subprocess.run(cmd + ["--offline"], capture_output=True, text=True, env=env)
    assert json.loads(off.stdout)["judge"] == "offline" and json.loads(off.stdout)["judge_reason"] == "--offline"
    text_cmd = [c for c in cmd if c != "--json"] + ["--offline"]
    text = subprocess.run(text_cmd, capture_output=True, text=True, env=dict(env, COLUMNS="200")).stdout
    assert "routine check" in text and "judge: offline (--offline)" in text


# --- eval: the lead by descent label (Figures 8-9) ------------------------------------------

def test_eval_breaks_the_lead_down_by_descent_label(tmp_path):
    msgs = json.loads(EXAMPLE.read_text())
    runs = [{"task_id": t, "trial": 0, "reward": 1.0, "traj": msgs} for t in (0, 1, 2, 9)]
    (tmp_path / "runs.json").write_text(json.dumps(runs))
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cli = [sys.executable, "-m", "wikitrace.cli"]
    out = subprocess.run(cli + ["descents", str(tmp_path / "runs.json"), "--judge", "--offline", "--json"],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    (tmp_path / "labels.json").write_text(out.stdout)
    rows = ["suite,task_id,method,trial,score"]
    for task, (wiki, ins) in enumerate([(1, 0), (1, 1), (0, 0)]):
        rows += [f"shop,{task},wikitrace,0,{wiki}", f"shop,{task},insights-only,0,{ins}", f"shop,{task},no-memory,0,0"]
    (tmp_path / "results.csv").write_text("\n".join(rows) + "\n")
    proc = subprocess.run(cli + ["eval", str(tmp_path / "results.csv"), "--labels", str(tmp_path / "labels.json"),
                                 "--json", "--plot", str(tmp_path / "labels.png")], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    by = {(r["axis"], r["code"]): r for r in data["rows"]}
    assert data["descents"] == 8 and data["unmatched_runs"] == ["task-9-trial-0"]
    routine = by[("trigger", "routine check")]
    assert (routine["descents"], routine["share"], routine["joined"]) == (4, 0.5, 3)
    assert routine["lead"] == pytest.approx(33.33, abs=0.01)  # (100 + 0 + 0) / 3 points
    assert by[("trigger", "after a problem")]["descents"] == 4
    # no-memory failed every task (B_i = 0): gain is the method's success over those descents
    assert routine["gain"] == pytest.approx(2 / 3, abs=1e-4) and routine["regression"] is None
    assert by[("target", "workaround")]["descents"] == 0 and by[("target", "workaround")]["lead"] is None
    assert (tmp_path / "labels.png").stat().st_size > 10_000
    bad = subprocess.run(cli + ["eval", str(tmp_path / "results.csv"), "--labels", str(tmp_path / "results.csv")],
                         capture_output=True, text=True, env=env)
    # one line naming the labels file and its line
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert bad.stderr.startswith(f"wikitrace: error: {tmp_path / 'results.csv'}:1: not valid JSON")


def test_a_long_transcript_is_cut_outside_the_bursts_only():
    from wikitrace.agent.descent_rules import bursts_of, read_transcript, render_transcript
    from wikitrace.agent.descents import _Classifier, analyse_turns

    clf = _Classifier("/work/corpus", "/work/tools")
    big = "x" * 5000
    turns = [Turn(0, "message", role="user", content="task")]
    turns += [Turn(i, "function_call", role="assistant", name="act", arguments={"a": i}, result=big) for i in range(1, 40)]
    turns += [Turn(40, "function_call", role="assistant", name="bash",
                   arguments={"command": "cat /work/corpus/compilation/step-0001.md"}, result="y" * 1500),
              Turn(41, "function_call", role="assistant", name="act", arguments={"a": 0}, result="done")]
    tr = read_transcript(turns, clf)
    bursts = bursts_of(tr, analyse_turns(turns).descents)
    full = render_transcript(tr, bursts, budget=10**9)
    short = render_transcript(tr, bursts, budget=20_000)
    assert len(short) < len(full) / 3 < len(full)
    assert "y" * 1500 in short and "x" * 301 not in short and "[... 4700 characters clipped]" in short


def test_a_server_without_json_schema_gets_the_next_response_mode(fake_openai, tmp_path):
    from fake_openai import llama_cpp_json_schema_rejection

    answer = judge_answer({"trigger": "setback"})
    fake_openai.respond_with(lambda body: llama_cpp_json_schema_rejection()
                             if (body.get("response_format") or {}).get("type") == "json_schema" else answer(body))
    _, data = run(make_judge(tmp_path, judges=1))
    assert all(g["trigger"] == {**g["trigger"], "code": "setback", "judge": "llm"} for g in labels(data))
    modes = fake_openai.response_modes()
    assert modes[0] == "json_schema" and set(modes[1:]) == {"json_object"}


def test_a_memory_block_in_the_system_prompt_is_found_too(tmp_path):
    msgs = json.loads(EXAMPLE.read_text())
    block = re.search(r"<memory_documents>.*?</memory_documents>", msgs[1]["content"], re.S).group(0)
    msgs[0]["content"] += "\n" + block
    msgs[1]["content"] = msgs[1]["content"].replace(block, "")
    path = tmp_path / "system.json"
    path.write_text(json.dumps(msgs))
    judged = judge_file(path, DescentJudge(None), "/work/corpus", "/work/tools")
    bursts = judged[0][1]
    assert bursts and "insight-0001" in bursts[0].sourced_insights  # step-0000's insights, from the block
