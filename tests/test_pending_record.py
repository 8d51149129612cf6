"""The commit record a build saves before it writes its indexes (corpus/pending.py) is what
finishes the build when it is killed afterwards: it must read back exactly as saved, even
when corpus.json's text in it is far larger than the pieces it is written in."""

import json
from types import SimpleNamespace


def test_a_record_larger_than_its_write_slices_reads_back_exactly(tmp_path, monkeypatch):
    from wikitrace.corpus import pending

    monkeypatch.setattr(pending, "_SLICE", 7)  # every field crosses many slices, some inside an escape
    corpus = json.dumps({"runs": [{"id": f"step-{i:04d}", "task": "réserver un vol « direct » \"vite\"\n"}
                                  for i in range(40)]}, ensure_ascii=False, indent=1) + "\n"
    record = pending.Pending(command="compile", data={"ids": {"runs": [{"step": "step-0000"}]}},
                             output={}, pages={"raw/_index.md": "# Raw\n\ttab ☃\n"}, corpus_json=corpus,
                             templates=None)
    pub = SimpleNamespace(root=tmp_path, output={"raw/step-0000/turns.md": ["ab12", 10, 5, 7]},
                          manifest=SimpleNamespace(files={}))
    pending.save(pub, record)

    back = pending.load(tmp_path)
    assert back == pending.Pending(command="compile", data=record.data, output=pub.output, pages=record.pages,
                                   corpus_json=corpus, templates=None, removed=[])
    # the record is one JSON object; corpus.json's text is beside it, as bytes, not escaped into it
    raw = json.loads(pending.path(tmp_path).read_text(encoding="utf-8"))
    assert raw["corpus_json"] is None and raw["corpus_json_size"] == len(corpus.encode())
    assert pending.corpus_path(tmp_path).read_bytes() == corpus.encode()
    assert raw == {**vars(back), "corpus_json": None, "corpus_json_size": len(corpus.encode())}


def _saved(tmp_path):
    from wikitrace.corpus import pending

    corpus = '{\n "runs": [\n  {"step": "step-0000", "title": "é"}\n ]\n}\n'
    record = pending.Pending(command="add", data={}, output={}, corpus_json=corpus)
    pending.save(SimpleNamespace(root=tmp_path, output={}, manifest=SimpleNamespace(files={})), record)
    return pending, corpus


def test_a_record_holds_only_the_changes_to_the_manifest_and_completes_with_every_file(tmp_path):
    """An add keeps tens of thousands of files: its record names the ones it wrote or dropped,
    and the files it kept come back from the manifest the record was saved against."""
    from wikitrace.corpus import pending

    kept, rewritten = ["aa", 3, 1, 1], ["bb", 4, 2, 2]
    files = {"raw/step-0000/turns.md": kept, "raw/_index.md": ["cc", 5, 3, 3], "insight/insight-0009.md": ["dd", 6, 4, 4],
             "raw/step-0002/turns.md": None}  # claimed by a killed build, never finished
    output = {"raw/step-0000/turns.md": kept, "raw/_index.md": rewritten, "raw/step-0001/turns.md": ["ee", 7, 5, 5]}
    pub = SimpleNamespace(root=tmp_path, output=dict(output), manifest=SimpleNamespace(files=files))
    pending.save(pub, pending.Pending(command="add", data={}, output={}))

    raw = json.loads(pending.path(tmp_path).read_text(encoding="utf-8"))
    assert raw["output"] == {"raw/_index.md": rewritten, "raw/step-0001/turns.md": ["ee", 7, 5, 5]}
    assert sorted(raw["removed"]) == ["insight/insight-0009.md", "raw/step-0002/turns.md"]
    back = pending.load(tmp_path)
    # recovered: the publisher holds the saved manifest, the journal's claims as None
    recovering = SimpleNamespace(manifest=SimpleNamespace(files=dict(files)))
    assert pending._whole_output(recovering, back) == output


def test_a_record_of_an_earlier_version_with_corpus_json_inline_still_reads(tmp_path):
    from wikitrace.corpus import pending

    (tmp_path / ".wikitrace").mkdir()
    old = {"command": "add", "data": {}, "output": {}, "pages": {}, "corpus_json": "{}\n", "templates": None}
    pending.path(tmp_path).write_text(json.dumps(old))
    assert pending.load(tmp_path).corpus_json == "{}\n"


def test_a_record_whose_corpus_text_is_gone_or_cut_is_not_served(tmp_path):
    pending, corpus = _saved(tmp_path)
    side = pending.corpus_path(tmp_path)
    side.write_bytes(corpus.encode()[:-3])  # cut short: not the text the record was saved with
    assert pending.load(tmp_path) is None
    side.unlink()
    assert pending.load(tmp_path) is None


def test_completing_a_record_removes_its_corpus_text_and_a_text_without_record_is_dropped(tmp_path):
    from wikitrace.corpus.publish import Publisher

    pending, corpus = _saved(tmp_path)
    pending.path(tmp_path).unlink()  # killed after the text was written, before the record
    pub = Publisher(tmp_path, "runs")
    try:
        assert pending.recover(pub, lambda *a: b"") is None
    finally:
        pub.close()
    assert not pending.corpus_path(tmp_path).exists()


def test_the_digest_and_data_text_made_while_saving_are_what_hashing_and_dumping_again_give(tmp_path):
    """``save`` hashes corpus.json's pieces as it writes them and dumps the data once: ``complete``
    names the saved copy by that digest and the manifest writes that text, so both must be what
    hashing the bytes and dumping the data again give."""
    import hashlib

    from wikitrace.corpus import pending
    from wikitrace.corpus.manifest import FileManifest

    pieces = [b'{\n "runs": [\n', memoryview(b'  {"step": "step-0000", "title": "\xc3\xa9"}\n ]\n}\n')]
    data = {"ids": {"runs": [{"run_id": "r\u00e9", "step": "step-0000"}]}, "records": {"r\u00e9": "ab"}}
    record = pending.Pending(command="add", data=data, output={}, corpus_json=pieces)
    pending.save(SimpleNamespace(root=tmp_path, output={}, manifest=SimpleNamespace(files={})), record)
    saved = pending.corpus_path(tmp_path).read_bytes()
    assert getattr(record, pending._DIGEST) == hashlib.sha256(saved).hexdigest() == hashlib.sha256(
        b"".join(bytes(p) for p in pieces)).hexdigest()
    assert pending._DIGEST not in json.loads(pending.path(tmp_path).read_text(encoding="utf-8"))
    assert pending.load(tmp_path).data == data
    one, two = FileManifest({"a": ["h", 1, 2, 3]}, data), FileManifest({"a": ["h", 1, 2, 3]}, data)
    one.save(tmp_path / "one.json")
    two.save(tmp_path / "two.json", getattr(record, pending._DATA_TEXT))
    assert (tmp_path / "one.json").read_bytes() == (tmp_path / "two.json").read_bytes()
    assert FileManifest.load(tmp_path / "two.json").data == data
