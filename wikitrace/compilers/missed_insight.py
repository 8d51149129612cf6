"""What a failed run left undone: a change the task expected and the run never made, or a value the
task expected the agent to tell the user and no agent message said.

For a run whose every change was as expected, this is its lesson: a check before its changes
teaches nothing, since they were right. For any other failed run it is a further lesson, where
the budget of three has room. When the log shows why a change was never made (it acted on an
item of a looked-up list that the run never opened), the lesson is to look up every listed item
before choosing; otherwise it is to make every change the request calls for before ending. Each
key is also a pattern of every run, whatever its outcome, so the insight page counts it in
successes too. Hand-offs are left out: their summary is free text no run repeats word for word.
"""

from __future__ import annotations

from .expected_calls import call_text, made_as_expected, missed_changes
from .expected_outputs import other_figures, told
from .insight_parts import kind_of_tasks, make_insight
from .insight_words import hands_off, join
from .lookup_coverage import Coverage, unlooked
from .reading import Reading, harness_reason, leaves
from .schema import CandidateInsight
from .text import clip

MISSED = "missed"  # an expected change never made (one lesson whichever tool: the page counts the tools)
UNLOOKED = "unlooked"  # key unlooked|<field>: expected changes on listed items never looked up
UNTOLD = "untold"  # an expected value no agent message said


def _missed(r: Reading) -> tuple[list[dict], Coverage | None]:
    """The expected changes never made (no hand-offs), and the looked-up list that explains all of
    them when one does; kept on the run's memo (the patterns and the lessons both ask)."""
    key = "missed_insight.missed"
    if key not in r.memo:
        missed = [e for e in missed_changes(r) if not hands_off(e["name"])]
        cover = unlooked(r, missed) if missed else None
        r.memo[key] = (missed, cover if cover is not None and len(cover.explains) == len(missed) else None)
    return r.memo[key]


def undone_keys(r: Reading) -> list[str]:
    """The patterns (and lesson keys) of what the run left undone: a change the task expected and
    it never made, a value the task expected it to say and it never said."""
    missed, cover = _missed(r)
    # every run that left an expected change unmade is counted as such, whichever lesson it teaches
    keys = ([MISSED] + ([f"{UNLOOKED}|{cover.key}"] if cover is not None else [])) if missed else []
    return keys + ([UNTOLD] if any(t.turn is None for t in told(r)) else [])


def left_undone(r: Reading) -> list[CandidateInsight]:
    """The lessons of the changes the run never made and of the values it never said, in that
    order; none when it did all the log records the task expected."""
    missed, cover = _missed(r)
    made = [c for c in r.calls if c.writes and not c.error]
    done = _done(r, made)
    out = []
    if missed and cover is not None:
        field = cover.key
        never = [x for x in cover.items if x not in cover.looked]
        tools = join(list(dict.fromkeys(e["name"] for e in cover.explains)), 3)
        on = [v for e in cover.explains for _p, v in leaves(e["arguments"]) if v in cover.missed_on]
        out.append(make_insight(
            f"{UNLOOKED}|{field}", f"Look up every listed `{field}` before choosing which to change",
            f"When a look-up answer lists several `{field}`, look up each of them before deciding which ones the "
            "request covers, then act on every one that fits: an item never opened cannot be judged, and a change "
            "it needed is never made.",
            f"In {kind_of_tasks(r)}, when a look-up lists several `{field}` and the request may concern more than one.",
            f"{done}turn {cover.turn}: {cover.tool} listed {len(cover.items)} `{field}`, and the run looked up "
            f"{len(cover.looked)} of them, never {join(never, 6)}; the task expected {tools} on "
            f"{join(list(dict.fromkeys(on)), 6)}, never made", False))
    elif missed:
        tools = list(dict.fromkeys(e["name"] for e in missed))
        out.append(make_insight(
            MISSED, "Before ending, make every change the request calls for",
            "Go through the request part by part and check that each change it calls for went through: a request "
            "that asks for several things is not done when the first of them is.",
            f"In {kind_of_tasks(r)}, before ending a task that asks for changes.",
            f"{done}the task expected {join([call_text(e) for e in missed if e['name'] == tools[0]], 2)}"
            + (f" and {join(tools[1:], 3)}" if len(tools) > 1 else "") + ", never made", False))
    unsaid = [t for t in told(r) if t.turn is None]
    # a run the harness cut off before any answer held the value had no turn to tell it, and one that
    # told another figure of that size did tell the user: what made its figure wrong is its lesson
    if unsaid and (harness_reason(r) is None or any(t.held is not None for t in unsaid)) \
            and other_figures(r, unsaid) is None:
        held = [f"{t.held[0]}'s answer at turn {t.held[1]} held {t.value}" for t in unsaid if t.held is not None]
        out.append(make_insight(
            UNTOLD, "Tell the user each value the request asks for as soon as you have it",
            "When the request asks for a figure or a fact (a total, a refund, what was saved), write it in a message "
            "to the user as soon as a tool has worked it out, before further calls: working it out, making the "
            "changes or writing it beside a tool call does not tell it, and a run that a step limit stops never "
            "gets to a closing message.",
            f"In {kind_of_tasks(r)}, when the request asks to be told a value.",
            f"{done}the task expected the agent to say {join([t.value for t in unsaid], 3)}, and no agent message did"
            + (f" ({'; '.join(held[:2])})" if held else "") + _cut_off(r), False))
    return out


def _cut_off(r: Reading) -> str:
    """"; then the harness stopped the run (step limit reached) at turn 35, with no message after its last
    call": where a limit ended the run, the value went untold for want of a turn as much as of a message."""
    reason = harness_reason(r)
    if reason is None:
        return ""
    at = r.harness[-1].turn if r.harness else None
    last = r.calls[-1].n if r.calls else None
    said_after = last is not None and any(t.type == "message" and t.role == "assistant" and t.turn > last
                                          for t in r.run.turns)
    why = clip(reason.split(" (", 1)[0], 60).rstrip(".")  # "step limit reached", its explanation left out
    return (f"; then the harness stopped the run ({why})" + (f" at turn {at}" if at else "")
            + ("" if said_after else ", with no message after its last call"))


def _done(r: Reading, made: list) -> str:
    """The run's changes, as a detail opens: those the log records as expected, then the others."""
    if not made:
        return "made no change; "
    right = [c for c in made if made_as_expected(r, c)]
    other = len(made) - len(right)
    if not right:
        return f"made {other} change{'s' if other != 1 else ''}, none as the task expected; "
    return (f"made {len(right)} change{'s' if len(right) != 1 else ''} as the task expected ("
            f"{join(list(dict.fromkeys(c.name for c in right)), 3)}, turn{'s' if len(right) != 1 else ''} "
            f"{join([str(c.n) for c in right], 4)})" + (f" and {other} other{'s' if other != 1 else ''}" if other else "")
            + "; ")
