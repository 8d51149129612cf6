"""The build's helper processes (run reader, page writer) failing: a clear error, never a hang."""

from pathlib import Path

import pytest

from wikitrace.corpus.pages import HelperSink, PageWriteError
from wikitrace.runs.load import LoadReport
from wikitrace.runs.model import RunError
from wikitrace.runs.read_helper import RunReader

from helpers import EXAMPLES

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "importers"


def test_a_page_writer_that_dies_is_a_page_write_error(tmp_path):
    sink = HelperSink(str(tmp_path / "corpus"), str(tmp_path / "tmp"), "/work/corpus", None)
    sink.proc.kill()
    sink.proc.wait()
    with pytest.raises(PageWriteError, match="page writer process"):
        for i in range(200):  # enough batches to hit the closed pipe
            sink.apply(("run", None, None, f"step-{i:04d}", []))
        sink.close()


def test_a_page_writer_reports_the_first_failure_at_close(tmp_path):
    sink = HelperSink(str(tmp_path / "corpus"), str(tmp_path / "tmp"), "/work/corpus", None)
    sink.apply(("run", None, None, "step-0007", []))  # no run to render
    sink.apply(("run", None, None, "step-0008", []))
    with pytest.raises(PageWriteError, match=r"writing step-0007 into the corpus failed: AttributeError"):
        sink.close()


def test_a_run_reader_that_dies_is_a_run_error():
    reader = RunReader([EXAMPLES], None)
    reader.proc.kill()
    reader.proc.wait()
    with pytest.raises(RunError, match="run reader process stopped unexpectedly"):
        list(reader.runs(LoadReport()))


def test_a_run_reader_gives_the_same_runs_and_report_as_reading_here():
    from wikitrace.runs.load import iter_runs

    here_report, beside_report = LoadReport(), LoadReport()
    here = list(iter_runs([EXAMPLES], None, here_report))
    reader = RunReader([EXAMPLES], None, count_first=True)
    counts = reader.counts()
    beside = list(reader.runs(beside_report))
    assert [r.run_id for r in beside] == [r.run_id for r in here]
    assert [r.turns for r in beside] == [r.turns for r in here]
    assert beside_report.summary() == here_report.summary()
    assert counts == here_report.outcomes



@pytest.mark.parametrize("source, suffix", [
    (FIXTURES / "atif", "json"),
    (FIXTURES / "claude_code_fix", "jsonl"),
    (FIXTURES / "react" / "hotpotqa_small.txt", "txt"),
])
def test_the_kept_original_crosses_as_bytes_and_is_written_as_read_here(source, suffix):
    """The build's main process is handed each run's original record still pickled; the page
    writer makes the same original page from it as from the record read in one process."""
    from wikitrace.corpus.pages import _original, run_paths
    from wikitrace.helper_process import PickledOriginal
    from wikitrace.runs.load import iter_runs

    outcomes = source / "outcomes.json" if (source / "outcomes.json").exists() else None
    here = list(iter_runs([source], None, LoadReport(), outcomes=outcomes))
    beside = list(RunReader([source], None, outcomes=outcomes).runs(LoadReport()))
    assert here and [r.run_id for r in beside] == [r.run_id for r in here]
    for mine, theirs in zip(here, beside):
        assert isinstance(theirs.source["original"], PickledOriginal)
        assert theirs.source["original"].suffix == suffix
        assert run_paths(theirs, "step-0001", []) == run_paths(mine, "step-0001", [])
        assert _original(theirs, "step-0001") == _original(mine, "step-0001")
        assert {k: v for k, v in theirs.source.items() if k != "original"} == \
            {k: v for k, v in mine.source.items() if k != "original"}

def test_the_page_writer_dies_with_a_build_killed_by_sigkill(tmp_path):
    """An orphan writer would go on writing into a corpus the next build is updating."""
    import os
    import signal
    import subprocess
    import sys
    import time

    (tmp_path / "t").mkdir()
    (tmp_path / "c").mkdir()
    code = f"""
import time
from pathlib import Path
from wikitrace.compilers.offline import compile_offline
from wikitrace.corpus import documents, layout
from wikitrace.corpus.pages import HelperSink
from wikitrace.runs.load import LoadReport, iter_runs

run = next(iter(iter_runs([Path({str(EXAMPLES)!r})], None, LoadReport())))
comp = compile_offline(run)
refs = [documents.InsightRef(f"insight-{{k:04d}}", c.title, layout.insight_doc(f"insight-{{k:04d}}"))
        for k, c in enumerate(comp.insights)]
sink = HelperSink({str(tmp_path / "c")!r}, {str(tmp_path / "t")!r}, "/work/corpus", None)
sink.apply(("run", run, comp, "step-0000", refs))
sink._flush()  # the writer is now busy with pages (each put in place 30 s apart)
print(sink.proc.pid, flush=True)
time.sleep(60)
"""
    build = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "WIKITRACE_PUBLISH_PAUSE": "30"})
    helper = int(build.stdout.readline())
    build.send_signal(signal.SIGKILL)
    build.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(helper, 0)
            with open(f"/proc/{helper}/stat") as fh:
                if fh.read().split(")")[-1].split()[0] == "Z":  # a zombie: gone, not yet reaped
                    break
        except (ProcessLookupError, FileNotFoundError):
            break
        time.sleep(0.05)
    else:
        os.kill(helper, signal.SIGKILL)
        pytest.fail("the page writer outlived the build that started it")


