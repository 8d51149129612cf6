"""A task type's pattern counts kept between commands (corpus/pattern_tally.py): an `add` counts
only its new run on top of them, and what it publishes must be what counting every run gives;
counts that belong to another corpus.json, other runs or a forgotten run are never used."""

import copy
import hashlib
import json

from helpers import example_runs, tree_bytes, write_jsonl
from wikitrace.corpus import pattern_tally
from wikitrace.corpus.insights import gather
from wikitrace.corpus.pattern_tally import PatternTally


def _tally_file(corpus) -> dict:
    return json.loads((corpus / ".wikitrace" / pattern_tally.FILE).read_text())


def _kept_from(runs: list[dict]) -> dict:
    """The tallies a command that gathered ``runs`` leaves for the next one, as read back."""
    tally = PatternTally()
    gather(copy.deepcopy(runs), tally=tally)
    return {k: pattern_tally.KindTally.from_json(json.loads(json.dumps(t.as_json()))) for k, t in tally.counted.items()}


def test_counts_kept_from_the_first_runs_give_what_counting_every_run_gives(tau_bench_corpus):
    """The kept counts of the first 150 runs, listing the runs of every pattern the whole set's
    lessons need (as an earlier command that saw those lessons leaves them), carried on over the
    other 50: the gather equals counting every run."""
    from wikitrace.corpus.insights import kind_of

    corpus, _result = tau_bench_corpus
    runs = json.loads((corpus / "corpus.json").read_text())["runs"]
    head = runs[:150]
    fresh_tally = PatternTally()
    fresh = gather(copy.deepcopy(runs), tally=fresh_tally)
    kept = {}
    for kind, whole in fresh_tally.counted.items():
        part = pattern_tally.KindTally(whole.wanted)
        for r in head:
            if kind_of(r) == kind:
                part.add(r)
        kept[kind] = pattern_tally.KindTally.from_json(json.loads(json.dumps(part.as_json())))
    tally = PatternTally(kept, {r["step"] for r in head})
    assert gather(copy.deepcopy(runs), tally=tally) == fresh
    assert tally.reused, "the kept counts must have been used (else this test shows nothing)"
    assert {k: t.as_json() for k, t in tally.counted.items()} == {k: t.as_json() for k, t in fresh_tally.counted.items()}


def test_counts_of_runs_no_longer_carried_over_are_counted_again(tau_bench_corpus):
    corpus, _result = tau_bench_corpus
    runs = json.loads((corpus / "corpus.json").read_text())["runs"]
    fresh = gather(copy.deepcopy(runs))
    kept = _kept_from(runs[:150])
    # run 100 compiled again (not carried): its old counts are in the kept ones
    carried = {r["step"] for r in runs[:150]} - {runs[100]["step"]}
    edited = copy.deepcopy(runs)
    edited[100]["patterns"] = edited[100]["patterns"][:3]
    tally = PatternTally(kept, carried)
    assert gather(copy.deepcopy(edited), tally=tally) == gather(copy.deepcopy(edited))
    assert not tally.reused
    # the kept counts list the runs of fewer patterns than the lessons now need
    narrow = {k: t.narrowed(frozenset(list(t.wanted)[:1])) for k, t in kept.items()}
    tally = PatternTally(narrow, {r["step"] for r in runs[:150]})
    assert gather(copy.deepcopy(runs), tally=tally) == fresh
    assert not tally.reused


def test_add_keeps_the_counts_a_compile_of_every_run_writes(tmp_path):
    from wikitrace.add import add_run
    from wikitrace.build import BuildOptions, build

    runs = example_runs()
    a, b = write_jsonl(tmp_path / "A.jsonl", runs[:-1]), write_jsonl(tmp_path / "B.jsonl", runs[-1:])
    build(BuildOptions(inputs=[a], out=tmp_path / "added", quiet=True, offline=True))
    first = _tally_file(tmp_path / "added")
    assert first["corpus"] == hashlib.sha256((tmp_path / "added" / "corpus.json").read_bytes()).hexdigest()
    add_run(b, corpus=tmp_path / "added")
    build(BuildOptions(inputs=[a, b], out=tmp_path / "together", quiet=True, offline=True))
    added, together = _tally_file(tmp_path / "added"), _tally_file(tmp_path / "together")
    assert added["corpus"] == hashlib.sha256((tmp_path / "added" / "corpus.json").read_bytes()).hexdigest()
    assert added["kinds"] == together["kinds"] and added["kinds"] != first["kinds"]


