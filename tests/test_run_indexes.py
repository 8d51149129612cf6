"""raw/_index.md and compilation/_index.md written row by row without the engine must be
the bytes the bundled templates give (a --templates copy of them forces the engine)."""

import json
import shutil

import pytest
from helpers import TAU_BENCH

from wikitrace.corpus import run_indexes
from wikitrace.templates import bundled_dir

AWKWARD = [
    "Cancel | refund [all] `now` <b>",
    "tabs\tand\nnewlines\r\n  and  runs   of spaces",
    "control \x1b[31m red \x07 bell \u202e flipped",
    "x" * 130,  # no space to cut at
    " ".join(["word"] * 40),  # cut at a space, with the ellipsis
    "w" * 103,  # inside the truncate leeway: kept whole
    "back\\slash \\[ and \\\\ twice",
    "café — naïve ünïcode 東京",
    "",
    None,
    {"goal": "book", "legs": [1, 2]},
    42,
]


def _entries(texts):
    return [{"step": f"step-{n:04d}", "instruction": text, "outcome": ("success", "failure")[n % 2],
             "steps": n * 3, "title": text if isinstance(text, str) else f"[failure] {text}"}
            for n, text in enumerate(texts)]


@pytest.fixture(scope="module")
def engine_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("templates")
    for name in (run_indexes.RAW, run_indexes.COMPILATION):
        shutil.copy(bundled_dir("corpus_templates") / name, folder / name)
    return folder


def _both(runs, engine_dir, mount="/work/corpus"):
    counts = {"success": 1, "failure": 2}
    fm = {"raw/_index.md": "type: index\n", "compilation/_index.md": "type: index\nlayer: compilation\n"}
    return (run_indexes.render_run_indexes(runs, counts, mount, None, fm),
            run_indexes.render_run_indexes(runs, counts, mount, engine_dir, fm))


def test_awkward_entries_same_bytes(engine_dir):
    fast, engine = _both(_entries(AWKWARD), engine_dir)
    assert fast == engine
    assert fast["raw/_index.md"].endswith(run_indexes._raw_rows(_entries(AWKWARD)))  # written here, not by the engine
    assert "Cancel \\| refund \\[all\\] \\`now\\` \\<b\\>" in fast["raw/_index.md"]


def test_no_runs_and_another_mount(engine_dir):
    fast, engine = _both([], engine_dir, mount="/mnt/other")
    assert fast == engine and "/mnt/other/raw/" in fast["raw/_index.md"]


def test_an_entry_missing_a_field_is_the_engine_s_error(engine_dir):
    entries = _entries(["fine"])
    del entries[0]["steps"]
    with pytest.raises(Exception) as fast:
        run_indexes.render_run_indexes(entries, {"success": 0, "failure": 1}, "/c", None,
                                       {"raw/_index.md": "", "compilation/_index.md": ""})
    assert "steps" in str(fast.value)


def test_tau_bench_instructions_same_bytes(engine_dir):
    if not TAU_BENCH.exists():
        pytest.skip(f"tau-bench runs not present at {TAU_BENCH} (set WIKITRACE_DATA to the shared data folder)")
    texts = [r["info"]["task"]["instruction"] for r in json.loads(TAU_BENCH.read_text())]
    fast, engine = _both(_entries(texts), engine_dir)
    assert fast == engine


FM = {"raw/_index.md": "type: index\ncount: 1\n", "compilation/_index.md": "type: index\nlayer: compilation\n"}


def test_rows_of_kept_runs_come_from_the_published_pages():
    """An add keeps the published rows of the runs it carries: the pages are the bytes a
    whole render gives, and a row that could not have come from the engine shows it reused."""
    runs = _entries(AWKWARD)
    kept = len(runs) - 2
    counts = {"success": 1, "failure": 2}
    before = run_indexes.render_run_indexes(runs[:kept], {"success": 0, "failure": 0}, "/c", None, FM)
    spliced = run_indexes.render_run_indexes(runs, counts, "/c", None, FM, before, kept)
    assert spliced == run_indexes.render_run_indexes(runs, counts, "/c", None, FM)
    # the rows are taken as published, not written again
    marked = {rel: page.replace("| failure | 3 |", "| failure | 3 (as published) |")
              for rel, page in before.items()}
    reused = run_indexes.render_run_indexes(runs, counts, "/c", None, FM, marked, kept)
    assert "3 (as published)" in reused["raw/_index.md"]


@pytest.mark.parametrize("damage", ["a row lost", "a row more", "another first run", "no final newline"])
def test_published_pages_of_other_runs_are_not_reused(damage):
    """A published page whose rows are not exactly the kept runs' is rendered again whole."""
    runs = _entries(AWKWARD)
    kept = len(runs) - 2
    counts = {"success": 1, "failure": 2}
    before = run_indexes.render_run_indexes(runs[:kept], counts, "/c", None, FM)
    page = before["raw/_index.md"]
    page = {"a row lost": page[:page.rstrip("\n").rfind("\n") + 1],
            "a row more": page + "| [step-0099](step-0099/metadata.md) | extra | success | 1 |\n",
            "another first run": page.replace("[step-0000](step-0000/", "[step-9999](step-9999/"),
            "no final newline": page.rstrip("\n")}[damage]
    got = run_indexes.render_run_indexes(runs, counts, "/c", None, FM, {"raw/_index.md": page}, kept)
    assert got == run_indexes.render_run_indexes(runs, counts, "/c", None, FM)
