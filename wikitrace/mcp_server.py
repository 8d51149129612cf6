"""``wikitrace mcp``: the corpus as a Model Context Protocol server.

Agents that speak MCP (Claude Code, Claude Desktop, Cursor, the OpenAI Agents SDK, ...)
get the same memory a mounted corpus gives: the memory block, the run tools, search,
reads of single pages, dialogue queries and a citation check. Every tool is a thin call
of ``corpus_access.CorpusAccess`` (which calls what the CLI and shell tools call), and
every page is also a resource ``wikitrace://LAYER/NAME``.

The server is read-only by construction: no tool or resource writes anything, and each
call reads the corpus afresh (the library's own caches are keyed on file mtimes), so a
corpus rebuilt with ``wikitrace compile`` is seen by the next call without a restart.
The SDK (PyPI ``mcp``) is an optional extra: ``pip install '.[mcp]'`` in a clone, or ``pip install mcp``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from .corpus_access import URI_SCHEME, AccessError, CorpusAccess

SERVER_NAME = "wikitrace"
RESOURCE_PAGE = 1000  # resources per resources/list answer
INSTALL_HINT = "pip install 'mcp>=2.3,<3' (the mcp extra; from a wikitrace clone: pip install '.[mcp]')"

_DESCRIPTIONS = {
    "actions": "One line per turn of past run STEP (step-0017, 0017 or 17), numbered as in its log: "
               "tool calls as `name(args) -> ok|ERROR: result`, messages as `[role] text`. "
               "Use it to see a run's procedure before reading turns in full.",
    "turn": "Turns START..END (inclusive; END defaults to START) of past run STEP in full: the agent's "
            "reasoning, the action and its arguments, the observation and whether it failed.",
    "search": "Regular-expression search over the corpus layers (raw, compilation, insight, dialogue; "
              "default all). Prints `path:line: text`, at most 50 lines; the last line says how many more "
              "there are and the `skip` that shows the next 50. Use it to find runs that "
              "mention the objects, commands or errors of your task.",
    "read": "Read one file of the corpus by its path inside the corpus (e.g. compilation/step-0003.md, "
            "raw/step-0003/metadata.md, insight/_index.md); a folder lists its entries. "
            "Only paths inside the corpus can be read.",
    "query": "Dialogue memory: the evidence for QUESTION from compiled conversation SAMPLE (wiki pages, "
             "then memory trajectories, then source turns), within BUDGET tokens. "
             "Give SAMPLE as '' when the corpus holds one sample.",
    "cite": "Check the citation at the end of an answer: a JSON object {\"R\": [step ids of raw runs read], "
            "\"C\": [step ids of compilations read], \"I\": [insight ids used]}. Returns the ids found, "
            "and under `unknown` any id the corpus does not hold.",
}


def mcp_available() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("mcp.server.mcpserver") is not None
    except ImportError:  # a broken or blocked install counts as missing
        return False


def memory_description(templates: str | Path | None = None) -> str:
    from .templates import render

    return render("agent/mcp_memory_tool.md.j2", templates).strip()


def build_server(corpus: str | Path, *, templates: str | Path | None = None, log_level: str = "WARNING"):
    """An ``MCPServer`` over ``corpus`` (not started)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
    from mcp.server.lowlevel.helper_types import ReadResourceContents
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_PARAMS, ListResourcesResult, Resource, ResourceTemplate, ToolAnnotations

    from .agent.prompt import DEFAULT_BUDGET

    access = CorpusAccess(corpus)
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                open_world_hint=False)

    class CorpusServer(MCPServer):
        async def list_tools(self):
            tools = await super().list_tools()
            # Dialogue memory may appear (or go) with a rebuild: advertise query only when present.
            return [t for t in tools if t.name != "query" or access.has_dialogue()]

        async def list_resources(self, start: int = 0, count: int | None = None) -> list[Resource]:
            try:
                pages = access.pages()
            except AccessError:
                return []
            chosen = pages[start:] if count is None else pages[start:start + count]
            return [Resource(uri=p.uri, name=p.name, title=p.title or p.path, mime_type="text/markdown",
                             description=f"{p.layer} page {p.path}") for p in chosen]

        async def _handle_list_resources(self, ctx: Any, params: Any) -> ListResourcesResult:
            # A 10,000-run corpus has 30,000+ pages: hand them out RESOURCE_PAGE at a time
            # (the protocol's cursor), so no client waits for one huge answer.
            cursor = getattr(params, "cursor", None) if params is not None else None
            try:
                start = int(cursor) if cursor else 0
            except ValueError:
                start = -1
            if start < 0:
                raise MCPError(code=INVALID_PARAMS, message=f"bad cursor {cursor!r}; start without one")
            listed = await self.list_resources(start, RESOURCE_PAGE + 1)
            more = len(listed) > RESOURCE_PAGE
            return ListResourcesResult(resources=listed[:RESOURCE_PAGE],
                                       next_cursor=str(start + RESOURCE_PAGE) if more else None)

        async def list_resource_templates(self) -> list[ResourceTemplate]:
            return [ResourceTemplate(uri_template=URI_SCHEME + "{layer}/{name}", name="page",
                                     description="A corpus page: insight/insight-0003, compilation/step-0003, "
                                                 "raw/step-0003/metadata, insight/_index ...",
                                     mime_type="text/markdown")]

        async def read_resource(self, uri: Any, context: Any = None) -> Iterable[ReadResourceContents]:
            try:
                text = access.read_page(str(uri))
            except AccessError as exc:
                if "no such page" in str(exc) or "no file" in str(exc):
                    raise ResourceNotFoundError(str(exc)) from None
                raise ResourceError(str(exc)) from None
            return [ReadResourceContents(content=text, mime_type="text/markdown")]

    server = CorpusServer(
        name=SERVER_NAME,
        instructions=("Read-only memory of earlier agent runs. Call `memory` with your task first; "
                      "follow an insight down to its compilation and raw run with `read`, `actions` "
                      "and `turn` when the memory tool's rules say so."),
        log_level=log_level,
    )

    def call(fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except AccessError as exc:
            raise ToolError(str(exc)) from None

    budget_note = (f"\n\n`budget` is in tokens (about 4 characters each): {DEFAULT_BUDGET} by default, as "
                   f"`wikitrace prompt` gives; the answer says how many insights it left out. Ask again with a "
                   f"larger budget for more, or 0 for every insight.")

    @server.tool(description=memory_description(templates) + budget_note, annotations=read_only)
    def memory(task: str, budget: int = DEFAULT_BUDGET) -> str:
        return call(access.memory, task, budget)

    @server.tool(description=_DESCRIPTIONS["actions"], annotations=read_only)
    def actions(step: str) -> str:
        return call(access.actions, step)

    @server.tool(description=_DESCRIPTIONS["turn"], annotations=read_only)
    def turn(step: str, start: int, end: int | None = None) -> str:
        return call(access.turn, step, start, end)

    @server.tool(description=_DESCRIPTIONS["search"], annotations=read_only)
    def search(pattern: str, layers: list[str] | None = None, skip: int = 0) -> str:
        return call(access.search, pattern, layers, skip=skip)

    @server.tool(description=_DESCRIPTIONS["read"], annotations=read_only)
    def read(path: str) -> str:
        return call(access.read, path)

    @server.tool(description=_DESCRIPTIONS["query"], annotations=read_only)
    def query(sample: str, question: str, budget: int = 2000) -> str:
        return call(access.query, question, sample or None, budget)

    @server.tool(description=_DESCRIPTIONS["cite"], annotations=read_only, structured_output=False)
    def cite(answer: str) -> str:
        import json

        return json.dumps(call(access.cite, answer), indent=1)

    return server


def serve(corpus: Path, http_port: int | None = None) -> int:
    """Run the server until the client goes away (stdio) or it is interrupted (HTTP)."""
    import anyio

    server = build_server(corpus)
    if http_port is None:
        anyio.run(server.run_stdio_async)
    else:
        anyio.run(lambda: server.run_streamable_http_async(host="127.0.0.1", port=http_port))
    return 0


def mcp_command(corpus: Path, http_port: int | None) -> int:
    """CLI body: one clear line for a missing SDK or corpus, never a traceback."""
    import sys

    def fail(what: str) -> int:
        sys.stderr.write(f"wikitrace: error: mcp: {what}\n")
        return 2

    if not mcp_available():
        return fail(f"the MCP SDK is not installed — {INSTALL_HINT}")
    root = Path(corpus).expanduser()
    if not root.is_dir():
        return fail(f"no corpus at {root} — build one with `wikitrace compile INPUT --out {root}` "
                    f"or `wikitrace dialogue compile INPUT --out {root}`")
    if not ((root / "corpus.json").is_file() or (root / "dialogue").is_dir()):
        return fail(f"{root} holds neither corpus.json nor dialogue/ — give the folder "
                    "`wikitrace compile --out` wrote")
    if http_port is not None:
        if not 0 < http_port < 65536:
            return fail(f"--http {http_port} is not a port number — use 1..65535")
        import socket

        with socket.socket() as probe:  # say so in one line, before the web server logs its own
            try:
                probe.bind(("127.0.0.1", http_port))
            except OSError as exc:
                return fail(f"127.0.0.1:{http_port}: {exc.strerror or exc} — choose another --http port")
        sys.stderr.write(f"wikitrace mcp: serving {root} read-only at http://127.0.0.1:{http_port}/mcp\n")
    try:
        return serve(root, http_port)
    except KeyboardInterrupt:
        return 0
    except OSError as exc:  # e.g. the port is taken
        return fail(f"{exc.strerror or exc} — choose another --http port")