def test_a_stale_tally_is_not_used(tmp_path):
    """Counts beside another corpus.json (here: made up) are not used, and the add keeps only
    counts it made."""
    from wikitrace.add import add_run
    from wikitrace.build import BuildOptions, build

    runs = example_runs()
    a, b = write_jsonl(tmp_path / "A.jsonl", runs[:-1]), write_jsonl(tmp_path / "B.jsonl", runs[-1:])
    build(BuildOptions(inputs=[a], out=tmp_path / "added", quiet=True, offline=True))
    path = tmp_path / "added" / ".wikitrace" / pattern_tally.FILE
    wrong = json.loads(path.read_text())
    for kind in wrong["kinds"].values():
        for counts in kind["counted"].values():
            for p in counts:
                counts[p] += 7
    wrong["corpus"] = "0" * 64
    path.write_text(json.dumps(wrong))
    add_run(b, corpus=tmp_path / "added")
    build(BuildOptions(inputs=[a, b], out=tmp_path / "together", quiet=True, offline=True))
    # the added run's task type counted again; the others (unchanged, their kept counts unusable) are left out
    counted, together = _tally_file(tmp_path / "added")["kinds"], _tally_file(tmp_path / "together")["kinds"]
    assert counted and counted == {k: together[k] for k in counted}
    added, together = tree_bytes(tmp_path / "added"), tree_bytes(tmp_path / "together")
    assert added.pop("corpus.json").split(b'\n "build": ')[0] == together.pop("corpus.json").split(b'\n "build": ')[0]
    assert added == together


def test_add_then_forget_gives_back_the_corpus_and_its_counts(tmp_path):
    """Forgetting the run an add brought leaves every page as before, and counts without it."""
    from wikitrace.add import add_run
    from wikitrace.build import BuildOptions, build
    from wikitrace.forget import forget

    runs = example_runs()
    a, b = write_jsonl(tmp_path / "A.jsonl", runs[:-1]), write_jsonl(tmp_path / "B.jsonl", runs[-1:])
    build(BuildOptions(inputs=[a], out=tmp_path / "before", quiet=True, offline=True))
    build(BuildOptions(inputs=[a], out=tmp_path / "after", quiet=True, offline=True))
    add_run(b, corpus=tmp_path / "after")
    forget(tmp_path / "after", [runs[-1]["run_id"]])
    before, after = tree_bytes(tmp_path / "before"), tree_bytes(tmp_path / "after")
    cj_before, cj_after = json.loads(before.pop("corpus.json")), json.loads(after.pop("corpus.json"))
    assert before == after
    for data in (cj_before, cj_after):
        data.pop("build"), data.pop("retired")
    assert cj_before == cj_after
    kept = _tally_file(tmp_path / "after")
    assert kept["kinds"] == _tally_file(tmp_path / "before")["kinds"]
    assert kept["corpus"] == hashlib.sha256((tmp_path / "after" / "corpus.json").read_bytes()).hexdigest()


def test_the_insight_index_counts_from_the_tallies_what_it_counts_from_the_runs(tau_bench_corpus):
    """unpaged() takes a type's generic pattern counts from the gather's tally when the tally
    counted as many runs as the type has, and reads the runs' patterns otherwise: the lines are
    the same either way, and a tally of other runs is not taken."""
    from wikitrace.corpus.unpaged import unpaged

    corpus, _result = tau_bench_corpus
    data = json.loads((corpus / "corpus.json").read_text())
    runs, insights = data["runs"], data["insights"]
    tally = PatternTally()
    gather(copy.deepcopy(runs), tally=tally)
    expected = unpaged(runs, insights)
    assert expected, "the corpus must have generic patterns no page is about (else this test shows nothing)"
    assert unpaged(runs, insights, tally.counted) == expected
    # a tally that counted fewer runs than the type has (another corpus.json's) is not used
    short = PatternTally()
    gather(copy.deepcopy(runs[:-20]), tally=short)
    assert unpaged(runs, insights, short.counted) == expected
    assert unpaged(runs[:-20], insights, short.counted) == unpaged(runs[:-20], insights)
