"""The insight layer across runs, on real-shaped runs (SWE-agent-style shell sessions with a
missing program, airline-style runs): one page per lesson of a task type with every run that
taught it, counts equal to the sources, a cause named only when it separates the failed runs
from the successful ones, and add / forget / rebuild changing only what they must."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from helpers import tree_bytes, write_jsonl
from test_offline_content import JAVA_SYSTEM, _call, _msg, _record, _turns

from wikitrace.build import BuildOptions, build

WIKITRACE = shutil.which("wikitrace") or str(Path(sys.executable).parent / "wikitrace")
ISSUE = "The parser drops the last element of {name} when the input ends with a comma."


def swe_run(k: int, success: bool, jdk_missing: bool = True, extra_error: bool = False) -> dict:
    """A SWE-agent-style session: look around, meet `mvn: command not found` (the image has no
    JDK), then either edit the file and submit (success) or give up after reading (failure)."""
    name = f"Module{k}"
    turns = [_msg("system", JAVA_SYSTEM), _msg("user", ISSUE.format(name=name)),
             _call("bash", {"command": f"grep -rn parse src/main/java/{name}"}, f"src/main/java/{name}/P.java:{k}: parse(")]
    if jdk_missing:
        turns.append(_call("bash", {"command": "mvn -q test"}, "bash: mvn: command not found"))
    if extra_error:
        turns.append(_call("str_replace_editor", {"command": "view", "path": f"/repo/src/{name}/Q.java"},
                           f"The path /repo/src/{name}/Q.java does not exist. Please provide a valid path.",
                           is_error=True))
    if success:
        turns += [_call("str_replace_editor", {"command": "str_replace", "path": f"src/main/java/{name}/P.java",
                                               "old_str": "i < n - 1", "new_str": "i < n"},
                        f"The file src/main/java/{name}/P.java has been edited."),
                  _call("submit", {}, "Submitted.")]
    else:
        turns.append(_call("str_replace_editor", {"command": "view", "path": f"src/main/java/{name}/P.java"},
                           f"  {k} for (int i = 0; i < n - 1; i++)"))
    turns.append({"type": "episode_over"})
    return _record(f"swe-{k:03d}", "java-bugfix", ISSUE.format(name=name), _turns(*turns), success)


def compile_runs(tmp_path: Path, runs: list[dict], name: str = "corpus") -> Path:
    out = tmp_path / name
    build(BuildOptions(inputs=[write_jsonl(tmp_path / f"{name}.jsonl", runs)], out=out, offline=True, quiet=True))
    return out


def corpus_json(out: Path) -> dict:
    return json.loads((out / "corpus.json").read_text())


def text_count_mismatches(out: Path) -> list[str]:
    """Every count of runs the insight pages' text states that differs from the runs it links or
    the Sources it counts (benchmarks/text_counts.py), by page."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import text_counts

    found, insights = [], corpus_json(out)["insights"]
    runs_of = {entry["id"]: len(entry["sources"]) for entry in insights}
    for entry in insights:
        tally = text_counts.check((out / "insight" / f"{entry['id']}.md").read_text(), entry["sources"], runs_of)
        found += [f"{entry['id']}: {e}" for e in tally.examples if e.startswith("mismatch")]
    return found


def insight_with(data: dict, prefix: str) -> dict:
    (entry,) = [i for i in data["insights"] if i["key"].startswith(prefix)]
    return entry


