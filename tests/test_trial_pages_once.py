"""A compilation page is written once per command, already holding its line against the other
trials of its task, however those trials are spread over the input and whichever process
writes the page; a page written before is only set again when its task's trials changed.

What a reader relies on: the pages hold the same bytes as ever (a page is never left without
the line its task gives it), and a build does not write a page twice (that doubled the cost of
a large corpus whose tasks repeat).
"""

from __future__ import annotations

import collections
import json

from helpers import tree_bytes, without_build_stamp
from test_trial_contrast import ALONE, CARD, LOST_1, LOST_2, WON, _in_short, _trial, _write

from wikitrace.build import BuildOptions, _Writer, build
from wikitrace.check import check_corpus
from wikitrace.corpus import manifest


def _counting_puts(monkeypatch) -> collections.Counter:
    """Every file a page writer of this process puts into a corpus, counted by path."""
    puts: collections.Counter = collections.Counter()
    real = manifest.FileWriter.put

    def put(self, rel, data):
        puts[rel] += 1
        return real(self, rel, data)

    monkeypatch.setattr(manifest.FileWriter, "put", put)
    return puts


def _steps(out) -> dict[str, str]:
    return {r["run_id"]: r["step"] for r in json.loads((out / "corpus.json").read_text())["runs"]}


def test_each_compilation_page_is_written_once_with_the_line_its_later_trials_give_it(tmp_path, monkeypatch):
    puts = _counting_puts(monkeypatch)
    src = _write(tmp_path / "results.json", [WON, ALONE, LOST_1, LOST_2])  # the success comes before its failures
    out = tmp_path / "c"
    build(BuildOptions(inputs=[src], out=out, offline=True, quiet=True))
    steps = _steps(out)
    pages = {rel: n for rel, n in puts.items() if rel.startswith("compilation/step-")}
    assert pages == {f"compilation/{s}.md": 1 for s in steps.values()}
    won = steps["task-12-trial-0"]
    line = _in_short(out, won)[0]  # the success's line, naming both failed trials compiled after it
    assert line.startswith("- Send `payment_id` gift_card_7730215 ") and all(
        f"[{steps[f'task-12-trial-{i}']}]" in line for i in (1, 2)), line
    assert check_corpus(out) == []

    # one failed trial compiled again (its content changed): its page is written once, and the
    # other pages of its task are set once from disk; the task run once is not touched
    puts.clear()
    changed = dict(LOST_2, traj=[*LOST_2["traj"][:-1], {"role": "user", "content": "Thank you. ###STOP###"}])
    _write(src, [WON, ALONE, LOST_1, changed])
    build(BuildOptions(inputs=[src], out=out, offline=True, quiet=True))
    task_12 = {f"compilation/{steps[f'task-12-trial-{i}']}.md" for i in range(3)}
    assert {rel: n for rel, n in puts.items() if rel.startswith("compilation/step-")} == dict.fromkeys(task_12, 1)
    whole = tmp_path / "whole"
    build(BuildOptions(inputs=[src], out=whole, offline=True, quiet=True))
    assert without_build_stamp(tree_bytes(out)) == without_build_stamp(tree_bytes(whole))


def test_pages_held_before_the_page_writer_process_took_over_get_their_lines_too(tmp_path, monkeypatch):
    """The first runs' pages are rendered in the build's own process, the rest by the page
    writer process: the pages held here move to it and get the same lines."""
    records = [WON, ALONE, LOST_1, _trial(14, 0, CARD, 0.0), LOST_2, _trial(14, 1, "gift_card_7730215", 1.0)]
    src = _write(tmp_path / "results.json", records)
    monkeypatch.setattr(_Writer, "HELPER_AFTER", 2)
    build(BuildOptions(inputs=[src], out=tmp_path / "split", offline=True, quiet=True))
    monkeypatch.setattr(_Writer, "HELPER_AFTER", 10**9)
    build(BuildOptions(inputs=[src], out=tmp_path / "here", offline=True, quiet=True))
    assert without_build_stamp(tree_bytes(tmp_path / "split")) == without_build_stamp(tree_bytes(tmp_path / "here"))
    steps = _steps(tmp_path / "split")
    line = _in_short(tmp_path / "split", steps["task-12-trial-0"])[0]
    assert line.startswith("- Send `payment_id` ") and f"[{steps['task-12-trial-2']}]" in line, line
    assert any("](step-" in ln for ln in _in_short(tmp_path / "split", steps["task-14-trial-0"]))
    assert check_corpus(tmp_path / "split") == []


def test_the_page_writer_gets_every_field_the_lines_are_made_of(tmp_path):
    """The page writer process is sent each trial cut to a few fields: its lines are the ones
    the whole entries give (a line that came to read another field would be made without it)."""
    from test_trial_contrast import REFLEXION

    from wikitrace.corpus import trial_contrast, trial_pages
    from wikitrace.corpus.applies import trial_task

    (tmp_path / "qa.txt").write_text(REFLEXION, encoding="utf-8")
    out = tmp_path / "c"
    inputs = [_write(tmp_path / "results.json", [WON, ALONE, LOST_1, LOST_2]), tmp_path / "qa.txt"]
    build(BuildOptions(inputs=inputs, out=out, offline=True, quiet=True))
    runs = json.loads((out / "corpus.json").read_text())["runs"]
    whole: dict = {}
    for task in {trial_task(r) for r in runs}:
        whole.update(trial_contrast.lines([r for r in runs if trial_task(r) == task]))
    sent = trial_pages.written_lines(trial_pages.trial_groups(runs, {r["step"] for r in runs}, []))
    assert {s: made for s, made in sent.items() if made is not None} == whole
    assert len(whole) >= 5  # the three trials of task 12 and both QA trials have lines
