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
    from ..corpus.publish import PublishError

    con = make_console(quiet=quiet)
    llm = from_options(model, base_url, offline=offline, templates=templates)
    try:
        embedder = endpoint_embedder(embeddings_url, offline=offline)
        with Progress(con, quiet=quiet) as bar:
            res = compile_dialogues(DialogueOptions(
                inputs=list(inputs), out=out, samples=list(samples), templates=templates, llm=llm, embedder=embedder,
                progress=lambda ds: bar.track(ds, len(ds), "compiling dialogues"), restore=restore))
    except (FileNotFoundError, EmbeddingError) as exc:  # the dialogue's own errors are InputErrors already
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
    from .query import run_query

    llm = None
    if not offline:
        from .llm import from_options

        llm = from_options(model, base_url, offline=offline)
    if not offline and llm is None:
        print("note: no LLM configured; returning evidence only", file=sys.stderr)
    print(run_query(corpus, sample, question, budget=budget, as_json=as_json, llm=llm))
    return 0


def query_parser():
    """``wikitrace query``'s options as an argparse parser: the same names, defaults and
    limits as the typer command in cli.py (tests/test_cli_usage.py checks they agree)."""
    import os

    from ..fast_args import AtLeast, FastParser

    ap = FastParser("wikitrace query")
    ap.add_argument("question")
    ap.add_argument("--corpus", "-c", type=Path, default=os.environ.get("WIKITRACE_CORPUS") or None)
    ap.add_argument("--sample", "-s")
    ap.add_argument("--budget", type=AtLeast(50), default=2000)
    ap.add_argument("--json", action="store_true", dest="as_json")
    ap.add_argument("--offline", action="store_true", dest="offline", default=True)
    ap.add_argument("--llm", action="store_false", dest="offline")
    ap.add_argument("--model")
    ap.add_argument("--base-url")
    return ap


def query_main(argv: list[str]) -> int | None:
    """Run ``wikitrace query ARGV`` with argparse only (no typer, no rich, no jinja2 for
    ``--json``), or return None when typer should take ARGV: help, a usage error, no
    corpus. A one-shot query then spends its time retrieving rather than importing."""
    from ..fast_args import parse_or_none

    ns = parse_or_none(query_parser(), argv)
    if ns is None or ns.corpus is None:
        return None
    import gc

    # A one-shot process: the collector would walk the ~100,000 objects of the loaded index
    # several times while it loads, and once more at exit, and find no garbage cycle to free.
    gc.disable()
    rc = query_command(ns.corpus, ns.sample, ns.question, ns.budget, ns.as_json, ns.offline, ns.model, ns.base_url)
    gc.freeze()
    return rc
