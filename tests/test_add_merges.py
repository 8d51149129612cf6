"""`wikitrace add` on the LLM path asks the model again only for the insight groups the added
run joined: a group's merge prompt is made from its members, so counts of the task type that
move with any added run (on the pages of groups it did not join) never reach the model. The
pages still show the counts that moved (faked at the HTTP level)."""

from __future__ import annotations

import json

from fake_openai import is_merge
from helpers import write_jsonl
from test_insight_layer import flight_change, look_up_only
from test_insight_merge import responder

from wikitrace.add import AddOptions, add_runs
from wikitrace.build import BuildOptions, build
from wikitrace.check import check_corpus


def merged_groups(fake_openai, since: int) -> list[str]:
    """The lesson keys of the merge requests the fake got after its first ``since`` requests."""
    keys = []
    for body in fake_openai.bodies[since:]:
        if is_merge(body):
            user = body["messages"][1]["content"]
            keys.append(user.split("Lesson key: ", 1)[1].split("\n", 1)[0])
    return keys


def _desk() -> list[dict]:
    """Flight changes (the successful ones searched first) and questions answered from a look-up."""
    return ([flight_change(k, searched=k < 6, success=k < 6) for k in range(12)]
            + [look_up_only(k, True) for k in range(20, 24)])


def test_an_added_run_asks_one_merge_per_group_it_joined_and_none_for_the_counts_it_moved(fake_openai, tmp_path):
    fake_openai.respond_with(responder("Before changing a flight, look the new flight up and confirm it first."))
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "a.jsonl", _desk())], out=out, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    pages = {i["id"]: (out / "insight" / f"{i['id']}.md").read_text() for i in data["insights"]}

    since = len(fake_openai.bodies)
    # a failed run that only looked up: it joins its own group and moves the questions' counts
    added = add_runs(AddOptions(run_file=write_jsonl(tmp_path / "b.jsonl", [look_up_only(40, False)]),
                                corpus=out, quiet=True))
    now = json.loads((out / "corpus.json").read_text())
    assert added.stats["cache_hits"] == 0  # the groups it did not join keep their merge: not even looked up
    joined = now["runs"][-1]["insights"]
    keys = {i["id"]: i["key"] for i in now["insights"]}
    assert joined
    assert sorted(merged_groups(fake_openai, since)) == sorted(keys[i] for i in joined)

    # a group the run did not join shows the new totals of the task type, yet was not asked again
    others = [i for i in now["insights"] if i["id"] not in joined]
    moved = [i for i in others if (out / "insight" / f"{i['id']}.md").read_text() != pages[i["id"]]]
    assert moved, "the fixture must move the counts of a group the added run did not join"
    for entry in moved:
        assert entry["guideline_by"] == "llm"
    (entry,) = moved  # the questions' page: the added failed run also ended with no change
    assert entry["key"] == "answer-from"
    page = (out / "insight" / f"{entry['id']}.md").read_text()
    said = "Runs of this task type that looked something up and got no change through (a hand-off the task did not " \
           "expect aside): {} failed, 4 successful."
    assert said.format(0) in pages[entry["id"]] and said.format(1) in page
    assert check_corpus(out) == []


def test_an_add_answered_from_the_cache_sends_nothing_and_leaves_the_client_unloaded(fake_openai, tmp_path):
    """The same run added to a second copy of the corpus: its answer and its groups' merges are
    in the response cache, so no request goes out and the client library is never imported."""
    import os
    import shutil
    import subprocess
    import sys

    fake_openai.respond_with(responder())
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "a.jsonl", [flight_change(k, searched=k < 3, success=k < 3)
                                                                 for k in range(6)])], out=out, quiet=True))
    shutil.copytree(out, tmp_path / "copy")
    run_file = write_jsonl(tmp_path / "b.jsonl", [flight_change(40, searched=True, success=False)])
    add_runs(AddOptions(run_file=run_file, corpus=out, quiet=True))
    calls = fake_openai.calls
    script = ("import sys\nfrom pathlib import Path\nfrom wikitrace.add import AddOptions, add_runs\n"
              "add_runs(AddOptions(run_file=Path(sys.argv[1]), corpus=Path(sys.argv[2]), quiet=True))\n"
              "print('openai' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", script, str(run_file), str(tmp_path / "copy")], env=dict(os.environ),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert fake_openai.calls == calls
    assert done.stdout.strip() == "False"
    strip = lambda root: {p.relative_to(root): p.read_bytes() for p in root.rglob("*")  # noqa: E731
                          if p.is_file() and ".wikitrace" not in p.parts and p.name != "corpus.json"}
    assert strip(tmp_path / "copy") == strip(out)


def test_a_group_s_merge_request_is_the_same_whatever_runs_outside_it_add(tmp_path):
    """The request is made from the group's members: a failed run that changes the counts a
    group's page gives (the task type's runs that met its pattern) leaves the request for that
    group as it was, so a compile into a new folder is answered from the cache whatever runs of
    the type came since."""
    from test_insight_layer import compile_runs, corpus_json

    from wikitrace.compilers.insight_merge import _messages
    from wikitrace.corpus.insights import members_text

    before = corpus_json(compile_runs(tmp_path, _desk(), "before"))
    after = corpus_json(compile_runs(tmp_path, _desk() + [look_up_only(40, False)], "after"))
    joined = set(after["runs"][-1]["insights"])
    untouched = [i["id"] for i in after["insights"] if i["id"] not in joined]
    old, new = ({i["id"]: i for i in data["insights"]} for data in (before, after))
    moved = [i for i in untouched if old[i]["contrast"] != new[i]["contrast"]]
    assert moved, "the added run must change the counts of a group it did not join"
    for iid in untouched:
        asked = [_messages(data_by_id[iid], members_text([data_by_id[iid]], data["runs"])[iid])
                 for data, data_by_id in ((before, old), (after, new))]
        assert asked[0] == asked[1]
