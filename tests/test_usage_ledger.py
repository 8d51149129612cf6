"""The usage ledger through the installed CLI: `cite record` stores which lessons an
episode cited and how it ended; insight pages and `prompt` show the counts; a rebuild
writes the same pages; `check` agrees; `eval` reads the ledger; `--prefer-helpful`
never moves an untried lesson back."""

import json
import random
import shutil

import frontmatter
import pytest

from helpers import EXAMPLES, tree_bytes
from test_cli_errors import cli

from wikitrace.agent.prompt import helped_first, mostly_failed
from wikitrace.corpus import ledger

MARKER = "zq-unique-answer-marker-7731"  # answer text: must never reach the corpus


def _answer(tmp_path, name: str, ids: dict) -> str:
    path = tmp_path / name
    path.write_text(f"I fixed it ({MARKER}).\n```json\n{json.dumps(ids)}\n```\nThanks.\n")
    return str(path)


def _page(corpus, iid):
    return (corpus / "insight" / f"{iid}.md").read_text()


def _fm(corpus, iid):
    return frontmatter.loads(_page(corpus, iid)).metadata


def _record(corpus, answer, *args):
    return cli("cite", "record", answer, "--corpus", corpus, *args)


@pytest.fixture()
def corpus(tmp_path):
    out = tmp_path / "corpus"
    assert cli("compile", EXAMPLES, "--out", out, "-q").returncode == 0
    return out


