"""An add pauses cycle collection while it holds the corpus; a program calling it keeps
its own collector setting afterwards, whether the add ends well or fails."""

import gc

import pytest

from wikitrace.gc_policy import paused


@pytest.mark.parametrize("enabled", [True, False])
def test_the_callers_setting_comes_back(enabled):
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        with paused():
            assert not gc.isenabled()
        assert gc.isenabled() == enabled
        with pytest.raises(RuntimeError):
            with paused():
                raise RuntimeError("the add failed")
        assert gc.isenabled() == enabled
    finally:
        (gc.enable if was else gc.disable)()


def test_a_commands_own_process_leaves_the_collector_off():
    """The wikitrace executable (which calls collect_less) ends with the command: after the
    add there is no collection to run over the corpus it dropped. Checked in a child, so
    this test process keeps its own setting."""
    import subprocess
    import sys

    code = ("import gc\nfrom wikitrace.gc_policy import collect_less, paused\n"
            "with paused():\n    pass\nprint(gc.isenabled())\n"
            "collect_less()\nwith paused():\n    pass\nprint(gc.isenabled())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "False"]


def test_only_a_commands_own_process_keeps_its_objects_for_good():
    """``keep_for_good`` (after the model client's import) moves what exists out of every later
    collection in the wikitrace executable's process; a program calling the package keeps its
    collector as it was. Checked in a child, so this test process keeps its own."""
    import subprocess
    import sys

    code = ("import gc\nfrom wikitrace.gc_policy import collect_less, keep_for_good\n"
            "keep_for_good()\nprint(gc.get_freeze_count())\n"
            "collect_less()\nkeep_for_good()\nprint(gc.get_freeze_count() > 0)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["0", "True"]
