"""The agent version in the trace model: per step, and for a session only when its steps agree."""

from __future__ import annotations

from agent_backtest.trace import Session, Step, Turn, common_agent_version


def steps(*versions: str | None) -> list[Step]:
    return [Step(id=str(i), kind="llm", agent_version=v) for i, v in enumerate(versions)]


def test_a_session_has_the_version_all_its_steps_record() -> None:
    assert common_agent_version(steps("2.1.0", "2.1.0", "2.1.0")) == "2.1.0"


def test_a_deploy_inside_a_session_or_a_step_without_version_leaves_it_unset() -> None:
    assert common_agent_version(steps("2.1.0", "2.2.0")) is None
    assert common_agent_version(steps("2.1.0", None)) is None
    assert common_agent_version(steps(None, None)) is None
    assert common_agent_version([]) is None


def test_step_versions_survive_the_canonical_form() -> None:
    session = Session(id="s1", turns=[Turn(index=0, steps=steps("2.1.0", None))])
    again = Session.model_validate_json(session.model_dump_json(by_alias=True))
    assert [s.agent_version for s in again.steps()] == ["2.1.0", None]
    schema = Session.model_json_schema()
    assert "agent_version" in schema["$defs"]["Step"]["properties"]
