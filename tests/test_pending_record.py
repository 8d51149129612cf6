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
    pub = SimpleNamespace(root=tmp_path, output={"raw/step-0000/turns.md": ["ab12", 10, 5, 7]})
    pending.save(pub, record)

    back = pending.load(tmp_path)
    assert back == pending.Pending(command="compile", data=record.data, output=pub.output, pages=record.pages,
                                   corpus_json=corpus, templates=None)
    # the file is the record as one JSON object, as it always was
    raw = pending.path(tmp_path).read_text(encoding="utf-8")
    assert raw == json.dumps(vars(back), separators=(",", ":"), ensure_ascii=False) + "\n"
