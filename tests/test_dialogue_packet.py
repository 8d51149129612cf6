"""The evidence packet's budget covers everything handed to a model (markdown and JSON context);
diagnostics stay outside it."""

import json
from pathlib import Path

import pytest

from wikitrace.fsio import make_writable
from wikitrace.dialogue.build import DialogueOptions, compile_dialogues
from wikitrace.dialogue.packet import count_tokens, pack_context
from wikitrace.dialogue.query import QueryError, run_query

FIXTURE = Path(__file__).parent / "fixtures" / "dialogue" / "tiny.jsonl"
QUESTIONS = ("What instrument is Ben learning?", "How many cats does Ana have?",
             "Where did Ben move from and what did he read on the train to Montreal?",
             "When did Ana adopt Biscuit?")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("packet") / "corpus"
    compile_dialogues(DialogueOptions(inputs=[FIXTURE], out=out))
    yield out
    make_writable(out)


@pytest.mark.parametrize("budget", [25, 32, 45, 60, 90, 150, 400])
def test_markdown_and_json_context_never_exceed_the_budget(built, budget):
    for q in QUESTIONS:
        try:
            md = run_query(built, "tiny", q, budget=budget)
        except QueryError as exc:        # only when the header itself does not fit
            assert budget < 40 and "header alone" in str(exc)
        else:
            assert count_tokens(md) <= budget, (q, budget, md)
        data = json.loads(run_query(built, "tiny", q, budget=budget, as_json=True))
        assert count_tokens(data["context"]) == data["context_tokens"] <= budget
        # whatever the JSON says was handed over is in the context, and nothing else is
        for src in data["diagnostics"]["sources"]:
            assert f"[{src['id']}]" in data["context"]


def test_a_large_budget_holds_every_message_with_dates_and_refs(built):
    data = json.loads(run_query(built, "tiny", "What did Ana and Ben talk about?", budget=4000, as_json=True))
    ctx = data["context"]
    assert len(data["diagnostics"]["sources"]) == 8
    assert "Session 1 (" in ctx and "Session 2 (" in ctx
    assert "(yesterday = 2 March 2024)" in ctx          # resolved date handed over with its message
    # diagnostics (claim ids, scores) are not in the context
    assert "claim-" not in ctx and "score" not in ctx
    assert data["diagnostics"]["trajectories"] and "score" in data["diagnostics"]["trajectories"][0]


def test_budget_smaller_than_the_header_is_a_clear_error(built):
    with pytest.raises(QueryError, match="--budget 5"):
        run_query(built, "tiny", "What instrument is Ben learning?", budget=5)


def test_packer_skips_a_line_that_would_overflow_and_pays_session_headers():
    rows = [["D1:1", "A", "1 May 2023", "1", "one two three four five six seven eight", None],
            ["D1:2", "B", "1 May 2023", "1", "short", None],
            ["D2:1", "A", "9 May 2023", "2", "later", None]]
    ctx = pack_context([0, 1, 2], rows, budget=9, notes={2: "(note)"})
    # D1:1 (10 tokens + 4 header) cannot fit; D1:2 (3 + 4) fits; D2:1 (4 + 4) no longer does
    assert ctx.messages == [1] and ctx.tokens <= 9
    assert ctx.text == "Session 1 (1 May 2023):\n[D1:2] B: short"


def test_a_folder_without_a_compiled_sample_says_what_to_run(tmp_path):
    """An empty or mistyped --corpus is told to compile first, not to pick a sample that is not there."""
    with pytest.raises(QueryError, match=r"no compiled dialogue sample here \(run `wikitrace dialogue compile`"):
        run_query(tmp_path / "nowhere", None, "What pets does she have?")
