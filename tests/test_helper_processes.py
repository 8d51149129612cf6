"""The build's helper processes (run reader, page writer) failing: a clear error, never a hang."""

import pytest

from wikitrace.corpus.pages import HelperSink, PageWriteError
from wikitrace.runs.load import LoadReport
from wikitrace.runs.model import RunError
from wikitrace.runs.read_helper import RunReader

from helpers import EXAMPLES


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
