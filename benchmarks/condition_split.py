"""Do the conditions learned for a change (corpus/conditions.py) hold on tasks they were not
learned from?

Each input is compiled offline as `wikitrace compile` does, its runs' entries read back from
corpus.json, and split into two halves by sorted task id (even / odd positions, as
lesson_quality.py splits). Per half and per change tool, the conditions are learned on that half
alone; each field value the page names as the check (one that separates) is then counted on the
other half: the same value's share among that half's made and
withheld records, and the one-sided Fisher p in the same direction. "holds" means the other half
has both sides and the value still marks the same side at p < ALPHA; "same side, not shown"
means it leans the same way without reaching it; "no cases" means the other half has too few.
A value the whole set names is counted on each half alone the same way.
Figures at the shipped defaults; nothing is tuned here.

    python benchmarks/condition_split.py --data ../shared/data/runs-dev/tau-bench-airline
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from wikitrace.build import BuildOptions, build
from wikitrace.corpus.applies import task_of
from wikitrace.corpus.conditions import _cases, chosen, hint, learn
from wikitrace.corpus.fisher import ALPHA, fisher_tails
from wikitrace.corpus.insights import kind_of


def _halves(runs: list[dict]) -> tuple[list[dict], list[dict]]:
    tasks = sorted({task_of(r) for r in runs}, key=lambda t: (len(t), t))
    even = {t for k, t in enumerate(tasks) if k % 2 == 0}
    return [r for r in runs if task_of(r) in even], [r for r in runs if task_of(r) not in even]


def _check(cond, runs: list[dict]) -> str:
    sides, _failed, _runs = _cases(runs)
    pair = f"{cond.tool}|{cond.key}"
    made, withheld = sides.get((pair, "made"), {}), sides.get((pair, "withheld"), {})
    m_n = sum(cond.field in f for f in made.values())
    w_n = sum(cond.field in f for f in withheld.values())
    if not m_n or not w_n:
        return f"no cases (made {m_n}, withheld {w_n})"
    m_k = sum(f.get(cond.field) == cond.value for f in made.values())
    w_k = sum(f.get(cond.field) == cond.value for f in withheld.values())
    up, down = fisher_tails(w_k, m_k, w_n, m_n)
    p = up if cond.side == "withheld" else down
    lean = (w_k / w_n > m_k / m_n) if cond.side == "withheld" else (m_k / m_n > w_k / w_n)
    verdict = "holds" if p < ALPHA else ("same side, not shown" if lean else "does not hold")
    return f"{verdict}: withheld {w_k}/{w_n}, made {m_k}/{m_n}, p = {p:.2g}"


def report(data: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        build(BuildOptions(inputs=[data], out=Path(tmp) / "c", offline=True, quiet=True))
        runs = json.loads((Path(tmp) / "c" / "corpus.json").read_text())["runs"]
    print(f"## {data.name}: {len(runs)} runs")
    for kind in sorted({kind_of(r) for r in runs}):
        every = [r for r in runs if kind_of(r) == kind]
        halves = dict(zip("AB", _halves(every)))
        for name, here in (("all", every), *halves.items()):
            for tool, conds in sorted(learn(here).items()):
                c = chosen(conds)
                named = f"`{c.field}` \"{c.value}\" marks {c.side}, p = {c.p}" if c.field else "no field"
                line = (f"{kind} [{name}] {tool} ({c.key}): made {c.made}, withheld {c.withheld}, against {c.against}; "
                        f"{named}; {'separates' if c.separates else 'not shown'}; named on the page: {hint(c)}")
                if name != "all" and hint(c):
                    other = halves["B" if name == "A" else "A"]
                    line += f"; on the other half: {_check(c, other)}"
                elif name == "all" and hint(c):
                    line += "".join(f"; on half {h} alone: {_check(c, runs_h)}" for h, runs_h in halves.items())
                print(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", nargs="+", type=Path, required=True)
    for data in ap.parse_args().data:
        report(data)


if __name__ == "__main__":
    main()
