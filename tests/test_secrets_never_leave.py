"""Secrets never leave the reader: planted in every field of every importer's input and in the
model's answers, none is found in anything a build writes or sends."""

from __future__ import annotations

import functools
import json
import random
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from fake_openai import reply
from secret_planting import (FORMS, KEY_STYLES, KINDS, answer, files_under, find_leaks, make_secret, needles,
                             write_inputs, written)
from wikitrace.build import BuildOptions, build

NAME_KINDS = ("github-token", "openai-key", "slack-token", "aws-access-key-id", "jwt", "anthropic-key")


def _outcome_of(body: dict) -> str:
    return "failure" if "failure_causes" in body["messages"][0]["content"] else "success"


@functools.lru_cache(maxsize=1)
def _baseline_runs() -> int:
    """Runs an unplanted copy of the same fixtures builds into (offline)."""
    with tempfile.TemporaryDirectory() as tmp:
        inp, outcomes = write_inputs(Path(tmp), None, None, None)
        return build(BuildOptions(inputs=[inp], out=Path(tmp) / "corpus", offline=True, outcomes=outcomes)).runs


# No shrinking: each example is three builds; the failing example is printed as generated.
@settings(max_examples=5, deadline=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1),
       forms=st.lists(st.sampled_from(FORMS), min_size=len(KINDS), max_size=len(KINDS)),
       key_style=st.sampled_from(KEY_STYLES),
       name_kind=st.sampled_from(NAME_KINDS))
def test_planted_secrets_never_reach_the_corpus_cache_or_model(fake_batch, seed, forms, key_style, name_kind):
    rng = random.Random(seed)
    secrets = [make_secret(kind, rng, key_style) for kind in KINDS]
    block = "\n".join(written(s, f) for s, f in zip(secrets, forms))
    # Text fields of line-based formats (ReAct) hold no line break: the key goes in observations only.
    one_line = " ".join(written(s, f).replace("\n", "\\n") for s, f in zip(secrets, forms) if s.kind != "private-key")
    name_secret = make_secret(name_kind, rng)
    wanted = needles(secrets + [name_secret])

    def live(body):
        return reply(json.dumps(answer(_outcome_of(body), block)))

    fake_batch.reset()
    fake_batch.files.clear()
    fake_batch.respond_with(live)
    fake_batch.batch_responder = lambda cid, body: answer(_outcome_of(body), block)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        inp, outcomes = write_inputs(root, block, one_line, name_secret.text)
        assert find_leaks(files_under(inp), wanted), "the secrets were planted"
        results = {}
        for name, extra in (("offline", dict(offline=True)), ("llm", {}),
                            ("batch", dict(batch=True, batch_poll_interval=0.001))):
            results[name] = build(BuildOptions(inputs=[inp], out=root / name / "corpus", outcomes=outcomes,
                                               cache_dir=root / name / "llm-cache", **extra))
        haystacks = files_under(root, skip=inp)  # corpora, their sibling files, the caches
        haystacks.update({f"request {i} {r['method']} {r['path']}": json.dumps(r["body"]).encode()
                          for i, r in enumerate(fake_batch.requests)})
        haystacks.update({f"uploaded batch file {i}": data for i, data in enumerate(fake_batch.uploaded_bytes())})
    assert find_leaks(haystacks, wanted) == []
    baseline = _baseline_runs()
    for name, result in results.items():
        assert result.runs >= baseline, f"{name}: planting broke an importer ({result.skipped[:3]})"
    assert results["llm"].stats["calls"] > 0 and results["batch"].batch is not None
    assert fake_batch.uploaded_bytes()
