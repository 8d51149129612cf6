"""corpus.json's parse kept between commands (corpus/kept_corpus.py): every command that publishes
corpus.json keeps exactly its parse (an add by appending what it added), an add loads it instead of
parsing, and a kept file that is missing, damaged, cut short, from another format or of another
corpus.json is never used (the add parses corpus.json and publishes the same bytes)."""

import hashlib
import json
import marshal

import pytest

from helpers import example_runs, tree_bytes, write_jsonl
from wikitrace.corpus import kept_corpus


def _strict(a, b) -> bool:
    """Equal, and of the same types all the way down (a tuple is not the list JSON gives)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_strict(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_strict(x, y) for x, y in zip(a, b))
    return a == b


def _records(corpus) -> list[bytes]:
    raw, out, at = kept_corpus.path(corpus).read_bytes(), [], 0
    while at < len(raw):
        size = int.from_bytes(raw[at:at + 8], "little")
        out.append(raw[at + 8:at + 8 + size])
        at += 8 + size
    return out


def _write_records(corpus, records: list[bytes]) -> None:
    kept_corpus.path(corpus).write_bytes(b"".join(len(r).to_bytes(8, "little") + r for r in records))


def _kept_is_the_parse(corpus) -> None:
    text = (corpus / "corpus.json").read_bytes()
    kept = kept_corpus.load(corpus, hashlib.sha256(text).hexdigest())
    assert kept is not None and _strict(kept, json.loads(text))


def _same_corpus(a, b) -> None:
    one, two = tree_bytes(a), tree_bytes(b)
    assert one.pop("corpus.json").split(b'\n "build": ')[0] == two.pop("corpus.json").split(b'\n "build": ')[0]
    assert one == two


def _damage(corpus, how: str) -> None:
    records = _records(corpus)
    if how == "missing":
        kept_corpus.path(corpus).unlink()
        return
    if how == "cut short":
        kept_corpus.path(corpus).write_bytes(kept_corpus.path(corpus).read_bytes()[:-1000])
        return
    stamp, digest, data = marshal.loads(records[0])
    if how == "old format":
        stamp = ("wikitrace-kept-corpus/1",) + stamp[1:]
    else:  # of another corpus.json: made-up contents under the right stamp would be trusted, so the digest must differ
        data["runs"], digest = data["runs"][:1], "0" * 64
    _write_records(corpus, [marshal.dumps((stamp, digest, data))] + records[1:])


def _two_files(tmp_path, split: int):
    runs = example_runs()
    return runs, [write_jsonl(tmp_path / "A.jsonl", runs[:split]),
                  *(write_jsonl(tmp_path / f"B{k}.jsonl", [run]) for k, run in enumerate(runs[split:]))]


def test_compile_add_and_forget_keep_the_parse_of_what_they_publish(tmp_path):
    from wikitrace.add import add_run
    from wikitrace.build import BuildOptions, build
    from wikitrace.forget import forget

    runs, (a, b) = _two_files(tmp_path, -1)
    corpus = tmp_path / "c"
    build(BuildOptions(inputs=[a], out=corpus, quiet=True, offline=True))
    _kept_is_the_parse(corpus)
    assert len(_records(corpus)) == 1
    add_run(b, corpus=corpus)
    _kept_is_the_parse(corpus)
    assert len(_records(corpus)) == 2, "an add appends what it added"
    build(BuildOptions(inputs=[a, b], out=tmp_path / "together", quiet=True, offline=True))
    _same_corpus(corpus, tmp_path / "together")
    forget(corpus, [runs[-1]["run_id"]])
    _kept_is_the_parse(corpus)
    assert len(_records(corpus)) == 1, "a forget drops a run: the whole parse is written"


def test_a_chain_of_adds_is_written_whole_again_when_long(tmp_path, monkeypatch):
    from wikitrace.add import add_run
    from wikitrace.build import BuildOptions, build

    monkeypatch.setattr(kept_corpus, "_LINKS", 2)
    _runs, (a, *more) = _two_files(tmp_path, -4)
    corpus = tmp_path / "c"
    build(BuildOptions(inputs=[a], out=corpus, quiet=True, offline=True))
    lengths = []
    for b in more:
        add_run(b, corpus=corpus)
        _kept_is_the_parse(corpus)
        lengths.append(len(_records(corpus)))
    assert lengths == [2, 3, 1, 2]
    build(BuildOptions(inputs=[a, *more], out=tmp_path / "together", quiet=True, offline=True))
    _same_corpus(corpus, tmp_path / "together")


def test_the_add_uses_the_kept_parse(tmp_path, monkeypatch):
    from wikitrace import add_carry
    from wikitrace.add import add_run
    from wikitrace.build import BuildOptions, build

    _runs, (a, b) = _two_files(tmp_path, -1)
    build(BuildOptions(inputs=[a], out=tmp_path / "c", quiet=True, offline=True))

    def no_parse(*_args):
        raise AssertionError("corpus.json parsed though its parse was kept")

    monkeypatch.setattr(add_carry, "parse_corpus_json", no_parse)
    add_run(b, corpus=tmp_path / "c")
    assert kept_corpus._chain is None, "a harness adding run after run keeps no corpus alive between adds"
    add_run(b, corpus=tmp_path / "c")  # already there: loaded, nothing saved
    assert kept_corpus._chain is None
    _kept_is_the_parse(tmp_path / "c")


@pytest.mark.parametrize("how", ["missing", "cut short", "old format", "another corpus.json"])
def test_an_unusable_kept_parse_is_ignored(tmp_path, how):
    from wikitrace.add import add_run
    from wikitrace.build import BuildOptions, build

    _runs, (a, b, c) = _two_files(tmp_path, -2)
    corpus = tmp_path / "added"
    build(BuildOptions(inputs=[a], out=corpus, quiet=True, offline=True))
    add_run(b, corpus=corpus)  # a chain of two records
    _damage(corpus, how)
    assert kept_corpus.load(corpus, hashlib.sha256((corpus / "corpus.json").read_bytes()).hexdigest()) is None
    add_run(c, corpus=corpus)
    build(BuildOptions(inputs=[a, b, c], out=tmp_path / "together", quiet=True, offline=True))
    _same_corpus(corpus, tmp_path / "together")
    _kept_is_the_parse(corpus)  # and the add keeps a good one again
    assert len(_records(corpus)) == 1


def test_the_whole_parse_is_kept_with_each_distinct_string_once(tmp_path):
    """Equal strings of different runs are written once and come back as one object (what makes
    the kept parse small and quick to load), equal to the parse in every type; the data saved is
    not changed."""
    (tmp_path / ".wikitrace").mkdir()
    pattern, rule = "did|get_user_details", "Cancel only within 24 hours of booking."
    data = {"runs": [{"step": f"step-{n:04d}", "patterns": ["asks|x" + "y" * n, "did|" + "get_user_details"],
                      "value_rules": [["cancel", "cabin", "basic", "Cancel only within 24 hours" + " of booking."]],
                      "worked": n == 1, "steps": n, "score": None, "mixed": ["a" + "b", 1, True]} for n in range(3)],
            "insights": [{"id": "insight-0000", "counts": {"runs": 3}, "p": 0.5}]}
    parsed = json.loads(json.dumps(data))
    runs_before = [id(r) for r in data["runs"]]
    kept_corpus.save(tmp_path, data, "d" * 64)
    assert _strict(data, parsed) and [id(r) for r in data["runs"]] == runs_before, "the caller's data is left as it was"
    kept = kept_corpus.load(tmp_path, "d" * 64)
    kept_corpus.let_go()
    assert kept is not None and _strict(kept, parsed)
    runs = kept["runs"]
    assert runs[0]["patterns"][1] == pattern and runs[0]["patterns"][1] is runs[2]["patterns"][1]
    assert runs[0]["value_rules"][0][3] == rule and runs[0]["value_rules"][0][3] is runs[1]["value_rules"][0][3]
    assert runs[0]["mixed"][0] is runs[1]["mixed"][0]
