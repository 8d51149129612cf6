"""What ``wikitrace dialogue add`` costs, and how much of the memory it rewrites (offline).

For each LoCoMo conversation: compile it whole, compile it without its last session, then
add that session with ``add_session``. Prints the wall time of add and of the whole compile
(and their ratio), the files added / rewritten / removed / unchanged, the earlier snapshot
files rewritten and earlier trajectories regrouped, and checks that the corpus after add is
byte-identical to the whole compile.

    python benchmarks/dialogue_add.py --data ../shared/data/locomo-dev [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wikitrace.fsio import make_writable  # noqa: E402
from wikitrace.dialogue.add import add_session  # noqa: E402
from wikitrace.dialogue.build import DialogueOptions, compile_dialogues  # noqa: E402
from wikitrace.dialogue.load import load_inputs  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import add_record_flag, markdown_table, record  # noqa: E402


def tree(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / "dialogue").rglob("*")) if p.is_file()}


def one(path: Path, work: Path) -> dict:
    conv = json.loads(path.read_text())
    n = max(int(k.split("_")[1]) for k in conv if k.startswith("session_") and isinstance(conv[k], list))
    (work / "head").mkdir(parents=True)
    (work / "head" / path.name).write_text(json.dumps({k: v for k, v in conv.items() if k != f"session_{n}"}))
    (work / "last.json").write_text(json.dumps({f"session_{n}": conv[f"session_{n}"],
                                                f"session_{n}_date_time": conv[f"session_{n}_date_time"]}))
    t0 = time.perf_counter()
    compile_dialogues(DialogueOptions(inputs=[path], out=work / "whole"))
    t_whole = time.perf_counter() - t0
    compile_dialogues(DialogueOptions(inputs=[work / "head" / path.name], out=work / "inc"))
    sample = load_inputs([path])[0].sample_id
    t0 = time.perf_counter()
    res = add_session(work / "last.json", work / "inc", sample)
    t_add = time.perf_counter() - t0
    return {"sample": sample, "session": res["session"], "messages_added": res["messages_added"],
            "snapshots_added": res["snapshots_added"], "add_s": round(t_add, 2), "whole_compile_s": round(t_whole, 2),
            "ratio": round(t_add / t_whole, 2), "files": res["files"],
            "earlier_snapshot_files_rewritten": res["earlier_snapshots_rewritten"],
            "earlier_snapshots": len(json.loads((work / "inc" / "dialogue" / sample / "memory.json").read_text())
                                     ["snapshots"]) - res["snapshots_added"],
            "earlier_trajectories_regrouped": res["earlier_trajectories_regrouped"],
            "identical_to_whole_compile": tree(work / "inc") == tree(work / "whole")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="folder of flat LoCoMo conversations (conv-NN.json)")
    ap.add_argument("--json", type=Path, help="write the results here")
    add_record_flag(ap, "dialogue.md")
    args = ap.parse_args()
    files = sorted(args.data.glob("*.json")) if args.data.is_dir() else [args.data]
    rows = []
    for f in files:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                rows.append(one(f, Path(tmp)))
            finally:
                make_writable(Path(tmp))
        print(json.dumps(rows[-1]))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    if args.record:
        def files(r):
            f = r["files"]
            return " / ".join(str(f.get(k, 0)) for k in ("added", "rewritten", "removed", "unchanged"))

        record("dialogue.md", "benchmarks/dialogue_add.py", markdown_table(
            ["conversation (session added)", "files added / rewritten / removed / unchanged",
             "earlier snapshot files rewritten", "earlier trajectories regrouped", "add / whole compile", "identical"],
            [[f"{r['sample']} ({r['session']}: {r['messages_added']} messages, {r['snapshots_added']} snapshots)",
              files(r), f"{r['earlier_snapshot_files_rewritten']} of {r['earlier_snapshots']}",
              r["earlier_trajectories_regrouped"], f"{r['add_s']:.2f} s / {r['whole_compile_s']:.2f} s",
              "yes" if r["identical_to_whole_compile"] else "NO"] for r in rows]))


if __name__ == "__main__":
    main()
