"""wikitrace: agent runs and dialogues compiled into evidence-linked memory."""

__version__ = "0.1.0"


def add_run(path, corpus, outcome=None, **options):
    """Append one finished run (any input format) to a compiled corpus: ``wikitrace add``
    for a harness. ``outcome``: "success", "failure" or a score, when the run's format
    carries no verdict. Returns a ``wikitrace.add.AddResult``; raises a
    ``wikitrace.errors.WikitraceError`` saying what to fix when it cannot add."""
    from .add import add_run as _add_run  # imported here: `import wikitrace` stays instant

    return _add_run(path, corpus, outcome, **options)
