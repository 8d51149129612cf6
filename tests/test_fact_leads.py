"""An insight leads with a checked fact of the QA or rule kinds (corpus/fact_leads.py) when most
of its failed runs show it: the instruction first (the tool's call form, or the system prompt's
rule quoted in its own words), then the runs and distinct tasks it covers. A rule is counted only
with the runs quoting the very same words, so the quote is each counted run's own."""

from __future__ import annotations

import json
import re
from pathlib import Path

from fixture_runs import IMPORTERS
from tau_messages import tool, user
from test_rule_reasons import BOOKING, MEMBER, POLICY, TRIP

from wikitrace.build import BuildOptions, build
from wikitrace.compilers.offline import compile_offline
from wikitrace.corpus.checked_facts import run_facts
from wikitrace.runs import load
from wikitrace.runs.model import Run

SLIPS = IMPORTERS / "react_reflexion" / "react_reflexion_slips.txt"


def _build(tmp_path: Path, name: str, text: str) -> dict:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    build(BuildOptions(inputs=[path], out=tmp_path / "out", offline=True, quiet=True))
    return json.loads((tmp_path / "out" / "corpus.json").read_text())


def test_the_qa_facts_are_kept_with_their_kind_and_tool():
    runs = {r.run_id.rsplit("-", 2)[1]: r for r in load._read(SLIPS, load.detect(SLIPS)) if isinstance(r, Run)}
    kinds = {q: [f for f in run_facts(compile_offline(runs[q])) if f["kind"] not in ("answer-extra", "answer-partial",
                                                                                       "answer-seen")]
             for q in ("q007", "q008", "q002", "q009")}
    assert kinds["q007"] == [{"kind": "quoted-name", "about": ["Search"]}]
    assert kinds["q008"] == [{"kind": "packed-calls", "about": ["Search"]}]
    assert kinds["q002"] == [{"kind": "one-sided", "about": ["Finish"]}]
    assert kinds["q009"] == []  # one failed call had no quote marks: no shared form, no kind


# --- tau: the rule a differing argument turns on ------------------------------------------------------

def _booking(task_id: int, trial: int, membership: str, sent_nonfree: int, expected_nonfree: int) -> dict:
    sent, want = dict(BOOKING, nonfree_baggages=sent_nonfree), dict(BOOKING, nonfree_baggages=expected_nonfree)
    reward = float(sent == want)
    traj = [{"role": "system", "content": POLICY}, user("Hello, this is Tove, user id tove_brand_5120."),
            *tool("get_user_details", {"user_id": "tove_brand_5120"}, dict(MEMBER, membership=membership)),
            user("Book me on HAT318 on June 12 in economy, with 3 checked bags. Yes, go ahead."),
            *tool("book_reservation", sent, dict(TRIP, nonfree_baggages=sent_nonfree)), user("Thanks. ###STOP###")]
    task = {"user_id": "tove_brand_5120", "outputs": [], "instruction": f"You are tove_brand_5120, booking trip {task_id}.",
            "actions": [{"name": "book_reservation", "kwargs": want}]}
    return {"task_id": task_id, "reward": reward, "trial": trial, "traj": traj,
            "info": {"task": task, "source": "user", "reward_info": {"reward": reward, "info": {}, "actions": []}}}


def _desk(tmp_path: Path) -> dict:
    records = ([_booking(1, 0, "platinum", 1, 0), _booking(1, 1, "platinum", 1, 0), _booking(2, 0, "platinum", 2, 0),
                _booking(3, 0, "bronze", 0, 2)]  # a bronze member: the bronze sentence, another rule
               + [_booking(t, 0, "platinum", 0, 0) for t in (4, 5, 6, 7)] + [_booking(8, 0, "bronze", 2, 2)])
    return _build(tmp_path, "desk-results.json", json.dumps(records))


