"""Read-only access to a compiled corpus for a long-running server (the MCP server).

Each method is one thin call of what the CLI and the shell tools already do, with their
limits and their error messages: ``memory`` is ``wikitrace prompt``, ``actions`` /
``turn`` / ``search`` are the shell tools ``actions`` / ``turn`` / ``grep`` (the very
same code, loaded from the bundled ``tools/`` folder), ``query`` is ``wikitrace query``
and ``cite`` is ``wikitrace cite parse``. Problems the caller can fix raise
``AccessError`` with one line that says what to do.

Nothing is cached across calls except what the library already keys on the files
themselves (corpus.json by mtime and size, the prompt index by its header), so a corpus
rebuilt in place is seen by the next call. Paths are checked on every call against the
corpus root as it is *now* (``realpath``), so neither ``..`` nor a symlink can lead out.
This module does not import the MCP SDK.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

READ_LIMIT = 100_000        # characters one read() returns; the rest is named, not dropped silently
LAYERS = ("raw", "compilation", "insight", "dialogue")
URI_SCHEME = "wikitrace://"


class AccessError(ValueError):
    """A request the caller can fix (unknown step, path outside the corpus, ...)."""


@dataclass
class Page:
    uri: str          # wikitrace://insight/insight-0003
    path: str         # insight/insight-0003.md (relative to the corpus root)
    name: str         # insight-0003
    layer: str
    title: str = ""   # the insight's or run's title, when corpus.json gives one


# --- the shell tools, loaded once from the bundled tools/ folder -------------------------

_TOOLS_LOCK = threading.Lock()   # the tools print to sys.stdout: one call at a time
_tool_modules: dict[str, ModuleType] = {}


def _tool_module(name: str) -> ModuleType:
    """A module of the bundled tools (``_corpus``, ``_turns``, ``_search_files``, ``_grep``), all
    loaded together: they import each other by bare name."""
    if name not in _tool_modules:
        from .templates import bundled_dir

        folder = bundled_dir("tools")
        for mod in ("_corpus", "_turns", "_search_files", "_grep"):
            if mod in _tool_modules:
                continue
            existing = sys.modules.get(mod)
            if existing is not None and Path(getattr(existing, "__file__", "")).parent == folder:
                _tool_modules[mod] = existing
                continue
            spec = importlib.util.spec_from_file_location(mod, folder / f"{mod}.py")
            module = importlib.util.module_from_spec(spec)
            sys.modules[mod] = module  # e.g. _grep does `from _search_files import ...`
            spec.loader.exec_module(module)
            _tool_modules[mod] = module
    return _tool_modules[name]


def _run_tool(tool: str, root: Path, opts: dict, positional: list[str]) -> tuple[int, str, str]:
    """Run one shell tool in-process: (exit code, stdout, stderr), as the shell would see them."""
    corpus = _tool_module("_corpus")
    module_name, function = corpus._COMMANDS[tool]
    command = getattr(_tool_module(module_name), function)
    out, err = io.StringIO(), io.StringIO()
    with _TOOLS_LOCK, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = command(dict(opts, **{"--corpus": str(root)}), positional)
        except corpus.ToolError as exc:
            raise AccessError(f"{tool}: {exc}") from None
    return code, out.getvalue(), err.getvalue()


# --- the corpus --------------------------------------------------------------------------

class CorpusAccess:
    def __init__(self, root: str | Path, *, tools_path: str = "/work/tools", mount_path: str | None = None):
        self.root = Path(root).expanduser().absolute()
        self.tools_path = tools_path
        self.mount_path = mount_path

    # --- paths --------------------------------------------------------------------------

    def _real_root(self) -> Path:
        real = Path(os.path.realpath(self.root))
        if not real.is_dir():
            raise AccessError(f"no corpus at {self.root} — build one with `wikitrace compile --out {self.root}`")
        return real

    def resolve(self, path: str) -> Path:
        """``path`` (relative to the corpus, or absolute under it) as a real path inside the
        corpus; AccessError for anything that leads out, symlinks included."""
        root = self._real_root()
        text = (path or "").strip()
        if text.startswith(URI_SCHEME):
            text = text[len(URI_SCHEME):]
        if "\0" in text:
            raise AccessError("read: a path cannot contain a NUL character")
        given = Path(text)
        if given.is_absolute():
            for base in (self.root, root, Path(self._mount())):
                if given.is_relative_to(base):
                    given = given.relative_to(base)
                    break
            else:
                raise AccessError(f"read: {path!r} is outside the corpus; give a path inside it such as "
                                  "insight/_index.md")
        real = Path(os.path.realpath(root / given))
        if real != root and not real.is_relative_to(root):
            raise AccessError(f"read: {path!r} leads outside the corpus (through '..' or a symlink); "
                              "only files inside the corpus can be read")
        return real

    def _mount(self) -> str:
        """Where agents see the corpus (corpus.json's mount_path): paths under it are accepted."""
        if self.mount_path:
            return self.mount_path
        from .agent.corpusdata import CorpusError, load_corpus

        try:
            return load_corpus(self.root).mount_path
        except (CorpusError, OSError):
            return "/work/corpus"

    def has_dialogue(self) -> bool:
        return (self.root / "dialogue").is_dir()

    # --- tools --------------------------------------------------------------------------

    def memory(self, task: str, budget: int | None = None) -> str:
        """The memory additions ``wikitrace prompt`` renders for ``task`` (system + task message)."""
        from .agent.corpusdata import CorpusError
        from .agent.prompt import build_prompt

        if not (task or "").strip():
            raise AccessError("memory: give the task text, as the agent received it")
        from .agent.prompt import DEFAULT_BUDGET

        budget = DEFAULT_BUDGET if budget is None else budget  # as `wikitrace prompt`: an agent's context is finite
        if budget < 0:
            raise AccessError("memory: budget must be a number of tokens >= 0")
        self._real_root()
        try:
            parts = build_prompt(self.root, task, budget=budget or None, mount_path=self.mount_path,
                                 tools_path=self.tools_path)
        except (CorpusError, ValueError) as exc:
            raise AccessError(f"memory: {exc}") from None
        # The task message's memory part; the rules for using it are the tool's description.
        text = "\n\n".join(b.rstrip("\n") for b in (parts.memory_block, parts.similar_block) if b) + "\n"
        if parts.left_out:
            text += (f"\n[{len(parts.insight_ids)} insights inlined, {parts.left_out} left out by the budget of "
                     f"{budget} tokens (~{parts.tokens} used); call memory again with a larger budget (0: every "
                     f"insight), or search(pattern, layers=['insight']) for the rest]\n")
        return text

    def actions(self, step: str) -> str:
        _, out, err = _run_tool("actions", self._real_root(), {}, [str(step)])
        return out or err

    def turn(self, step: str, start: int, end: int | None = None) -> str:
        args = [str(step), str(start)] + ([] if end is None else [str(end)])
        _, out, _ = _run_tool("turn", self._real_root(), {}, args)
        return out

    def search(self, pattern: str, layers: list[str] | None = None, max_lines: int = 50, skip: int = 0) -> str:
        opts: dict = {"--layer": list(layers)} if layers else {}
        opts["--max"], opts["--skip"] = str(max_lines), str(skip)
        code, out, err = _run_tool("grep", self._real_root(), dict(opts, **{"-e": pattern}), [])
        if code == 1:
            return (err.strip() or f"no match for {pattern!r}") + "\n"
        out = re.sub(r"--skip (\d+); or narrow the search \(--layer, -l,", r"skip=\1; or narrow the search (layers,",
                     out)  # the tool's page line, in this tool's argument names
        return out + "".join(f"[{line}]\n" for line in err.splitlines())

    def read(self, path: str) -> str:
        real = self.resolve(path)
        if real.is_dir():
            entries = sorted(p.name + ("/" if p.is_dir() else "") for p in real.iterdir()
                             if not p.name.startswith("."))
            return "".join(e + "\n" for e in entries) or "(empty folder)\n"
        if not real.is_file():
            raise AccessError(f"read: no file {path!r} in the corpus; the layers' _index.md files list "
                              "what exists")
        with open(real, encoding="utf-8", errors="replace") as handle:
            text = handle.read(READ_LIMIT + 1)
        if len(text) > READ_LIMIT:
            size = real.stat().st_size
            text = text[:READ_LIMIT] + (f"\n[clipped at {READ_LIMIT} characters of about {size} bytes; "
                                        "for a run log use actions(step) and turn(step, start, end)]\n")
        return text

    def query(self, question: str, sample: str | None = None, budget: int = 2000) -> str:
        from .dialogue.query import QueryError, run_query

        if not self.has_dialogue():
            raise AccessError(f"query: {self.root} holds no dialogue memory — compile one with "
                              f"`wikitrace dialogue compile --out {self.root}`")
        if budget < 50:
            raise AccessError("query: budget must be at least 50 tokens")
        try:
            return run_query(self.root, sample or None, question, budget=budget)
        except (QueryError, FileNotFoundError) as exc:
            raise AccessError(f"query: {exc}") from None

    def cite(self, answer: str) -> dict:
        from .agent.cite import CitationError, parse_and_check
        from .agent.corpusdata import CorpusError

        try:
            return parse_and_check(answer, self.root).to_dict()
        except CitationError as exc:
            raise AccessError(f"cite: {exc} — end the answer with a JSON object such as "
                              '{"R": ["step-0001"], "C": [], "I": ["insight-0003"]}') from None
        except CorpusError as exc:
            raise AccessError(f"cite: {exc}") from None

    # --- pages as resources -------------------------------------------------------------

    def pages(self) -> list[Page]:
        """Every page of the corpus: each layer's _index, then per run its compilation and raw
        metadata and every insight (as corpus.json lists them, so a 10,000-run corpus is listed
        without touching 30,000 files), then the dialogue layer's pages. A listed page that is
        missing on disk is reported when it is read. Symlinks are skipped, never followed."""
        from .agent.corpusdata import CorpusError, load_corpus

        root = self._real_root()
        found: list[Page] = []

        def add(path: str, layer: str, title: str = "") -> None:
            found.append(Page(URI_SCHEME + path[:-3], path, path[:-3].rsplit("/", 1)[-1], layer, title))

        try:
            data = load_corpus(self.root)
        except CorpusError:
            data = None
        for layer in ("raw", "compilation", "insight"):
            if (root / layer / "_index.md").is_file():
                add(f"{layer}/_index.md", layer, f"{layer} index")
        if data is not None:
            listed = data.cache.get("corpus-pages")  # kept while corpus.json is unchanged
            if listed is None:
                before = len(found)
                for run in data.runs:
                    add(f"compilation/{run.step}.md", "compilation", run.title)
                for run in data.runs:
                    add(f"raw/{run.step}/metadata.md", "raw", run.title)
                for ins in data.insights:
                    add(f"insight/{ins.id}.md", "insight", ins.title)
                listed = data.cache["corpus-pages"] = found[before:]
            else:
                found.extend(listed)
        else:  # no corpus.json (a dialogue-only corpus, or one being written): look at the files
            for layer in ("raw", "compilation", "insight"):
                self._walk(root / layer, layer, add)
        self._walk(root / "dialogue", "dialogue", add)
        return found

    @staticmethod
    def _walk(folder: Path, layer: str, add) -> None:
        """Add the .md pages under ``folder`` in path order, without following symlinks."""
        if not folder.is_dir() or folder.is_symlink():
            return
        base = len(str(folder)) - len(layer)

        def walk(path: str) -> None:
            try:
                entries = sorted(os.scandir(path), key=lambda e: e.name)
            except OSError:
                return
            for entry in entries:  # DirEntry answers from the listing: no stat per file
                if entry.name.startswith(".") or entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    walk(entry.path)
                elif entry.name.endswith(".md") and (entry.name != "_index.md" or layer == "dialogue"):
                    add(entry.path[base:].replace(os.sep, "/"), layer)

        walk(str(folder))

    def read_page(self, uri: str) -> str:
        """The page behind ``wikitrace://LAYER/NAME`` (NAME.md, or the file itself)."""
        text = str(uri)
        if not text.startswith(URI_SCHEME):
            raise AccessError(f"{uri}: not a wikitrace:// page")
        rel = text[len(URI_SCHEME):].strip("/")
        candidate = self.resolve(rel + ".md") if not rel.endswith(".md") else self.resolve(rel)
        if not candidate.is_file():
            candidate = self.resolve(rel)
        if not candidate.is_file():
            raise AccessError(f"{uri}: no such page in the corpus")
        return self.read(str(candidate))
