"""A success's procedure page, when failed runs of the task type ended the same way: the lessons
those failed runs teach, counted and linked, and the commonest one said as the check to make
first. Airline-style trials (a reservation looked up, its bags changed after the user's yes)."""

from __future__ import annotations

import re

import pytest
from helpers import SHARED_DATA
from test_insight_layer import airline_trial, cli, compile_runs, corpus_json, insight_with


def _page(out, entry: dict) -> str:
    return (out / "insight" / f"{entry['id']}.md").read_text()


def test_a_procedure_that_failed_runs_also_took_says_what_they_missed_with_counts(tmp_path):
    # two tasks; each has successful trials that set 3 bags and failed trials that set another count
    runs = [airline_trial(0, True, 3), airline_trial(1, True, 3), airline_trial(2, False, 2), airline_trial(3, False, 5)]
    out = compile_runs(tmp_path, runs)
    data = corpus_json(out)
    step = {r["run_id"]: r["step"] for r in data["runs"]}
    procedure = insight_with(data, "procedure|update_reservation_baggages")
    went = insight_with(data, "went-through|update_reservation_baggages")
    assert procedure["counts"] == {"runs": 2, "success": 2, "failure": 0}
    assert went["counts"] == {"runs": 2, "success": 0, "failure": 2}
    listed = procedure["contrast"]["failed_ended"]
    assert [(i["insight"], i["runs"], set(i["steps"])) for i in listed] == [
        (went["id"], 2, {step["bags-trial-2"], step["bags-trial-3"]})]
    assert (" Failed runs ended this way too; the lesson they teach most often is the "
            f"check to make first: \"{went['title']}\" (counts under Evidence).") in procedure["guideline"]
    # what set these successes apart from their own task's failed trials (the bag count they sent) is said
    # once, as advice, its counts and links listed under Evidence
    assert procedure["advice"].endswith("In a run like these, check the value of total_baggages for "
                                        "update_reservation_baggages against the request: unlike the failed trials of "
                                        "their tasks, successful runs here gave update_reservation_baggages another "
                                        "value of total_baggages."), procedure["advice"]
    page = _page(out, procedure)
    evidence = page.split("## Evidence", 1)[1].split("## Sources", 1)[0]
    assert (f"What the failed runs that ended this way teach, by lesson:\n- [{went['title']}]({went['id']}.md): 2 runs "
            in evidence)
    for s in ("bags-trial-2", "bags-trial-3"):
        assert f"[{step[s]}](../compilation/{step[s]}.md)" in evidence
    # the failure page links back what the successful runs that made the same change did
    back = _page(out, went).split("What successful runs that met it did, by the lessons they teach:\n", 1)[1]
    assert back.startswith(f"- [{procedure['title']}]({procedure['id']}.md)") and "): 2 runs (" in back.split("\n")[0]
    # a pointer to that page is no advice of the failure page's own: it stands under Evidence only
    assert procedure["title"] not in went["guideline"]
    assert cli("check", out).returncode == 0


def test_one_failed_run_ending_the_same_way_is_listed_but_not_advised(tmp_path):
    runs = [airline_trial(0, True, 3), airline_trial(1, True, 3), airline_trial(2, False, 2),
            airline_trial(3, False, None)]
    data = corpus_json(compile_runs(tmp_path, runs))
    procedure = insight_with(data, "procedure|update_reservation_baggages")
    assert [i["runs"] for i in procedure["contrast"]["failed_ended"]] == [1]
    assert "ended this way too" not in procedure["guideline"]


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
    assert any("Failed runs ended this way too; " in i["guideline"] for i in data["insights"])
