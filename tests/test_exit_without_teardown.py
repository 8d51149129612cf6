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
        errors.run(command)
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
        errors.run(command)
    """, tmp_path)
    assert done.returncode == 0 and "handler ran" in done.stdout
    assert (tmp_path / "late.txt").read_text() == "written"


def test_a_command_that_did_not_say_so_exits_as_usual(tmp_path):
    done = _run("""
        class Noisy:
            def __del__(self):
                print("collected at teardown", flush=True)
        keep = Noisy()
        errors.run(lambda: 5)
    """, tmp_path)
    assert done.returncode == 5 and "collected at teardown" in done.stdout