def test_a_rule_most_failed_runs_quote_leads_with_its_own_words_and_only_its_runs(tmp_path):
    data = _desk(tmp_path)
    steps = {(r["task_id"], r["outcome"], r["step"]) for r in data["runs"]}
    platinum = sorted(s for t, o, s in steps if o == "failure" and str(t) in ("1", "2"))
    [lesson] = [i for i in data["insights"] if i["key"] == "went-through|book_reservation"]
    lead = lesson["guideline"].split("; in ", 1)[0]
    assert lead.startswith("Before book_reservation, check the system prompt's rule on `nonfree_baggages` against the "
                           "record it acts on: \"If the account holder is a platinum member,")
    prompt = " ".join(POLICY.split())
    for quoted in re.findall(r"\"([^\"]+)\"", lead):
        assert quoted in prompt  # the prompt's own words
    assert "bronze" not in lesson["guideline"]  # the bronze run quoted another sentence: not counted with these
    assert "in 3 of the 4 failed runs here (2 of their 3 tasks), the book_reservation change differed" \
        in lesson["guideline"]
    assert lesson["checked"]["steps"] == platinum and lesson["checked"]["tasks"] == 2


def test_the_same_runs_with_their_rule_split_across_sentences_lead_with_none(tmp_path):
    """Two platinum runs and two bronze runs of four tasks: each quote covers half, so no rule
    leads; the argument fact all four share still may."""
    records = ([_booking(1, 0, "platinum", 1, 0), _booking(2, 0, "platinum", 2, 0), _booking(3, 0, "bronze", 0, 2),
                _booking(4, 0, "bronze", 1, 2)] + [_booking(t, 0, "platinum", 0, 0) for t in (5, 6, 7, 8, 9)])
    data = _build(tmp_path, "desk-results.json", json.dumps(records))
    [lesson] = [i for i in data["insights"] if i["key"] == "went-through|book_reservation"]
    assert "check the system prompt's rule" not in lesson["guideline"]
    assert (lesson.get("checked") or {}).get("kind") != "rule"


# --- HotpotQA: the form every failed Search call shared ----------------------------------------------------

SEP = "########################################"


def _question(q: str, steps: list[tuple[str, str]], answer: str, gold: str) -> str:
    lines = [f"Question: {q}"]
    for k, (action, seen) in enumerate(steps, 1):
        lines += [f"Thought {k}: I look it up.", f"Action {k}: {action}", f"Observation {k}: {seen}"]
    k = len(steps) + 1
    lines += [f"Thought {k}: So the answer is {answer}.", f"Action {k}: Finish[{answer}]",
              f"Observation {k}: Answer is {'CORRECT' if answer == gold else 'INCORRECT'}", f"Correct answer: {gold}", ""]
    return "\n".join(lines)


def _quoted(name: str, town: str) -> str:  # every Search sends a quoted name the error lists bare; wrong answer
    return _question(f"In which town was the painter of \"{name}\" born?",
                     [(f"Search[\"{name}\"]", f"Could not find [\"{name}\"]. Similar: ['{name}', '{name} (mural)']."),
                      (f"Search[\"{name} painter\"]", f"Could not find [\"{name} painter\"]. Similar: ['{name}']." )],
                     "Harwick", town)


def _retried(name: str, town: str) -> str:  # met the error, retried with the listed name, answered right
    return _question(f"In which town was the painter of \"{name}\" born?",
                     [(f"Search[\"{name}\"]", f"Could not find [\"{name}\"]. Similar: ['{name}', '{name} (mural)']."),
                      (f"Search[{name}]", f"{name} is a 1931 painting by Ada Sorr, who was born in {town}.")],
                     town, town)


