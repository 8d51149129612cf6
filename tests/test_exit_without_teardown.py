"""A command that has closed what it wrote may end without the interpreter's teardown
(errors.skip_teardown): its exit handlers still run, its output is all there, its exit
code is kept, and a thread the interpreter would wait for is still waited for."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(body: str, tmp_path: Path) -> subprocess.CompletedProcess:
    script = textwrap.dedent("""
        import atexit, sys, threading, time
        from wikitrace import errors
        atexit.register(lambda: print("handler ran", flush=True))
    """) + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def test_output_exit_handlers_and_code_are_kept(tmp_path):
    done = _run("""
        def command():
            sys.stdout.write("all of the summary")  # no newline: still buffered at the end
            errors.skip_teardown()
            return 3
        errors.run(command, process_ends_here=True)
    """, tmp_path)
    assert done.returncode == 3
    assert done.stdout == "all of the summaryhandler ran\n"


def test_a_thread_still_working_is_waited_for(tmp_path):
    done = _run("""
        def late():
            time.sleep(0.5)
            open("late.txt", "w").write("written")
        def command():
            threading.Thread(target=late).start()
            errors.skip_teardown()
            return 0
        errors.run(command, process_ends_here=True)
    """, tmp_path)
    assert done.returncode == 0 and "handler ran" in done.stdout
    assert (tmp_path / "late.txt").read_text() == "written"


def test_a_command_that_did_not_say_so_exits_as_usual(tmp_path):
    done = _run("""
        class Noisy:
            def __del__(self):
                print("collected at teardown", flush=True)
        keep = Noisy()
        errors.run(lambda: 5, process_ends_here=True)
    """, tmp_path)
    assert done.returncode == 5 and "collected at teardown" in done.stdout


def test_a_command_run_inside_a_callers_process_hands_it_back(tmp_path):
    # Tests and notebooks run commands in their own process: it must go on afterwards.
    done = _run("""
        def command():
            errors.skip_teardown()
            return 0
        try:
            errors.run(command)
        except SystemExit as exc:
            print("caller goes on after exit", exc.code)
    """, tmp_path)
    assert done.returncode == 0 and "caller goes on after exit 0" in done.stdout


def test_an_in_process_compile_returns_to_the_caller(tmp_path):
    # tests/helpers.run_cli's way of running a command: the caller must get its SystemExit back.
    runs = ROOT / "examples" / "runs.jsonl"
    done = _run(f"""
        from unittest import mock
        from wikitrace import cli
        with mock.patch.object(sys, "argv", ["wikitrace", "compile", {str(runs)!r}, "--out", "corpus", "-q",
                                             "--offline"]):
            try:
                cli.main()
            except SystemExit as exc:
                print("compile returned", exc.code)
    """, tmp_path)
    assert "compile returned 0" in done.stdout, done.stderr
    assert (tmp_path / "corpus" / "corpus.json").is_file()