def test_a_helper_started_from_a_folder_holding_another_wikitrace_runs_this_one(tmp_path, monkeypatch):
    # A user (or a second checkout) may run the build from a folder that has its own wikitrace/.
    from wikitrace import helper_process

    shadow = tmp_path / "wikitrace"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise SystemExit('the shadow package was imported')\n")
    monkeypatch.chdir(tmp_path)
    proc = helper_process.start("wikitrace.helper_process")  # imports the package, then ends
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0


class _HeldPipe:
    """A pipe nobody reads yet: every write waits until ``release`` (then keeps the bytes)."""

    def __init__(self):
        import io
        import threading

        self.released = threading.Event()
        self.buffer = io.BytesIO()

    def write(self, data):
        assert self.released.wait(timeout=30), "the reader was never released"
        return self.buffer.write(data)

    def flush(self):
        pass


def test_the_reader_goes_on_reading_while_the_build_takes_nothing(monkeypatch):
    """Forced order: no frame can be written until every run has been read, so the reader
    must read ahead of the pipe; what arrives afterwards is every run, in input order."""
    import io
    import threading

    from wikitrace import helper_process
    from wikitrace.runs import read_helper
    from wikitrace.runs.load import iter_runs

    expected = [r.run_id for r in iter_runs([EXAMPLES], None, LoadReport())]
    request = io.BytesIO()
    helper_process.send(request, ([EXAMPLES], None, False, {}, {}))
    request.seek(0)
    out, seen, all_read = _HeldPipe(), [], threading.Event()

    def each(run):
        seen.append(run.run_id)
        if len(seen) == len(expected):
            all_read.set()

    server = threading.Thread(target=read_helper.serve, args=(request, out, each), daemon=True)
    server.start()
    assert all_read.wait(timeout=30), f"the reader stopped at {len(seen)} of {len(expected)} runs"
    out.released.set()
    server.join(timeout=30)
    out.buffer.seek(0)
    got = []
    while (frame := helper_process.receive(out.buffer)) is not helper_process.EOF:
        kind, payload = frame
        if kind == "runs":
            # a run prepared by ``each`` comes pickled on its own, to be passed on as it is
            got += [(r.open() if isinstance(r, read_helper._Shipped) else r).run_id for r in payload]
    assert kind == "done" and got == expected


def test_a_sender_keeps_frames_within_its_byte_budget():
    """Frames wait for the writer once the budget is used up; one frame always goes."""
    import threading

    from wikitrace import helper_process

    out = _HeldPipe()
    sender = helper_process.Sender(out, budget=10_000)
    sent = []

    def send_all():
        for i in range(5):
            sender.send(b"x" * 6000)
            sent.append(i)

    thread = threading.Thread(target=send_all, daemon=True)
    thread.start()
    thread.join(timeout=1)
    assert thread.is_alive() and len(sent) < 5  # held back: the pipe takes nothing yet
    out.released.set()
    thread.join(timeout=30)
    sender.close()
    assert sent == list(range(5))
    out.buffer.seek(0)
    frames = []
    while (frame := helper_process.receive(out.buffer)) is not helper_process.EOF:
        frames.append(frame)
    assert frames == [b"x" * 6000] * 5


@pytest.mark.parametrize("module", ["wikitrace.runs.read_helper", "wikitrace.compilers.llm_offline",
                                    "wikitrace.compilers.offline_reader", "wikitrace.corpus.pages"])
def test_a_helper_whose_build_went_away_before_asking_ends_quietly(module):
    # Ctrl-C can stop the build between starting a helper and sending it its first frame;
    # the helper's stderr is the user's terminal, so it must end without a word.
    import subprocess
    import sys

    from wikitrace import helper_process

    done = subprocess.run([sys.executable, "-P", "-m", module], stdin=subprocess.DEVNULL, capture_output=True,
                          env=helper_process.child_env(), timeout=120)
    assert done.returncode == 1 and done.stderr == b""


def _recorded_spawns(monkeypatch) -> list:
    from wikitrace import helper_process

    spawned = []
    real = helper_process._spawn

    def spawn(module):
        spawned.append(real(module))
        return spawned[-1]

    monkeypatch.setattr(helper_process, "_spawn", spawn)
    return spawned


def test_a_reader_begun_early_is_the_one_the_build_reads_through(monkeypatch):
    from wikitrace import helper_process
    from wikitrace.runs.load import iter_runs
    from wikitrace.runs.read_helper import READER

    spawned = _recorded_spawns(monkeypatch)
    helper_process.start_early(READER)
    reader = RunReader([EXAMPLES], None)
    assert [reader.proc] == spawned  # no second process
    got = [run.run_id for run in reader.runs(LoadReport())]
    assert got == [run.run_id for run in iter_runs([EXAMPLES], None, LoadReport())]
    assert reader.proc.returncode == 0