def test_an_error_lesson_whose_failed_runs_quoted_names_leads_with_sending_the_name_bare(tmp_path):
    failed = [_quoted(n, t) for n, t in (("Blue Ferry", "Oslund"), ("Salt Morning", "Quenby"), ("Lark Hill", "Tamsworth"),
                                          ("Night Orchard", "Bellcombe"))]
    failed.append(_question("In which town was the painter Ode Frane born?",  # an error without quote marks
                            [("Search[Ode Frane painter]", "Could not find [Ode Frane painter]. Similar: ['Ode Frane']."),
                             ("Search[Frane painter]", "Could not find [Frane painter]. Similar: ['Ode Frane'].")],
                            "Harwick", "Lisket"))
    won = [_retried(n, t) for n, t in (("Grey Quay", "Morlen"), ("Tin Moon", "Asby"), ("Red Weir", "Coldharbour"),
                                       ("Iron Tide", "Penwick"), ("Oak Bell", "Stannard"), ("Cold Lamp", "Fernley"))]
    log = "\n".join([SEP, "BEGIN TRIAL 1", f"Trial summary: Correct: {len(won)}, Incorrect: {len(failed)}, Halted: 0", SEP,
                     "------------- BEGIN CORRECT AGENTS -------------", "", *won,
                     "------------- BEGIN INCORRECT AGENTS -----------", "", *failed,
                     "------------- BEGIN HALTED AGENTS --------------", "", ""])
    data = _build(tmp_path, "react_invented_painters.txt", log)
    quoted = sorted(r["step"] for r in data["runs"] if any(f["kind"] == "quoted-name" for f in r.get("facts") or []))
    assert len(quoted) == 4
    [lesson] = [i for i in data["insights"] if i["key"].startswith("error|Search|")]
    assert lesson["guideline"].startswith(
        "Send Search a name as an error's list of names writes it, without quote marks; in 4 of the 5 failed runs "
        "here, every Search error the run never got past came from text in quote marks")
    assert lesson["checked"]["steps"] == quoted


def test_a_rule_is_counted_by_the_words_it_quotes_not_by_the_argument_it_was_quoted_for():
    from wikitrace.corpus.fact_leads import group

    gold = "\"If the booking user is a gold member, 3 free checked bags for each economy passenger.\""
    silver = "\"If the booking user is a silver member, 2 free checked bags for each economy passenger.\""
    fact = lambda on, quote, how: {"kind": "rule", "about": ["book_reservation", on, quote, how]}  # noqa: E731
    assert group(fact("nonfree_baggages", gold, "arguments")) == group(fact("total_baggages", gold, "missed-change"))
    assert group(fact("nonfree_baggages", gold, "arguments")) != group(fact("nonfree_baggages", silver, "arguments"))


def _packed(a: str, b: str, town: str) -> str:  # every Search after the first packs two calls into one argument
    return _question(f"Which of {a} and {b} was founded first?",
                     [(f"Search[{a}]", f"{a} is a rowing club in {town}."),
                      (f"Search[{a} founded], Search[{b} founded]", "Could not find that page, please try again."),
                      (f"Search[{a} history], Search[{b} history]", "Could not find that page, please try again.")],
                     a, b)


def test_a_packed_calls_lead_says_never_pack_once_and_drops_the_lessons_reaction(tmp_path):
    failed = [_packed(a, b, t) for a, b, t in (("Orm Rowers", "Vale Oars", "Dunmere"), ("Kestrel Eight", "Tarn Sculls", "Holby"),
                                               ("Brisk Blades", "Fenn Four", "Cardow"))]
    won = [_retried(n, t) for n, t in (("Grey Quay", "Morlen"), ("Tin Moon", "Asby"), ("Red Weir", "Coldharbour"),
                                       ("Iron Tide", "Penwick"), ("Oak Bell", "Stannard"))]
    log = "\n".join([SEP, "BEGIN TRIAL 1", f"Trial summary: Correct: {len(won)}, Incorrect: {len(failed)}, Halted: 0", SEP,
                     "------------- BEGIN CORRECT AGENTS -------------", "", *won,
                     "------------- BEGIN INCORRECT AGENTS -----------", "", *failed,
                     "------------- BEGIN HALTED AGENTS --------------", "", ""])
    data = _build(tmp_path, "react_invented_clubs.txt", log)
    [lesson] = [i for i in data["insights"] if i["key"].startswith("error|Search|Could not find that page")]
    text = lesson["guideline"]
    assert text.startswith("Send one Search call per query, never several Search[...] calls written into one argument; "
                           "in 3 of the 3 failed runs here, every Search error the run never got past came from an "
                           "argument that packed several calls into one.")
    assert text.count("never several Search[...] calls") == 1  # the error lesson's own "When Search answers …" is gone
