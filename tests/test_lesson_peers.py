"""A success's procedure page, when failed runs of the task type ended the same way: the lessons
those failed runs teach, counted and linked, and the commonest one said as the check to make
first; where the failed runs' own lesson is on the change itself, one page for both.
Airline-style trials (a reservation looked up, its bags changed after the user's yes)."""

from __future__ import annotations

import re

import pytest
from helpers import SHARED_DATA
from test_insight_layer import airline_trial, cli, compile_runs, corpus_json, insight_with, text_count_mismatches


def _page(out, entry: dict) -> str:
    return (out / "insight" / f"{entry['id']}.md").read_text()


def test_a_change_successful_runs_settled_with_and_failed_runs_also_made_is_one_page(tmp_path):
    # one task; its successful trials set 3 bags, its failed trials set another count
    runs = [airline_trial(0, True, 3), airline_trial(1, True, 3), airline_trial(2, False, 2), airline_trial(3, False, 5)]
    out = compile_runs(tmp_path, runs)
    data = corpus_json(out)
    step = {r["run_id"]: r["step"] for r in data["runs"]}
    went = insight_with(data, "went-through|update_reservation_baggages")
    assert went["counts"] == {"runs": 4, "success": 2, "failure": 2}
    assert not [i for i in data["insights"] if i["key"].startswith("procedure|")]
    # what set the successes apart from the failed trials of their task is the advice, after the check
    assert re.search(r"The 2 successful runs here settled the task this way: look with get_reservation_details "
                     r"\(2 of 2\), then call update_reservation_baggages, taking flights from get_reservation_details",
                     went["advice"]), went["advice"]
    assert went["advice"].endswith("In a run like these, check the value of total_baggages for "
                                   "update_reservation_baggages against the request: the successful trials of the "
                                   "same tasks gave update_reservation_baggages another value of total_baggages."), \
        went["advice"]
    page = _page(out, went)
    cases = page.split("## Cases\n", 1)[1].split("\n## ", 1)[0]
    assert cases.startswith(f"- [{step['bags-trial-0']}](../compilation/{step['bags-trial-0']}.md) (successful): "
                            "Send \\`total_baggages\\` 3 in update_reservation_baggages")
    assert f"2 ({step['bags-trial-2']}) and 5 ({step['bags-trial-3']})" in cases
    # no pointer from the page to itself: the failed runs that ended this way are its own sources
    assert "ended this way too" not in page and f"]({went['id']}.md)" not in page
    assert cli("check", out).returncode == 0


def test_a_procedure_no_failed_run_took_gains_nothing(tmp_path):
    runs = [airline_trial(0, True, 3), airline_trial(1, True, 3), airline_trial(2, False, None)]
    out = compile_runs(tmp_path, runs)
    data = corpus_json(out)
    procedure = insight_with(data, "procedure|update_reservation_baggages")
    assert not procedure["contrast"].get("failed_ended")
    assert "ended this way too" not in procedure["guideline"]
    assert "What the failed runs that ended this way teach" not in _page(out, procedure)


def peer_counts(entry: dict, by_step: dict[str, dict], insights: dict[str, dict]) -> None:
    """The check-first sentence and the list under it, recounted from the run entries: each listed
    lesson is taught by exactly that many failed runs that met the procedure's own pattern; and
    the lesson named as what successful runs that met a trouble page's pattern mostly teach."""
    listed = (entry.get("contrast") or {}).get("failed_ended") or []
    ended = [r for r in by_step.values() if r["outcome"] == "failure" and entry["key"] in r["patterns"]
             and (r.get("task_type") or "unspecified") == (entry.get("task_type") or "unspecified")]
    for item in listed:
        teaching = [r for r in ended if item["insight"] in (r.get("insights") or [])]
        assert item["runs"] == len(teaching) and set(item["steps"]) <= {r["step"] for r in teaching}
        assert item["title"] == insights[item["insight"]]["title"]
    assert len(ended) == (entry.get("contrast") or {}).get("failed_met", 0) or not listed
    m = re.search(r" Failed runs ended this way too; .*?: \"(.+?)\" \(counts under Evidence\)\.", entry["guideline"])
    if m:
        assert m.group(1) == listed[0]["title"] and listed[0]["runs"] >= 2
    else:
        assert not listed or listed[0]["runs"] < 2


def test_every_trial_difference_is_advised_as_an_instruction():
    """Each phrase the trial comparison writes has an instruction form that names the same tool
    and argument, so the page's advice leads with what to do, not 'weigh that step'."""
    from wikitrace.corpus.trials import Decisions, differences, instruction, summarise

    win = Decisions(did={"get_user_details", "query|Search|shown", "said|Finish|task"},
                    values={("book", "cabin"): {"a1"}, ("book", "bags"): {"b1"}},
                    counts={"book": 2, "cancel": 1}, sources={("book", "cabin", "reply")})
    lose = Decisions(did={"query|Search|own"}, values={("book", "cabin"): {"z9"}, ("book", "insurance"): {"c1"},
                                                       ("refund", "amount"): {"d1"}},
                     counts={"book": 1, "refund": 1}, sources={("book", "cabin", "none")})
    texts = differences(summarise([win]), summarise([lose]), "the failed run")
    kinds = {t.split(" ")[0] for t in texts}
    assert {"called", "sent", "gave", "made", "had", "set", "left", "took"} <= kinds, texts
    for text in texts:
        do = instruction(text)
        assert do and do[0].islower(), text
        named = re.findall(r"\b(get_user_details|Search|Finish|book|refund|cabin|bags|insurance)\b", text)
        assert all(n in do for n in named), (text, do)
    assert instruction("did something no phrase shape covers") == ""