def cli(*args) -> subprocess.CompletedProcess:
    done = subprocess.run([WIKITRACE, *map(str, args)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done


def test_an_error_every_run_met_is_one_environment_lesson_not_a_cause(tmp_path):
    runs = [swe_run(k, success=k % 3 == 0) for k in range(12)]  # 4 successful, 8 failed, all without a JDK
    out = compile_runs(tmp_path, runs)
    data = corpus_json(out)
    jdk = insight_with(data, "error|missing-program")
    c = jdk["contrast"]
    assert (c["failed_met"], c["failed"], c["success_met"], c["success"]) == (8, 8, 4, 4)
    assert c["verdict"] == "none"  # met by every run: it separates nothing
    page = (out / "insight" / f"{jdk['id']}.md").read_text()
    assert "Runs of this task type that met this error: 8 failed, 4 successful." in page
    assert "do not show that it separates failed from successful runs, so it is not named a cause" in page
    assert "likely cause" not in page
    # the task type's totals and the p-value change with every run: the index holds them, not the page
    assert "8 failed and 4 successful runs." in (out / "insight" / "_index.md").read_text()
    assert "8 of 8" not in page and "p = " not in page
    # what the successful runs did instead: the lesson they teach, with each of them linked once
    successes = [r["step"] for r in data["runs"] if r["outcome"] == "success"]
    # (they found the file to change in grep's listing, and their lesson says so)
    (line,) = [x for x in page.splitlines() if x.startswith("- [Find the file to change in an earlier answer, then submit")]
    assert line.endswith(f": 4 runs ({', '.join(f'[{s}](../compilation/{s}.md)' for s in successes)})"), line
    # one page for the missing program, however many runs met it
    assert sum(i["key"] == "error|missing-program" for i in data["insights"]) == 1


def test_an_error_only_failed_runs_met_is_named_with_its_counts(tmp_path):
    runs = [swe_run(k, success=k % 2 == 0, jdk_missing=False, extra_error=k % 2 == 1) for k in range(16)]
    data = corpus_json(compile_runs(tmp_path, runs))
    missing_path = insight_with(data, "error|missing-path")  # a path that is not there, whichever tool
    c = missing_path["contrast"]
    assert (c["failed_met"], c["failed"], c["success_met"], c["success"]) == (8, 8, 0, 8)
    assert c["verdict"] == "failure" and c["p"] < 0.05


def test_thirty_runs_with_one_lesson_give_one_insight_with_thirty_sources(tmp_path):
    runs = [swe_run(k, success=True, jdk_missing=False) for k in range(30)]
    out = compile_runs(tmp_path, runs)
    data = corpus_json(out)
    (entry,) = data["insights"]
    assert entry["key"] == "procedure|submit:file-shown" and entry["counts"] == {"runs": 30, "success": 30, "failure": 0}
    assert [s["step"] for s in entry["sources"]] == [r["step"] for r in data["runs"]]
    page = (out / "insight" / f"{entry['id']}.md").read_text()
    assert "Seen in 30 runs: 30 successful, 0 failed." in page
    assert len(re.findall(r"^- \[step-\d+\]\(\.\./compilation/step-\d+\.md\) \(success\)", page, re.M)) == 30
    assert all(r["insights"] == [entry["id"]] for r in data["runs"])
    # the lesson says what worked: the file to change found in grep's listing (the issue names no file),
    # the edit, the submit; the file each run changed, and where it was found, beside it
    assert entry["guideline"] == ("To settle the task: find the file to change in what an earlier call returned (a "
                                  "listing or a trace that names it), then change it with str_replace_editor "
                                  "str_replace, then call submit.")
    assert "changed src/main/java/Module7/P.java, found in grep's answer (turn 2)" in page
    assert text_count_mismatches(out) == []  # every count the text states is the runs it links
    assert cli("check", out).returncode == 0


def test_add_of_a_repeating_run_changes_only_that_insight_and_forget_undoes_it(tmp_path):
    runs = [swe_run(k, success=k % 3 == 0) for k in range(9)]
    out = compile_runs(tmp_path, runs)
    before = tree_bytes(out)
    data = corpus_json(out)
    jdk = insight_with(data, "error|missing-program")
    repeat = write_jsonl(tmp_path / "repeat.jsonl", [swe_run(50, success=False)])
    cli("add", repeat, "--corpus", out)
    after = tree_bytes(out)
    now = corpus_json(out)
    new_step = now["runs"][-1]["step"]
    assert now["runs"][-1]["insights"] == [jdk["id"]] or jdk["id"] in now["runs"][-1]["insights"]
    assert [i["id"] for i in now["insights"]] == [i["id"] for i in data["insights"]]  # no new insight, ids kept
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    pages = {k for k in changed if not k.startswith((".wikitrace/", "index/")) and k != "corpus.json"}
    own = {f"raw/{new_step}/" + p for p in ("metadata.md", "solver.full.jsonl", "turns.md", "original.json")}
    indexes = {"index.md", "raw/_index.md", "compilation/_index.md", "insight/_index.md"}
    assert pages - own - {f"compilation/{new_step}.md"} <= indexes | {
        f"insight/{i['id']}.md" for i in data["insights"]}
    page_before, page_after = (t[f"insight/{jdk['id']}.md"].decode() for t in (before, after))
    assert new_step not in page_before and f"- [{new_step}](../compilation/{new_step}.md) (failure)" in page_after
    counts = insight_with(now, "error|missing-program")["counts"]
    assert counts == {"runs": jdk["counts"]["runs"] + 1, "success": jdk["counts"]["success"],
                      "failure": jdk["counts"]["failure"] + 1}
    # every other insight page is byte-identical: the totals that moved live on the index
    assert changed & {f"insight/{i['id']}.md" for i in data["insights"]} == {f"insight/{jdk['id']}.md"}
    assert b"6 failed and 3 successful runs." in before["insight/_index.md"]
    assert b"7 failed and 3 successful runs." in after["insight/_index.md"]
    assert text_count_mismatches(out) == []

    cli("forget", "swe-050", "--corpus", out)
    undone = tree_bytes(out)
    for rel in set(before) | set(undone):
        if rel.startswith((".wikitrace/", "index/")) or rel == "corpus.json":
            continue
        assert before.get(rel) == undone.get(rel), rel
    restored = corpus_json(out)
    assert restored["insights"] == data["insights"]
    assert text_count_mismatches(out) == []
    assert cli("check", out).returncode == 0


def test_rebuilds_are_byte_identical_and_compile_equals_compile_then_add(tmp_path):
    runs = [swe_run(k, success=k % 3 == 0, extra_error=k % 4 == 1) for k in range(10)]
    one, two = compile_runs(tmp_path, runs, "one"), compile_runs(tmp_path, runs, "two")
    strip = lambda t: {k: v for k, v in t.items() if not k.startswith(".wikitrace/") and k != "corpus.json"}  # noqa: E731
    assert strip(tree_bytes(one)) == strip(tree_bytes(two))
    first = compile_runs(tmp_path, runs[:6], "three")
    cli("add", write_jsonl(tmp_path / "rest.jsonl", runs[6:]), "--corpus", first)
    assert strip(tree_bytes(first)) == strip(tree_bytes(one))
    a, b = corpus_json(first), corpus_json(one)
    assert (a["runs"], a["insights"], a["retired"]) == (b["runs"], b["insights"], b["retired"])


def test_check_finds_an_insight_whose_counts_differ_from_its_sources(tmp_path):
    from helpers import make_writable_copy

    from wikitrace.check import check_corpus

    out = compile_runs(tmp_path, [swe_run(k, success=k % 2 == 0) for k in range(4)])
    assert check_corpus(out) == []
    broken = make_writable_copy(out, tmp_path / "broken")
    entry = insight_with(corpus_json(out), "error|missing-program")
    page = broken / "insight" / f"{entry['id']}.md"
    n = entry["counts"]["runs"]
    page.write_text(page.read_text().replace(f"\nruns: {n}\n", f"\nruns: {n + 1}\n"))
    assert any(f"differ from its {n} listed sources" in p for p in check_corpus(broken))


AIRLINE_SYSTEM = ("You are an airline agent. Before taking any actions that update the booking database, you must "
                  "list the action details and obtain explicit user confirmation (yes) to proceed.")


def airline_trial(trial: int, success: bool, bags: int | None, full_flights: bool = False) -> dict:
    """One trial of one airline task (several trials share the task id): look the reservation
    up, then change its bags (``bags``), or end after the look-up (``bags`` None)."""
    flight = {"flight_number": "HAT056", "date": "2024-05-25"}
    if full_flights:  # the same flight, written with its airports: the same choice
        flight = {"origin": "EWR", "destination": "IAH", **flight}
    turns = [_msg("system", AIRLINE_SYSTEM),
             _msg("user", "I am omar_rossi_1241 and I want three checked bags on reservation TR2WKM."),
             _call("get_reservation_details", {"reservation_id": "TR2WKM"},
                   '{"reservation_id": "TR2WKM", "flights": [{"flight_number": "HAT056", "date": "2024-05-25", '
                   '"origin": "EWR", "destination": "IAH"}], "payment_history": [{"payment_id": "credit_card_4"}]}')]
    if bags is not None:
        turns += [_msg("assistant", f"I will set {bags} bags on TR2WKM, paid with credit_card_4. Shall I go ahead?"),
                  _msg("user", "yes"),
                  _call("update_reservation_baggages", {"reservation_id": "TR2WKM", "total_baggages": bags,
                                                        "flights": [flight], "payment_id": "credit_card_4"},
                        '{"reservation_id": "TR2WKM", "total_baggages": %d}' % bags)]
    turns.append(_msg("assistant", "Done." if bags is not None else "Your reservation has one bag."))
    record = _record(f"bags-trial-{trial}", "airline", "Add bags to reservation TR2WKM.", _turns(*turns), success)
    record["task"]["id"] = "bags"
    return record


def test_a_failed_trial_is_compared_with_the_successful_trials_of_the_same_task(tmp_path):
    runs = [airline_trial(0, True, 3), airline_trial(1, True, 3, full_flights=True),
            airline_trial(2, False, 2), airline_trial(3, False, None), airline_trial(4, False, 5)]
    out = compile_runs(tmp_path, runs)
    data = corpus_json(out)
    step = {r["run_id"]: r["step"] for r in data["runs"]}
    found = {}
    for entry in data["insights"]:
        for d in (entry.get("same_task") or {}).get("differences", []):
            found.setdefault(d["text"], set()).update(d["steps"])
    # the failed trial that set 2 bags: its total_baggages matches neither success; the flight
    # written with or without its airports and the same reservation id are the same choice
    assert found.get("gave update_reservation_baggages another value of total_baggages") == {
        step["bags-trial-2"], step["bags-trial-4"]}
    assert not any("of flights" in t or "of reservation_id" in t or "of payment_id" in t for t in found)
    # the trial that ended after the look-up: the change the successes made is named
    assert found.get("called update_reservation_baggages without an error, which the failed run never did") \
        == {step["bags-trial-3"]}
    # the page says it, with the count of compared runs and the instruction under What to do
    (entry,) = [e for e in data["insights"] if step["bags-trial-2"] in
                [d for x in (e.get("same_task") or {}).get("differences", []) for d in x["steps"]]]
    page = (out / "insight" / f"{entry['id']}.md").read_text()
    what_to_do, evidence = page.split("## What to do", 1)[1].split("## Evidence", 1)
    # what to do says it once, as an instruction with what the successful trials did; its counts and
    # links stand once, in the list under Evidence
    assert ("In a run like these, check the value of total_baggages for update_reservation_baggages against the "
            "request: the successful trials of the same tasks gave update_reservation_baggages another value of "
            "total_baggages.") in what_to_do
    assert "In a run like these" not in evidence and "(2 of 2 compared)" not in page
    # one line per set of runs: a difference of the very same runs is said in the same line
    (line,) = [x for x in page.splitlines() if "another value of total_baggages" in x and x.startswith("- ")]
    assert f"for 2 failed runs here ([{step['bags-trial-2']}]" in line
    # no argument value of the episode is written into corpus.json's counted patterns (the opening
    # pattern is the first message as a page quotes it, never counted)
    assert not any("TR2WKM" in p or "credit_card_4" in p for r in data["runs"] for p in r["patterns"]
                   if not p.startswith("opening|"))
    assert cli("check", out).returncode == 0


def test_a_difference_one_run_shows_is_listed_but_not_advised():
    from wikitrace.corpus.trials import advice

    def entry(side, runs, compared):
        return {"same_task": {"side": side, "members": compared, "compared": compared, "differences": [
            {"text": "gave book_reservation another value of flights", "runs": runs, "steps": ["step-0001"]}]}}

    assert advice(entry("success", 1, 1)) == "" and advice(entry("failure", 1, 1)) == ""
    assert advice(entry("failure", 2, 5)) == ""  # two of five: not what most compared runs show
    assert "(3 of 5 compared)" in advice(entry("failure", 3, 5))
    assert "most of them gave book_reservation another value of flights (2 of 3 compared)" in advice(
        entry("success", 2, 3))


def test_a_recipe_is_not_told_to_make_its_own_call():
    from wikitrace.corpus.trials import advice

    def entry(key):
        return {"key": key, "same_task": {"side": "success", "members": 5, "compared": 5, "differences": [
            {"text": "called send_voucher without an error, which each failed trial of its task never did", "runs": 3,
             "steps": ["step-0001"]}]}}

    # the recipe ends with send_voucher: "call send_voucher" repeats it, and with no instruction left the
    # difference is said only where the page lists it (with its runs), not again as a sentence
    assert advice(entry("procedure|send_voucher")) == ""
    # a recipe ending with another call is told to make this one
    assert advice(entry("procedure|refund")).startswith("In a run like these, call send_voucher and get its answer: ")


def test_trial_differences_name_fewer_changes_and_where_the_queries_came_from():
    from wikitrace.corpus.trials import trial_differences

    def entry(*patterns):
        return {"patterns": list(patterns)}

    # two reservations to downgrade: the successes changed both, the failed run one
    won = [entry("did|update_reservation_flights", "count|update_reservation_flights|2"),
           entry("did|update_reservation_flights", "count|update_reservation_flights|2")]
    lost = entry("did|update_reservation_flights", "count|update_reservation_flights|1")
    assert trial_differences(lost, won) == [
        "made 2 update_reservation_flights calls that went through, where the failed run made 1"]
    assert trial_differences(won[0], won[1:]) == []  # the same decisions: nothing to name
    # the task wanted no change: the successes made none, the failed run a cancel (of whatever tool)
    answered = [entry("did|get_reservation_details")] * 2
    cancelled = entry("did|get_reservation_details", "did|cancel_reservation", "set|cancel_reservation|reservation_id|a1",
                      "count|cancel_reservation|1")
    assert trial_differences(cancelled, answered) == [
        "made no change that went through, where the failed run made one",
        "had no cancel_reservation call go through, where the failed run had one"]
    # a QA task: every successful trial searched words a page had shown, the failed one only the question's
    won = [entry("did|Search", "did|Finish", "query|Search|task", "query|Search|shown")] * 2
    lost = entry("did|Search", "did|Finish", "query|Search|task")
    (said,) = trial_differences(lost, won)
    assert said.startswith("sent a Search whose words beyond the task text it was given all came from earlier answers")
    # an answer is compared the same way: the successes answered in words a look-up had shown
    won = [entry("did|Search", "did|Finish", "said|Finish|shown")] * 2
    lost = entry("did|Search", "did|Finish", "said|Finish|own")
    (said,) = trial_differences(lost, won)
    assert said.startswith("gave a Finish answer whose words beyond the task text it was given all came from earlier answers")


def test_every_same_task_sentence_is_true_of_the_trials_it_names(tmp_path):
    """Trials of four tasks with seeded random decisions (look up or not, change the bags zero to
    two times, with one of two counts and one of two payments, outcomes at random): every
    phrase an insight page states about a source is checked against the records themselves."""
    import random

    rng = random.Random(7)
    runs, calls_of = [], {}
    for task in range(4):
        for trial in range(4):
            turns = [_msg("system", AIRLINE_SYSTEM), _msg("user", f"Add bags to reservation R{task}.")]
            made = []
            if rng.random() < 0.7:
                made.append(("get_reservation_details", {"reservation_id": f"R{task}"}))
            for _ in range(rng.choice([0, 1, 1, 2])):
                made.append(("update_reservation_baggages", {
                    "reservation_id": f"R{task}", "total_baggages": rng.choice([2, 3]),
                    "payment_id": rng.choice(["credit_card_4", "gift_card_1"])}))
            for name, args in made:
                turns.append(_call(name, args, '{"reservation_id": "R%d", "ok": true}' % task))
            turns.append(_msg("assistant", "Done."))
            record = _record(f"t{task}-trial-{trial}", "airline", f"Add bags to R{task}.", _turns(*turns),
                             rng.random() < 0.5)
            record["task"]["id"] = f"t{task}"
            runs.append(record)
            calls_of[record["run_id"]] = made
    data = corpus_json(compile_runs(tmp_path, runs))
    by_step = {r["step"]: r for r in data["runs"]}
    checked = 0
    for entry in data["insights"]:
        st = entry.get("same_task") or {}
        for d in st.get("differences", []):
            for step in d["steps"]:
                r = by_step[step]
                others = [o for o in data["runs"] if o["task_id"] == r["task_id"] and o["outcome"] != r["outcome"]]
                fails, wins = ([r], others) if st["side"] == "failure" else (others, [r])
                made = lambda e: calls_of[e["run_id"]]  # noqa: E731
                tools = lambda e: {n for n, _a in made(e)}  # noqa: E731
                count = lambda e, t: sum(n == t for n, _a in made(e))  # noqa: E731
                values = lambda e, t, k: {a[k] for n, a in made(e) if n == t}  # noqa: E731
                text = d["text"]
                if m := re.match(r"called (\S+) without an error", text):
                    assert all(m[1] in tools(w) for w in wins) and not any(m[1] in tools(f) for f in fails), text
                elif text.startswith("made no change that went through"):
                    assert all(made(f) and any(n != "get_reservation_details" for n, _a in made(f)) for f in fails), text
                    assert not any(n != "get_reservation_details" for w in wins for n, _a in made(w)), text
                elif m := re.match(r"had no (\S+) call go through", text):
                    assert all(m[1] in tools(f) for f in fails) and not any(m[1] in tools(w) for w in wins), text
                elif m := re.match(r"made (\d+)(?: to (\d+))? (\S+) calls? that went through, where .* made (\d+)", text):
                    lo, hi = int(m[1]), int(m[2] or m[1])
                    assert all(lo <= count(w, m[3]) <= hi for w in wins), text
                    assert all(count(f, m[3]) == int(m[4]) for f in fails) and not lo <= int(m[4]) <= hi, text
                elif m := re.match(r"gave (\S+) another value of (\S+)", text):
                    assert all(values(f, m[1], m[2]) for f in fails), text
                    assert not any(values(f, m[1], m[2]) & values(w, m[1], m[2]) for f in fails for w in wins), text
                elif m := re.match(r"took `(\S+)` of (\S+) from the task statement alone", text):
                    task_text = lambda e: next(o for o in runs if o["run_id"] == e["run_id"])["task"]["instruction"]  # noqa: E731
                    assert all(str(v) in task_text(w) for w in wins for v in values(w, m[2], m[1])), text
                    assert not any(str(v) in task_text(f) for f in fails for v in values(f, m[2], m[1])), text
                elif m := re.match(r"took `(\S+)` of (\S+) from an earlier answer", text):
                    shown = lambda e: " ".join(str(a) for _n, a in made(e)) and "".join(  # noqa: E731
                        '{"reservation_id": "R%s", "ok": true}' % e["task_id"][1:] for _ in made(e))
                    assert all(str(v) in shown(w) for w in wins for v in values(w, m[2], m[1])), text
                    assert not any(str(v) in shown(f) for f in fails for v in values(f, m[2], m[1])), text
                else:
                    raise AssertionError(f"a comparison phrase this test does not know: {text!r}")
                checked += 1
    assert checked >= 5  # the seeded trials do differ: the check ran on real claims


def flight_change(k: int, searched: bool, success: bool) -> dict:
    """A tau-bench-style flight change: the reservation looked up, the new flight either found
    with search_direct_flight or taken from the user's words, confirmed, and changed."""
    from test_offline_content import AIRLINE_SYSTEM

    rid, flight = f"RS{k:04d}", {"flight_number": f"HAT{100 + k}", "date": "2024-05-21"}
    turns = [_msg("system", AIRLINE_SYSTEM),
             _msg("user", f"Move reservation {rid} to flight HAT{100 + k} on 2024-05-21, in economy."),
             _call("get_reservation_details", {"reservation_id": rid},
                   json.dumps({"reservation_id": rid, "cabin": "economy", "payment_history": [
                       {"payment_id": "credit_card_7", "amount": 120}]}), is_error=False)]
    if searched:
        turns.append(_call("search_direct_flight", {"origin": "EWR", "destination": "LAX", "date": "2024-05-21"},
                           json.dumps([dict(flight, price=140)]), is_error=False))
    turns += [_msg("assistant", f"I will move {rid} to HAT{100 + k} on 2024-05-21, paid with credit_card_7. Go ahead?"),
              _msg("user", "yes"),
              _call("update_reservation_flights", {"reservation_id": rid, "cabin": "economy", "flights": [flight],
                                                   "payment_id": "credit_card_7"},
                    json.dumps({"reservation_id": rid, "flights": [flight]}), is_error=False),
              {"type": "episode_over"}]
    return _record(f"change-{k}", "airline", f"Move reservation {rid} to HAT{100 + k}.", _turns(*turns), success)


def test_a_look_up_successful_runs_made_before_the_change_is_what_the_page_says_to_do(tmp_path):
    runs = [flight_change(k, searched=k < 6, success=k < 6) for k in range(12)]
    out = compile_runs(tmp_path, runs)
    data = corpus_json(out)
    entry = insight_with(data, "went-through|update_reservation_flights")
    # the failed runs' check and the successful runs' way to the same change are one page
    assert entry["counts"] == {"runs": 12, "success": 6, "failure": 6}
    assert not [i for i in data["insights"] if i["key"].startswith("procedure|")]
    assert all(entry["id"] in r["insights"] for r in data["runs"])
    assert "recipe" not in entry  # the fold's hand-over to the advice is no field of corpus.json
    assert entry["title"] == "Call search_direct_flight before update_reservation_flights"
    assert entry["guideline"].startswith("Before update_reservation_flights, call search_direct_flight and take")
    # the counts the page gives are the runs' own: every change went through; the searches were the successes'
    before = [r for r in data["runs"] if "before|update_reservation_flights|search_direct_flight" in r["patterns"]]
    assert sorted(r["outcome"] for r in before) == ["success"] * 6
    page = (out / "insight" / f"{entry['id']}.md").read_text()
    what_to_do = page.split("## What to do\n", 1)[1].split("\n## ", 1)[0]
    assert what_to_do.startswith("Before update_reservation_flights, call search_direct_flight")
    assert re.search(r"The 6 successful runs here settled the task this way: look with get_reservation_details "
                     r"\(6 of 6\) and search_direct_flight \(6 of 6\), then call update_reservation_flights, taking "
                     r"cabin from the task statement", what_to_do), what_to_do
    assert "- [step-0000](../compilation/step-0000.md) (success): turn 6: update_reservation_flights" in page
    # the contrast's counts (6 failed, 6 successful whose change went through) are the joined Sources
    assert "The runs counted there are the ones under Sources." in page and "## Runs behind the counts" not in page
    assert ("- [step-0006](../compilation/step-0006.md) (failure): turn 5: update_reservation_flights went through"
            in page)
    assert ("- Of the runs whose update_reservation_flights call went through, those that had called "
            "search_direct_flight before it: 0 of 6 failed, 6 of 6 successful; successful runs did this more often."
            in page)
    # a look-up every run made separates nothing and is not listed
    assert "get_reservation_details before it" not in page
    assert cli("check", out).returncode == 0


def test_a_run_that_settles_with_a_changed_tool_is_added_to_and_forgotten_from_its_check_page(tmp_path):
    runs = [flight_change(k, searched=k % 2 == 0, success=k % 2 == 0) for k in range(8)]
    out = compile_runs(tmp_path, runs)
    before, data = tree_bytes(out), corpus_json(out)
    change = insight_with(data, "went-through|update_reservation_flights")
    assert change["counts"] == {"runs": 8, "success": 4, "failure": 4}
    cli("add", write_jsonl(tmp_path / "more.jsonl", [flight_change(50, searched=True, success=True)]), "--corpus", out)
    after, now = tree_bytes(out), corpus_json(out)
    new_step = now["runs"][-1]["step"]
    assert change["id"] in now["runs"][-1]["insights"]
    assert [i["id"] for i in now["insights"]] == [i["id"] for i in data["insights"]]
    assert insight_with(now, "went-through|update_reservation_flights")["counts"] == {
        "runs": 9, "success": 5, "failure": 4}
    pages = {k for k in set(before) | set(after) if k.startswith("insight/insight-") and before.get(k) != after.get(k)}
    assert change["id"] in {p.split("/")[1].removesuffix(".md") for p in pages}
    assert f"- [{new_step}](../compilation/{new_step}.md) (success)" in after[f"insight/{change['id']}.md"].decode()
    assert text_count_mismatches(out) == []
    assert cli("check", out).returncode == 0
    cli("forget", now["runs"][-1]["run_id"], "--corpus", out)
    undone = tree_bytes(out)
    assert {k for k in set(before) | set(undone) if k.startswith(("insight/", "compilation/"))
            and before.get(k) != undone.get(k)} == set()


def test_a_look_up_made_by_as_many_failed_as_successful_runs_is_not_advised(tmp_path):
    runs = [flight_change(k, searched=k % 2 == 0, success=k < 6) for k in range(12)]
    data = corpus_json(compile_runs(tmp_path, runs))
    entry = insight_with(data, "went-through|update_reservation_flights")
    assert entry["title"] == "Before update_reservation_flights, check the request and the rules on it"
    assert entry["separating"] == []


def test_a_query_choice_that_separates_outcomes_is_shown_on_the_pages_about_that_tool(tmp_path):
    from test_lesson_specifics import _qa

    runs = []
    for k in range(8):  # successes search the name the first page showed; failures make up their own words
        follow = k < 4
        second = f"Ashby Vale {k}" if follow else f"famous river town number {k}"
        runs.append(_qa(f"Ashby Vale {k}" if follow else "unknown", f"Ashby Vale {k}",
                        [(f"Kestrel Days {k}", f"Kestrel Days {k} is held in Ashby Vale {k}."),
                         (second, f"Ashby Vale {k} is a town." if follow else "Could not find that page, please try again.")],
                        f"Where is Kestrel Days {k} held?", success=follow, run_id=f"qa-{k}"))
    data = corpus_json(compile_runs(tmp_path, runs))
    shown = {c["text"] for e in data["insights"] for c in e.get("separating") or []}
    assert ("Of the runs that sent a Search query, those that sent one with words that neither the task text it was given "
            "nor any earlier answer held: 4 of 4 failed, 0 of 4 successful; failed runs did this more often.") in shown
    for r in data["runs"]:
        own = "query|Search|own" in r["patterns"]
        assert own == (r["outcome"] == "failure")


def look_up_only(k: int, success: bool, cancels: bool = False) -> dict:
    """An airline question answered from get_reservation_details, or (``cancels``) a cancellation."""
    from test_offline_content import AIRLINE_SYSTEM

    rid = f"QZ{k:04d}"
    turns = [_msg("system", AIRLINE_SYSTEM), _msg("user", f"Is reservation {rid} insured? If not, cancel it."),
             _call("get_reservation_details", {"reservation_id": rid},
                   json.dumps({"reservation_id": rid, "insurance": "yes"}), is_error=False)]
    if cancels:
        turns += [_msg("assistant", f"I will cancel {rid}. Shall I?"), _msg("user", "yes"),
                  _call("cancel_reservation", {"reservation_id": rid}, json.dumps({"reservation_id": rid,
                                                                                   "status": "cancelled"}),
                        is_error=False)]
    turns += [_msg("assistant", f"{rid} is insured, so nothing needs to change."), {"type": "episode_over"}]
    return _record(f"ask-{k}", "airline", f"Ask whether {rid} is insured.", _turns(*turns), success)


def test_ending_with_look_ups_is_not_called_a_mistake_where_successful_runs_end_so_more_often(tmp_path):
    runs = ([look_up_only(k, True) for k in range(6)] + [look_up_only(k, False) for k in range(6, 8)]
            + [look_up_only(k, False, cancels=True) for k in range(8, 12)])
    out = compile_runs(tmp_path, runs)
    data = corpus_json(out)
    idle = insight_with(data, "idle|lookups")
    assert idle["contrast"]["verdict"] == "success"
    assert (idle["contrast"]["failed_met"], idle["contrast"]["success_met"]) == (2, 6)
    assert idle["title"] == "End after look-ups only when the request needs no change or allows none"
    assert "do not end with look-ups only" not in idle["guideline"]
    # the instruction leads; that successful runs ended so more often comes after it, said as no mistake in itself
    assert idle["guideline"].startswith("When the request asks for a change the rules allow, make it before ending;")
    assert "ending so is no mistake in itself, ending so while a change is due is." in idle["guideline"]
    # the successful runs that ended the same way are listed once per lesson they teach, with their count
    page = (out / "insight" / f"{idle['id']}.md").read_text()
    answered = insight_with(data, "answer-from")
    assert f"- [{answered['title']}](" in page and ": 6 runs ([step-" in page
    # the success lesson itself is not told what successful runs did instead of it
    assert "What successful runs that met it did" not in (out / "insight" / f"{answered['id']}.md").read_text()


def test_a_change_the_successful_trials_of_the_same_task_never_made_is_taught_as_a_rule_check(tmp_path):
    runs = []
    for task in range(3):  # per task: two trials that answer without cancelling succeed, two that cancel fail
        for k, (success, cancels) in enumerate([(True, False), (True, False), (False, True), (False, True)]):
            record = look_up_only(10 * task + k, success, cancels=cancels)
            record["task"]["id"] = f"insured-{task}"
            runs.append(record)
    out = compile_runs(tmp_path, runs)
    data = corpus_json(out)
    entry = insight_with(data, "went-through|cancel_reservation")
    assert entry["counts"] == {"runs": 6, "success": 0, "failure": 6}
    assert entry["title"] == "Check that the rules allow cancel_reservation at all before making it"
    assert entry["guideline"].startswith("For most failed runs here whose task also has a successful trial (6 of 6), "
                                         "the successful trials made no cancel_reservation change at all")
    # what to do says it without the count; the count stands under Evidence
    assert entry["advice"].startswith("For most failed runs here whose task also has a successful trial, "
                                      "the successful trials made no cancel_reservation change at all")
    # Evidence keeps the count, not the instruction What to do already shows
    assert entry["counted"][0] == ("For most failed runs here whose task also has a successful trial (6 of 6), the "
                                   "successful trials made no cancel_reservation change at all.")
    # each failed source has successful trials of its own task, none of which cancelled
    st = entry["same_task"]
    assert st["compared"] == 6 and st["differences"][0]["runs"] == 6
    for r in data["runs"]:
        assert ("went-through|cancel_reservation" in r["patterns"]) == (r["outcome"] == "failure")
    page = (out / "insight" / f"{entry['id']}.md").read_text()
    assert "weigh that step" not in page  # said once, in the guideline


def test_retrying_with_a_name_the_error_suggested_is_shown_where_it_separates_outcomes(tmp_path):
    from test_lesson_specifics import _qa

    runs = []
    for k in range(10):
        listed = k < 5  # successes retry with a title the error suggested; failures rephrase on their own
        retry = f"Ashby Vale {k} (town)" if listed else f"Ashby town {k} river"
        runs.append(_qa(f"Ashby Vale {k}" if listed else "unknown", f"Ashby Vale {k}", [
            (f"Ashby {k}", f"Could not find [Ashby {k}]. Similar: ['Ashby Vale {k} (town)', 'Ashby Hall {k}']."),
            (retry, f"Ashby Vale {k} is a town where Kestrel Days {k} is held." if listed
             else "Could not find that page, please try again.")],
            f"Where is Kestrel Days {k} held?", success=listed, run_id=f"retry-{k}"))
    out = compile_runs(tmp_path, runs)
    data = corpus_json(out)
    for r in data["runs"]:
        assert ("retry|Search|listed" in r["patterns"]) == (r["outcome"] == "success")
        assert ("retry|Search|other" in r["patterns"]) == (r["outcome"] == "failure")
    entry = insight_with(data, "error|Search|Could not find …. Similar")
    texts = [c["text"] for c in entry["separating"]]
    assert ("Of the runs that called Search again after it answered with an error, those that retried with a value "
            "the error's text named: 0 of 5 failed, 5 of 5 successful; successful runs did this more often.") in texts
    assert "call Search again with the name the error lists that fits what the task asks" in entry["guideline"]
    page = (out / "insight" / f"{entry['id']}.md").read_text()
    assert texts[0] in page.replace("\\'", "'")


def test_a_retry_is_read_as_unchanged_named_by_the_error_or_other():
    from test_offline_content import _run

    from wikitrace.compilers.run_patterns import retries_of
    from wikitrace.compilers.reading import read_run

    def run(second):
        turns = _turns(_msg("user", "Refund order #W12."),
                       _call("refund", {"order_id": "#W12", "payment_id": "card_1"},
                             "Error: payment method card_1 not found; the order was paid with gift_card_77",
                             is_error=True),
                       _call("refund", second, "ok", is_error=False), {"type": "episode_over"})
        return read_run(_run(_record("r", "retail", "Refund order #W12.", turns, True)))

    assert retries_of(run({"order_id": "#W12", "payment_id": "gift_card_77"})) == {"retry|refund|listed"}
    assert retries_of(run({"order_id": "#W12", "payment_id": "card_2"})) == {"retry|refund|other"}
    assert retries_of(run({"order_id": "#W12", "payment_id": "card_1"})) == {"retry|refund|same"}


def test_fisher_tails_are_the_exact_hypergeometric_tails():
    """The contrast's p-values: each tail correctly rounded from the exact fraction (a sum
    of float terms once rounded 0.975 up to 0.98 on the page)."""
    from fractions import Fraction
    from math import comb

    from wikitrace.corpus.insights import fisher_tails

    for failed, succeeded in [(2, 14), (3, 13), (7, 5), (1, 1), (40, 3), (120, 90)]:
        for a in range(failed + 1):
            for b in range(0, succeeded + 1, max(1, succeeded // 7)):
                if a + b == 0:
                    continue
                met = a + b
                weight = {x: Fraction(comb(failed, x) * comb(succeeded, met - x), comb(failed + succeeded, met))
                          for x in range(max(0, met - succeeded), min(met, failed) + 1)}
                upper = sum(w for x, w in weight.items() if x >= a)
                lower = sum(w for x, w in weight.items() if x <= a)
                assert fisher_tails(a, b, failed, succeeded) == (float(min(1, upper)), float(min(1, lower)))
    _, down = fisher_tails(1, 2, 2, 14)
    assert f"{down:.2g}" == "0.97"  # 39/40 exactly, below the half-way point as a float


def test_the_trial_advice_in_what_to_do_says_how_many_without_a_count():
    """The same-task difference in What to do has no count (the list under Evidence has it) and so
    says in words whether all, most or some of the compared runs showed it; a call of the page's own
    tool is no advice there, and the next difference is said instead."""
    from wikitrace.corpus.logged_mistake import instead

    def entry(side, runs, compared, key="went-through|book", texts=("had no book call go through, where x",)):
        return {"key": key, "same_task": {"side": side, "members": compared, "compared": compared, "differences": [
            {"text": t, "runs": runs, "steps": []} for t in texts]}}

    assert instead(entry("failure", 3, 3)) == ("In a run like these, make sure the request calls for a change with "
                                               "book at all: the successful trials of the same tasks had no book call "
                                               "go through.")
    assert ": for most of the failed runs here that have a successful trial of their task, those trials had no book call" \
        in instead(entry("failure", 3, 5))
    assert instead(entry("failure", 2, 5)) == ""
    assert ", most successful runs here had no book call" in instead(entry("success", 3, 5))
    assert instead(entry("success", 2, 5)) == ("Unlike the failed trials of their tasks, some successful runs here had "
                                               "no book call go through.")
    own = ("called send_voucher without an error, which each failed trial of its task never did",
           "gave send_voucher another value of amount")
    assert instead(entry("success", 2, 2, "procedure|send_voucher", own)) == (
        "In a run like these, check the value of amount for send_voucher against the request: unlike the failed "
        "trials of their tasks, successful runs here gave send_voucher another value of amount.")


def test_a_number_of_calls_only_one_tasks_trials_show_is_not_advised():
    """"Make 5 update_reservation_flights calls" from the trials of one task is what that task needed,
    not a practice: neither What to do line says it; from two tasks it is said, and any other
    difference of one task's trials still is."""
    from wikitrace.corpus.logged_mistake import instead
    from wikitrace.corpus.trials import advice

    def entry(text, tasks, side="failure"):
        return {"key": "went-through|book", "same_task": {"side": side, "members": 3, "compared": 3, "differences": [
            {"text": text, "runs": 3, "steps": ["step-0001", "step-0002", "step-0003"], "tasks": tasks}]}}

    counted = "made 5 update_reservation_flights calls that went through, where the failed run made 2"
    assert instead(entry(counted, 1)) == "" and advice(entry(counted, 1)) == ""
    assert instead(entry(counted, 1, "success")) == "" and advice(entry(counted, 1, "success")) == ""
    assert instead(entry(counted, 2)).startswith("In a run like these, make 5 update_reservation_flights call(s) ")
    assert advice(entry(counted, 2)).startswith("In a run like these, make 5 update_reservation_flights call(s) ")
    other = "gave book_reservation another value of flights"
    assert instead(entry(other, 1)).startswith("In a run like these, check the value of flights for book_reservation ")
