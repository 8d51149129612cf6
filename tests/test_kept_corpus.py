"""corpus.json's parse kept between commands (corpus/kept_corpus.py): every command that publishes
corpus.json keeps exactly its parse, an add loads it instead of parsing, and a kept file that is
missing, damaged, from another format or of another corpus.json is never used (the add parses
corpus.json and publishes the same bytes)."""

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


def _kept_is_the_parse(corpus) -> None:
    text = (corpus / "corpus.json").read_bytes()
    kept = kept_corpus.load(corpus, hashlib.sha256(text).hexdigest())
    assert kept is not None and _strict(kept, json.loads(text))


def _same_corpus(a, b) -> None:
    one, two = tree_bytes(a), tree_bytes(b)
    assert one.pop("corpus.json").split(b'\n "build": ')[0] == two.pop("corpus.json").split(b'\n "build": ')[0]
    assert one == two


def _damage(path, how: str) -> None:
    if how == "missing":
        path.unlink()
    elif how == "corrupt":
        path.write_bytes(path.read_bytes()[:1000])
    elif how == "old format":
        _stamp, digest, data = marshal.loads(path.read_bytes())
        path.write_bytes(marshal.dumps((("wikitrace-kept-corpus/0",) + _stamp[1:], digest, data)))
    else:  # of another corpus.json: made-up contents under the right stamp would be trusted, so the digest must differ
        stamp, _digest, data = marshal.loads(path.read_bytes())
        data["runs"] = data["runs"][:1]
        path.write_bytes(marshal.dumps((stamp, "0" * 64, data)))


def test_compile_add_and_forget_keep_the_parse_of_what_they_publish(tmp_path):
    from wikitrace.add import add_run
    from wikitrace.build import BuildOptions, build
    from wikitrace.forget import forget

    runs = example_runs()
    a, b = write_jsonl(tmp_path / "A.jsonl", runs[:-1]), write_jsonl(tmp_path / "B.jsonl", runs[-1:])
    corpus = tmp_path / "c"
    build(BuildOptions(inputs=[a], out=corpus, quiet=True, offline=True))
    _kept_is_the_parse(corpus)
    add_run(b, corpus=corpus)
    _kept_is_the_parse(corpus)
    build(BuildOptions(inputs=[a, b], out=tmp_path / "together", quiet=True, offline=True))
    _same_corpus(corpus, tmp_path / "together")
    forget(corpus, [runs[-1]["run_id"]])
    _kept_is_the_parse(corpus)


def test_the_add_uses_the_kept_parse(tmp_path, monkeypatch):
    from wikitrace import add_carry
    from wikitrace.add import add_run
    from wikitrace.build import BuildOptions, build

    runs = example_runs()
    a, b = write_jsonl(tmp_path / "A.jsonl", runs[:-1]), write_jsonl(tmp_path / "B.jsonl", runs[-1:])
    build(BuildOptions(inputs=[a], out=tmp_path / "c", quiet=True, offline=True))

    def no_parse(*_args):
        raise AssertionError("corpus.json parsed though its parse was kept")

    monkeypatch.setattr(add_carry, "parse_corpus_json", no_parse)
    add_run(b, corpus=tmp_path / "c")
    _kept_is_the_parse(tmp_path / "c")


@pytest.mark.parametrize("how", ["missing", "corrupt", "old format", "another corpus.json"])
def test_an_unusable_kept_parse_is_ignored(tmp_path, how):
    from wikitrace.add import add_run
    from wikitrace.build import BuildOptions, build

    runs = example_runs()
    a, b = write_jsonl(tmp_path / "A.jsonl", runs[:-1]), write_jsonl(tmp_path / "B.jsonl", runs[-1:])
    build(BuildOptions(inputs=[a], out=tmp_path / "added", quiet=True, offline=True))
    path = kept_corpus.path(tmp_path / "added")
    _damage(path, how)
    assert kept_corpus.load(tmp_path / "added", hashlib.sha256(
        (tmp_path / "added" / "corpus.json").read_bytes()).hexdigest()) is None
    add_run(b, corpus=tmp_path / "added")
    build(BuildOptions(inputs=[a, b], out=tmp_path / "together", quiet=True, offline=True))
    _same_corpus(tmp_path / "added", tmp_path / "together")
    _kept_is_the_parse(tmp_path / "added")  # and the add keeps a good one again
