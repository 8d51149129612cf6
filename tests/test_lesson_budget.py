"""A run's lessons, most specific first: a generic one (a call repeated with the same answer)
is taught only when the run teaches nothing more specific, and a generic pattern no page is
about stays a counted fact on insight/_index.md. A failed change that went through teaches the
check before that tool, with the values the run took unasked in its detail."""

from __future__ import annotations

from helpers import run_cli, tree_bytes, without_build_stamp, write_jsonl
from test_lesson_specifics import _insights
from test_offline_content import _call, _msg, _record, _turns

from wikitrace.build import BuildOptions, build

NOT_FOUND = "Could not find [Vell Accord]. Similar: ['Harbour Accord', 'Vell (surname)']."


def _looping(run_id: str, with_error: bool) -> dict:
    """A ReAct QA run that sends one Search three times to the same answer, and ends wrong."""
    turns = [_msg("user", "Who signed the Harbour Accord first?")]
    if with_error:
        turns.append(_call("Search", "Vell Accord", NOT_FOUND))
    turns += [_call("Search", "Harbour Accord signatories", "The Harbour Accord is a treaty of 1871.")] * 3
    turns += [_call("Finish", "Rik Sorn", "Episode finished"), {"type": "episode_over"}]
    record = _record(run_id, "hotpotqa", "Who signed the Harbour Accord first?", _turns(*turns), False)
    record["task"]["metadata"] = {"gold_answer": "Ada Vell"}
    return record


def _winner(run_id: str) -> dict:
    turns = [_msg("user", "Who signed the Harbour Accord first?"),
             _call("Search", "Harbour Accord", "The Harbour Accord was signed first by Ada Vell, then Rik Sorn."),
             _call("Finish", "Ada Vell", "Episode finished"), {"type": "episode_over"}]
    record = _record(run_id, "hotpotqa", "Who signed the Harbour Accord first?", _turns(*turns), True)
    record["task"]["metadata"] = {"gold_answer": "Ada Vell"}
    return record


def test_a_repeated_call_is_no_lesson_beside_a_specific_one():
    keys = [i.key for i in _insights(_looping("qa-1", with_error=True))]
    assert "loop|Search" not in keys
    assert keys and all(k.startswith(("answer|", "error|")) for k in keys)


def test_a_repeated_call_stays_counted_on_the_index_and_rebuilds_byte_for_byte(tmp_path):
    runs = [_looping("qa-1", True), _looping("qa-2", True), _winner("qa-3")]
    src = write_jsonl(tmp_path / "runs.jsonl", runs)
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[src], out=out, offline=True, quiet=True))
    pages = "\n".join(p.read_text() for p in (out / "insight").glob("insight-*.md"))
    assert "Do not send the same Search call again" not in pages
    index = (out / "insight" / "_index.md").read_text()
    assert ("- Runs that repeated a call with the same answer (Search): met in 2 of 2 failed, 0 of 1 successful"
            in index)
    again = tmp_path / "again"
    build(BuildOptions(inputs=[src], out=again, offline=True, quiet=True))
    assert without_build_stamp(tree_bytes(again)) == without_build_stamp(tree_bytes(out))
    # compile two runs, then add the third: the same corpus, the index's count included
    grown = tmp_path / "grown"
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "two.jsonl", runs[:2])], out=grown, offline=True, quiet=True))
    assert (grown / "insight" / "_index.md").read_text() != index
    code, _out, err = run_cli("add", str(write_jsonl(tmp_path / "third.jsonl", runs[2:])), "--corpus", str(grown),
                              "--offline")
    assert code == 0, err
    assert (grown / "insight" / "_index.md").read_text() == index


def test_a_failed_change_that_went_through_names_what_it_took_unasked():
    from test_choice_notes import _cancel

    (lesson,) = _insights(_cancel("the one to denver, not sure of the code"))
    assert lesson.key == "went-through|cancel_reservation"
    assert "took reservation_id among several values an earlier answer listed, no user message naming it" \
        in lesson.detail
    (named,) = _insights(_cancel("please cancel RB41XK"))
    assert "took" not in named.detail


def test_taking_a_value_unasked_is_no_advice_where_successful_runs_took_it_so_too(tmp_path):
    """Asking which one is advised from the failed runs' own count; where successful runs of the
    task type also took such a value unasked, the count does not tell the outcomes apart, so the
    page does not advise it (it says the choice did not decide)."""
    pages = _cancels(tmp_path, ["the one to denver", "whichever goes to denver", "please cancel RB41XK",
                                "the denver one, thanks"], succeeded=[3])
    assert "ask which one" not in pages
    assert "came unasked among several values one answer listed in 2 of 3 failed runs here, and so it did in successful runs" \
        in pages


def _cancels(tmp_path, says: list[str], succeeded: list[int] = ()) -> str:
    from test_choice_notes import _cancel

    runs = []
    for k, said in enumerate(says):
        record = _cancel(said, success=k in succeeded)
        record["run_id"] = record["task"]["id"] = f"cancel-{k}"
        runs.append(record)
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "runs.jsonl", runs)], out=out, offline=True, quiet=True))
    return "\n".join(p.read_text() for p in (out / "insight").glob("insight-*.md"))


def test_most_sources_taking_a_value_unasked_says_ask_first_with_the_count(tmp_path):
    pages = _cancels(tmp_path, ["the one to denver", "whichever goes to denver", "please cancel RB41XK"])
    # the instruction in What to do, its count once under Evidence
    assert ("When an answer lists several values for reservation_id and the user has named none, ask which one "
            "before cancel_reservation: most runs here took such a value unasked.") in pages
    assert "\n- Most runs here took such a value unasked (reservation_id: 2 of 3).\n" in pages


def test_one_source_taking_a_value_unasked_is_no_advice(tmp_path):
    pages = _cancels(tmp_path, ["the one to denver", "please cancel RB41XK", "cancel RB41XK now"])
    assert "Before cancel_reservation" in pages and "ask which one" not in pages
