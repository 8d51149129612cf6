"""Evidence recall on LoCoMo at fixed context budgets, offline, no LLM.

For each question of categories 1-4 (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop):
the share of its gold evidence ids (``D8:4``) whose source message is inside the retrieved
context, at budgets of 500/1000/2000/4000 whitespace tokens. Three retrievers, side by side:

- ``hier``: TrajWiki hierarchical retrieval (wiki -> trajectories -> snapshots -> sources);
- ``bm25-msg``: flat BM25 over single messages;
- ``bm25-session``: BM25 over whole sessions, messages of the best sessions in order.

Budget accounting is the whole context handed to a model: every method's context is rendered by
the same packer (``wikitrace.dialogue.packet``: one header per session with its date, then
``[id] speaker: text`` lines), and every token of it counts - for ``hier`` also the resolved dates
and claim-revision notes it adds. A question's recall counts only messages inside that bounded
context; the run asserts that no context exceeds its budget. Retrieval sees the question text
only; gold evidence and answers are used for scoring alone.

    python benchmarks/locomo_retrieval.py --data ../shared/data/locomo-dev [--json OUT]
        [--embeddings-url http://127.0.0.1:8001/v1 [--embed-cache DIR]] [--no-wiki]

With ``--embeddings-url`` (or ``WIKITRACE_EMBEDDINGS_URL``) the dense scores come from that
``/v1/embeddings`` endpoint; ``--embed-cache`` keeps the vectors between runs (content-hash keyed).
``--no-wiki`` adds the routing ablations: ``hier-hardroute`` (only trajectories of the routed pages,
plus the BM25 rescue, are candidates) and ``hier-nowiki`` (no page routing at all).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wikitrace.dialogue.bm25 import BM25  # noqa: E402
from wikitrace.dialogue.embed import CACHE_BIN, endpoint_embedder  # noqa: E402
from wikitrace.dialogue.build import compile_sample, render_sample  # noqa: E402
from wikitrace.dialogue.load import load_inputs  # noqa: E402
from wikitrace.dialogue.packet import count_tokens, pack_context  # noqa: E402
from wikitrace.dialogue.retrieve import prepare_files, retrieve  # noqa: E402
from wikitrace.dialogue.text import tokens  # noqa: E402

BUDGETS = (500, 1000, 2000, 4000)
CATEGORIES = (1, 2, 3, 4)
METHODS = ("hier", "bm25-msg", "bm25-session")
CAT_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def fill(order: list[int], msgs: list[list], budget: int) -> set[int]:
    ctx = pack_context(order, msgs, budget)
    assert count_tokens(ctx.text) <= budget
    return set(ctx.messages)


def run(data: Path, embeddings_url: str | None = None, embed_cache: Path | None = None,
        no_wiki: bool = False) -> dict:
    dialogues = load_inputs([data])
    methods = METHODS + (("hier-hardroute", "hier-nowiki") if no_wiki else ())
    scores: dict[str, dict] = {m: {} for m in methods}
    emb = endpoint_embedder(embeddings_url)
    stats_pages, stats_traj, single = [], [], []
    embedder_used = None
    counts = {c: 0 for c in CATEGORIES}
    timing = {"compile_s": 0.0, "hier_query_ms": []}
    for d in dialogues:
        t0 = time.perf_counter()
        cache_dir = embed_cache / d.sample_id if (emb is not None and embed_cache) else None
        if cache_dir is not None:
            emb.cache.load(cache_dir)
        mem = compile_sample(d, embedder=emb)
        files = render_sample(mem, embedder=emb)
        if cache_dir is not None:
            cache_dir.mkdir(parents=True, exist_ok=True)
            for name in ("embeddings.json", CACHE_BIN):
                (cache_dir / name).write_bytes(files[name] if isinstance(files[name], bytes)
                                               else files[name].encode("utf-8"))
        li = prepare_files(files)
        li.query_embedder = emb
        timing["compile_s"] += time.perf_counter() - t0
        stats_pages.append(len(mem["pages"]))
        stats_traj.append(len(mem["trajectories"]))
        single.append(sum(1 for t in mem["trajectories"] if len(t["snapshots"]) == 1) / len(mem["trajectories"]))
        msgs = li.raw["messages"]
        pos = {m[0]: i for i, m in enumerate(msgs)}
        flat = BM25([tokens(f"{m[1]} {m[4]}") for m in msgs])
        sessions = list(dict.fromkeys(m[3] for m in msgs))
        sess_msgs = {s: [i for i, m in enumerate(msgs) if m[3] == s] for s in sessions}
        sbm = BM25([[t for i in sess_msgs[s] for t in tokens(f"{msgs[i][1]} {msgs[i][4]}")] for s in sessions])
        for qa in d.qa:
            cat = qa.get("category")
            if cat not in CATEGORIES:
                continue
            gold = [pos[e] for e in qa.get("evidence", []) if e in pos]
            if not gold:
                continue
            counts[cat] += 1
            question = str(qa["question"])
            qt = tokens(question)
            orders = {
                "bm25-msg": [i for i, _ in flat.ranked(qt)],
                "bm25-session": [i for s, _ in sbm.ranked(qt) for i in sess_msgs[sessions[s]]],
            }
            for b in BUDGETS:
                for name in methods:
                    if name == "hier":
                        t1 = time.perf_counter()
                        pk = retrieve(li, question, budget=b)
                        timing["hier_query_ms"].append((time.perf_counter() - t1) * 1000)
                        got = {pos[i] for i in pk.refs()}
                        embedder_used = pk.diagnostics["embedder"]
                    elif name == "hier-hardroute":
                        pk = retrieve(li, question, budget=b, routing="hard")
                        got = {pos[i] for i in pk.refs()}
                    elif name == "hier-nowiki":
                        pk = retrieve(li, question, budget=b, use_wiki=False)
                        got = {pos[i] for i in pk.refs()}
                    else:
                        got = fill(orders[name], msgs, b)
                    if name.startswith("hier"):
                        assert count_tokens(pk.context) <= b, (question, b)
                    r = sum(1 for g in gold if g in got) / len(gold)
                    scores[name].setdefault((b, cat), []).append(r)
    result = {"data": str(data), "samples": [d.sample_id for d in dialogues],
              "dense_backend": embedder_used,
              "memory": {"pages": stats_pages, "trajectories": stats_traj,
                         "single_snapshot_share": [round(x, 3) for x in single]},
              "questions": {CAT_NAMES[c]: n for c, n in counts.items()}, "budgets": list(BUDGETS), "methods": {}}
    for name in methods:
        per = {}
        for b in BUDGETS:
            row = {}
            allv = []
            for c in CATEGORIES:
                v = scores[name].get((b, c), [])
                allv += v
                row[f"cat{c}"] = round(sum(v) / len(v), 4) if v else None
            row["overall"] = round(sum(allv) / len(allv), 4) if allv else None
            per[str(b)] = row
        result["methods"][name] = per
    q = sorted(timing["hier_query_ms"])
    result["timing"] = {"compile_s": round(timing["compile_s"], 2),
                        "hier_query_p50_ms": round(q[len(q) // 2], 2) if q else None}
    return result


def print_table(res: dict) -> None:
    cols = ["cat1", "cat2", "cat3", "cat4", "overall"]
    print(f"dense backend: {res['dense_backend']}")
    print(f"memory: {res['memory']}")
    print(f"questions: {res['questions']}")
    print(f"{'budget':>6} {'method':<13}" + "".join(f"{c:>9}" for c in cols))
    for b in res["budgets"]:
        for name in res["methods"]:
            row = res["methods"][name][str(b)]
            print(f"{b:>6} {name:<13}" + "".join(f"{row[c]:>9.3f}" if row[c] is not None else f"{'-':>9}"
                                                  for c in cols))
    print(f"timing: {res['timing']}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="LoCoMo folder or file (flat or locomo10.json)")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--embeddings-url", help="OpenAI-compatible /v1 endpoint for dense scores")
    ap.add_argument("--embed-cache", type=Path, help="folder keeping endpoint vectors between runs")
    ap.add_argument("--no-wiki", action="store_true", help="also run the routing ablations (hard routing, no wiki)")
    args = ap.parse_args(argv)
    res = run(args.data, args.embeddings_url, args.embed_cache, args.no_wiki)
    print_table(res)
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
