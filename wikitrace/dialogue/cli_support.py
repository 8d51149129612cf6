"""What the ``wikitrace dialogue compile`` and ``wikitrace query`` commands run."""

from __future__ import annotations

import sys
from pathlib import Path


def compile_command(inputs, out: Path, samples, templates, offline: bool, model, base_url,
                    embeddings_url: str | None = None, quiet: bool = False, as_json: bool = False,
                    restore: bool = False) -> int:
    """Human text on stderr (a progress bar, then the summary); with ``as_json`` one
    JSON object on stdout. Input errors are raised as errors.InputError."""
    from ..errors import Failed, InputError
    from ..progress import Progress, console as make_console
    from .build import DialogueOptions, compile_dialogues
    from .embed import EmbeddingError, endpoint_embedder
    from .llm import from_options
    from .load import DialogueInputError
    from ..corpus.publish import PublishError

    con = make_console(quiet=quiet)
    llm = from_options(model, base_url, offline=offline, templates=templates)
    try:
        embedder = endpoint_embedder(embeddings_url, offline=offline)
        with Progress(con, quiet=quiet) as bar:
            res = compile_dialogues(DialogueOptions(
                inputs=list(inputs), out=out, samples=list(samples), templates=templates, llm=llm, embedder=embedder,
                progress=lambda ds: bar.track(ds, len(ds), "compiling dialogues"), restore=restore))
    except (DialogueInputError, ValueError, FileNotFoundError, EmbeddingError) as exc:
        raise InputError(str(exc)) from None
    except PublishError as exc:
        raise Failed(str(exc)) from None
    mode = f"llm ({llm.config.describe()})" if llm else "offline (deterministic; no LLM configured or --offline)"
    say = con.print
    say(f"compiled {len(res['samples'])} sample(s) into {res['out']} - extractor: {mode}")
    for line in res.get("skipped") or []:
        say(f"  skipped: {line}")
    for what in res.get("kept_added") or []:
        say(f"  kept: {what}, added with `wikitrace dialogue add` (not in the inputs)")
    for f in res.get("forgotten") or []:
        what = f"{f['sample']}" + (f" session {f['session']}" if f["session"] else " (whole sample)")
        say(f"  forgotten: {what} is in the input ({'same' if f['same_content'] else 'changed'} content); "
            + ("compiled again, tombstone dropped" if f["action"] == "restored" else "left out (--restore compiles it)"))
    if res.get("redactions"):
        say("  redacted: " + ", ".join(f"{n} {kind}" for kind, n in res["redactions"].items()))
    if res.get("repaired"):
        say(f"  repaired {len(res['repaired'])} file(s) found missing or edited: {', '.join(res['repaired'][:5])}")
    if embedder is not None:
        say(f"  embeddings: {embedder.config.describe()}, {embedder.cache.dim} dims; "
            f"{embedder.stats['embedded']} texts embedded, {embedder.stats['cache_hits']} from the cache")
    else:
        say("  embeddings: hashed-lexical (offline substitute; set WIKITRACE_EMBEDDINGS_URL for an endpoint)")
    for s in res["samples"]:
        st = s["stats"]
        drop = sum(st["extraction"]["dropped"].values())
        say(f"  {s['sample']}: {s['messages']} messages, {s['snapshots']} snapshots, {s['claims']} claims "
            f"({drop} dropped by validation), {s['trajectories']} trajectories "
            f"(REVISE {st['trajectories']['REVISE']}, DEPRECATE {st['trajectories']['DEPRECATE']}), "
            f"{s['pages']} wiki pages")
    if llm:
        say(f"  llm calls: {llm.stats}")
    if as_json:
        import json

        print(json.dumps({**res, "extractor": "llm" if llm else "offline",
                          "llm_calls": dict(llm.stats) if llm else None}, indent=2, default=str))
    return 0


def query_command(corpus: Path, sample, question: str, budget: int, as_json: bool, offline: bool,
                  model, base_url) -> int:
    from .query import QueryError, run_query

    llm = None
    if not offline:
        from .llm import from_options

        llm = from_options(model, base_url, offline=offline)
    if not offline and llm is None:
        print("note: no LLM configured; returning evidence only", file=sys.stderr)
    try:
        print(run_query(corpus, sample, question, budget=budget, as_json=as_json, llm=llm))
    except QueryError as exc:
        from ..errors import InputError

        raise InputError(str(exc)) from None
    return 0
