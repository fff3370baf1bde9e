"""The canonical trace model shared by every job."""

from agent_backtest.trace.arguments import parse_arguments
from agent_backtest.trace.models import (
    SESSION_SCHEMA,
    AgentInfo,
    ContentPart,
    LLMCall,
    LLMRequest,
    LLMResponse,
    Message,
    Session,
    SourceRef,
    Step,
    ToolCall,
    ToolDef,
    ToolExecution,
    Turn,
    Unusable,
    Usage,
    add_usage,
    common_agent_version,
)
from agent_backtest.trace.serialize import canonical_json, dump_record, sha256_of

__all__ = [
    "SESSION_SCHEMA",
    "AgentInfo",
    "ContentPart",
    "LLMCall",
    "LLMRequest",
    "LLMResponse",
    "Message",
    "Session",
    "SourceRef",
    "Step",
    "ToolCall",
    "ToolDef",
    "ToolExecution",
    "Turn",
    "Unusable",
    "Usage",
    "add_usage",
    "canonical_json",
    "common_agent_version",
    "dump_record",
    "parse_arguments",
    "sha256_of",
]
