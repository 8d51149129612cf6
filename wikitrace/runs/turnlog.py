"""Read and write the ``solver.full.jsonl`` turn log.

Writing is canonical (stable key order, UTF-8, one record a line) so the same run
always gives the same bytes. Reading names the file and line of anything wrong.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from .model import RunError, Turn, reused_encoder


# json.dumps with these options, made once (dumps builds a new encoder on every call), and its
# C encoder made once too (``JSONEncoder.encode`` makes one for every turn)
_LOG_JSON = reused_encoder(json.JSONEncoder(ensure_ascii=False, separators=(",", ":")))


def dumps_turns(turns: Iterable[Turn]) -> str:
    encode = _LOG_JSON
    return "".join([encode(t.to_record()) + "\n" for t in turns])


def parse_turns(text: str, where: str) -> list[Turn]:
    turns: list[Turn] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RunError(f"{where}:{lineno}: not valid JSON ({exc.msg}); each line must be one JSON object") from None
        except (ValueError, RecursionError) as exc:  # 4,300+ digit numbers, absurd nesting
            raise RunError(f"{where}:{lineno}: JSON the reader refuses ({type(exc).__name__}: {str(exc)[:80]})") from None
        turns.append(Turn.from_record(rec, where=f"{where}:{lineno}"))
    check_numbering(turns, where)
    return turns


def read_turns(path: Path) -> list[Turn]:
    from ._common import read_text  # bytes that are not UTF-8 are repaired later, per run

    return parse_turns(read_text(path), str(path))


def check_numbering(turns: list[Turn], where: str) -> None:
    """Turn numbers must strictly increase: tools and refs address turns by number."""
    last = -1
    for t in turns:
        if t.turn <= last:
            raise RunError(
                f"{where}: turn {t.turn} comes after turn {last}; turn numbers must strictly increase"
            )
        last = t.turn
