"""Why a change differed from the expected one: the run's own rule on it, and the facts it turns on.

A page that says "`nonfree_baggages` 1 where the task expected 0" says what went wrong, not why.
The why is usually a rule of the run's system prompt (a policy) applied to values of the records the
run looked up: a checked-bag allowance that depends on the booking user's membership and cabin, a
cancellation allowed within a day of booking or with insurance. Here such a rule is found and quoted
with the record fields it names. What the rule's own words settle on those fields (a span of time
past, an "only if" the record fails) is said by rule_verdicts.py; nothing else is concluded.

The prompt is read once per distinct text into blocks (a paragraph or list item, with the heading
above it and the short label that opens it, "Checked bag allowance:"). A block is on the topic when
its label names the argument's thing (a shorter word standing for a longer one: a "bag" label for
``nonfree_baggages``) or, for a whole call, when it is an unlabelled rule of the section whose heading
names the call's action; where the prompt has a section on the action, no other section's rules are
used. Of those, a sentence is quoted only when it names a value the run's records hold, as a term of
its own ("gold", "basic economy"; not "economy" inside "basic economy"), or states a span of time and
the record has a timestamp. When two blocks rank alike, or parallel sentences of the block (one per
membership tier) name the same fields, nothing is quoted: a wrong rule quoted is worse than none.
One exception: for an expected change never made, the one labelled block of the action's own section
on the tool's thing ("Change passengers:") is quoted without a fact, as what the policy allowed.
A block another rule leans on by its label ("travel insurance") is left out when the record says it
has none of that thing. What the user said of a rule's condition, and the agent's own refusal of an
expected change, are added beside the rule (rule_talk.py); the prompt is cut in rule_blocks.py.

A sentence with a case per value is quoted at the record's own case (rule_clauses.py). A rule whose
case for the record lets the change through outright is said as allowing it, not as the reason it
went wrong. A rule on the record's own parts the change went against ("without changing the
destination", "must be the same across all the flights", "basic economy flights cannot be
modified") is said as forbidding it, with what the call did (record_rules.py); the record fields a
rule names are read in rule_facts.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import record_rules, rule_cases, rule_counts, rule_talk, rule_verdicts
from .expected_calls import closest_expected
from .insight_words import join
from .reading import Call, Reading
from .record_facts import _when, stated_now
from .rule_blocks import _Block, _blocks, _loosely_names
from .rule_clauses import clause_for
from .rule_facts import (_NAME_PARTS, _Fact, _absent, _fact, _fact_text, _facts, _keyed_by, _name_words, _named,
                         _plain, standing_facts)
from .rules import _stem, _words, action_verb
from .text import clip_words

_WIDTH = 260  # one quoted sentence at most; a rule is quoted, not summarised
_MAX_SENTENCES = 3


@dataclass
class Reason:
    text: str
    turns: list[int]
    quoted: list[str] = field(default_factory=list)  # the rule's sentences as the prompt has them
    # what the rule is about, counted across runs as a fact of its own: [the tool, what the rule is
    # on, the quote as the page gives it, then "field=value" of each record value the quoted sentence
    # was chosen for ("membership=gold")]; runs quoting the same words share one lead
    # (corpus/fact_leads.py), and another run's quote is borrowed only where its values match
    # (corpus/checked_facts.py)
    about: list[str] = field(default_factory=list)
    closed: bool = False  # the record's fields close every permission the quote gives (rule_verdicts)
    leads: bool = False  # it says why the run failed (a refusal the prompt itself allows): the page opens with it
    allows: bool = False  # a case of the rule that lets this change through, read on the record's fields


def _own_section(blocks: tuple[_Block, ...], tool: str, verb: frozenset[str], known: set[str]) -> set[frozenset[str]]:
    """The heading of the prompt's section on this tool's action: the one that names the action, else
    the one section whose labels name what the tool's siblings (the run's other tools of the same
    action: ``update_reservation_flights`` beside ``update_reservation_passengers``) act on. Empty
    when neither settles it."""
    named = {b.heading for b in blocks if b.heading & verb}
    if named or not verb:
        return named
    things = set().union(*(_head(n) for n in known if n and n != tool and action_verb(n) == verb))
    found = {b.heading for b in blocks if b.label and b.label_words & things}
    return found if len(found) == 1 else set()


def _labelled(blocks: tuple[_Block, ...], own: set[frozenset[str]], head: frozenset[str]):
    """For a change never made that no rule ties to a value the records hold: the one block of the
    action's own section whose label names the thing the tool acts on ("Change passengers:" for
    ``update_reservation_passengers``), its sentences on that thing quoted, no fact named. What the
    rule allows is then beside what the run left undone (a refusal the policy did not call for)."""
    if not own:
        return None
    found = [b for b in blocks if b.heading in own and _loosely_names(b.label_words, head)]
    if len(found) != 1:
        return None
    quoted = [(found[0], j) for j, s in enumerate(found[0].sentences) if s.rule and head & s.words][:_MAX_SENTENCES - 1]
    return (quoted, [], []) if quoted else None


def _choose(r: Reading, tool: str, subject: frozenset[str], head: frozenset[str], whole_call: bool, facts: list[_Fact],
            missed: bool = False, anywhere: bool = False):
    """(its quoted sentences, facts named, facts the chosen sentence names by value) of the one
    block that clearly bears on the subject, or None: none does, two rank alike, or the best block's sentences name the same
    fields alike (one per membership tier, the record's tier unknown)."""
    verb = action_verb(tool)
    known = {c.name for c in r.calls} | {e.get("name", "") for e in r.memo.get("expected.all") or []}
    others = set()
    for name in known:
        if name and name != tool:
            others |= action_verb(name) - verb
    blocks = _blocks(r.system.content or "")
    own = _own_section(blocks, tool, verb, known)

    def keyed(b: _Block) -> list:
        said = []
        for j, s in enumerate(b.sentences):
            if s.rule:
                by_value, by_name = _named(r, s, facts, subject)
                if by_value:  # it turns on a value the run's records hold
                    said.append((j, by_value, by_name))
        return said

    ranked = []
    for i, b in enumerate(blocks):
        if not subject & b.words or (b.heading & others and not b.heading & verb) or (own and b.heading not in own):
            continue  # silent on the subject, or in a section on another action
        if not (_loosely_names(b.label_words, head) or (whole_call and not b.label and b.heading & verb)):
            continue  # its label names another thing, or it is no general rule of the action's own section
        if said := keyed(b):
            ranked.append((max(len(v) for _, v, _ in said), i, b, said))
    if not ranked and anywhere:
        # the action's own section says nothing keyed on the records about the argument's thing: the one
        # block elsewhere labelled with that thing and keyed on them ("Checked bag allowance:" for
        # `nonfree_baggages` beside a tier and a cabin); the caller keeps it only where its numbers give
        # the value the task expected
        labelled = [(i, b, said) for i, b in enumerate(blocks) if b.label and subject & b.words
                    and _loosely_names(b.label_words, head) and (said := keyed(b))]
        if len(labelled) == 1:
            i, b, said = labelled[0]
            ranked.append((max(len(v) for _, v, _ in said), i, b, said))
    if not ranked:
        return _labelled(blocks, own, head) if missed else None
    ranked.sort(key=lambda x: x[0], reverse=True)
    if len(ranked) > 1 and ranked[1][0] == ranked[0][0]:
        return None  # two blocks bear on it alike: which one governs is not clear
    _, i, block, said = ranked[0]
    top = max(said, key=lambda x: (len(x[1]), len(x[2])))
    if top[1] and any(j != top[0] and len(v) == len(top[1]) and {f.key for f in v} == {f.key for f in top[1]}
                      for j, v, _ in said):
        return None  # parallel sentences name the same fields: the one that applies is not settled
    chosen = {top[0]}
    top_keys = {f.key for f in top[1]}
    alternatives = {j for j, v, _ in said if j != top[0] and top_keys & {f.key for f in v}}
    valued = {j for j, v, _ in said}
    for j, s in enumerate(block.sentences):  # the block's other sentences on what the record holds, or
        # on the argument's own thing; never the alternatives to the one chosen (another tier's allowance)
        if len(chosen) < _MAX_SENTENCES - 1 and j != top[0] and j not in alternatives and s.rule \
                and (j in valued or (not whole_call and head & s.words)):
            chosen.add(j)
    quoted = [(block, j) for j in sorted(chosen)]
    named: list[_Fact] = []
    for j in sorted(chosen):
        by_value, by_name = _named(r, block.sentences[j], facts, subject)
        named += [f for f in by_value + by_name if f not in named]
    text = " ".join(block.sentences[j].text for j in chosen).lower()
    for other in blocks:  # a rule that names another block's label ("travel insurance") leans on it,
        # unless the record says it has none of that thing (`insurance` "no"): its rule then bears on nothing
        if other is block or len(other.label) < 4 or other.label not in text \
                or any(f.key_words and f.key_words <= other.label_words and _absent(f.value) for f in facts):
            continue
        extra = next((k for k, s in enumerate(other.sentences) if s.rule and subject & s.words), None)
        if extra is not None:
            quoted.append((other, extra))
            break
    return quoted, named, top[1]


def _quote(block: _Block, j: int, keyed=None) -> str:
    """A sentence as written (the cases of it no record value keys cut out), its block's label in
    front when it opens the block."""
    s = block.sentences[j].text if keyed is None else clause_for(block.sentences[j].text, lambda p: keyed(p) is not None)
    return clip_words(f"{block.label_text}: {s}" if j == 0 and block.label_text else s, _WIDTH)


def _reason(r: Reading, tool: str, subject: frozenset[str], head: frozenset[str], about: str, facts: list[_Fact],
            said: set[str], whole_call: bool = False, missed: bool = False, before: int | None = None,
            anywhere: bool = False) -> Reason | None:
    if r.system is None or not subject:
        return None
    found = _choose(r, tool, subject, head, whole_call, facts, missed, anywhere)
    if found is None:
        return None
    quoted, named, chosen_for = found
    texts = [b.sentences[j].text for b, j in quoted]
    keyed = _keyed_by(facts)
    if whole_call:  # a case of the rule keyed by the record's own value that lets the call through outright
        allowed = rule_verdicts.allowing(texts, keyed, action_verb(tool), _words)
        if allowed:
            f = keyed(allowed)
            return _allowed(r, tool, allowed, f and f"`{f.key}` {f.shown}, {f.where.replace(' gave', '')}", f, said)
        moments = [f for f in named if f.moment and _when(f.value) is not None]
        spanned = rule_verdicts.within_span(texts, [(f.key, _when(f.value)) for f in moments], stated_now(r),
                                            action_verb(tool), _words)
        if spanned:
            f = next(f for f in moments if f.key == spanned[1])
            return _allowed(r, tool, spanned[0], f"{_fact_text(r, f)}, {f.where.replace(' gave', '')}", f, said)
    quote = " ".join(f"\"{_quote(b, j, keyed)}\"" for b, j in quoted)
    if quote in said:
        return None  # said once on the page is enough
    closed = False
    said.add(quote)
    text = f"The system prompt's rule on {about} (turn {r.system.turn}): {quote}"
    turns = [r.system.turn]
    by_place: dict[str, list[str]] = {}
    for f in named:
        by_place.setdefault(f.where, []).append(_fact_text(r, f))
        if f.turn is not None:
            turns.append(f.turn)
    if by_place:
        text += "; " + "; ".join(f"{where} " + join(parts, 4)
                                 for where, parts in by_place.items())
    text = text if text.endswith(('."', '!"', '?"', '…"')) else text + "."
    if whole_call and before is not None:  # a change that went through: what the rule concludes on its fields
        settled = rule_verdicts.verdict(
            texts, [(f.key, _when(f.value)) for f in named if f.moment and _when(f.value) is not None],
            [(f.key, f.key_words, f.shown) for f in named if _absent(f.value)], stated_now(r), _words,
            lambda part: keyed(part) is not None, tool)
        if settled:
            text += " " + settled
            closed = " So " in settled
    words = rule_talk.condition_words(texts, action_verb(tool))
    if words:  # less the words naming the action's thing, its sections and the record's fields
        words -= head.union(*(b.heading | b.label_words for b, _ in quoted), *(f.key_words for f in facts))
    user = rule_talk.users_words(r, words, before) if words else None
    if user is not None:  # a condition no record holds: the user's own words on it, checked against a list it gives
        outside = rule_talk.outside_the_list(r, texts, user, before) if before is not None else ""
        text += outside or f" The user's words on its condition (turn {user.turn}): \"{user.text}\""
        turns.append(user.turn)
    # the looked-up record's values the sentence was chosen for (not the call's own arguments: another
    # run is matched to the quote by the records it looked up)
    values = [f"{f.key}={f.value}" for f in chosen_for if isinstance(f.value, str) and not f.moment and f.turn is not None]
    return Reason(text, turns, texts, about=[tool, about.strip("`"), quote, *values], closed=closed)


def _allowed(r: Reading, tool: str, clause: str, because: str | None, fact: _Fact | None,
             said: set[str]) -> Reason | None:
    """A rule whose case for this record lets the call through: said as what it allowed, with the
    field that shows it, not as the reason the call was wrong (no rule is counted for the fact: it
    did not decide it)."""
    cut = "" if clause.endswith((".", "!", "?")) else " …"  # the words up to a span: the sentence goes on
    quote = (f"\"…{clause}{cut}\"" if clause[:1].islower() else f"\"{clause}{cut}\"")
    if quote in said:
        return None
    said.add(quote)
    because = f" ({because})" if because else ""
    # a case of the rule, not the rule: its other conditions (a segment already flown) may still forbid the change
    text = f"The system prompt's rule on {tool} (turn {r.system.turn}) has a case that allows this change{because}: {quote}"
    text = text if text.endswith(('."', '!"', '?"', '…"')) else text + "."
    turns = [r.system.turn] + ([fact.turn] if fact is not None and fact.turn is not None else [])
    return Reason(text, turns, [clause], allows=True)


def for_arguments(r: Reading, c: Call, paths: list[str], said: set[str]) -> Reason | None:
    """The rule on the first differing argument that has one, with the facts it names."""
    args = c.turn.arguments if isinstance(c.turn.arguments, dict) else {}
    found = None
    expected = closest_expected(r, c)
    for path in paths:
        key = path.split("[")[0].split(".")[0]
        facts = _facts(r, args, c.n, {key})
        found = _reason(r, c.name or "", _name_words(key), _head(key), f"`{key}`", facts, said)
        if found is not None:
            seen = record_rules.looked_up(r, c)
            done = rule_counts.sum_for(r, c, key, found.quoted, facts, seen[1] if seen else None, expected)
            if done:
                found = Reason(f"{found.text} {done}", found.turns, found.quoted, found.about)
            break
    if found is None and paths:  # a rule outside the action's section, kept only where its sum gives the expected value
        key = paths[0].split("[")[0].split(".")[0]
        facts, record = standing_facts(r, args, c.n, {key})
        trial = set(said)
        elsewhere = _reason(r, c.name or "", _name_words(key), _head(key), f"`{key}`", facts, trial, anywhere=True)
        if elsewhere is not None:
            done = rule_counts.sum_for(r, c, key, elsewhere.quoted, facts, record, expected)
            if done:
                said |= trial
                found = Reason(f"{elsewhere.text} {done}", elsewhere.turns, elsewhere.quoted, elsewhere.about)
    if found is None and paths and _points_at_record(r, c, paths[0]):
        # it acted on another record than the task expected: what the rule says of the one it acted on
        trial = set(said)
        whole = for_call(r, c, trial)
        if whole is not None and whole.closed:
            said |= trial
            return whole
    if found is None and paths:  # no case of the rule could be quoted: perhaps the run never learned which applied
        key = paths[0].split("[")[0].split(".")[0]
        unsettled = rule_cases.unlearned(r, c, key, _head(key))
        if unsettled is not None and unsettled[0] not in said:
            said.add(unsettled[0])
            # no quote: the insight layer counts it as a case left unlearned (corpus/checked_facts.py)
            found = Reason(unsettled[0], unsettled[1], about=[c.name or "", key, "", *unsettled[2]])
    return _with_breach(r, c, found, said, expected)


def _points_at_record(r: Reading, c: Call, path: str) -> bool:
    """Whether the argument at ``path`` is the one the change's record was looked up by (the record
    a look-up showed holds it, with the value sent)."""
    seen = record_rules.looked_up(r, c)
    args = c.turn.arguments if isinstance(c.turn.arguments, dict) else {}
    return seen is not None and "." not in path and "[" not in path and path in args \
        and seen[1].get(path) == args[path]


def _with_breach(r: Reading, c: Call, found: Reason | None, said: set[str], expected: dict | None = None) -> Reason | None:
    """A rule on the record's own parts the change went against (record_rules.py) leads; a rule
    that allowed the change is then left off (it is not where the change went wrong)."""
    if r.system is None:
        return found
    seen = record_rules.looked_up(r, c)
    if seen is None:
        return found
    look, record = seen
    name = c.name or ""
    facts = _keyed_by([_fact(k, v, "", look.n) for k, v in record.items() if _plain(v) is not None])

    def named(text: str):
        f = facts(text)
        return (f.key, f.shown) if f is not None else None

    for breach in record_rules.breaches(r, c, record, f"{look.name} (turn {look.n})", _head(name), action_verb(name),
                                        expected, named):
        quote = f"\"{clip_words(breach.quote, _WIDTH)}\""
        if quote in said:
            continue
        said.add(quote)
        text = f"The system prompt's rule (turn {r.system.turn}) forbids this change: {quote}; here {breach.text}."
        turns = [r.system.turn, look.n, *breach.turns]
        if found is None or not found.about:
            return Reason(text, turns, [breach.quote], about=[name, name, quote])
        if breach.quote in found.quoted:  # the same rule, now with its verdict: said once
            return Reason(text, turns, found.quoted, about=found.about)
        return Reason(f"{text} {found.text}", turns + found.turns, [breach.quote] + found.quoted, about=found.about)
    return found


def _head(name: str) -> frozenset[str]:
    """The thing a name names: its last word (``baggage`` of ``nonfree_baggages``, ``reservation``
    of ``cancel_reservation``), an ``id`` suffix passed over: a reservation id names a record, and
    a rule on the record is not a rule on which record was picked."""
    parts = [w for w in _NAME_PARTS.split(name or "") if len(w) >= 3]
    return frozenset({_stem(parts[-1])}) if parts else frozenset()


def _subject(tool: str) -> frozenset[str]:
    """What a whole call is about: the verb its name starts with and the object it ends with."""
    return action_verb(tool) | _head(tool)


def for_call(r: Reading, c: Call, said: set[str]) -> Reason | None:
    """The rule on a change the task did not expect, with the facts of the record it acted on."""
    args = c.turn.arguments if isinstance(c.turn.arguments, dict) else {}
    name = c.name or ""
    found = _reason(r, name, _subject(name), _head(name), name, _facts(r, args, c.n, set()), said, whole_call=True,
                    before=c.n)
    return _with_breach(r, c, found, said)
