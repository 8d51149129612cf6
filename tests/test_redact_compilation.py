"""A compilation's text is redacted before its pages are written: a secret in any field,
written plainly, with escapes or base64-encoded, is replaced, and a clean compilation comes
back unchanged."""

import base64
from collections import Counter

import pytest

from wikitrace.compilers.schema import CandidateInsight, Compilation, Evidence
from wikitrace.redact import Redactor, default_redactor, redact_compilation

GITHUB = "ghp_" + "Z8xQ2mW7pL5vR8tY1uZ4aS6dF0gH2jK9cBk3"
AWS = "AKIA" + "Q7W2E9R4T1Y6U3I8"


def _comp(**fields) -> Compilation:
    evidence = Evidence(decision=fields.get("decision", "Called book at turn 3."),
                        support=fields.get("support", "The call went through."),
                        turns=[3], quote=fields.get("quote", "Reservation HAT1 booked"))
    insight = CandidateInsight(title="Check the rule", guideline=fields.get("guideline", "Check the baggage rule."),
                               applicability="In airline tasks.")
    return Compilation(title=fields.get("title", "[failure] Book a flight"), description="The agent failed.",
                       outcome="failure", evidence=[evidence], insights=[insight],
                       fallback_reason=fields.get("fallback_reason"))


def _texts(comp: Compilation) -> str:
    e, i = comp.evidence[0], comp.insights[0]
    return "\n".join(str(x) for x in (comp.title, comp.description, comp.fallback_reason, e.decision, e.support,
                                      e.quote, i.title, i.guideline, i.applicability))


def test_a_clean_compilation_comes_back_as_it_was():
    comp = _comp()
    before = _texts(comp)
    counts = Counter()
    assert redact_compilation(comp, default_redactor(), counts) is comp
    assert _texts(comp) == before and not counts


@pytest.mark.parametrize("field", ["title", "decision", "support", "quote", "guideline", "fallback_reason"])
@pytest.mark.parametrize("secret", [
    GITHUB,
    f"key {AWS} here",
    "token \\u0067hp_" + GITHUB[4:],  # written with an escape, as a log quoting JSON may hold it
    "postgres:\\/\\/admin:Sup3rS3cret!@db.internal:5432\\/prod",
    base64.b64encode(GITHUB.encode()).decode(),
])
def test_a_secret_in_any_field_is_replaced(field, secret):
    comp = _comp(**{field: f"It returned {secret} at turn 3"})
    counts = Counter()
    redact_compilation(comp, default_redactor(), counts)
    text = _texts(comp)
    assert GITHUB not in text and AWS not in text and "Sup3rS3cret" not in text and "u0067hp_" + GITHUB[4:] not in text
    assert base64.b64encode(GITHUB.encode()).decode() not in text
    assert sum(counts.values()) >= 1


def test_user_patterns_are_applied_to_every_string():
    """A pattern of the user's has no trigger to screen for: each string is passed through it."""
    comp = _comp(quote="Passenger ref PNR-778812 confirmed")
    redact_compilation(comp, Redactor([r"PNR-\d{6}"]))
    assert "PNR-778812" not in comp.evidence[0].quote


def test_a_secret_in_a_facts_rule_quote_is_replaced_before_corpus_json_keeps_it():
    """An In-short fact's rule quote is counted across runs and shown on insight pages
    (corpus/fact_leads.py): it is redacted with the fact's text."""
    from wikitrace.compilers.schema import KeyFact
    from wikitrace.corpus.checked_facts import run_facts

    quote = f"\"Agents sign in with {GITHUB} before any refund.\""
    comp = _comp()
    comp.in_short = [KeyFact(f"cancel_reservation went through. The system prompt's rule on it: {quote}", [4],
                             "unexpected-change", ["cancel_reservation"], ["cancel_reservation", "cancel_reservation", quote])]
    redact_compilation(comp, default_redactor())
    kept = str(run_facts(comp))
    assert "rule" in kept and GITHUB not in kept and GITHUB not in comp.in_short[0].text
