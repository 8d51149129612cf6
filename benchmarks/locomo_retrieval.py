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
        [--embeddings-url http://127.0.0.1:8001/v1 [--embed-cache DIR]] [--no-wiki] [--folds] [--record]

With ``--embeddings-url`` (or ``WIKITRACE_EMBEDDINGS_URL``) the dense scores come from that
``/v1/embeddings`` endpoint; ``--embed-cache`` keeps the vectors between runs (content-hash keyed).
``--no-wiki`` adds the routing ablations (``hier`` ships with routing to the participant a question
names, ``routing="speaker"``): ``hier-off`` (no routing), ``hier-route`` (the page
holding several direct hits lifts its other trajectories, ``routing="expand"``), ``hier-entity``
(the entity pages of whom/what the question names lift their trajectories, ``routing="entity"``)
and ``hier-hardroute``
(only trajectories of the routed pages, plus the BM25 rescue, are candidates), and prints, per
conversation, why routing can or cannot help: where the gold evidence of multi-hop questions lies
in trajectories and pages, where the evidence missed without routing ranks, and how many packets
routing changes (``routing_diagnosis``).

``--record`` writes the table into docs/dialogue.md: pooled (no ``--sample``), per conversation at
1,000 tokens (``--sample``), or per held-out fold (``--folds``), each into its own region.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wikitrace.dialogue.bm25 import BM25  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import add_record_flag, markdown_table, record  # noqa: E402
from wikitrace.dialogue.embed import CACHE_BIN, endpoint_embedder  # noqa: E402
from wikitrace.dialogue.build import compile_sample, render_sample  # noqa: E402
from wikitrace.dialogue.load import load_inputs  # noqa: E402
from wikitrace.dialogue.packet import count_tokens, pack_context  # noqa: E402
from wikitrace.dialogue.loaded_index import prepare_files  # noqa: E402
from wikitrace.dialogue.retrieve import retrieve  # noqa: E402
from wikitrace.dialogue.text import tokens  # noqa: E402

BUDGETS = (500, 1000, 2000, 4000)
CATEGORIES = (1, 2, 3, 4)
METHODS = ("hier", "bm25-msg", "bm25-session")
CAT_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def fill(order: list[int], msgs: list[list], budget: int) -> set[int]:
    ctx = pack_context(order, msgs, budget)
    assert count_tokens(ctx.text) <= budget
    return set(ctx.messages)


ABLATIONS = ("hier-off", "hier-route", "hier-entity", "hier-hardroute")
# Compiled samples by (sample, the compile-time settings GRID may change): a routing setting of the
# fold grid reuses the memory its continuity setting built instead of compiling it again.
_COMPILED: dict[tuple, tuple] = {}


def _compile_key(sample: str) -> tuple:
    import importlib

    knobs = sorted({k for o in GRID.values() for k in o if not k.startswith(("retrieve.", "ranking."))})
    return (sample, *(getattr(importlib.import_module(f"wikitrace.dialogue.{k.rsplit('.', 1)[0]}"),
                              k.rsplit(".", 1)[1]) for k in knobs))


def run(data: Path, embeddings_url: str | None = None, embed_cache: Path | None = None,
        no_wiki: bool = False, only: list[str] | None = None, ablations: tuple = ()) -> dict:
    """Recall of every method on the conversations of ``data`` (``only``: these samples).
    ``no_wiki`` adds every routing ablation and the routing diagnosis; ``ablations`` names some."""
    dialogues = [d for d in load_inputs([data]) if only is None or d.sample_id in only]
    methods = METHODS + (ABLATIONS if no_wiki else tuple(a for a in ABLATIONS if a in ablations))
    scores: dict[str, dict] = {m: {} for m in methods}
    emb = endpoint_embedder(embeddings_url)
    stats_pages, stats_traj, single, shape, diagnoses = [], [], [], [], []
    embedder_used = None
    counts = {c: 0 for c in CATEGORIES}
    timing = {"compile_s": 0.0, "hier_query_ms": []}
    for d in dialogues:
        t0 = time.perf_counter()
        cache_dir = embed_cache / d.sample_id if (emb is not None and embed_cache) else None
        if cache_dir is not None:
            emb.cache.load(cache_dir)
        key = _compile_key(d.sample_id) if emb is None else None
        if key in _COMPILED:
            mem, files = _COMPILED[key]
        else:
            mem = compile_sample(d, embedder=emb)
            files = render_sample(mem, embedder=emb)
            if key is not None:
                _COMPILED[key] = (mem, files)
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
        shape.append(memory_shape(mem))
        routing = []
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
                    elif name == "hier-off":
                        pk = retrieve(li, question, budget=b, routing="off")
                        got = {pos[i] for i in pk.refs()}
                    elif name == "hier-hardroute":
                        pk = retrieve(li, question, budget=b, routing="hard")
                        got = {pos[i] for i in pk.refs()}
                    elif name == "hier-entity":
                        pk = retrieve(li, question, budget=b, routing="entity")
                        got = {pos[i] for i in pk.refs()}
                    elif name == "hier-route":
                        pk = retrieve(li, question, budget=b, routing="expand")
                        got = {pos[i] for i in pk.refs()}
                        if b == BUDGETS[0]:
                            routing.append((pk.diagnostics["routed_trajectories"], pk.diagnostics["total_trajectories"]))
                    else:
                        got = fill(orders[name], msgs, b)
                    if name.startswith("hier"):
                        assert count_tokens(pk.context) <= b, (question, b)
                    r = sum(1 for g in gold if g in got) / len(gold)
                    scores[name].setdefault((b, cat), []).append(r)
        if routing:
            shape[-1]["candidate_trajectories"] = shape[-1]["trajectories"]
            shape[-1]["routed_trajectories_mean"] = round(sum(r for r, _ in routing) / len(routing), 1)
        if no_wiki:
            diagnoses.append(routing_diagnosis(li, d.qa))
    result = {"data": str(data), "samples": [d.sample_id for d in dialogues],
              "dense_backend": embedder_used,
              "memory": {"pages": stats_pages, "trajectories": stats_traj,
                         "single_snapshot_share": [round(x, 3) for x in single]},
              "shape": shape, "routing_diagnosis": diagnoses,
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


def routing_diagnosis(li, qa: list[dict], budget: int = 1000, top_pages: int = 15) -> dict:
    """Why routing helps or not, per question, without touching retrieval: for multi-hop questions,
    whether their gold messages share a trajectory or a wiki page (routing can only lift what a page
    groups), and for each gold message missed at ``budget`` without routing, its trajectory's rank
    and whether a text-routed page (top ``top_pages``) or the page of the direct hits holds it; for
    all questions, how many packets routing (``expand``) changes and in which direction."""
    from wikitrace.dialogue.ranking import hit_pages, route_pages, score_trajectories
    from wikitrace.dialogue.question import make_query

    raw = li.raw
    msgs, snaps, pages = raw["messages"], raw["snapshots"], raw["pages"]
    pos = {m[0]: i for i, m in enumerate(msgs)}
    on_pages: dict[int, set[int]] = {}
    for i, p in enumerate(pages):
        if p["type"] != "index":
            for t in p["trajs"]:
                on_pages.setdefault(t, set()).add(i)
    out = {"multi_hop": 0, "multi_gold": 0, "gold_share_trajectory": 0, "gold_share_page": 0,
           "missed_gold": 0, "missed_rank_top15": 0, "missed_rank_15_30": 0, "missed_rank_30_plus": 0,
           "missed_on_routed_page": 0, "missed_on_hit_page": 0,
           "questions": 0, "expand_fired": 0, "packets_changed": 0, "better": 0, "worse": 0}
    for item in qa:
        cat = item.get("category")
        gold = [pos[e] for e in item.get("evidence", []) if e in pos]
        if cat not in CATEGORIES or not gold:
            continue
        question = str(item["question"])
        off = retrieve(li, question, budget=budget, routing="off")
        routed = retrieve(li, question, budget=budget, routing="expand")
        got_off, got_routed = set(off.refs()), set(routed.refs())
        out["questions"] += 1
        out["expand_fired"] += routed.diagnostics["expanded_from"] is not None
        if got_off != got_routed:
            out["packets_changed"] += 1
            a = sum(msgs[g][0] in got_off for g in gold)
            b = sum(msgs[g][0] in got_routed for g in gold)
            out["better"] += b > a
            out["worse"] += b < a
        if cat != 1:
            continue
        out["multi_hop"] += 1
        trajs = [snaps[msgs[g][5]]["traj"] for g in gold if msgs[g][5] is not None]
        if len(gold) > 1:
            out["multi_gold"] += 1
            out["gold_share_trajectory"] += len(set(trajs)) < len(trajs)
            out["gold_share_page"] += any(len([t for t in trajs if p in on_pages.get(t, ())]) > 1
                                          for p in set().union(*(on_pages.get(t, set()) for t in trajs)))
        q = make_query(li, question)
        ranked, _ = score_trajectories(li, q, list(range(len(raw["trajectories"]))))
        rank = {t: r for r, t in enumerate(ranked)}
        routed_pages = set(route_pages(li, q, top_pages))
        hit = hit_pages(li, ranked, named=q.ent_keys | q.speaker_keys)[:1]
        for g in gold:
            if msgs[g][0] in got_off or msgs[g][5] is None:
                continue
            t = snaps[msgs[g][5]]["traj"]
            out["missed_gold"] += 1
            r = rank.get(t, len(ranked))
            out["missed_rank_top15" if r < 15 else "missed_rank_15_30" if r < 30 else "missed_rank_30_plus"] += 1
            out["missed_on_routed_page"] += bool(on_pages.get(t, set()) & routed_pages)
            out["missed_on_hit_page"] += bool(on_pages.get(t, set()) & set(hit))
    return out


def memory_shape(mem: dict) -> dict:
    """The shape table of the paper for one conversation: trajectories, snapshots per trajectory,
    transitions by kind, pages by type."""
    trajs = mem["trajectories"]
    ops: dict[str, int] = {}
    for t in trajs:
        for o in t["ops"]:
            ops[o["op"]] = ops.get(o["op"], 0) + 1
    pages: dict[str, int] = {}
    for p in mem["pages"]:
        pages[p["type"]] = pages.get(p["type"], 0) + 1
    n = len(trajs) or 1
    return {"sample": mem["sample"], "snapshots": len(mem["snapshots"]), "trajectories": len(trajs),
            "snapshots_per_trajectory": round(len(mem["snapshots"]) / n, 2),
            "multi_snapshot_share": round(sum(1 for t in trajs if len(t["snapshots"]) > 1) / n, 3),
            "transitions": ops, "pages": len(mem["pages"]), "pages_by_type": pages}


# Settings the fold mode may choose between (module attribute -> value). Each is a general knob
# of the method, not a word list; the fold picks one on two conversations and measures the third.
GRID: dict[str, dict] = {
    "continuity 0.35 (default)": {},
    "continuity 0.30": {"trajectories.DELTA_CLAIM": 0.30},
    "continuity 0.25": {"trajectories.DELTA_CLAIM": 0.25},
    "routing off": {"retrieve.ROUTING": "off"},
    "kinds off": {"retrieve.W_KIND": 0.0},
    "kinds 0.3": {"retrieve.W_KIND": 0.3},
    "speaker keep 3": {"ranking.SPEAKER_KEEP": 3},
    "speaker keep 10": {"ranking.SPEAKER_KEEP": 10},
    "routing expand": {"retrieve.ROUTING": "expand"},      # shipped on only if it gains on held-out folds
    "routing entity": {"retrieve.ROUTING": "entity"},
}
TUNE_BUDGET = 1000


def _apply(overrides: dict) -> dict:
    import importlib

    saved = {}
    for key, value in overrides.items():
        mod, attr = key.rsplit(".", 1)
        m = importlib.import_module(f"wikitrace.dialogue.{mod}")
        saved[key] = getattr(m, attr)
        setattr(m, attr, value)
    return saved


def _overall(res: dict, method: str, budget: int) -> tuple[float, int]:
    """(recall sum, questions) of one result at one budget, for pooling conversations."""
    row = res["methods"][method][str(budget)]
    total = n = 0
    for c in CATEGORIES:
        k = res["questions"][CAT_NAMES[c]]
        if k and row[f"cat{c}"] is not None:
            total += row[f"cat{c}"] * k
            n += k
    return total, n


def run_folds(data: Path, no_wiki: bool = False, embeddings_url: str | None = None,
              embed_cache: Path | None = None) -> dict:
    """Tune on two conversations, measure on the third, rotate: for each held-out conversation the
    GRID setting with the best pooled overall recall at TUNE_BUDGET on the other two is chosen,
    and the held-out conversation is reported with it (hier and the flat baselines)."""
    samples = [d.sample_id for d in load_inputs([data])]
    per: dict[str, dict[str, dict]] = {}
    # with endpoint embeddings the offline continuity threshold is not used: only the default runs
    grid = dict(list(GRID.items())[:1]) if (embeddings_url or endpoint_embedder(None)) else GRID
    for name, overrides in grid.items():
        saved = _apply(overrides)
        try:
            per[name] = {s: run(data, embeddings_url, embed_cache, no_wiki=no_wiki, only=[s],
                                ablations=("hier-off",)) for s in samples}
        finally:
            _apply(saved)
    folds = []
    for held in samples:
        train = [s for s in samples if s != held]

        def train_score(name):
            sums = [_overall(per[name][s], "hier", TUNE_BUDGET) for s in train]
            return sum(t for t, _ in sums) / max(1, sum(n for _, n in sums))

        best = max(grid, key=lambda name: (train_score(name), -list(grid).index(name)))
        folds.append({"held_out": held, "tuned_on": train, "setting": best,
                      "train_overall": round(train_score(best), 4), "result": per[best][held],
                      "train_scores": {name: round(train_score(name), 4) for name in grid}})
    return {"data": str(data), "grid": grid, "tune_budget": TUNE_BUDGET, "folds": folds}


def pool_folds(res: dict) -> dict:
    """The held-out results of every fold pooled, each category weighted by its questions:
    method -> budget -> column, for hier, hier-off and flat BM25 (what the folds have in common)."""
    folds = [f["result"] for f in res["folds"]]
    out: dict[str, dict] = {}
    for m in ("hier", "hier-off", "bm25-msg"):
        if not all(m in r["methods"] for r in folds):
            continue
        out[m] = {}
        for b in BUDGETS:
            row, total, n_all = {}, 0.0, 0
            for c in CATEGORIES:
                pairs = [(r["methods"][m][str(b)][f"cat{c}"], r["questions"][CAT_NAMES[c]]) for r in folds]
                pairs = [(v, n) for v, n in pairs if v is not None and n]
                n = sum(k for _, k in pairs)
                row[f"cat{c}"] = round(sum(v * k for v, k in pairs) / n, 4) if n else None
                total += sum(v * k for v, k in pairs)
                n_all += n
            row["overall"] = round(total / n_all, 4) if n_all else None
            out[m][str(b)] = row
    return out


def print_table(res: dict) -> None:
    cols = ["cat1", "cat2", "cat3", "cat4", "overall"]
    print(f"dense backend: {res['dense_backend']}")
    print(f"memory: {res['memory']}")
    for sh in res.get("shape", []):
        print(f"shape: {sh}")
    print(f"questions: {res['questions']}")
    print(f"{'budget':>6} {'method':<13}" + "".join(f"{c:>9}" for c in cols))
    for b in res["budgets"]:
        for name in res["methods"]:
            row = res["methods"][name][str(b)]
            print(f"{b:>6} {name:<13}" + "".join(f"{row[c]:>9.3f}" if row[c] is not None else f"{'-':>9}"
                                                  for c in cols))
    for diag, sh in zip(res.get("routing_diagnosis", []), res.get("shape", [])):
        print(f"routing diagnosis {sh['sample']}: {diag}")
    if "hier-off" in res["methods"]:        # what routing to the named participant is worth
        for b in res["budgets"]:
            w, n = res["methods"]["hier"][str(b)], res["methods"]["hier-off"][str(b)]
            print(f"speaker routing at {b}: multi-hop {w['cat1']:.3f} with vs {n['cat1']:.3f} without; "
                  f"overall {w['overall']:.3f} vs {n['overall']:.3f}")
    if "hier-route" in res["methods"]:      # what the wiki's routing is worth (paper, 4.5)
        for sh in res.get("shape", []):
            if "routed_trajectories_mean" in sh:
                print(f"routing {sh['sample']}: {sh['candidate_trajectories']} trajectories; the page of the "
                      f"direct hits lifts {sh['routed_trajectories_mean']} (mean per question)")
        for b in res["budgets"]:
            w, n = res["methods"]["hier-route"][str(b)], res["methods"]["hier"][str(b)]
            print(f"routing at {b}: multi-hop {w['cat1']:.3f} with vs {n['cat1']:.3f} without; "
                  f"overall {w['overall']:.3f} vs {n['overall']:.3f}")
    print(f"timing: {res['timing']}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="LoCoMo folder or file (flat or locomo10.json)")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--embeddings-url", help="OpenAI-compatible /v1 endpoint for dense scores")
    ap.add_argument("--embed-cache", type=Path, help="folder keeping endpoint vectors between runs")
    ap.add_argument("--no-wiki", action="store_true", help="also run the routing ablations (hard routing, no wiki)")
    ap.add_argument("--folds", action="store_true",
                    help="tune on all but one conversation, measure on the held-out one, rotate (offline)")
    ap.add_argument("--sample", action="append", help="only this conversation (repeatable); one table each")
    add_record_flag(ap, "dialogue.md")
    args = ap.parse_args(argv)
    if args.sample and not args.folds:
        res = {s: run(args.data, args.embeddings_url, args.embed_cache, args.no_wiki, only=[s]) for s in args.sample}
        for s, r in res.items():
            print(f"== {s}")
            print_table(r)
    elif args.folds:
        res = run_folds(args.data, args.no_wiki, args.embeddings_url, args.embed_cache)
        for f in res["folds"]:
            print(f"== held out {f['held_out']} (setting '{f['setting']}' chosen on {', '.join(f['tuned_on'])}: "
                  f"overall {f['train_overall']:.3f} at {res['tune_budget']}; every setting: {f['train_scores']})")
            print_table(f["result"])
        for m, per in pool_folds(res).items():
            for b, row in per.items():
                print(f"pooled held-out {b:>5} {m:<9}" + "".join(f"{row[c]:>9.3f}" if row[c] is not None else f"{'-':>9}"
                                                                 for c in COLUMNS))
    else:
        res = run(args.data, args.embeddings_url, args.embed_cache, args.no_wiki)
        print_table(res)
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    if args.record:
        record_tables(args, res)
    return 0


COLUMNS = ["cat1", "cat2", "cat3", "cat4", "overall"]
COLUMN_NAMES = [*CAT_NAMES.values(), "overall"]
SHOWN = {"hier": "hier (shipped)", "hier-off": "hier-off (no routing)", "hier-route": "hier-route", "bm25-msg": "bm25-msg",
         "bm25-session": "bm25-session"}


def _cells(row: dict) -> list[str]:
    return [f"{row[c]:.3f}" if row[c] is not None else "-" for c in COLUMNS]


def record_tables(args, res: dict) -> None:
    """The table of this way of running, in docs/dialogue.md's region for it."""
    dense = " with endpoint embeddings" if args.embeddings_url else ""
    if args.folds:
        rows = []
        for f in res["folds"]:
            r = f["result"]
            shown = [m for m in ("hier", "hier-off", "bm25-msg") if m in r["methods"]]
            for i, b in enumerate(r["budgets"]):
                for j, m in enumerate(shown):
                    rows.append([f"{f['held_out']} ({f['setting']})" if i == j == 0 else "",
                                 b if j == 0 else "", SHOWN.get(m, m), *_cells(r["methods"][m][str(b)])])
        record("dialogue.md", f"benchmarks/locomo_retrieval.py --folds{dense}", markdown_table(
            ["held-out fold (setting chosen)", "budget", "method", *COLUMN_NAMES], rows))
        pooled = pool_folds(res)
        record("dialogue.md", f"benchmarks/locomo_retrieval.py --folds pooled{dense}", markdown_table(
            ["budget", "method", *COLUMN_NAMES],
            [[b, SHOWN.get(m, m), *_cells(pooled[m][str(b)])] for b in BUDGETS for m in pooled]))
    elif args.sample:
        rows = [[sample, SHOWN.get(name, name), *_cells(r["methods"][name][str(TUNE_BUDGET)])]
                for sample, r in res.items() for name in r["methods"]]
        record("dialogue.md", f"benchmarks/locomo_retrieval.py --sample{dense}", markdown_table(
            ["conversation", "method", *COLUMN_NAMES], rows))
        shown = ("hier", "hier-off", "bm25-msg")      # with and without routing, flat BM25 beside
        rows = [[sample if i == j == 0 else "", b if j == 0 else "", SHOWN.get(m, m), *_cells(r["methods"][m][str(b)])]
                for sample, r in res.items() for i, b in enumerate(BUDGETS[:3])
                for j, m in enumerate(x for x in shown if x in r["methods"])]
        record("dialogue.md", f"benchmarks/locomo_retrieval.py --sample budgets{dense}", markdown_table(
            ["conversation", "budget", "method", *COLUMN_NAMES], rows))
    else:
        rows = [[b, SHOWN.get(name, name), *_cells(res["methods"][name][str(b)])]
                for b in res["budgets"] for name in res["methods"]]
        record("dialogue.md", f"benchmarks/locomo_retrieval.py{dense}", markdown_table(
            ["budget", "method", *COLUMN_NAMES], rows))


if __name__ == "__main__":
    raise SystemExit(main())
