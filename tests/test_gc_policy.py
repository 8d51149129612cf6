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
