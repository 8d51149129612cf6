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
