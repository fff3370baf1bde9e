"""Recognising credentials, so none reaches a file, a log line or an error message.

One set of rules for the two places secrets turn up: attributes of recorded spans (a header or an
API key an instrumentation captured) and text that may be shown or stored (an error body, an
exception message).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

REDACTED = "[redacted]"

# Names of fields or attributes whose value is (part of) a credential.
_SECRET_NAME = re.compile(
    r"(authorization|api[_.-]?key|secret|password|passwd|cookie|credential|private[_.-]?key"
    r"|(access|refresh|auth|bearer|session|id)[_.-]?token|(^|[._-])token$)",
    re.IGNORECASE,
)
# Credentials inside free text, whatever surrounds them: bearer and basic tokens, provider keys
# (sk-…, pk-…), and values given to a key-like name (api_key=…, "authorization": "…").
_SECRET_IN_TEXT = re.compile(
    r"(?i)((?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{8,}|\b(?:sk|pk|rk|key|ak)-[A-Za-z0-9_-]{8,}"
    r"|((?:api[_-]?key|x-api-key|authorization|token)[\"']?\s*[:=]\s*[\"']?)[^\s\"',}]{6,}"
)
# A whole value that is a credential (a span attribute is dropped when it matches).
_CREDENTIAL_VALUE = re.compile(r"^\s*(bearer|basic)\s+\S+|\bsk-[A-Za-z0-9_-]{16,}", re.IGNORECASE)


@lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """True for a field or attribute name that names a credential."""
    return bool(_SECRET_NAME.search(name))


def is_credential(value: str) -> bool:
    """True for a value that is a credential: a bearer or basic token, or holds a provider key.

    Stricter than :func:`redact`'s rules on purpose: a span attribute that matches is dropped
    whole, so a message that merely mentions a key-like word must not match.
    """
    start = value.lstrip()[:6].lower()
    # Cheap test first: the expression runs only on values that could match it.
    return ("sk-" in value or start.startswith(("bearer", "basic"))) and bool(
        _CREDENTIAL_VALUE.search(value)
    )


def is_secret(name: str, value: Any) -> bool:
    """True for a named value (a span attribute, a header) that is or holds a credential."""
    return is_secret_name(name) or (isinstance(value, str) and is_credential(value))


def redact(text: str, known: tuple[str, ...] = ()) -> str:
    """``text`` with the ``known`` secrets and anything shaped like a credential replaced."""
    for secret in known:
        if secret:
            text = text.replace(secret, REDACTED)
    return _SECRET_IN_TEXT.sub(lambda m: (m.group(1) or m.group(2) or "") + REDACTED, text)
