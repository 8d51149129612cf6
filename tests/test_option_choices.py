"""The options a shop run chose on a page that lists them, held against the task's words: the
option lesson (a choice of an option without the task's words while another holds them, a choice
the task names left unset; or, from a success, the options it chose), its counts across runs, and
the note beside each choice on the page. The printout below is written in the shape of the ReAct
paper's WebShop logs (trailing spaces, blank observations, refused clicks, the score line and the
running-average line after each episode), with content of our own."""

from __future__ import annotations

import json
import re

import pytest
from fixture_runs import RUNS, relabeled

from wikitrace.build import BuildOptions, build
from wikitrace.compilers.offline import compile_offline
from wikitrace.runs.load import iter_runs
from wikitrace.runs.model import Run

SHOP = """-----------------
0
Action: reset
Observation: 
Webshop 
Instruction:  
i need a linen lamp shade in ivory, 12 inch, and price lower than 40.00 dollars 
[Search] 

Action: search[linen lamp shade ivory 12 inch]
Observation: 
[Back to Search] 
Page 1 (Total results: 50) 
[Next >] 
[B0SHADE012] 
Drum Lamp Shade, Natural Linen, Fits Table Lamps 
$24.00 
[B0SHADE777] 
Pleated Silk Lamp Shade 
$52.10 

Action: think[B0SHADE012 is linen and under 40 dollars. I will open it.]
Observation: OK.

Action: click[B0SHADE012]
Observation: 
[Back to Search] 
[< Prev] 
size [10 inch][12 inch][14 inch]
color [charcoal][ivory][sage green]
Drum Lamp Shade, Natural Linen, Fits Table Lamps 
Price: $24.00 
Rating: N.A. 
[Description] 
[Features] 
[Reviews] 
[Buy Now] 

Action: click[12 inch]
Observation: You have clicked 12 inch.

Action: click[ivory]
Observation: You have clicked ivory.

Action: click[Buy Now]
Observation: Your score (min 0.0, max 1.0): 1.0

1 1.0 1.0 0.0
-------------
-----------------
1
Action: reset
Observation: 
Webshop 
Instruction:  
i want a ceramic mug set of 4 in matte black, and price lower than 35.00 dollars 
[Search] 

Action: search[ceramic mug set matte black]
Observation: 
[Back to Search] 
Page 1 (Total results: 50) 
[Next >] 
[B0MUGSET04] 
Stoneware Coffee Mugs, Dishwasher Safe 
$27.99 

Action: click[B0MUGSET04]
Observation: 
[Back to Search] 
[< Prev] 
color [glossy white][matte black][speckled blue]
size [set of 2][set of 4][set of 6]
Stoneware Coffee Mugs, Dishwasher Safe 
Price: $27.99 
Rating: N.A. 
[Description] 
[Buy Now] 

Action: click[black matte]
Observation: Invalid action!

Action: think[The first size will do.]
Observation: OK.

Action: click[set of 2]
Observation: You have clicked set of 2.

Action: click[Buy Now]
Observation: Your score (min 0.0, max 1.0): 0.5

2 0.75 0.5 0.0
-------------
"""


