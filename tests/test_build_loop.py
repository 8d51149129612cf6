"""The build's event loop takes runs on a thread and caches answers behind it: what a user
relies on is unchanged (order, errors where they were, answers kept, nothing read too far)."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest

from wikitrace.compile_loop import _END, RunFeed
from wikitrace.llm.cache import CachedAnswer, ResponseCache


def _drain(items, ahead=2):
    async def go():
        feed = RunFeed(items, ahead=ahead)
        got = []
        try:
            while (item := await feed.next()) is not _END:
                got.append(item)
        finally:
            feed.close()
        return got

    return asyncio.run(go())


def test_the_feed_keeps_input_order():
    assert _drain(iter(range(100)), ahead=3) == list(range(100))


def test_an_error_of_the_input_is_raised_after_the_runs_before_it():
    seen = []

    def runs():
        yield "a"
        yield "b"
        raise ValueError("line 3: not a run")

    async def go():
        feed = RunFeed(runs(), ahead=4)
        while (item := await feed.next()) is not _END:
            seen.append(item)

    with pytest.raises(ValueError, match="line 3"):
        asyncio.run(go())
    assert seen == ["a", "b"]


def test_the_feed_reads_no_further_ahead_than_asked():
    taken = []

    def runs():
        for i in range(1000):
            taken.append(i)
            yield i

    async def go():
        feed = RunFeed(runs(), ahead=5)
        first = await feed.next()
        await asyncio.sleep(0.3)  # time for the thread to read as far as it may
        feed.close()
        return first

    assert asyncio.run(go()) == 0
    assert len(taken) <= 7  # the one awaited, five ahead, and the one it stops at


def _answer(text="{}"):
    return CachedAnswer(text, {"prompt_tokens": 3}, runs=["sha256:b", "sha256:a"])


def test_an_answer_cached_behind_is_read_back_at_once_and_on_disk_after_flush(tmp_path):
    behind = ResponseCache(tmp_path)
    behind.write_behind()
    behind.put("ab" + "0" * 62, _answer('{"x": 1}'), model="m", mode="json_schema", messages=[])
    hit = behind.get("ab" + "0" * 62)
    assert hit is not None and hit.text == '{"x": 1}' and hit.runs == ["sha256:a", "sha256:b"]
    behind.flush()
    # the file is what a cache writing in place makes
    direct = ResponseCache(tmp_path / "direct")
    direct.put("ab" + "0" * 62, _answer('{"x": 1}'), model="m", mode="json_schema", messages=[])
    name = "ab/ab" + "0" * 62 + ".json"
    assert (tmp_path / name).read_bytes() == (tmp_path / "direct" / name).read_bytes()
    assert json.loads((tmp_path / name).read_text())["usage"] == {"prompt_tokens": 3}


def test_an_answer_discarded_behind_is_gone_from_memory_and_disk(tmp_path):
    cache = ResponseCache(tmp_path)
    cache.write_behind()
    key = "cd" + "1" * 62
    cache.put(key, _answer(), model="m", mode="json_schema", messages=[])
    cache.discard(key)
    assert cache.get(key) is None
    cache.flush()
    assert not cache.path(key).exists() and cache.get(key) is None


def test_an_answer_discarded_is_gone_before_the_writer_removes_its_file(tmp_path, monkeypatch):
    # The file is on disk and the writer has not got to the removal yet: readers must not see it.
    cache = ResponseCache(tmp_path)
    cache.write_behind()
    key = "ce" + "2" * 62
    cache.put(key, _answer(), model="m", mode="json_schema", messages=[])
    cache.flush()
    assert cache.path(key).exists()
    release = threading.Event()
    unlink = cache._unlink
    monkeypatch.setattr(cache, "_unlink", lambda k: (release.wait(5), unlink(k)))
    cache.discard(key)
    assert cache.get(key) is None and cache.path(key).exists()
    release.set()
    cache.flush()
    assert not cache.path(key).exists() and cache.get(key) is None
    cache.put(key, _answer('{"y": 2}'), model="m", mode="json_schema", messages=[])
    assert cache.get(key).text == '{"y": 2}'
