"""Citation prompt and tolerant parsing of the agent's post-episode reply."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

FIX = Path(__file__).parent / "fixtures" / "agent"
sys.path.insert(0, str(FIX))

import agent_corpus  # noqa: E402

from wikitrace.agent.cite import CitationError, parse_and_check, parse_citation  # noqa: E402
from wikitrace.agent.prompt import citation_prompt  # noqa: E402


@pytest.fixture()
def corpus_dir(tmp_path):
    return agent_corpus.write_corpus(tmp_path / "corpus")


MESSY = [
    # fenced, with prose around and a trailing comma
    ('I relied on the compilation of a similar run.\n```json\n{"R": ["step-0003"], "C": ["step-0003"], '
     '"I": ["insight-0005", "insight-0003",],}\n```\nLet me know if you need more.',
     {"R": ["step-0003"], "C": ["step-0003"], "I": ["insight-0005", "insight-0003"]}),
    # python-style single quotes, lower-case and long key names
    ("{'r': [], 'compilations': ['step-0001'], 'Insights': ['insight-0002']}",
     {"R": [], "C": ["step-0001"], "I": ["insight-0002"]}),
    # bare keys and bare ids
    ("Final answer: {R: [step-0004], C: [], I: [insight-0006, insight-0000,]}",
     {"R": ["step-0004"], "C": [], "I": ["insight-0006", "insight-0000"]}),
    # short ids, numbers, paths, a string instead of a list, smart quotes
    ("\u201cR\u201d is below.\n{\u201cR\u201d: [\u201c/work/corpus/raw/step-2/solver.full.jsonl\u201d], "
     "\u201cC\u201d: \u201cstep-0002\u201d, \u201cI\u201d: [3, \u201cinsight_4\u201d]}",
     {"R": ["step-0002"], "C": ["step-0002"], "I": ["insight-0003", "insight-0004"]}),
    # an example object in the prose, then the real answer: the last one wins
    ('The format was {"R": [], "C": [], "I": []}. My answer:\n{"R":["step-0000"],"C":[],"I":["insight-0001"]}',
     {"R": ["step-0000"], "C": [], "I": ["insight-0001"]}),
    # reasoning-model style reply with think tags, duplicates, empty lists and JSON nulls
    ('<think>I used insight-0000 a lot.</think>\n{"R": null, "C": [], "I": ["insight-0000", "insight-0000"], '
     '"note": "none"}', {"R": [], "C": [], "I": ["insight-0000"]}),
    # insights-only reply: one key
    ('```\n{"I": ["insight-0001"]}\n```', {"R": [], "C": [], "I": ["insight-0001"]}),
    # a reply cut short before its closing brace
    ('{"R": ["step-0005"], "C": [], "I": ["insight-0004"]', {"R": ["step-0005"], "C": [], "I": ["insight-0004"]}),
]


@pytest.mark.parametrize("text,expected", MESSY)
def test_messy_replies_parse(text, expected, corpus_dir):
    cit = parse_and_check(text, corpus_dir)
    assert {"R": cit.R, "C": cit.C, "I": cit.I} == expected
    assert cit.unknown == [] and cit.ok


def test_unknown_and_wrong_kind_ids_are_reported(corpus_dir):
    text = '{"R": ["step-0042", "insight-0001"], "C": ["step-0001"], "I": ["insight-0099", "insight-0003", "foo"]}'
    cit = parse_and_check(text, corpus_dir)
    assert cit.R == [] and cit.C == ["step-0001"] and cit.I == ["insight-0003"]
    reasons = {(u["key"], u["id"]): u["reason"] for u in cit.unknown}
    assert reasons == {
        ("R", "insight-0001"): "R takes step ids",
        ("I", "foo"): "not an id",
        ("R", "step-0042"): "not in the corpus",
        ("I", "insight-0099"): "retired from the corpus",
    }
    assert not cit.ok


def test_no_object_raises():
    with pytest.raises(CitationError):
        parse_citation("I did not use any memory.")
    with pytest.raises(CitationError):
        parse_citation('{"answer": 42}')


def test_unknown_keys_are_warned_not_fatal():
    cit = parse_citation('{"I": [], "reason": "nothing helped"}')
    assert cit.warnings == ["ignored key 'reason'"] and cit.ok


def test_citation_prompt_variants(corpus_dir):
    wt = citation_prompt(corpus_dir, "wikitrace")
    io = citation_prompt(corpus_dir, "insights-only")
    for s in (wt, io):
        assert "JSON object" in s and "without markdown or a code fence" in s and "changed one of your actions" in s and "no further tool calls" in s
    assert all(k in wt for k in ('"R"', '"C"', '"I"', "step-0000", "insight-0000"))
    assert '"I"' in io and '"R"' not in io and '"C"' not in io
    # and the citation prompt in PromptParts is the same text
    from wikitrace.agent.prompt import build_prompt
    assert build_prompt(corpus_dir, "x").citation == wt


def test_cli_cite_parse_exit_codes(corpus_dir, tmp_path):
    from typer.testing import CliRunner

    from wikitrace.cli import app

    runner = CliRunner()
    good = tmp_path / "good.txt"
    good.write_text(MESSY[0][0])
    r = runner.invoke(app, ["cite", "parse", str(good), "--corpus", str(corpus_dir), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["I"] == ["insight-0005", "insight-0003"]
    r = runner.invoke(app, ["cite", "parse", "-", "--corpus", str(corpus_dir)], input='{"R": ["step-0777"]}')
    assert r.exit_code == 1 and "step-0777" in r.stdout
    r = runner.invoke(app, ["cite", "parse", "-", "--corpus", str(corpus_dir)], input="no json here")
    assert r.exit_code == 2
    r = runner.invoke(app, ["cite", "prompt", "--variant", "insights-only"])
    assert r.exit_code == 0 and '"I"' in r.stdout


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_steps = st.lists(st.integers(0, 20000).map(lambda n: f"step-{n:04d}"), max_size=4, unique=True)
_ins = st.lists(st.integers(0, 20000).map(lambda n: f"insight-{n:04d}"), max_size=4, unique=True)


@settings(max_examples=150, deadline=None)
@given(r=_steps, c=_steps, i=_ins, fence=st.booleans(), single=st.booleans(), trailing=st.booleans(),
       case=st.sampled_from(["upper", "lower", "long"]), prose=st.sampled_from(["", "Sure.\n", "Here is my citation: "]))
def test_any_formatting_of_a_citation_round_trips(r, c, i, fence, single, trailing, case, prose):
    names = {"upper": ("R", "C", "I"), "lower": ("r", "c", "i"), "long": ("raw", "Compilations", "INSIGHTS")}[case]
    body = json.dumps(dict(zip(names, (r, c, i))))
    if trailing:
        body = body.replace("]", ",]").replace("[,]", "[]")
    if single:
        body = body.replace('"', "'")
    text = prose + (f"```json\n{body}\n```\nThanks." if fence else body)
    cit = parse_citation(text)
    assert (cit.R, cit.C, cit.I) == (r, c, i) and cit.ok