def test_a_reader_begun_early_and_never_asked_for_is_ended(monkeypatch):
    from wikitrace import helper_process
    from wikitrace.runs.read_helper import LLM_READER

    spawned = _recorded_spawns(monkeypatch)
    helper_process.start_early(LLM_READER)
    helper_process.discard_early()
    assert len(spawned) == 1 and spawned[0].poll() is not None
    helper_process.discard_early()  # nothing left to end


def test_a_compile_that_fails_before_reading_leaves_no_reader_behind(tmp_path, monkeypatch):
    """`wikitrace compile` begins the reader of a large input before the build is imported;
    a build that stops before asking for it (here a --templates folder that is not there)
    ends it."""
    from wikitrace.build_cli import compile_main
    from wikitrace.errors import UsageError

    monkeypatch.setattr("wikitrace.runs.read_helper.WORTH_IT_BYTES", 0)
    spawned = _recorded_spawns(monkeypatch)
    with pytest.raises(UsageError):
        compile_main([str(EXAMPLES), "--out", str(tmp_path / "out"), "--offline", "--quiet",
                      "--templates", str(tmp_path / "absent")])
    assert len(spawned) == 1 and spawned[0].poll() is not None
    assert not (tmp_path / "out").exists()


def test_a_reader_asked_early_is_taken_only_for_the_same_request(monkeypatch):
    """A reader sent its request before the build was imported is the build's reader when the
    build asks the same; asked otherwise (another corpus appeared meanwhile), it is ended and a
    new one reads."""
    from wikitrace import helper_process
    from wikitrace.runs.load import iter_runs
    from wikitrace.runs.read_helper import READER

    spawned = _recorded_spawns(monkeypatch)
    request = ([EXAMPLES], None, False, {"known": {}}, {})
    helper_process.start_early(READER)
    helper_process.ask_early(READER, request)
    assert not helper_process.waiting_early(READER)
    reader = RunReader([EXAMPLES], None, known={})
    assert [reader.proc] == spawned
    assert [r.run_id for r in reader.runs(LoadReport())] == [r.run_id for r in iter_runs([EXAMPLES], None, LoadReport())]

    helper_process.start_early(READER)
    helper_process.ask_early(READER, request)
    reader = RunReader([EXAMPLES], None, known={"some digest": None})
    assert len(spawned) == 3 and spawned[1].poll() is not None and reader.proc is spawned[2]
    reader.stop()


def test_a_compile_into_a_new_folder_reads_through_the_reader_it_asked_early(tmp_path, monkeypatch):
    """`wikitrace compile` into a folder with no corpus yet sends the reader its request as soon
    as the options are made; the build then reads through that same process, and its pages are
    those of a build that asked the reader itself."""
    from wikitrace import helper_process
    from wikitrace.build import BuildOptions, build
    from wikitrace.build_cli import compile_main

    monkeypatch.setattr("wikitrace.runs.read_helper.WORTH_IT_BYTES", 0)
    spawned = _recorded_spawns(monkeypatch)
    asked = []
    real_ask = helper_process.ask_early
    monkeypatch.setattr(helper_process, "ask_early", lambda module, request: (asked.append(request),
                                                                                real_ask(module, request)))
    compile_main([str(EXAMPLES), "--out", str(tmp_path / "early"), "--offline", "--quiet"])
    assert len(asked) == 1 and asked[0][3]["known"] == {}
    readers = [p for p in spawned if "wikitrace.compilers.offline_reader" in p.args]  # the offline build's reader
    assert len(readers) == 1 and readers[0].returncode == 0

    build(BuildOptions(inputs=[EXAMPLES], out=tmp_path / "late", offline=True, quiet=True))
    pages = lambda root: {p.relative_to(root): p.read_bytes() for p in root.rglob("*.md")}  # noqa: E731
    assert pages(tmp_path / "early") == pages(tmp_path / "late") != {}


def test_the_reader_module_imports_no_input_format():
    """Importing the reader (to begin it early) does not import the input formats' parsers:
    that would put their import back ahead of the reader's start."""
    import subprocess
    import sys

    code = "import sys, wikitrace.runs.read_helper; print('wikitrace.runs.load' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip() == "False", proc.stderr


def test_the_count_before_compiling_tells_its_problems_redacted(tmp_path):
    """The helper's first pass only counts outcomes, yet what it tells reaches the terminal as
    the build's error: a --redact-pattern match in the path it names is redacted, as the
    build's own reading redacts it."""
    import io

    from wikitrace import helper_process
    from wikitrace.runs import read_helper

    missing = tmp_path / "verdicts-KEPTQUIET42.csv"
    request = io.BytesIO()
    helper_process.send(request, ([EXAMPLES], None, True, {"outcomes": str(missing),
                                                           "redact_patterns": (r"KEPTQUIET\d+",)}, {}))
    request.seek(0)
    out = io.BytesIO()
    read_helper.serve(request, out)
    out.seek(0)
    kind, (message, _report) = helper_process.receive(out)
    assert kind == "error" and "cannot read" in message
    assert "KEPTQUIET42" not in message and "verdicts-[REDACTED:custom#" in message
