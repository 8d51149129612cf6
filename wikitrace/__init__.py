"""wikitrace: agent runs and dialogues compiled into evidence-linked memory."""

__version__ = "0.1.0"