def test_counts_on_pages_and_in_prompt_survive_a_rebuild(corpus, tmp_path):
    a1 = _answer(tmp_path, "a1.txt", {"R": ["step-0000"], "C": ["step-0000"], "I": ["insight-0000", "insight-0002"]})
    a2 = _answer(tmp_path, "a2.txt", {"I": ["insight-0000"]})
    p1 = _record(corpus, a1, "--run", "ep-1", "--outcome", "success", "--json")
    assert p1.returncode == 0, p1.stderr
    out = json.loads(p1.stdout)
    assert out["status"] == "recorded" and out["unknown"] == []
    assert out["episode"]["I"] == ["insight-0000", "insight-0002"] and out["episode"]["R"] == ["step-0000"]
    p2 = _record(corpus, a2, "--run", "ep-2", "--outcome", "failure", "--json")
    assert p2.returncode == 0, p2.stderr
    assert json.loads(p2.stdout)["counts"] == {"insight-0000": {"episodes": 2, "succeeded": 1}}

    # the pages: frontmatter (stable keys) and body
    assert (_fm(corpus, "insight-0000")["cited_episodes"], _fm(corpus, "insight-0000")["cited_succeeded"]) == (2, 1)
    assert (_fm(corpus, "insight-0002")["cited_episodes"], _fm(corpus, "insight-0002")["cited_succeeded"]) == (1, 1)
    assert (_fm(corpus, "insight-0001")["cited_episodes"], _fm(corpus, "insight-0001")["cited_succeeded"]) == (0, 0)
    assert "Cited in 2 recorded episodes, 1 succeeded, 1 failed" in _page(corpus, "insight-0000")
    assert "Not cited in any recorded episode yet." in _page(corpus, "insight-0001")
    # the agent's grep reads the insight search file: it has the new counts too
    assert "Cited in 2 recorded episodes" in (corpus / "index/grep/insight.txt").read_text()

    # prompt, JSON and plain
    js = json.loads(cli("prompt", "--corpus", corpus, "--task", "Refund order 12", "--budget", "0", "--json").stdout)
    assert js["usage"] == {"insight-0000": {"episodes": 2, "succeeded": 1},
                           "insight-0002": {"episodes": 1, "succeeded": 1}}
    plain = cli("prompt", "--corpus", corpus, "--task", "Refund order 12", "--budget", "0").stdout
    block = plain.split('<insight id="insight-0000">', 1)[1].split("</insight>", 1)[0]
    assert "**Cited in:** 2 recorded episodes, 1 succeeded" in block
    assert "Cited in" not in plain.split('<insight id="insight-0001">', 1)[1].split("</insight>", 1)[0]

    assert cli("check", corpus).returncode == 0
    before = tree_bytes(corpus)
    assert not any(MARKER.encode() in data for data in before.values())  # ids only, never the answer

    # the same episode again: nothing changes
    again = _record(corpus, a1, "--run", "ep-1", "--outcome", "success", "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["status"] == "unchanged"
    assert tree_bytes(corpus) == before

    # a rebuild keeps the ledger and writes the same pages
    assert cli("compile", EXAMPLES, "--out", corpus, "-q").returncode == 0
    after = tree_bytes(corpus)
    assert {k: v for k, v in after.items() if k != "corpus.json"} == \
        {k: v for k, v in before.items() if k != "corpus.json"}
    assert cli("check", corpus).returncode == 0

    # pages are a function of the runs and the ledger: a fresh build beside the ledger alone
    fresh = tmp_path / "fresh"
    (fresh / "usage").mkdir(parents=True)
    shutil.copy(corpus / ledger.LEDGER, fresh / ledger.LEDGER)
    assert cli("compile", EXAMPLES, "--out", fresh, "-q").returncode == 0
    for rel, data in before.items():
        if rel.startswith("insight/") or rel.startswith("index/grep/insight"):
            assert (fresh / rel).read_bytes() == data, rel


def test_unknown_ids_are_reported_not_stored(corpus, tmp_path):
    a = _answer(tmp_path, "a.txt", {"I": ["insight-0001", "insight-0999"], "R": ["step-0777"]})
    proc = _record(corpus, a, "--run", "ep-x", "--outcome", "success", "--json")
    assert proc.returncode == 1
    out = json.loads(proc.stdout)
    assert {u["id"] for u in out["unknown"]} == {"insight-0999", "step-0777"}
    assert "insight-0999" in proc.stderr and "not recorded" in proc.stderr
    line = json.loads((corpus / ledger.LEDGER).read_text())
    assert line["I"] == ["insight-0001"] and line["R"] == []
    assert cli("check", corpus).returncode == 0


def test_a_changed_outcome_replaces_the_episode_and_check_catches_stale_pages(corpus, tmp_path):
    a = _answer(tmp_path, "a.txt", {"I": ["insight-0003"]})
    assert _record(corpus, a, "--run", "ep-1", "--outcome", "success").returncode == 0
    proc = _record(corpus, a, "--run", "ep-1", "--outcome", "0.25", "--json")
    assert json.loads(proc.stdout)["status"] == "updated"
    lines = (corpus / ledger.LEDGER).read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[1])["score"] == 0.25
    assert (_fm(corpus, "insight-0003")["cited_episodes"], _fm(corpus, "insight-0003")["cited_succeeded"]) == (1, 0)
    # a page whose counts disagree with the ledger is a problem check names, compile repairs
    page = corpus / "insight" / "insight-0003.md"
    page.chmod(0o644)
    page.write_text(page.read_text().replace("cited_episodes: 1", "cited_episodes: 9"))
    proc = cli("check", corpus)
    assert proc.returncode == 1 and "insight/insight-0003.md: shows cited_episodes 9" in proc.stdout + proc.stderr
    assert cli("compile", EXAMPLES, "--out", corpus, "-q").returncode == 0
    assert cli("check", corpus).returncode == 0 and _fm(corpus, "insight-0003")["cited_episodes"] == 1


def test_labels_are_redacted_and_wikitrace_corpus_is_the_default(corpus, tmp_path):
    secret = "sk-proj-" + "Ab3dE5gH7jK9mN1pQ3sT5vX7zB9dF1hJ3lM5nP7rS9tV1wY3"
    a = _answer(tmp_path, "a.txt", {"I": ["insight-0000"]})
    proc = cli("cite", "record", a, "--run", f"ep-{secret}", "--outcome", "failure",
               env={"WIKITRACE_CORPUS": str(corpus)})
    assert proc.returncode == 0, proc.stderr
    assert not any(secret.encode() in data for data in tree_bytes(corpus).values())
    assert json.loads((corpus / ledger.LEDGER).read_text())["run"].startswith("ep-")


