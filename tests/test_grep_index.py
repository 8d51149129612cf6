"""grep's sharded search files and their word lists: a rare word reads only the
shards that can hold it, the answers are exactly those of the per-file scan (substrings,
punctuation, unicode, case, regexes, -i), and a corpus updated run by run holds the
same bytes as one built from scratch while an added run rewrites only its own shards."""

import json
import shutil
import subprocess

from helpers import example_runs, tree_bytes, write_jsonl
from test_cli_errors import WIKITRACE
from test_tools import NO_RG, run
from wikitrace.build import BuildOptions, build
from wikitrace.corpus import layout
from wikitrace.corpus.search_files import plan, write_search_files


def _log(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")


def _tricky_corpus(root):
    """Runs spread over several shards, ids of 4 and 5 digits (step-10000 sorts between
    step-1000 and step-1001 in grep's walk), and text with the corners of matching."""
    texts = {
        0: "Reservation ZFA04Y is non-refundable; e.g. call +1 (555) 010-2000.",
        105: "The café's naïve Ünïcode menu: crème brûlée — 12,50 €. ZFA04Y again",
        250: "Kelvin sign: \u212aelvin; long s: \u017ftatus; dotless: \u0131ndex; İstanbul",
        999: "reservations and preservation and RESERVATION, snake_case_word",
        1000: "step one thousand: reservation R000042 found",
        10000: "five digits: reservation R000042 again, ZFA04Y",
        1001: "after the five-digit one: reservation",
    }
    for n, text in texts.items():
        step = f"step-{n:04d}"
        _log(root / f"raw/{step}/solver.full.jsonl", [
            {"turn": 0, "type": "message", "role": "user", "content": text},
            {"turn": 1, "type": "function_call", "name": "get_reservation_details",
             "arguments": {"reservation_id": f"R{n:06d}"}, "result": text.upper(), "is_error": False},
        ])
        (root / f"raw/{step}/metadata.md").write_text(f"---\ntype: raw-run\nstep_id: {step}\n---\n{text}\n", "utf-8")
        (root / f"raw/{step}/original.json").write_text(json.dumps({"copy": text}) + "\n", "utf-8")
        (root / "compilation").mkdir(exist_ok=True)
        (root / f"compilation/{step}.md").write_text(f"# [failure] {text}\n\nab\n", "utf-8")
        (root / "insight").mkdir(exist_ok=True)
        (root / f"insight/insight-{n:04d}.md").write_text(f"## Insight\n{text.lower()}\n", "utf-8")
    (root / "raw/_index.md").write_text("# Runs\n" + "".join(f"- step-{n:04d}\n" for n in texts), "utf-8")
    (root / "compilation/_index.md").write_text("# Compilations\nreservation index\n", "utf-8")
    (root / "insight/_index.md").write_text("# Insights\n", "utf-8")
    return root


TRICKY = [
    ["serv"], ["reservation"], ["Reservation"], ["RESERVATION"], ["reservation", "-i"],
    ["R000042"], ["r000042", "-i"], ["r000042"], ["ZFA04Y", "-l"], ["zfa04y", "-i", "--json"],
    ["non-refundable"], ["e.g. call"], ["e.g. call", "-F"], ["(555) 010", "-F"], ["+1 (555)", "-F"],
    ["12,50 €"], ["café"], ["CAFÉ", "-i"], ["naïve Ünïcode"], ["ünïcode", "-i"], ["crème brûlée"],
    ["kelvin", "-i"], ["KELVIN", "-i"], ["status", "-i"], ["STATUS", "-i"], ["index", "-i"],
    ["istanbul", "-i"], ["(?i)kelvin"], ["(?i:kelvin) sign"], ["snake_case"], ["case_wo"],
    ["res.rvation"], ["reserv[a-z]+ and"], ["^# \\[failure\\] The"], ["R0000[0-9]2"],
    ["preservation|dotless"], ["absent-word-xyz"], ["qqqzzz", "-i"], ["ab"], ["ab$"], ["al\\w"],
    ["reservation", "--max", "3"], ["reservation", "--max", "0"], ["reservation", "-l", "--max", "2"],
    ["reservation", "--layer", "insight"], ["R000042", "--layer", "raw", "--json"],
    ["Reservation ZFA04Y", "--original"], ["five-digit", "--layer", "compilation"],
    ["and preserv"], ["servations and"], [" RESERVATION,"], ["-refundable;"], ["non-ref"], ["(?i)and PRESERV"],
    ["case_word\\b"], ["\\.ZFA04Y"], ["ZFA04Y is"], ["R00004"], ["000042"],
]


def test_answers_are_the_per_file_scan_s_on_tricky_text(tmp_path):
    plain = _tricky_corpus(tmp_path / "plain")
    indexed = tmp_path / "indexed"
    shutil.copytree(plain, indexed)
    write_search_files(indexed)
    shards = sorted(p.name for p in (indexed / "index/grep/raw").iterdir())
    assert shards == [f"{k}.{e}" for k in ("00", "01", "02", "09", "10", "head") for e in ("map", "txt", "words")]
    for args in TRICKY:
        scan = run("grep", *args, corpus=plain, env=NO_RG)
        fast = run("grep", *args, corpus=indexed, env=NO_RG)
        assert (fast.returncode, fast.stdout.replace(str(indexed), str(plain))) == (scan.returncode, scan.stdout), args
    # the order of the walk survives the shards: step-10000 between step-1000 and step-1001
    order = [line.split(":")[0] for line in run("grep", "reservation", "--layer", "compilation",
                                                corpus=indexed, env=NO_RG).stdout.splitlines()]
    assert [p.rsplit("/", 1)[1] for p in order] == [
        "_index.md", "step-0999.md", "step-1000.md", "step-10000.md", "step-1001.md"]
    # the -i corners really matched, through the index too
    assert "\u212aelvin" in run("grep", "kelvin", "-i", corpus=indexed, env=NO_RG).stdout
    assert "\u017ftatus" in run("grep", "status", "-i", corpus=indexed, env=NO_RG).stdout


def test_a_rare_word_reads_only_the_shards_whose_word_list_holds_it(tmp_path):
    root = _tricky_corpus(tmp_path / "corpus")
    write_search_files(root)
    # Plant the word in a shard's text behind its word list's back: grep must not see
    # it, since the list says the shard cannot hold it (so its text is never read).
    planted = root / "index/grep/compilation/02.txt"
    planted.write_bytes(planted.read_bytes().replace(b"Kelvin sign", b"R000042 sign"))
    hits = run("grep", "R000042", "--layer", "compilation", corpus=root, env=NO_RG).stdout
    assert "step-0250" not in hits and "step-1000.md" in hits and "step-10000.md" in hits
    # a pattern whose plain pieces are all shorter than three characters reads every shard
    assert "step-0250" in run("grep", "R0[01]0[01][04]2", "--layer", "compilation", corpus=root, env=NO_RG).stdout


def test_shards_follow_the_walk_and_the_layout_owns_them(tmp_path):
    rels = ["raw/_index.md", "raw/step-0001/metadata.md", "raw/step-0001/original.json", "raw/step-0150/turns.md",
            "compilation/_index.md", "compilation/step-12345.md", "insight/insight-0099.md", "index.md"]
    shards = plan(rels)
    assert shards == {("raw", "head"): ["raw/_index.md"], ("raw", "00"): ["raw/step-0001/metadata.md"],
                      ("raw", "01"): ["raw/step-0150/turns.md"], ("compilation", "head"): ["compilation/_index.md"],
                      ("compilation", "12"): ["compilation/step-12345.md"], ("insight", "00"): ["insight/insight-0099.md"]}
    for layer in ("raw", "compilation", "insight"):
        for name in ("head", "00", "99"):
            for ext in ("txt", "map", "words"):
                assert layout.is_corpus_path(f"index/grep/{layer}/{name}.{ext}")
    assert not layout.is_corpus_path("index/grep/raw/notes.txt")


def _runs(count):
    """``count`` distinct runs in the examples' shapes (each with its own words)."""
    base = example_runs()
    out = []
    for n in range(count):
        run_ = json.loads(json.dumps(base[n % len(base)]))
        run_["run_id"] = f"synthetic-{n:04d}"
        run_["turns"][1]["content"] = run_["turns"][1].get("content", "") + f" ticket T{n:05d}X"
        out.append(run_)
    return out


def _compile(inputs, out):
    build(BuildOptions(inputs=list(inputs), out=out, quiet=True, offline=True))


def test_an_added_run_rewrites_its_shards_only_and_matches_a_fresh_build(tmp_path):
    runs = _runs(231)
    grown, fresh = tmp_path / "grown", tmp_path / "fresh"
    _compile([write_jsonl(tmp_path / "230.jsonl", runs[:230])], grown)
    steps = {layer: sorted(p.name for p in (grown / "index/grep" / layer).iterdir()) for layer in ("raw", "compilation")}
    assert steps["raw"] == [f"{k}.{e}" for k in ("00", "01", "02", "head") for e in ("map", "txt", "words")]
    before = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (grown / "index/grep").rglob("*.*")}
    _compile([write_jsonl(tmp_path / "231.jsonl", runs)], grown)
    touched = sorted(p.relative_to(grown).as_posix() for p, stamp in before.items()
                     if (p.stat().st_ino, p.stat().st_mtime_ns) != stamp)
    # the new run is step-0230: shard 02 of raw, its insights' shard, the heads (_index.md); compilation
    # shards change too where another trial of its task is paged (its In short counts the trials)
    shards = {t.rsplit(".", 1)[0] for t in touched}
    assert {s for s in shards if "/raw/" in s} <= {"index/grep/raw/02", "index/grep/raw/head"}
    assert len({s for s in shards if "/insight/" in s} - {"index/grep/insight/head"}) <= 1, touched
    assert "index/grep/raw/02.txt" in touched and "index/grep/raw/00.txt" not in touched
    _compile([write_jsonl(tmp_path / "all.jsonl", runs)], fresh)
    grown_files = {k: v for k, v in tree_bytes(grown).items() if k.startswith("index/grep/")}
    assert grown_files == {k: v for k, v in tree_bytes(fresh).items() if k.startswith("index/grep/")}
    assert not (grown / "index/grep/raw.txt").exists()
    hit = run("grep", "T00230X", corpus=grown, env=NO_RG).stdout
    assert hit.startswith("step-0230 turn 1: ") or "step-0230" in hit
    check = subprocess.run([WIKITRACE, "check", grown], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout
    # runs leaving the input: their shards go, shard 00 stays as it was
    kept = (grown / "index/grep/raw/00.txt").stat().st_ino
    _compile([write_jsonl(tmp_path / "100.jsonl", runs[:100])], grown)
    assert sorted(p.name for p in (grown / "index/grep/raw").iterdir()) == ["00.map", "00.txt", "00.words",
                                                                          "head.map", "head.txt", "head.words"]
    assert (grown / "index/grep/raw/00.txt").stat().st_ino == kept
    assert "step-0230" not in run("grep", "T00230X", corpus=grown, env=NO_RG).stdout


def test_search_files_are_byte_identical_across_rebuilds(tmp_path):
    runs = _runs(12)
    a, b = tmp_path / "a", tmp_path / "b"
    source = write_jsonl(tmp_path / "runs.jsonl", runs)
    _compile([source], a)
    _compile([source], b)
    first = {k: v for k, v in tree_bytes(a).items() if k.startswith("index/grep/")}
    assert first and first == {k: v for k, v in tree_bytes(b).items() if k.startswith("index/grep/")}
    shutil.rmtree(a / "index/grep/raw")  # damaged: the next build writes it again, the same
    _compile([source], a)
    assert first == {k: v for k, v in tree_bytes(a).items() if k.startswith("index/grep/")}


def test_forgetting_the_only_run_of_a_shard_removes_the_shard(tmp_path):
    out = tmp_path / "corpus"
    _compile([write_jsonl(tmp_path / "101.jsonl", _runs(101))], out)
    assert (out / "index/grep/raw/01.txt").is_file()  # step-0100 alone
    done = subprocess.run([WIKITRACE, "forget", "step-0100", "--corpus", out], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert not any((out / "index/grep" / layer / "01.txt").exists() for layer in ("raw", "compilation"))
    assert not [p for p in (out / "index/grep").rglob("*.*") if b"T00100X" in p.read_bytes().upper()]
    assert (out / "index/grep/raw/00.txt").is_file()
    assert subprocess.run([WIKITRACE, "check", out], capture_output=True, text=True).returncode == 0


def test_words_split_by_the_page_writers_give_the_files_read_back_from_disk(tmp_path):
    """A build takes its pages' words from the processes that rendered them (the first
    runs here, the rest in the helper); the result is what reading every page gives."""
    built, copy = tmp_path / "built", tmp_path / "copy"
    _compile([write_jsonl(tmp_path / "runs.jsonl", _runs(140))], built)
    shutil.copytree(built, copy)
    shutil.rmtree(copy / "index/grep")
    write_search_files(copy)  # every shard from the pages on disk
    ours = {k: v for k, v in tree_bytes(built).items() if k.startswith("index/grep/")}
    assert len(ours) > 9 and ours == {k: v for k, v in tree_bytes(copy).items() if k.startswith("index/grep/")}
    assert b"\nt00139x\n" in ours["index/grep/raw/01.words"]
    assert not list((built / ".wikitrace/tmp").iterdir())  # no shard text of a page writer is left behind


def _noted_text(tmp_path, pages):
    """The streamed text of shard raw/00 after noting ``pages`` (rel -> bytes) in that order, sealed."""
    from wikitrace.corpus.page_words import PageWords

    noted = PageWords(f"{tmp_path}/runs-1-")
    for rel, data in pages.items():
        noted.note(rel, data, [f"h-{rel}"])
    return noted.packed()


def test_a_page_writer_s_shard_text_is_what_joining_the_pages_from_disk_gives(tmp_path):
    from wikitrace.corpus.search_files import write_shard

    pages = {"raw/step-0001/metadata.md": b"Alpha beta", "raw/step-0001/turns.md": b"gamma \0 hidden\n",
             "raw/step-0002/metadata.md": b"", "raw/step-0002/turns.md": "naïve delta\n".encode()}
    for rel, data in pages.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    from_disk = {}
    write_shard(lambda rel, chunks: from_disk.__setitem__(rel, b"".join(chunks)), tmp_path, "raw", "00", list(pages))
    noted = _noted_text(tmp_path, pages)
    output = {rel: [f"h-{rel}", 1] for rel in pages}
    text = noted.streamed("raw", "00", list(pages), output)
    with open(text.path, "rb") as fh:
        assert fh.read() == from_disk["index/grep/raw/00.txt"]
    assert text.map == from_disk["index/grep/raw/00.map"] and text.words == from_disk["index/grep/raw/00.words"]
    import hashlib

    assert text.sha256 == hashlib.sha256(from_disk["index/grep/raw/00.txt"]).hexdigest()


def test_a_page_writer_s_shard_text_is_used_only_for_exactly_its_pages_in_walk_order(tmp_path):
    rels = ["raw/step-0001/metadata.md", "raw/step-0002/metadata.md"]
    output = {rel: [f"h-{rel}", 1] for rel in rels}
    for folder in "abc":
        (tmp_path / folder).mkdir()
    backwards = _noted_text(tmp_path / "a", {rel: b"words" for rel in reversed(rels)})
    assert backwards.in_walk_order("raw", "00", list(reversed(rels))) is None  # sorted by the caller instead
    assert backwards.streamed("raw", "00", rels, output) is None  # noted out of grep's order
    fewer = _noted_text(tmp_path / "b", {rels[0]: b"words"})
    assert fewer.streamed("raw", "00", rels, output) is None  # a file it never saw is in the shard
    whole = _noted_text(tmp_path / "c", {rel: b"words" for rel in rels})
    assert whole.streamed("raw", "00", rels, {**output, rels[1]: ["rewritten", 1]}) is None  # other bytes now
    assert whole.in_walk_order("raw", "00", list(reversed(rels))) == rels
    taken = whole.streamed("raw", "00", rels, output)
    for noted in (backwards, fewer, whole):
        noted.discard()
    # the unused texts are removed; the one handed over is the caller's to put in place
    assert [str(p) for p in tmp_path.rglob("*") if p.is_file()] == [taken.path]


def test_noted_words_are_used_only_for_the_bytes_they_were_split_from():
    from wikitrace.corpus.search_files import PageWords

    noted = PageWords()
    noted.note("raw/step-0001/turns.md", b"alpha beta", ["h1"])
    noted.note("compilation/step-0001.md", b"gamma", ["h2"])
    rels = ["raw/step-0001/metadata.md", "raw/step-0001/turns.md"]
    words, covered = noted.known_words("raw", "00", rels, {"raw/step-0001/turns.md": ["h1", 10]})
    assert words == {b"alpha", b"beta"} and covered == {"raw/step-0001/turns.md"}
    # the file was written again since (other bytes): its words are read from disk
    assert noted.known_words("raw", "00", rels, {"raw/step-0001/turns.md": ["h9", 10]}) == (set(), set())
    # the page is no longer one of the shard's files
    assert noted.known_words("raw", "00", rels[:1], {"raw/step-0001/turns.md": ["h1", 10]}) == (set(), set())
    # noted twice (old words may linger in the set): never trusted
    other = PageWords()
    other.note("raw/step-0001/turns.md", b"delta", ["h1"])
    noted.merge(other)
    assert noted.known_words("raw", "00", rels, {"raw/step-0001/turns.md": ["h1", 10]}) == (set(), set())
    assert noted.known_words("compilation", "00", ["compilation/step-0001.md"],
                             {"compilation/step-0001.md": ["h2", 5]})[0] == {b"gamma"}


def test_a_noted_page_gone_from_disk_is_read_not_trusted(tmp_path):
    from wikitrace.corpus.search_files import write_shard

    (tmp_path / "raw/step-0001").mkdir(parents=True)
    (tmp_path / "raw/step-0001/metadata.md").write_bytes(b"kept words\n")
    got = {}
    words = {b"vanished", b"kept", b"words"}  # as noted when both pages were written
    write_shard(lambda rel, chunks: got.__setitem__(rel, b"".join(chunks)), tmp_path, "raw", "00",
                ["raw/step-0001/metadata.md", "raw/step-0001/turns.md"], words,
                {"raw/step-0001/metadata.md", "raw/step-0001/turns.md"})
    assert got["index/grep/raw/00.words"] == b"\nkept\nwords\n"
    assert got["index/grep/raw/00.map"] == b"0\traw/step-0001/metadata.md\n11\t\n"


def _search_bytes(root):
    return {k: v for k, v in tree_bytes(root).items() if k.startswith("index/grep/")}


def _from_disk(root, tmp):
    """The search files made from every page on disk, as a corpus assembled by hand gets them."""
    copy = tmp / "from-disk"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root, copy)
    shutil.rmtree(copy / "index/grep")
    write_search_files(copy)
    return _search_bytes(copy)


def test_add_and_forget_update_only_changed_shards_and_match_a_full_rebuild(tmp_path):
    runs = _runs(151)
    out = tmp_path / "corpus"
    _compile([write_jsonl(tmp_path / "150.jsonl", runs[:150])], out)
    one = write_jsonl(tmp_path / "one.jsonl", runs[150:])
    # a search file edited by hand in a shard the add has no reason to touch: rebuilt, never trusted
    words = out / "index/grep/raw/00.words"
    words.chmod(0o644)
    words.write_bytes(b"\nforged\n")
    # and one in the shard the new run joins (its text is carried over only when intact)
    joined = out / "index/grep/compilation/01.map"
    joined.chmod(0o644)
    joined.write_bytes(joined.read_bytes().replace(b"step-0101", b"step-0199"))
    added = subprocess.run([WIKITRACE, "add", one, "--corpus", out], capture_output=True, text=True)
    assert added.returncode == 0, added.stderr
    assert _search_bytes(out) == _from_disk(out, tmp_path)
    assert b"forged" not in words.read_bytes()
    assert b"step-0101" in joined.read_bytes()
    stamp = (out / "index/grep/raw/00.txt").stat().st_ino
    gone = subprocess.run([WIKITRACE, "forget", "step-0120", "--corpus", out], capture_output=True, text=True)
    assert gone.returncode == 0, gone.stderr
    assert _search_bytes(out) == _from_disk(out, tmp_path)
    # raw shard 00 held no change (compilation shards may: other trials' pages count the trials)
    assert (out / "index/grep/raw/00.txt").stat().st_ino == stamp
    assert b"t00120x" not in (out / "index/grep/raw/01.words").read_bytes()
    assert subprocess.run([WIKITRACE, "check", out], capture_output=True, text=True).returncode == 0


def test_noted_words_survive_packing_and_the_trip_to_the_build():
    import pickle

    from wikitrace.corpus.search_files import PageWords

    noted = PageWords()
    noted.note("raw/step-0001/turns.md", "naïve alpha_beta x1 42".encode(), ["h1"])
    noted.note("raw/step-0101/turns.md", b"later shard", ["h2"])  # moving on packs shard 00
    noted.note("raw/step-0002/turns.md", b"back again", ["h3"])  # and noting into it again opens it
    sent = pickle.loads(pickle.dumps(noted.packed()))
    output = {"raw/step-0001/turns.md": ["h1"], "raw/step-0002/turns.md": ["h3"], "raw/step-0101/turns.md": ["h2"]}
    words, covered = sent.known_words("raw", "00", sorted(output)[:2], output)
    assert words == {"naïve".encode(), b"alpha_beta", b"x1", b"42", b"back", b"again"}
    assert covered == {"raw/step-0001/turns.md", "raw/step-0002/turns.md"}
    words.add(b"added-by-the-caller")
    assert b"added-by-the-caller" not in sent.known_words("raw", "00", sorted(output)[:2], output)[0]
    assert sent.known_words("raw", "01", ["raw/step-0101/turns.md"], output)[0] == {b"later", b"shard"}


def _publish(root, files: dict[str, bytes], calls: list):
    """One command's update of ``root`` holding exactly ``files``, through the publisher, ending
    with the search files; ``calls``: the shards joined whole from disk."""
    from wikitrace.corpus import search_files
    from wikitrace.corpus.publish import Publisher

    pub = Publisher(root, "runs")
    try:
        for rel, data in files.items():
            pub.write(rel, data)
        joined = search_files.write_shard
        search_files.write_shard = lambda put, r, layer, key, rels, *a: (calls.append(f"{layer}/{key}"),
                                                                        joined(put, r, layer, key, rels, *a))[1]
        try:
            search_files.update_search_files(pub, root)
        finally:
            search_files.write_shard = joined
        pub.finish()
    finally:
        pub.close()


def test_a_run_added_inside_a_shard_is_spliced_in_and_matches_joining_it_from_disk(tmp_path):
    """step-10000 joins shard 10 between step-1000 and step-1001: the shard's text is cut there and
    only the new run's files are read, with the bytes joining every file gives; a shard whose text
    was edited is joined anew."""
    src = _tricky_corpus(tmp_path / "src")
    files = {p.relative_to(src).as_posix(): p.read_bytes() for p in sorted(src.rglob("*")) if p.is_file()}
    new = {rel for rel in files if "-10000" in rel}
    root = tmp_path / "corpus"
    (root / ".wikitrace").mkdir(parents=True)
    _publish(root, {rel: data for rel, data in files.items() if rel not in new}, [])
    calls: list = []
    _publish(root, files, calls)
    assert "raw/10" not in calls and "compilation/10" not in calls, calls  # spliced, not joined
    assert _search_bytes(root) == _from_disk(root, tmp_path)
    # the same add onto a shard whose text was edited by hand: joined from disk, never trusted
    other = tmp_path / "edited"
    (other / ".wikitrace").mkdir(parents=True)
    _publish(other, {rel: data for rel, data in files.items() if rel not in new}, [])
    txt = other / "index/grep/raw/10.txt"
    txt.chmod(0o644)
    txt.write_bytes(txt.read_bytes().replace(b"thousand", b"THOUSAND"))
    calls = []
    _publish(other, files, calls)
    assert "raw/10" in calls
    assert _search_bytes(other) == _search_bytes(root)
