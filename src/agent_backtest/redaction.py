"""Recognising credentials, so none reaches a file, a log line or an error message.

One set of rules for the three places secrets turn up: attributes of recorded spans (a header or
an API key an instrumentation captured), fields of recorded request bodies (an ``api_key`` or
``extra_headers`` a client logged with its parameters), and text that may be shown or stored
(an error body, an exception message).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

# Request fields that are client transport options, not what the model is asked: a client
# library's keyword arguments logged with the body. They may carry credentials (headers,
# query keys) and are the recorder's, never the candidate's to receive.
TRANSPORT_OPTIONS = frozenset(
    {
        "extra_headers",
        "extra_query",
        "headers",
        "default_headers",
        "default_query",
        "base_url",
        "api_base",
        "timeout",
        "request_timeout",
        "http_client",
    }
)

REDACTED = "[redacted]"

# Names of fields or attributes whose value is (part of) a credential.
# A bare ``key`` or ``auth`` is one too (``metadata.key``), but not a name that ends in it
# (``prompt_cache_key`` is a request parameter, not a secret).
_SECRET_NAME = re.compile(
    r"(authorization|api[_.-]?key|secret|password|passwd|cookie|credential|private[_.-]?key"
    r"|(access|refresh|auth|bearer|session|id)[_.-]?token|(^|[._-])token$|^(key|auth)$)",
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


# Credentials of the shapes providers issue, found inside message text: OpenAI (sk-…) and
# Anthropic (sk-ant-…) keys, AWS access key ids, GitHub tokens, Google API keys, JWTs, and
# bearer tokens. Only characters a JSON string holds unescaped, so JSON text can be masked too.
_KEY_SHAPES = re.compile(
    r"\bsk-(?:ant-)?[A-Za-z0-9_-]{16,}"
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}"
    r"|\bgithub_pat_[A-Za-z0-9_]{30,}"
    r"|\bAIza[0-9A-Za-z_-]{35}"
    r"|\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
    r"|(?<=[Bb]earer )[A-Za-z0-9._~+/=-]{16,}"
)
# A part every shape above holds, looked for first: ``in`` finds a literal at memory speed, while
# the shapes (each behind a word boundary or a look-behind) are tried at every position, over ten
# times slower, and most text holds none of them.
_KEY_LITERALS = (
    "sk-",
    "AKIA",
    "ASIA",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "AIza",
    "eyJ",
    "earer ",
)


def mask_secrets(text: str) -> str:
    """``text`` with every value shaped like a credential replaced by ``[redacted]``, for where
    a recorded message is shown (a page, the terminal, a judge's prompt); what is sent for
    replay keeps the message exact."""
    if not any(literal in text for literal in _KEY_LITERALS):
        return text
    return _KEY_SHAPES.sub(REDACTED, text)


@lru_cache(maxsize=4096)
@lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """True for a field or attribute name that names a credential (memoised: readers ask it of
    every attribute of every span, and spans of a kind repeat the same few names)."""
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


def drop_secret_fields(params: dict[str, Any]) -> list[str]:
    """Remove, in place, the fields of recorded request parameters that are credentials or
    transport options, at any depth; the paths removed (``api_key``, ``metadata.token``)."""
    removed: list[str] = []
    pending: list[tuple[Any, str]] = [(params, "")]  # a stack, not recursion: any depth holds
    while pending:
        value, path = pending.pop()
        if isinstance(value, dict):
            for key in list(value):
                name = str(key)
                where = f"{path}.{name}" if path else name
                if (not path and name in TRANSPORT_OPTIONS) or is_secret(name, value[key]):
                    del value[key]
                    removed.append(where)
                else:
                    pending.append((value[key], where))
        elif isinstance(value, list):
            pending.extend((item, f"{path}[{index}]") for index, item in enumerate(value))
    return sorted(removed)