def test_eval_reads_the_ledger(corpus, tmp_path):
    """No-Memory fails t1 and t2 and solves t3; WikiTrace solves t1 and t3: Gain 50%
    (3 of the 6 (task, trial) pairs of t1, t2), Regression 0."""
    for t, nm, wm in (("t1", "failure", "success"), ("t2", "failure", "failure"), ("t3", "success", "success")):
        for trial in range(3):
            nm_answer = tmp_path / f"nm-{t}-{trial}.txt"
            nm_answer.write_text(f"done {t} {trial}")  # no citation: a No-Memory episode
            assert _record(corpus, nm_answer, "--run", f"nm-{t}-{trial}", "--outcome", nm, "--method", "no-memory",
                           "--task", t).returncode == 0
            wm_answer = _answer(tmp_path, f"wm-{t}-{trial}.txt", {"I": ["insight-0001"], "t": f"{t}{trial}"})
            assert _record(corpus, wm_answer, "--run", f"wm-{t}-{trial}", "--outcome", wm, "--task", t).returncode == 0
    rows = [json.loads(x) for x in (corpus / ledger.LEDGER).read_text().splitlines()]
    assert sorted({r["trial"] for r in rows}) == ["0", "1", "2"]  # numbered per suite, method and task
    # a re-recorded episode with another outcome counts once, with its last outcome
    again = _answer(tmp_path, "wm-t2-0.txt", {"I": ["insight-0001"], "t": "t20"})
    assert _record(corpus, again, "--run", "wm-t2-0", "--outcome", "failure", "--task", "t2").returncode == 0
    for source in (corpus, corpus / ledger.LEDGER):
        proc = cli("eval", source, "--json", "--resamples", "50")
        assert proc.returncode == 0, proc.stderr
        res = json.loads(proc.stdout)
        row = next(r for r in res["rates"] if r["method"] == "wikitrace" and r["suite"] == "default")
        assert row["gain"]["value"] == pytest.approx(0.5) and row["regression"]["value"] == pytest.approx(0.0)
        assert row["gain_eligible"] == 2 and row["regression_eligible"] == 1
    proc = cli("eval", tmp_path, "--json")
    assert proc.returncode == 2 and "usage/ledger.jsonl" in proc.stderr


def test_prefer_helpful_keeps_untried_lessons_and_pushes_failed_ones_down(corpus, tmp_path):
    # insight-0000 cited in three failed episodes, insight-0002 in a successful one
    for n in range(3):
        assert _record(corpus, _answer(tmp_path, f"f{n}.txt", {"I": ["insight-0000"]}), "--run", f"f{n}",
                       "--outcome", "failure").returncode == 0
    assert _record(corpus, _answer(tmp_path, "s.txt", {"I": ["insight-0002"]}), "--run", "s",
                   "--outcome", "success").returncode == 0
    task = "Refund order 4411 for customer Ada Park; the book arrived damaged."
    cited = {"insight-0000", "insight-0002"}
    pushed_out = False
    for budget in range(1000, 2600, 100):
        plain = json.loads(cli("prompt", "-c", corpus, "--task", task, "--budget", budget, "--json").stdout)
        pref = json.loads(cli("prompt", "-c", corpus, "--task", task, "--budget", budget, "--json",
                              "--prefer-helpful").stdout)
        untried = set(plain["insight_ids"]) - cited
        assert untried <= set(pref["insight_ids"]), budget  # never hides an untried lesson
        assert len(pref["insight_ids"]) >= 1 or not plain["insight_ids"]
        if "insight-0000" in plain["insight_ids"] and "insight-0000" not in pref["insight_ids"]:
            pushed_out = True
    assert pushed_out  # the lesson that mostly failed gave way at some budget
    # off by default: the same call without the flag ignores the outcomes
    everything = json.loads(cli("prompt", "-c", corpus, "--task", task, "--budget", "0", "--json").stdout)
    assert "insight-0000" in everything["insight_ids"]  # pushed down, never removed


