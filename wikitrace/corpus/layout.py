"""Where each document lives in a corpus, and how one document links to another.

Every link is written twice: a relative markdown link (opens in VS Code or
Obsidian from the checkout) and the absolute path the agent sees under the
mount point. Both are derived here so they cannot drift apart.
"""

from __future__ import annotations

import posixpath

from .. import lazy_re

CORPUS_FORMAT = "wikitrace-corpus/1"
LAYERS = ("raw", "compilation", "insight")
ROOT_INDEX = "index.md"  # the page an editor opens first: links the three layers


# Every path a build of agent runs writes; anything else in the folder is the user's.
_CORPUS_PATH = lazy_re.compile(r"corpus\.json|index\.md|index/prompt\.bin|(?:raw|compilation|insight)/_index\.md"
                               r"|index/grep/(?:raw|compilation|insight)\.(?:txt|map)"  # one file per layer, before shards
                               r"|index/grep/(?:raw|compilation|insight)/(?:head|\d\d)\.(?:txt|map|words)"
                               r"|raw/step-\d{4,}/(?:metadata\.md|turns\.md|solver\.full\.jsonl|original\.(?:json|jsonl|txt))"
                               r"|compilation/step-\d{4,}\.md|insight/insight-\d{4,}\.md")


def is_corpus_path(rel: str) -> bool:
    return _CORPUS_PATH.fullmatch(rel) is not None


def step_id(n: int) -> str:
    return f"step-{n:04d}"


def insight_id(n: int) -> str:
    return f"insight-{n:04d}"


def id_number(ident: str) -> int:
    return int(ident.rsplit("-", 1)[1])


def raw_dir(step: str) -> str:
    return f"raw/{step}/"


def raw_metadata(step: str) -> str:
    return f"raw/{step}/metadata.md"


def raw_log(step: str) -> str:
    return f"raw/{step}/solver.full.jsonl"


def raw_turns(step: str) -> str:
    return f"raw/{step}/turns.md"


def compilation_doc(step: str) -> str:
    return f"compilation/{step}.md"


def insight_doc(ins: str) -> str:
    return f"insight/{ins}.md"


class Linker:
    """Links from one document (``here``, a corpus-relative path) to others."""

    def __init__(self, here: str, mount_path: str):
        self.here_dir = posixpath.dirname(here)
        self.mount = mount_path.rstrip("/") or "/"

    def rel(self, target: str) -> str:
        # Both paths are corpus-relative, so no filesystem lookup is needed
        # (posixpath.relpath calls getcwd twice per link: a build makes many links).
        trailing = "/" if target.endswith("/") else ""
        here = self.here_dir.split("/") if self.here_dir else []
        there = target.rstrip("/").split("/")
        common = 0
        while common < min(len(here), len(there)) and here[common] == there[common]:
            common += 1
        parts = [".."] * (len(here) - common) + there[common:]
        return ("/".join(parts) or ".") + trailing

    def abs(self, target: str) -> str:
        return posixpath.join(self.mount, target)
