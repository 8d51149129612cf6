"""``wikitrace query`` through the executable's fast path prints exactly what the library's
``run_query`` returns, and gets there without the modules a one-shot question does not need."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_cli_errors import WIKITRACE
from wikitrace.dialogue.build import DialogueOptions, compile_dialogues
from wikitrace.dialogue.packet import packet_markdown
from wikitrace.dialogue.query import run_query
from wikitrace.fsio import make_writable

MINI = Path(__file__).parent / "fixtures" / "dialogue" / "locomo-mini.json"
# the fixture's own questions, and questions of every shape retrieval tells apart (list, count,
# time, comparison, two people), one with no match and one with characters a terminal would act on
QUESTIONS = [q["question"] for q in json.loads(MINI.read_text())["qa"]] + [
    "What pets does Maya have?", "When did Tomas start learning the cello?",
    "What do Maya and Tomas both like?", "How often does Tomas have lessons?",
    "Which race might Maya sign up for?", "what is the capital of Peru", "Café \x1b[31mPepper\u202e?"]


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    out = tmp_path_factory.mktemp("query-cli") / "corpus"
    compile_dialogues(DialogueOptions(inputs=[MINI], out=out))
    yield out
    make_writable(out)


def cli(*argv: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("WIKITRACE_CORPUS", "WIKITRACE_DEBUG")}
    return subprocess.run([WIKITRACE, "query", *argv], capture_output=True, env=env, timeout=120)


@pytest.mark.parametrize("options", [[], ["--json"], ["--budget", "120"], ["--json", "--budget", "80"]])
def test_the_cli_prints_the_librarys_packet_byte_for_byte(memory, options):
    assert len(QUESTIONS) >= 5
    budget = int(options[options.index("--budget") + 1]) if "--budget" in options else 2000
    for question in QUESTIONS:
        proc = cli("--corpus", str(memory), *options, question)
        assert proc.returncode == 0, proc.stderr
        expected = run_query(memory, None, question, budget=budget, as_json="--json" in options)
        assert proc.stdout.decode("utf-8") == expected + "\n"
    # the questions were answered from the memory, not with an empty packet
    assert "[D1:3]" in run_query(memory, None, "What are the names of Maya's cats?")


def test_the_markdown_packet_reads_the_same_as_before_and_escapes_controls():
    text = packet_markdown("Where did\nBen  move\x1b?", "hashed-lexical", "Session 1:\n[S1:4] Ben: Norway")
    assert text == ("# Evidence for: Where did Ben move\\x1b?\nNo LLM is configured: evidence only.\n"
                    "Embeddings: hashed-lexical.\n\nSession 1:\n[S1:4] Ben: Norway\n")
    answered = packet_markdown("q", "e", "c", {"can_answer": True, "final_answer": "Toronto\u202e",
                                               "supporting_source_refs": ["S1:4", "S2:2"]})
    # the answer has a line of its own (the template it replaces ran it into the next line)
    assert answered.splitlines()[1:3] == ["Answer (model output, not part of the evidence): Toronto\\u202e "
                                          "(refs: S1:4, S2:2)", "Embeddings: e."]
    abstained = packet_markdown("q", "e", "c", {"can_answer": False, "abstain_reason": "no  source\nsays"})
    assert abstained.splitlines()[1] == "Answer (model output, not part of the evidence): abstained: no source says"


HEAVY = ("typer", "click", "rich", "jinja2", "numpy", "yaml", "openai", "hashlib", "typing")


@pytest.mark.parametrize("options", [[], ["--json"]])
def test_a_question_imports_no_framework(memory, options):
    """The entry point as the console script runs it; which modules it loaded, read at exit."""
    probe = ("import atexit, sys\n"
             f"atexit.register(lambda: sys.__stderr__.write('LOADED ' + ' '.join(m for m in {HEAVY!r} "
             "if m in sys.modules) + '\\n'))\n"
             f"sys.argv = ['wikitrace', 'query', '--corpus', {str(memory)!r}, *{options!r}, 'Where does Tomas take lessons?']\n"
             "from wikitrace.entry import main\nmain()\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    loaded = [line for line in proc.stderr.splitlines() if line.startswith("LOADED")]
    assert loaded == ["LOADED "], proc.stderr
    assert "[D1:6]" in proc.stdout
