"""Model references: ``provider/model`` names, and ``trace`` for the recorded model."""

from __future__ import annotations

from dataclasses import dataclass

from agent_backtest.errors import UserError

TRACE = "trace"


@dataclass(frozen=True, order=True)
class ModelRef:
    """A provider (a configured endpoint) and the model name it is asked for."""

    provider: str
    model: str

    def __str__(self) -> str:
        return f"{self.provider}/{self.model}"


def parse_model_ref(text: str, parameter: str = "model") -> ModelRef:
    """``openai/gpt-4.1-mini`` → ModelRef; a name without a provider is a user error that names
    ``parameter`` (the role or setting the name was given for)."""
    provider, slash, model = text.partition("/")
    if not slash or not provider or not model:
        raise UserError(
            f"{text!r} is not provider/model "
            "(e.g. openai/gpt-4.1-mini, anthropic/claude-sonnet-4-5, local/smollm2, "
            "mock/golden, or trace)",
            parameter,
        )
    return ModelRef(provider, model)
