"""turns.md (rendered by the package) and the agent tool `turn` (stdlib-only, shipped apart)
each cut long fields; the page promises `turn … --full` shows the rest, so both must cut alike."""

import importlib.util
import sys
from pathlib import Path

from wikitrace.templates import cap_text

TOOLS = Path(__file__).resolve().parent.parent / "tools"


def _tool_module():
    """The tools' ``_turns`` module, as the ``turn`` tool loads it (``_corpus`` beside it by bare name)."""
    sys.path.insert(0, str(TOOLS))
    try:
        spec = importlib.util.spec_from_file_location("tool_turns_for_test", TOOLS / "_turns.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(TOOLS))
    return mod


def test_the_page_and_the_turn_tool_cut_fields_the_same_way():
    tool = _tool_module()
    texts = ["short", "\n".join(f"line {i}" for i in range(200)), "x" * 9000,
             "\n".join("y" * 500 for _ in range(45)), "a\n" * 39, "a\n" * 41]
    for text in texts:
        assert tool.cap_field(text, "step-0003", 7) == cap_text(text, "step-0003", 7), text[:40]
    assert "--full" in cap_text(texts[1], "step-0003", 7)