def _runs(tmp_path):
    path = tmp_path / "shop_printout.txt"
    path.write_text(SHOP)
    return path, {r.run_id.rsplit("-", 1)[1]: r for r in iter_runs([path]) if isinstance(r, Run)}


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+(?:[.#-][a-z0-9]+)*", text.lower()))


def _groups(result: str) -> dict[str, list[str]]:
    """label -> options, for each line of a label and two or more bracketed values back to back."""
    out = {}
    for line in (result or "").splitlines():
        m = re.fullmatch(r"\s*([A-Za-z][\w &/-]*?)\s*((?:\[[^\[\]]+\]){2,})\s*", line)
        if m:
            out[m.group(1)] = re.findall(r"\[([^\[\]]+)\]", m.group(2))
    return out


def _holds(task: str, option: str, text: str) -> None:
    """``X holds the task's word(s) a, b and c``: each word in the task text and in the option."""
    for word in re.split(r", | and ", text):
        assert word in _words(task) and word in _words(option), (word, option)


def check_option_note(run, call, text: str) -> None:
    """``It chose X among N <label> options listed at turn T; ...``, against the turns."""
    m = re.fullmatch(r"It chose (.+) among (\d+) (.+?) options listed at turn (\d+); (.+)\.", text)
    assert m, text
    chosen, n, label, at, tail = m.group(1), int(m.group(2)), m.group(3), int(m.group(4)), m.group(5)
    page = next(t for t in run.turns if t.turn == at and t.type == "function_call")
    options = _groups(page.result)[label]
    assert page.turn < call.turn and len(set(options)) == n and chosen in options and not call.is_error
    assert " ".join(call.arguments.split()).casefold() == chosen.casefold()
    assert not any(page.turn < t.turn < call.turn and _groups(t.result) for t in run.turns if t.type == "function_call")
    task = run.task.instruction or ""
    if tail.startswith("it holds the task's word"):
        _holds(task, chosen, tail.split(" word", 1)[1].lstrip("s "))
    elif tail.startswith("it holds no word of the task that sets an option apart, while "):
        other, words = re.fullmatch(r".+, while (.+?) holds? the task's words? (.+?)(?:; .+)?", tail).groups()
        assert other in options and other != chosen
        _holds(task, other, words)
        common = set.intersection(*(_words(o) for o in options))
        assert not ((_words(chosen) - common) & _words(task)), (chosen, task)
    else:
        assert tail == "none of them holds a word of the task that the others lack", tail


def check_item_note(run, call, text: str) -> None:
    """``It opened item K of the N that T listed at turn M: “title” at $P; the title holds the
    task's words a and b.``: the id sent is the K-th of N listed, with that title and price."""
    m = re.fullmatch("It opened item (\\d+) of the (\\d+) that (\\S+) listed at turn (\\d+): \u201c(.+?)\u201d"
                     "(?: at (\\$[\\d.,]+(?: to \\$[\\d.,]+)?))?; the title holds (?:the task's words? (.+)|none of the "
                     "task's words)\\.", text)
    assert m, text
    k, n, tool, at = int(m.group(1)), int(m.group(2)), m.group(3), int(m.group(4))
    (page,) = [t for t in run.turns if t.turn == at and t.type == "function_call"]
    assert page.name == tool and at < call.turn and not page.is_error and not call.is_error
    lines = [x.strip() for x in (page.result or "").splitlines()]
    ids = [i for i, x in enumerate(lines) if re.fullmatch(r"\[[A-Za-z0-9]{6,20}\]", x) and i + 1 < len(lines)]
    assert len(ids) == n and lines[ids[k - 1]] == f"[{call.arguments.strip()}]"
    title = lines[ids[k - 1] + 1]
    assert " ".join(title.split()).startswith(m.group(5).rstrip("\u2026"))
    if m.group(6):
        assert lines[ids[k - 1] + 2] == m.group(6)
    for word in re.split(r", | and ", m.group(7) or ""):
        if word:
            assert word in _words(title) and word in _words(run.task.instruction or ""), word
    assert not any(at < t.turn < call.turn and t.type == "function_call" and not t.is_error
                   and len(re.findall(r"^\s*\[[A-Za-z0-9]{6,20}\]\s*$", t.result or "", re.M)) >= 2 for t in run.turns)


def test_an_opened_item_is_told_with_its_place_title_price_and_the_tasks_words(tmp_path):
    _path, runs = _runs(tmp_path)
    run = runs["0"]
    notes = [n for e in compile_offline(run).evidence for n in e.notes if n.startswith("It opened item")]
    assert notes == ["It opened item 1 of the 2 that search listed at turn 1: \u201cDrum Lamp Shade, Natural Linen, "
                     "Fits Table Lamps\u201d at $24.00; the title holds the task's words lamp, shade and linen."]
    check_item_note(run, next(t for t in run.turns if t.turn == 2), notes[0])


def test_a_choice_without_the_tasks_words_is_the_lesson_of_its_failed_run(tmp_path):
    _path, runs = _runs(tmp_path)
    run = runs["1"]
    assert run.outcome is not None and not run.outcome.success and run.outcome.score == 0.5
    comp = compile_offline(run)
    lesson = next(i for i in comp.insights if i.key == "option|click")
    assert not lesson.worked
    assert lesson.detail == ("turn 4: chose set of 2 among 3 size options, while set of 4 holds the task's word 4; "
                             "turn 2 listed 3 color options and no later call chose one, while matte black holds the "
                             "task's words matte and black; score 0.5")
    notes = [n for e in comp.evidence for n in e.notes if n.startswith("It chose ")]
    assert notes == ["It chose set of 2 among 3 size options listed at turn 2; it holds no word of the task that sets "
                     "an option apart, while set of 4 holds the task's word 4."]
    check_option_note(run, next(t for t in run.turns if t.turn == 4), notes[0])
    refused = next(i for i in comp.insights if i.key.startswith("error|click"))
    assert refused.detail.endswith("; the page at turn 2 listed options holding its words: matte black"), refused.detail
    _check_holding(run, refused.detail)


def _check_holding(run, detail: str) -> None:
    """``turn 3: ...; the page at turn 2 listed options holding its words: a and b``: the refused
    call's every word is in each option named, which the latest page before it listed."""
    m = re.search(r"^turn (\d+): .*; the page at turn (\d+) listed options holding its words: (.+)$", detail)
    if not m:
        return
    calls = {t.turn: t for t in run.turns if t.type == "function_call"}
    err, page = calls[int(m.group(1))], calls[int(m.group(2))]
    assert err.is_error and page.turn < err.turn and _groups(page.result)
    assert not any(page.turn < k < err.turn and _groups(t.result) for k, t in calls.items())
    listed = [o for opts in _groups(page.result).values() for o in opts]
    for option in re.split(r", | and ", m.group(3)):
        assert option in listed and _words(err.arguments) <= _words(option), option


def test_a_success_that_chose_the_options_the_task_names_teaches_the_same_lesson(tmp_path):
    _path, runs = _runs(tmp_path)
    run = runs["0"]
    assert run.outcome.success
    lesson = next(i for i in compile_offline(run).insights if i.key == "option|click")
    assert lesson.worked and lesson.detail == (
        "turn 3: chose 12 inch among 3 size options, holding the task's word 12; "
        "turn 4: chose ivory among 3 color options, holding the task's word ivory; score 1")


def test_the_option_lesson_counts_both_runs_and_contrasts_them(tmp_path):
    path, _runs_by_id = _runs(tmp_path)
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[path], out=out, offline=True, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    (entry,) = [i for i in data["insights"] if i["key"] == "option|click"]
    assert entry["counts"]["success"] == 1 and entry["counts"]["failure"] == 1
    assert len(entry["sources"]) == 2
    c = entry["contrast"]
    assert (c["failed_met"], c["success_met"]) == (1, 0)  # only the failed run missed an option the task names
    page = (out / "insight" / f"{entry['id']}.md").read_text()
    assert "Seen in 2 runs: 1 successful, 1 failed." in page


@pytest.mark.parametrize("run", RUNS, ids=lambda r: f"{r.source.get('format')}:{r.run_id}")
@pytest.mark.parametrize("success", [True, False], ids=["as-success", "as-failure"])
def test_option_lessons_are_true_on_every_fixture_or_absent(run, success):
    """Every option lesson's detail, on every importer fixture: each choice sent an option a page
    listed, with the task's words it holds; absent where no answer lists options."""
    run = relabeled(run, success)
    listed = any(_groups(t.result) for t in run.turns if t.type == "function_call")
    task = run.task.instruction or ""
    for lesson in compile_offline(run).insights:
        _check_holding(run, lesson.detail)
        if not lesson.key.startswith("option|"):
            continue
        assert listed, lesson
        for part in re.sub(r"; score [\d.]+$", "", lesson.detail).split("; turn "):
            m = re.match(r"(?:turn )?(\d+): chose (.+?) among (\d+) (.+?) options, holding the task's words? (.+)$", part)
            if m:
                assert success and lesson.worked
                call = next(t for t in run.turns if t.turn == int(m.group(1)) and t.type == "function_call")
                assert " ".join(call.arguments.split()).casefold() == m.group(2).casefold()
                _holds(task, m.group(2), m.group(5))
                continue
            assert not lesson.worked, part
            m = re.match(r"(?:turn )?(\d+)(?:: chose .+ among \d+ .+ options| listed \d+ .+ options and no later "
                         r"call chose one), while (.+?) holds? the task's words? (.+)$", part)
            assert m, part
            _holds(task, m.group(2).split(", ")[0].split(" and ")[0], m.group(3))
