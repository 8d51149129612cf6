import pytest

from fake_batch_api import fake_batch  # noqa: F401  (fixtures shared by the tests)
from fake_openai import fake_openai  # noqa: F401


@pytest.fixture(autouse=True)
def _no_llm_env(monkeypatch, tmp_path):
    """Tests never reach a real endpoint or the user's cache by accident."""
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "WIKITRACE_MODEL", "WIKITRACE_MAX_TOKENS", "WIKITRACE_TIMEOUT",
                "WIKITRACE_MAX_ANSWER_BYTES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("WIKITRACE_CACHE_DIR", str(tmp_path / "llm-cache"))
    # Redaction tags are keyed: a fixed test key, and never a key file in the user's home.
    monkeypatch.setenv("WIKITRACE_REDACT_KEY", "wikitrace-tests")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


@pytest.fixture(scope="session")
def tau_bench_corpus(tmp_path_factory):
    """The 200 dev tau-bench runs compiled offline once per test run: (corpus folder, BuildResult).

    Shared and read-only (the build makes pages read-only): a test that changes it works on
    a copy (helpers.make_writable_copy). Skips when the shared data is absent."""
    from helpers import TAU_BENCH

    from wikitrace.build import BuildOptions, build

    if not TAU_BENCH.exists():
        pytest.skip(f"tau-bench runs not present at {TAU_BENCH} (set WIKITRACE_DATA to the shared data folder)")
    out = tmp_path_factory.mktemp("tau-bench") / "corpus"
    with pytest.MonkeyPatch.context() as mp:  # the same environment every test gets from _no_llm_env
        for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "WIKITRACE_MODEL"):
            mp.delenv(var, raising=False)
        mp.setenv("WIKITRACE_REDACT_KEY", "wikitrace-tests")
        mp.setenv("XDG_CONFIG_HOME", str(out.parent / "config"))
        mp.setenv("WIKITRACE_CACHE_DIR", str(out.parent / "llm-cache"))
        result = build(BuildOptions(inputs=[TAU_BENCH], out=out, quiet=True, offline=True))
    return out, result
