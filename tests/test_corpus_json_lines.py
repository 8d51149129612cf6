"""An add rewrites corpus.json with the carried run entries' published lines reused: the
file must be byte for byte what encoding every entry again writes."""

import json

from wikitrace.corpus.corpus_json import dump_bytes, dumps, published_lines

AWKWARD = ["plain", "quote \" and \\ backslash", "new\nline\ttab", "\x1b[31m bell\x07", "rtl \u202e and \u200b",
           "é ü 中文 🙂", "", "\\u202e typed"]


def _corpus(n: int) -> dict:
    runs = [{"step": f"step-{k:04d}", "run_id": f"r{k}", "instruction": AWKWARD[k % len(AWKWARD)],
             "score": [0.1, -0.0, 1e-07, 3.0, 12345678901234567890][k % 5], "lessons": [{"key": "a|b", "n": None}],
             "apps": None if k % 2 else ["x", AWKWARD[(k + 3) % len(AWKWARD)]]} for k in range(n)]
    return {"format": "wikitrace-corpus/1", "counts": {"runs": n}, "runs": runs,
            "insights": [{"id": "insight-0000", "title": AWKWARD[3]}], "build": {"built_at": "x"}}


def test_entries_read_back_write_the_same_bytes_with_their_lines_reused():
    text = dumps(_corpus(40))[0].encode("utf-8")
    loaded = json.loads(text)
    lines = published_lines(text, loaded["runs"])
    assert len(lines) == 40
    loaded["runs"].append({"step": "step-0040", "run_id": "new", "instruction": AWKWARD[4]})  # as add appends one
    again, region = dumps(loaded, lines)
    assert again == dumps(loaded)[0]
    assert dumps(loaded, lines)[1] == dumps(loaded)[1]  # the prompt index's spans too


def test_a_changed_entry_is_encoded_again():
    text = dumps(_corpus(5))[0].encode("utf-8")
    loaded = json.loads(text)
    lines = published_lines(text, loaded["runs"])
    replaced = dict(loaded["runs"][2], instruction="changed")  # a new dict: its old line is not its own
    loaded["runs"][2] = replaced
    assert '"instruction": "changed"' in dumps(loaded, lines)[0]
    assert dumps(loaded, lines) == dumps(loaded)  # the bytes, and the prompt index's spans


def test_entries_reordered_or_dropped_keep_their_bytes_and_spans():
    """Published lines are copied in stretches: a stretch must end where the next entry is
    not the next line of the published file (one dropped, the order changed, a new one)."""
    text = dumps(_corpus(9))[0].encode("utf-8")
    loaded = json.loads(text)
    lines = published_lines(text, loaded["runs"])
    runs = loaded["runs"]
    loaded["runs"] = [runs[1], runs[0], *runs[3:6], {"step": "step-0100", "run_id": "n"}, runs[6], runs[8]]
    assert dumps(loaded, lines) == dumps(loaded)
    loaded["runs"] = []
    assert dumps(loaded, lines) == dumps(loaded)


def test_lines_that_do_not_pair_up_with_the_runs_are_not_used():
    text = dumps(_corpus(6))[0].encode("utf-8")
    loaded = json.loads(text)
    assert published_lines(text, loaded["runs"][:5]) == {}  # one run more in the file
    assert published_lines(text, list(reversed(loaded["runs"]))) == {}  # another order
    assert published_lines(json.dumps(loaded, indent=2).encode(), loaded["runs"]) == {}  # laid out otherwise
    assert published_lines(text, []) == {}


def test_the_bytes_written_are_the_text_encoded():
    """The build writes corpus.json from ``dump_bytes`` (never decoded in between); ``dumps``'
    text, which other callers write, must be the same file."""
    data = _corpus(12)
    raw, region = dump_bytes(data)
    text, same_region = dumps(data)
    assert raw == text.encode("utf-8") and region == same_region
    assert json.loads(raw) == data
    loaded = json.loads(raw)
    lines = published_lines(raw, loaded["runs"])
    assert lines and dump_bytes(loaded, lines)[0] == raw


def test_an_entry_broken_over_lines_stops_the_reuse():
    """An entry's line ends at its newline: a file whose entry was split over two lines (valid
    JSON all the same) pairs no line up, whichever side of a comma the break is on."""
    text = dumps(_corpus(6))[0].encode("utf-8")
    loaded = json.loads(text)
    for broken in (b'"step": "step-0002",\n', b'"step": "step-0002"\n,'):
        edited = text.replace(b'"step": "step-0002",', broken)
        assert json.loads(edited) == loaded
        assert published_lines(edited, loaded["runs"]) == {}
    assert len(published_lines(text, loaded["runs"])) == 6


def test_a_map_of_the_file_gives_the_lines_its_bytes_give(tmp_path):
    """``wikitrace add`` maps the published corpus.json rather than reading it: the lines found
    and the bytes written from them are the same."""
    import mmap

    text = dumps(_corpus(30))[0].encode("utf-8")
    (tmp_path / "corpus.json").write_bytes(text)
    loaded = json.loads(text)
    with open(tmp_path / "corpus.json", "rb") as fh:
        mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    from_map, from_bytes = published_lines(mapped, loaded["runs"]), published_lines(text, loaded["runs"])
    assert len(from_map) == 30 and dict(from_map) == dict(from_bytes)
    loaded["runs"].append({"step": "step-0030", "run_id": "new", "instruction": AWKWARD[2]})
    assert dump_bytes(loaded, from_map) == dump_bytes(loaded)


def test_a_corpus_on_a_file_system_that_cannot_map_files_is_read_instead(tmp_path, monkeypatch):
    """add maps the published corpus.json; where mapping fails (some network and FUSE mounts)
    it reads the same bytes rather than stopping with a traceback."""
    import mmap

    from wikitrace.add_carry import _mapped

    path = tmp_path / "corpus.json"
    path.write_bytes(b'{"runs": []}\n')

    def refuse(*_a, **_k):
        raise OSError(19, "No such device")

    monkeypatch.setattr(mmap, "mmap", refuse)
    assert _mapped(path) == b'{"runs": []}\n'
