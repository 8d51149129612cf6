"""`wikitrace compile` starts importing the model client as soon as its options are parsed, but
only when the build will ask a model: an offline build, one with no endpoint configured, and a
quiet rebuild the response cache can answer never pay for the import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from wikitrace.compilers.llm import RESPONSE_MODES
from wikitrace.llm import preload

# Run in a fresh interpreter: whether the import thread started is read off its name, and
# this test process may have imported openai already.
PROBE = """
import json, sys, threading
from wikitrace.llm.preload import import_client_for_compile
args = json.loads(sys.argv[1])
import_client_for_compile(**args)
print(json.dumps(any(t.name == "wikitrace-import-openai" for t in threading.enumerate())))
"""


def started(tmp_path: Path, env: dict[str, str], **args) -> bool:
    base = {"offline": False, "model": None, "base_url": None, "cache_dir": str(tmp_path / "cache"),
            "read_cache": True, "quiet": True}
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "WIKITRACE_"))}
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps({**base, **args})], env={**clean, **env},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


ENDPOINT = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "sk-test"}


def test_a_build_that_will_ask_a_model_starts_the_import(tmp_path):
    assert started(tmp_path, ENDPOINT)
    assert started(tmp_path, ENDPOINT, quiet=False)


def test_no_import_offline_or_without_an_endpoint(tmp_path):
    assert not started(tmp_path, ENDPOINT, offline=True)
    assert not started(tmp_path, {})
    # settings the build will reject are its to report; nothing is started for them
    assert not started(tmp_path, {"OPENAI_BASE_URL": "ftp://nowhere"})
    assert not started(tmp_path, {**ENDPOINT, "WIKITRACE_TIMEOUT": "soon"})


def test_a_quiet_rebuild_from_a_cache_holding_answers_does_not_import(tmp_path):
    cache = tmp_path / "cache"
    (cache / "modes" / RESPONSE_MODES[0]).mkdir(parents=True)
    assert not started(tmp_path, ENDPOINT, cache_dir=str(cache))
    # --no-cache asks the model again, and a build that announces its input makes the client anyway
    assert started(tmp_path, ENDPOINT, cache_dir=str(cache), read_cache=False)
    assert started(tmp_path, ENDPOINT, cache_dir=str(cache), quiet=False)


def test_the_first_mode_is_the_compilers():
    assert preload.FIRST_MODE == RESPONSE_MODES[0]


def test_compile_main_parses_before_importing_the_build():
    """The build's modules are not imported before the options are parsed (so the client's
    import can start first): importing build_cli imports none of them."""
    code = "import sys, wikitrace.build_cli; print('wikitrace.build' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip() == "False", proc.stderr


def test_the_llm_path_reaches_its_first_request_without_the_offline_compiler():
    """The build and the LLM compiler import without the offline compiler (it serves only the
    runs that fall back, and its import held back the first request)."""
    code = "import sys, wikitrace.build, wikitrace.compilers.llm; print('wikitrace.compilers.offline' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip() == "False", proc.stderr


def test_the_import_ahead_leaves_the_collector_as_it_found_it():
    """The collector is paused while the client is imported, and on again afterwards (off
    stays off: `wikitrace add` pauses it for the whole command)."""
    code = """
import gc, sys, threading
from wikitrace.llm.preload import import_client_ahead
for enabled in (True, False):
    (gc.enable if enabled else gc.disable)()
    sys.modules.pop("openai", None)
    import_client_ahead()
    for t in threading.enumerate():
        if t.name == "wikitrace-import-openai":
            t.join()
    print(enabled, gc.isenabled(), "openai" in sys.modules)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stdout.split("\n")[:2] == ["True True True", "False False True"], proc.stderr


def test_a_pause_begun_during_the_import_keeps_the_collector_off(tmp_path):
    """`wikitrace add` pauses the collector for the whole command; an import ahead that began
    before that pause and ends inside it must not turn the collector back on under it."""
    (tmp_path / "openai.py").write_text(
        "import os, time\n"
        f"while not os.path.exists({str(tmp_path / 'go')!r}):\n"
        "    time.sleep(0.01)\n")
    code = f"""
import gc, pathlib, sys, threading
sys.path.insert(0, {str(tmp_path)!r})
from wikitrace.gc_policy import collect_less, paused
from wikitrace.llm.preload import import_client_ahead
collect_less()  # a command's own process, as `wikitrace add` runs
import_client_ahead()  # blocks in the stand-in openai until 'go' exists
loader = next(t for t in threading.enumerate() if t.name == "wikitrace-import-openai")
with paused():
    pathlib.Path({str(tmp_path / 'go')!r}).touch()
    loader.join()
    during = gc.isenabled()
print(during, gc.isenabled(), "openai" in sys.modules)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stdout.split() == ["False", "False", "True"], proc.stderr


def test_overlapping_pauses_set_the_collector_back_once_the_last_ends():
    code = """
import gc
from wikitrace.gc_policy import paused
gc.enable()
outer = paused(keep_off=False)
outer.__enter__()
with paused(keep_off=False):
    pass
inner_left = gc.isenabled()  # the outer pause still holds it off
outer.__exit__(None, None, None)
print(inner_left, gc.isenabled())
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stdout.split() == ["False", "True"], proc.stderr
