"""Every failure of the installed CLI is one line `wikitrace: error: ...` with the right
exit code (2 usage/input, 1 problems or failed build) and never a traceback.

Each test is named after the case a user hit; all drive the `wikitrace` console script
in a subprocess, as a user's shell does."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import EXAMPLES, REPO, make_writable_copy

WIKITRACE = shutil.which("wikitrace") or str(Path(sys.executable).parent / "wikitrace")
DIALOGUE = REPO / "tests" / "fixtures" / "dialogue" / "tiny.jsonl"


def cli(*args, cwd=None, input=None, env=None):
    full_env = {k: v for k, v in os.environ.items() if k != "WIKITRACE_CORPUS"}
    full_env.update(env or {})
    return subprocess.run([WIKITRACE, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          input=input, env=full_env, timeout=300)


def one_error_line(proc, code: int) -> str:
    """The single error line of a failed command, after checking its code and shape."""
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    lines = [line for line in proc.stderr.splitlines() if line.startswith("wikitrace: error: ")]
    assert len(lines) == 1, proc.stderr
    assert "internal error" not in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli-errors") / "corpus"
    proc = cli("compile", EXAMPLES, "--out", out, "--offline", "-q")
    assert proc.returncode == 0, proc.stderr
    return out


def test_cite_parse_missing_file(corpus, tmp_path):
    line = one_error_line(cli("cite", "parse", "missing.txt", "--corpus", corpus, cwd=tmp_path), 2)
    assert "missing.txt: no such file" in line and " — " in line


def test_cite_prompt_corpus_nope(tmp_path):
    line = one_error_line(cli("cite", "prompt", "--corpus", "nope", cwd=tmp_path), 2)
    assert line.startswith("wikitrace: error: nope: no corpus.json")


def test_cite_prompt_variant_foo():
    line = one_error_line(cli("cite", "prompt", "--variant", "foo"), 2)
    assert "--variant: unknown variant 'foo' — use one of wikitrace, insights-only" in line


def test_descents_missing_json(tmp_path):
    line = one_error_line(cli("descents", "missing.json", cwd=tmp_path), 2)
    assert "missing.json: no such file" in line


def test_descents_some_csv(tmp_path):
    (tmp_path / "some.csv").write_text("suite,task_id,method,trial,success\nair,t1,no-memory,0,1\n")
    line = one_error_line(cli("descents", "some.csv", cwd=tmp_path), 2)
    assert "some.csv:1: not a transcript" in line


def test_eval_missing_csv(tmp_path):
    line = one_error_line(cli("eval", "missing.csv", cwd=tmp_path), 2)
    assert "missing.csv: no such file" in line


def test_eval_plot_into_missing_folder(tmp_path):
    results = REPO / "examples" / "eval_results.csv"
    line = one_error_line(cli("eval", results, "--plot", "/nonexistent/x.png", "--resamples", "10"), 2)
    assert "/nonexistent/x.png: the folder /nonexistent does not exist" in line


def test_prompt_task_file_missing(corpus, tmp_path):
    line = one_error_line(cli("prompt", "--corpus", corpus, "--task-file", "missing.txt", cwd=tmp_path), 2)
    assert "missing.txt: no such file" in line


def test_compile_redact_pattern_paren(tmp_path):
    proc = cli("compile", EXAMPLES, "--out", tmp_path / "c", "--redact-pattern", "(")
    line = one_error_line(proc, 2)
    assert "--redact-pattern: '(' is not a valid regular expression" in line
    assert not (tmp_path / "c").exists()  # refused before any work


def test_compile_templates_nope_is_an_error(tmp_path):
    line = one_error_line(cli("compile", EXAMPLES, "--out", tmp_path / "c", "--templates", "nope", cwd=tmp_path), 2)
    assert "nope: no such folder — give an existing folder to --templates" in line
    assert not (tmp_path / "c").exists()


def _closed_pipe(args):
    """Run the CLI, read a few bytes of its stdout, close the pipe: like `| head -c 10`."""
    proc = subprocess.Popen([WIKITRACE, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    return proc.wait(timeout=120), err


def test_prompt_json_into_head(corpus):
    code, err = _closed_pipe(["prompt", "--corpus", corpus, "--task", "refund an order", "--json", "--budget", "0"])
    assert code == 0 and err == ""


def test_query_json_into_head(tmp_path):
    proc = cli("dialogue", "compile", DIALOGUE, "--out", tmp_path / "d", "--offline", "-q")
    assert proc.returncode == 0, proc.stderr
    code, err = _closed_pipe(["query", "when did they move?", "--corpus", tmp_path / "d", "--json"])
    assert code == 0 and err == ""


def _damaged(corpus: Path, tmp_path: Path, text: str) -> Path:
    copy = make_writable_copy(corpus, tmp_path / "damaged")
    (copy / "corpus.json").write_text(text)
    return copy


def _manifest_with(corpus: Path, change) -> str:
    data = json.loads((corpus / "corpus.json").read_text())
    change(data)
    return json.dumps(data)


WRONG_SHAPES = {
    "list": lambda corpus: "[]",
    "runs_is_a_string": lambda corpus: _manifest_with(corpus, lambda d: d.update(runs="x")),
    "insight_entry_null": lambda corpus: _manifest_with(corpus, lambda d: d["insights"].__setitem__(0, None)),
}


@pytest.mark.parametrize("shape", sorted(WRONG_SHAPES))
def test_corpus_json_of_the_wrong_shape(corpus, tmp_path, shape):
    damaged = _damaged(corpus, tmp_path, WRONG_SHAPES[shape](corpus))
    for args in (["prompt", "--corpus", damaged, "--task", "refund"],
                 ["cite", "parse", "-", "--corpus", damaged]):
        line = one_error_line(cli(*args, input='{"R": ["step-0000"]}'), 2)
        assert "corpus.json" in line
    proc = cli("check", damaged)  # check runs and reports the problem
    assert proc.returncode == 1 and "Traceback" not in proc.stderr + proc.stdout
    assert "corpus.json" in proc.stdout
    # a corpus.json the build wrote and someone damaged is repaired from the ids the build kept
    proc = cli("compile", EXAMPLES, "--out", damaged)
    assert proc.returncode == 0 and "repaired" in proc.stderr and "corpus.json" in proc.stderr, proc.stderr
    assert cli("check", damaged).returncode == 0
    shutil.rmtree(damaged / ".wikitrace")  # without the build's record it is not ours to replace
    (damaged / "corpus.json").chmod(0o644)
    (damaged / "corpus.json").write_text(WRONG_SHAPES[shape](corpus))
    line = one_error_line(cli("compile", EXAMPLES, "--out", damaged, "-q"), 1)
    assert "corpus.json" in line


def _read_only_mount_works() -> bool:
    if not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                            "mount -t tmpfs -o ro tmpfs /mnt"], capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not _read_only_mount_works(),
                    reason="needs unshare and a read-only tmpfs mount (user namespaces) to get EROFS; "
                           "chmod does not stop root")
def test_out_under_a_read_only_parent(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    script = (f'mount -t tmpfs -o ro tmpfs "{ro}" && "{WIKITRACE}" compile "{EXAMPLES}" '
              f'--out "{ro}/sub/corpus" -q')
    proc = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script],
                          capture_output=True, text=True, timeout=300)
    line = one_error_line(proc, 2)
    assert "read-only file system — choose a folder on a writable disk" in line


def test_lock_path_that_is_a_folder(tmp_path):
    (tmp_path / "corpus" / ".wikitrace" / "lock").mkdir(parents=True)
    proc = cli("compile", EXAMPLES, "--out", tmp_path / "corpus", "-q")
    assert proc.returncode in (1, 2) and "Traceback" not in proc.stderr
    line = [l for l in proc.stderr.splitlines() if l.startswith("wikitrace: error:")]
    assert len(line) == 1 and ".wikitrace/lock" in line[0], proc.stderr


def test_ctrl_c_exits_130(tmp_path):
    import signal
    import time

    big = tmp_path / "big.jsonl"
    record = EXAMPLES.read_text().splitlines()[0]
    run = json.loads(record)
    big.write_text("".join(json.dumps({**run, "run_id": f"r{i}"}) + "\n" for i in range(3000)))
    proc = subprocess.Popen([WIKITRACE, "compile", big, "--out", tmp_path / "c", "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Ctrl-C once the build holds the corpus lock: a fixed sleep could land in the
    # interpreter's own start-up on a loaded machine, before any wikitrace code runs.
    lock = tmp_path / "c" / ".wikitrace" / "lock"
    deadline = time.monotonic() + 120
    while not (lock.is_file() and lock.read_text().startswith("pid")) and proc.poll() is None \
            and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    if proc.returncode == 0:
        pytest.skip("the build finished before the interrupt")
    assert proc.returncode == 130 and "Traceback" not in err
    assert not (tmp_path / "c").exists()


def test_internal_errors_are_one_line_too(tmp_path):
    """A bug still prints one line and exit 1 (the traceback only with WIKITRACE_DEBUG=1)."""
    code = ("import sys; sys.argv=['wikitrace','x']; from wikitrace import errors; "
            "errors.run(lambda: 1/0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("wikitrace: error: internal error (ZeroDivisionError")
    debug = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env={**os.environ, "WIKITRACE_DEBUG": "1"})
    assert "Traceback" in debug.stderr


def test_an_error_line_shows_the_control_characters_an_input_id_holds_as_escapes(tmp_path):
    """An OTLP export whose trace id holds ESC and a right-to-left override: the error naming
    that trace shows them as escapes, so the terminal neither acts on them nor reorders the line."""
    fix = Path(__file__).parent / "fixtures" / "importers" / "otlp" / "collector-export.jsonl"
    lines = fix.read_text().splitlines()
    first = json.loads(lines[0])
    for scope in first["resourceSpans"][0]["scopeSpans"]:
        scope["spans"] = [dict(s, traceId="5b8\x1b[2J\u202eefff", name="x", attributes=[]) for s in scope["spans"]]
    path = tmp_path / "collector-export.jsonl"
    path.write_text(json.dumps(first) + "\n")
    line = one_error_line(cli("compile", path, "-o", tmp_path / "out", "--offline", "-q"), 2)
    assert "\x1b" not in line and "\u202e" not in line, repr(line)
    assert "5b8\\x1b[2J\\u202eefff" in line, line
