"""Model families, and the rule that a judge is never one of the models it grades.

A family is a vendor's line of models trained alike; a judge tends to favour its siblings'
answers, so a judge of a candidate's family is a warning, and the candidate itself is refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Model families by name prefix (of the name after the last "/", lower case). A family is a
# vendor's line of models trained alike, whose judges tend to favour their siblings' answers.
# Known families match across providers: gpt-4o served by Azure is still gpt-4o.
FAMILIES: dict[str, tuple[str, ...]] = {
    "openai": ("gpt-", "gpt4", "chatgpt", "o1", "o3", "o4", "text-davinci"),
    "anthropic": ("claude",),
    "google": ("gemini", "gemma", "palm"),
    "meta": ("llama", "meta-llama", "codellama"),
    "mistral": ("mistral", "mixtral", "codestral", "ministral", "magistral", "devstral", "pixtral"),
    "qwen": ("qwen", "qwq"),
    "deepseek": ("deepseek",),
    "xai": ("grok",),
    "cohere": ("command", "aya"),
    "microsoft": ("phi-", "phi3", "phi4"),
    "smollm": ("smollm",),
}
# "o1" must not claim "olmo" or "o1x": an o-series name is o<digit> then the end or a dash.
_O_SERIES = re.compile(r"^o\d(?:$|-)")


class JudgeError(ValueError):
    """The judge cannot be used for these candidates (it is one of them)."""


def model_name(ref: str) -> str:
    """The model part of ``provider/model`` (after the last ``/``), lower case."""
    return ref.strip().rsplit("/", 1)[-1].lower()


def family_of(ref: str) -> str | None:
    """The known family of a ``provider/model`` name, or None."""
    name = model_name(ref)
    for family, prefixes in FAMILIES.items():
        if family == "openai" and name[:1] == "o" and not _O_SERIES.match(name):
            continue
        if name.startswith(prefixes):
            return family
    return None


def same_family(judge: str, candidate: str) -> bool:
    """True when ``judge`` and ``candidate`` are models of one family.

    Known families (:data:`FAMILIES`) are matched by name prefix whatever the provider
    (``openai/gpt-4o`` and ``openai/gpt-4o-mini``; ``anthropic/claude-sonnet-4`` and
    ``anthropic/claude-haiku-4``). Names of no known family count as one family when the provider
    is the same and the leading letters of the model name are (``local/smollm2-135m`` and
    ``local/smollm2-360m``).
    """
    known = family_of(judge), family_of(candidate)
    if known[0] is not None or known[1] is not None:
        return known[0] == known[1]
    provider = judge.partition("/")[0].lower(), candidate.partition("/")[0].lower()
    letters = [re.match(r"[a-z]*", model_name(ref)).group() for ref in (judge, candidate)]
    return provider[0] == provider[1] and bool(letters[0]) and letters[0] == letters[1]


def check_judge(judge_model: str, candidates: Iterable[str]) -> list[str]:
    """Warnings for candidates of the judge's family; raises :class:`JudgeError` when the judge
    is a candidate (the same model name, whatever the provider)."""
    warnings = []
    for candidate in candidates:
        if model_name(judge_model) == model_name(candidate):
            raise JudgeError(
                f"the judge {judge_model} is the candidate model {candidate}: a model grading "
                "its own answers is not a check; choose another --judge"
            )
        if same_family(judge_model, candidate):
            warnings.append(
                f"the judge {judge_model} is of the same family as the candidate {candidate} "
                "and may favour its answers; choose a judge of another family to avoid it"
            )
    return warnings
