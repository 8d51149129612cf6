"""Where each top-level argument of a call came from, as a lesson names it ("taking a from T; b
from the user's words"): the same places a page's source notes name (``value_sources``)."""

from __future__ import annotations

from dataclasses import dataclass

from .arguments import FREE_FORM, check_arguments
from .insight_words import top_key
from .reading import Call, Reading, leaves
from .value_sources import _value_place


@dataclass
class ArgumentSources:
    """Where the top-level arguments of a call came from, as the argument checks found it."""

    tools: dict[str, list[str]]  # who showed each key: a look-up's tool, or "the earlier <tool> call"
    earlier_calls: set[str]  # the labels of ``tools`` naming an earlier call's own arguments, not an answer
    user: list[str]  # keys the user's words held
    unseen: list[str]  # argument paths no earlier turn showed (a key with any such part is listed only here)


def unseen_paths(r: Reading, call: Call) -> list[str]:
    """The argument paths no earlier turn showed, in order (``sources(r, call).unseen``): read off
    the call's checks alone, without working out where every other value came from."""
    return list(dict.fromkeys(a.path for a in check_arguments(r, call.turn) if a.unsourced))


def sources(r: Reading, call: Call) -> ArgumentSources:
    """``_sources`` worked out once per call: a run's lessons ask about the same change more than once."""
    memo = r.memo.setdefault("argument_places.sources", {})
    found = memo.get(call.n)
    if found is None:
        found = memo[call.n] = _sources(r, call)
    return found


def _sources(r: Reading, call: Call) -> ArgumentSources:
    """Which earlier tool showed each top-level argument, which came from the user, and the
    argument paths no earlier turn showed (a key with any such part is listed only there). A
    key is named with every place its values came from, by the same rule as a page's source
    notes (``value_sources``); a key any value of which has no place the log shows is named
    with none. A free-form argument (an answer, a query) is one text: the last turn holding it."""
    by_turn = {c.n: c.name for c in r.calls}
    checks = check_arguments(r, call.turn)
    unseen = unseen_paths(r, call)
    doubtful = {top_key(a.path) for a in checks if a.seen_at is None}  # unsourced, or held where no source is told
    names = frozenset(v.lower() for _p, v in leaves(call.turn.arguments) if isinstance(v, str) and len(v) > 2)
    placed: list[tuple[str, str]] = []  # (key, where): "user", or the tool or earlier call's label
    for a in checks:
        key = top_key(a.path)
        if key in doubtful:
            continue
        if a.path == FREE_FORM or a.seen_in == "earlier call":
            where = "user" if a.seen_in == "user message" else f"the earlier {by_turn.get(a.seen_at, 'tool')} call" \
                if a.seen_in == "earlier call" else by_turn.get(a.seen_at, "a look-up")
        else:
            place = _value_place(r, call, a, by_turn, names)
            if place is None or place[3] == "own" or place[2] is None and place[3] == "answer":
                # the log does not show where it came from (or which of several tools' answers)
                doubtful.add(key)
                continue
            where = "user" if place[3] == "user" else place[2].name or "a look-up"
        placed.append((key, where))
    from_tool: dict[str, list[str]] = {}
    from_user: list[str] = []
    earlier: set[str] = set()
    for key, where in dict.fromkeys(placed):
        if key in doubtful:
            continue
        if where == "user":
            from_user.append(key)
            continue
        if where.startswith("the earlier "):
            earlier.add(where)
        from_tool.setdefault(where, []).append(key)
    return ArgumentSources(from_tool, earlier, from_user, unseen)