def test_helped_first_properties():
    rng = random.Random(7)
    for _ in range(300):
        order = rng.sample(range(40), rng.randint(0, 40))
        usage = {j: (n, rng.randint(0, n)) for j in rng.sample(range(40), 15) for n in [rng.randint(1, 6)]}
        out = list(helped_first(iter(order), usage))
        assert sorted(out) == sorted(order)
        failed = [j for j in order if j in usage and mostly_failed(usage[j])]
        rest = [j for j in order if j not in failed]
        assert out == rest + failed  # others keep their order; failed ones go last in theirs
        for j in order:
            if j not in usage:  # untried: never later than before
                assert out.index(j) <= order.index(j)
    assert mostly_failed((3, 1)) and not mostly_failed((2, 1)) and not mostly_failed((0, 0))


def test_drop_ids_removes_forgotten_ids_and_episodes(corpus, tmp_path):
    a = _answer(tmp_path, "a.txt", {"R": ["step-0001"], "I": ["insight-0000", "insight-0002"]})
    b = _answer(tmp_path, "b.txt", {"I": ["insight-0000"]})
    assert _record(corpus, a, "--run", "ep-a", "--outcome", "success").returncode == 0
    assert _record(corpus, b, "--run", "ep-b", "--outcome", "success").returncode == 0
    assert ledger.drop_ids(corpus, ["insight-0002", "step-0001"]) == 1
    assert ledger.drop_ids(corpus, [], runs=["ep-b"]) == 1
    lines = [json.loads(x) for x in (corpus / ledger.LEDGER).read_text().splitlines()]
    assert len(lines) == 1 and lines[0]["I"] == ["insight-0000"] and lines[0]["R"] == []
    assert cli("check", corpus).returncode == 1  # the pages still show the old counts
    assert cli("compile", EXAMPLES, "--out", corpus, "-q").returncode == 0
    assert (_fm(corpus, "insight-0000")["cited_episodes"], _fm(corpus, "insight-0002")["cited_episodes"]) == (1, 0)
    assert cli("check", corpus).returncode == 0


def test_a_symlinked_ledger_is_refused(corpus, tmp_path):
    outside = tmp_path / "outside.jsonl"
    outside.write_text("")
    (corpus / "usage").mkdir()
    (corpus / "usage" / "ledger.jsonl").symlink_to(outside)
    proc = _record(corpus, _answer(tmp_path, "a.txt", {"I": ["insight-0000"]}), "--run", "e", "--outcome", "success")
    assert proc.returncode == 1 and "not a plain file" in proc.stderr
    assert outside.read_text() == ""


def test_prompts_quick_reading_of_the_ledger_agrees_with_the_full_one(tmp_path):
    """`prompt` reads lines as written by slicing; any other line through JSON; the counts
    are those of the validated reading, whatever the labels hold."""
    def ep(key, run, ok, ids):
        return ledger.Episode(key, run, "default", "t", "wikitrace", "0", "success" if ok else "failure", ok, None,
                              [], [], ids).line()

    lines = [
        ep("sha256:a", 'tricky, "success": true, "I": ["insight-0009"]} \\', False, ["insight-0001"]),
        ep("sha256:b", "b", True, ["insight-0001", "insight-0002"]),
        ep("sha256:c", "c", True, []),
        ep("sha256:b", "b", False, ["insight-0002"]),  # replaces b
        json.dumps({"I": ["insight-0003"], "success": True, "episode": "sha256:d", "run": "d", "suite": "s",
                    "task_id": "t", "method": "m", "trial": "0", "outcome": "success", "score": None, "R": [],
                    "C": []}, indent=None, separators=(",", ":")) + "\n",  # another key order and spacing
        "not json\n",
    ]
    (tmp_path / "usage").mkdir()
    (tmp_path / ledger.LEDGER).write_text("".join(lines))
    full, problems = ledger.read_ledger(tmp_path)
    assert len(problems) == 1 and ":6:" in problems[0]
    expected = ledger.tally(ledger.fold(full).values())
    assert ledger.quick_tally(tmp_path) == expected == {
        "insight-0001": (1, 0), "insight-0002": (1, 0), "insight-0003": (1, 1)}
