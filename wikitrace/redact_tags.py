"""The tag in ``[REDACTED:<type>#<tag>]``: four hex digits of an HMAC-SHA256 of the secret, so
two mentions of one secret read as one and different secrets differ, while the tag tells a
reader nothing about the secret. The HMAC key is ``$WIKITRACE_REDACT_KEY`` when set (teams that
build one corpus on several machines set the same one, so pages stay byte-identical), else a
random key made once per user and kept outside every corpus
(``$XDG_CONFIG_HOME/wikitrace/redact-key``, mode 0600). With a public key a short secret (a PIN,
a dictionary password) could be found by hashing every candidate; without the key it cannot.
hashlib and hmac are imported only when a tag is made (a query never makes one)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

PLACEHOLDER = "[REDACTED:{}#{}]"
ENV_KEY = "WIKITRACE_REDACT_KEY"
TAG_HEX = 4

def _key_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME", "").strip()
    return (Path(base).expanduser() if base else Path.home() / ".config") / "wikitrace" / "redact-key"


@lru_cache(maxsize=4)
def _hmac_key(explicit: str | None) -> bytes:
    """The key that makes tags unguessable (see the module docstring)."""
    import hashlib
    import secrets as _secrets

    if explicit:
        return hashlib.sha256(b"wikitrace-redact\0" + explicit.encode("utf-8", "surrogatepass")).digest()
    path = _key_file()
    try:
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        pass
    tmp = path.with_name(f".redact-key.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(_secrets.token_hex(32) + "\n")
        os.link(tmp, path)  # appears whole or not at all; fails if another process was first
    except FileExistsError:
        pass  # another process (the build's reader, say) made it first: use theirs
    except OSError:
        # Nowhere to keep a key: tags are stable within this process only, never guessable.
        return _secrets.token_bytes(32)
    finally:
        try:
            tmp.unlink()
        except OSError:
            pass
    try:
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return _secrets.token_bytes(32)


def tag(secret: str) -> str:
    """Four hex digits that stand for ``secret`` (same secret, same tag)."""
    import hashlib
    import hmac

    key = _hmac_key(os.environ.get(ENV_KEY) or None)
    mac = hmac.new(key, secret.encode("utf-8", "surrogatepass"), hashlib.sha256)
    return mac.hexdigest()[:TAG_HEX]


def placeholder(kind: str, secret: str) -> str:
    return PLACEHOLDER.format(kind, tag(secret))