DEV = [SHARED_DATA / "runs-dev" / "tau-bench-airline", SHARED_DATA / "runs-dev" / "reflexion-hotpotqa"]


@pytest.mark.parametrize("folder", DEV, ids=lambda p: p.name)
def test_the_peer_sentences_recount_on_real_runs(tmp_path, folder):
    if not folder.exists():
        pytest.skip(f"real runs not present in {folder}")
    from wikitrace.build import BuildOptions, build

    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[folder], out=out, offline=True, quiet=True))
    data = corpus_json(out)
    by_step = {r["step"]: r for r in data["runs"]}
    insights = {i["id"]: i for i in data["insights"]}
    for entry in data["insights"]:
        peer_counts(entry, by_step, insights)
    # a settle lesson on a call shares the page of that call's change lesson: never two pages on it
    changed = {(i["task_type"], i["key"].split("|", 1)[1]) for i in data["insights"] if i["key"].startswith("went-through|")}
    assert not [i["id"] for i in data["insights"] if i["key"].startswith("procedure|")
                and (i["task_type"], i["key"].split("|", 1)[1]) in changed]
    # a count of "the runs here" written before a settled way joined its page still counts its links
    assert text_count_mismatches(out) == []
    if folder.name == "reflexion-hotpotqa":  # answers are no changes: the settle pages keep their failed peers
        assert any("Failed runs ended this way too; " in i["guideline"] for i in data["insights"])


def test_what_successful_runs_did_instead_is_one_line_per_lesson_counted_over_every_run_teaching_it():
    from wikitrace.corpus.documents import lessons_instead

    contrast = {"instead_counts": {"": 1, "insight-0001,insight-0002": 3, "insight-0002": 4},
                "instead": [{"step": f"step-{k:04d}", "insights": ["insight-0001", "insight-0002"]} for k in (3, 1, 2)]
                + [{"step": f"step-{k:04d}", "insights": ["insight-0002"]} for k in (4, 5, 6, 7)]
                + [{"step": "step-0009", "insights": []}]}
    lines = lessons_instead(contrast, {"insight-0001": "One", "insight-0002": "Two"})
    assert [(i["insight"], i["title"], i["runs"], i["more"]) for i in lines] == [
        ("insight-0002", "Two", 7, 2), ("insight-0001", "One", 3, 0), ("", "", 1, 0)]
    assert [st for st, _page in lines[0]["pages"]] == ["step-0001", "step-0002", "step-0003", "step-0004", "step-0005"]


def test_a_model_merging_a_change_page_is_given_the_check_not_the_settled_way(tmp_path):
    """The model writes one guideline per group from the lesson its sources taught: on a page that
    holds both the failed runs' check and the successful runs' way, that is the check."""
    from wikitrace.corpus.insights import members_text

    runs = [airline_trial(0, True, 3), airline_trial(1, True, 3), airline_trial(2, False, 2), airline_trial(3, False, 5)]
    data = corpus_json(compile_runs(tmp_path, runs))
    went = insight_with(data, "went-through|update_reservation_baggages")
    taught = {l["key"] for r in data["runs"] for i, l in zip(r["insights"], r["lessons"]) if i == went["id"]}
    assert taught == {"went-through|update_reservation_baggages", "procedure|update_reservation_baggages"}
    lesson = members_text([went], data["runs"])[went["id"]]
    assert lesson["title"].startswith("Before update_reservation_baggages") and "settle" not in lesson["guideline"]


def test_a_successful_trial_that_answered_with_a_tool_the_failed_one_never_called_says_to_answer():
    """A QA trial that never answered (the harness stopped it) against one that answered with
    Finish: the difference is the answer given, said as such, not 'call Finish and get its answer'."""
    from wikitrace.corpus.trials import Decisions, differences, instruction, summarise

    won = Decisions(did={"Search", "Finish", "said|Finish|shown", "query|Search|task"})
    lost = Decisions(did={"Search", "query|Search|task"})
    texts = differences(summarise([won]), summarise([lost]), "the failed run")
    assert "answered with Finish, which the failed run never did" in texts
    assert "called Finish without an error, which the failed run never did" not in texts
    assert instruction("answered with Finish, which the failed run never did") == \
        "give an answer with Finish before the run ends"
    # a tool no answer was given with is still a call to make
    texts = differences(summarise([Decisions(did={"Search", "Lookup"})]), summarise([Decisions(did={"Search"})]),
                        "the failed run")
    assert texts == ["called Lookup without an error, which the failed run never did"]
