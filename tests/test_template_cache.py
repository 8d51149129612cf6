"""Compiled templates are kept in the user's cache folder and render the same bytes."""

import os

import jinja2
import pytest

from wikitrace import templates
from wikitrace.template_cache import bytecode_cache


@pytest.fixture
def fresh_env(monkeypatch, tmp_path):
    """templates.environment() built anew under a cache folder of this test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    templates.environment.cache_clear()
    yield tmp_path / "cache" / "wikitrace" / "templates"
    templates.environment.cache_clear()


AWKWARD = dict(mount="/m\x1b[31m/x", tools="/t  ools", example_step="step-0007", example_insight="insight-\u00e9")


def test_a_second_process_renders_from_the_cache_without_compiling(fresh_env, monkeypatch):
    first = templates.render("agent/system_wikitrace.md.j2", **AWKWARD)
    assert [p.suffix for p in fresh_env.iterdir()] == [".jinja"]
    assert oct(fresh_env.stat().st_mode & 0o777) == "0o700"

    templates.environment.cache_clear()  # as a new process: nothing compiled in memory

    def no_compiling(*args, **kwargs):
        raise AssertionError("compiled although the cache holds the template")

    monkeypatch.setattr(jinja2.Environment, "compile", no_compiling)
    assert templates.render("agent/system_wikitrace.md.j2", **AWKWARD) == first


def test_an_edited_template_is_compiled_again(fresh_env, tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    page = folder / "agent" / "cite_wikitrace.md.j2"
    page.parent.mkdir()
    page.write_text("first {{ example_step }}\n")
    assert templates.render("agent/cite_wikitrace.md.j2", folder, example_step="s", example_insight="i") == "first s\n"
    templates.environment.cache_clear()
    page.write_text("second {{ example_insight }}\n")
    assert templates.render("agent/cite_wikitrace.md.j2", folder, example_step="s", example_insight="i") == "second i\n"


def test_a_folder_others_may_write_is_not_used(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = tmp_path / "cache" / "wikitrace" / "templates"
    folder.mkdir(parents=True)
    os.chmod(folder, 0o777)
    assert bytecode_cache("any settings") is None


def test_a_damaged_entry_is_compiled_again(fresh_env):
    first = templates.render("agent/cite_wikitrace.md.j2", example_step="s", example_insight="i")
    for entry in fresh_env.iterdir():
        entry.write_bytes(entry.read_bytes()[:40])  # cut short mid-way
    templates.environment.cache_clear()
    assert templates.render("agent/cite_wikitrace.md.j2", example_step="s", example_insight="i") == first


def test_a_cache_folder_that_cannot_be_created_changes_nothing(monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    templates.environment.cache_clear()
    try:
        assert templates.render("agent/cite_wikitrace.md.j2", example_step="s", example_insight="i").startswith("This")
    finally:
        templates.environment.cache_clear()


def test_no_home_folder_to_be_found_changes_nothing(monkeypatch):
    # A bare sandbox: no HOME, a user id with no passwd entry (pathlib raises RuntimeError/KeyError).
    from pathlib import Path

    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)

    def no_home():
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    assert bytecode_cache("settings") is None
    templates.environment.cache_clear()
    try:
        assert templates.render("agent/cite_wikitrace.md.j2", example_step="s", example_insight="i").startswith("This")
    finally:
        templates.environment.cache_clear()
