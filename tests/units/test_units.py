"""Unit building, router/action classification, selection, splits and exclusions."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_backtest.errors import InputError
from agent_backtest.trace import (
    AgentInfo,
    LLMCall,
    LLMRequest,
    LLMResponse,
    Message,
    Session,
    Step,
    ToolDef,
    Turn,
)
from agent_backtest.units import (
    AgentConfig,
    ExcludedSessions,
    ExclusionSummary,
    Selection,
    Unit,
    UnitSkip,
    load_agent_config,
    make_unit_id,
    reclassify,
    split_of,
    units_from_session,
)


def llm_step(step_id: str, node: str, tools: list[str] | None, answered: bool = True) -> Step:
    request = LLMRequest(
        model="gpt-4o",
        messages=[Message(role="user", content="book me a flight")],
        tools=None if tools is None else [ToolDef(name=name) for name in tools],
    )
    response = LLMResponse(message=Message(role="assistant", content="ok")) if answered else None
    return Step(id=step_id, kind="llm", name=node, llm=LLMCall(request=request, response=response))


def session(*steps: Step, session_id: str = "s1") -> Session:
    return Session(id=session_id, turns=[Turn(index=0, steps=list(steps))])


def units_of(sess: Session, config: AgentConfig | None = None) -> list[Unit]:
    return [u for u in units_from_session(sess, config or AgentConfig()) if isinstance(u, Unit)]


def test_router_when_every_offered_tool_routes() -> None:
    sess = session(
        llm_step(
            "a", "topic_selector", ["go_to_booking", "transfer_to_human", "__end_session_action__"]
        ),
        llm_step("b", "booking", ["search_flights", "go_to_help"]),
        llm_step("c", "booking", []),
        llm_step("d", "booking", None),
    )
    assert [u.kind for u in units_of(sess)] == ["router", "action", "action", "action"]


def test_router_nodes_and_configured_prefixes() -> None:
    sess = session(
        llm_step("a", "dispatcher", ["search_flights"]), llm_step("b", "x", ["handoff_billing"])
    )
    config = AgentConfig(router_nodes=["dispatcher"], routing_tool_prefixes=["handoff_"])
    assert [u.kind for u in units_of(sess, config)] == ["router", "router"]


def test_step_without_answer_is_a_named_skip() -> None:
    items = list(units_from_session(session(llm_step("a", "n", [], answered=False)), AgentConfig()))
    assert items == [
        UnitSkip("s1", "a", "no_response", "the trace records the request but no answer")
    ]


def test_unit_ids_are_stable_and_distinct() -> None:
    assert make_unit_id("s1", "a") == make_unit_id("s1", "a")
    assert make_unit_id("s1", "a") != make_unit_id("s1", "b")
    assert make_unit_id("s1", "a") != make_unit_id("s2", "a")
    unit = units_of(session(llm_step("a", "n", [])))[0]
    assert unit.unit_id == make_unit_id("s1", "a")
    assert unit.tools_missing is False


def test_split_is_deterministic_salted_and_near_the_fraction() -> None:
    ids = [f"session-{i}" for i in range(4000)]
    labels = [split_of(i, 0.25, "salt-a") for i in ids]
    assert labels == [split_of(i, 0.25, "salt-a") for i in ids]
    share = labels.count("val") / len(labels)
    assert 0.22 < share < 0.28
    assert labels != [split_of(i, 0.25, "salt-b") for i in ids]
    assert all(split_of(i, 0.0, "s") == "test" for i in ids[:50])
    assert all(split_of(i, 1.0, "s") == "val" for i in ids[:50])


def test_selection_filters_and_counts_what_it_leaves_out() -> None:
    sessions = [
        session(
            llm_step("a", "router", ["go_to_x"]),
            llm_step("b", "booking", ["f"]),
            session_id=f"s{i}",
        )
        for i in range(10)
    ]
    units = [u for s in sessions for u in units_of(s)]
    selection = Selection(
        steps="action",
        nodes=frozenset({"booking"}),
        excluded_sessions=ExcludedSessions("held-out.txt", frozenset({"s0", "s1", "s99"})),
        limit=5,
    )
    kept = list(selection.apply(units))
    assert [u.session_id for u in kept] == ["s2", "s3", "s4", "s5", "s6"]
    assert selection.dropped == {"excluded_session": 4, "other_kind": 8, "over_limit": 3}
    # s99 is not in the input: the caller can say so.
    assert selection.exclusion() == ExclusionSummary("held-out.txt", sessions=3, matched=2)
    assert Selection().exclusion() is None

    split = Selection(val_fraction=0.5, split="val", split_salt="x")
    chosen = list(split.apply(units))
    assert chosen and all(u.split == "val" for u in chosen)
    assert split.dropped["other_split"] == len(units) - len(chosen)


def test_split_without_fraction_is_refused() -> None:
    with pytest.raises(ValueError, match="--val-fraction"):
        Selection(split="val")


def test_agent_config_files(tmp_path: Path) -> None:
    toml = tmp_path / "agent.toml"
    toml.write_text('router_nodes = ["dispatcher"]\nequivalent_tools = [["a", "b"]]\n')
    assert load_agent_config(toml).router_nodes == ["dispatcher"]
    yaml_file = tmp_path / "agent.yaml"
    yaml_file.write_text("end_session_tools: [bye]\n")
    assert load_agent_config(yaml_file).is_routing_tool("bye")
    typo = tmp_path / "typo.json"
    typo.write_text('{"router_node": ["x"]}')
    with pytest.raises(InputError, match="router_node: Extra inputs"):
        load_agent_config(typo)
    broken = tmp_path / "broken.toml"
    broken.write_text("router_nodes = [")
    with pytest.raises(InputError, match="not valid TOML"):
        load_agent_config(broken)


def test_per_session_takes_a_slice_across_sessions() -> None:
    sessions = [
        session(*(llm_step(str(j), "n", ["f"]) for j in range(5)), session_id=f"s{i}")
        for i in range(4)
    ]
    units = [u for s in sessions for u in units_of(s)]
    selection = Selection(per_session=2, limit=5)
    kept = list(selection.apply(units))
    assert [(u.session_id, u.step_id) for u in kept] == [
        ("s0", "0"),
        ("s0", "1"),
        ("s1", "0"),
        ("s1", "1"),
        ("s2", "0"),
    ]
    assert selection.dropped == {"over_per_session": 12, "over_limit": 3}


def versioned_session(session_id: str, *versions: str | None) -> Session:
    steps = [llm_step(str(i), "booking", ["f"]) for i in range(len(versions))]
    for step, version in zip(steps, versions, strict=True):
        step.agent_version = version
    return session(*steps, session_id=session_id)


def test_a_unit_carries_its_steps_agent_version() -> None:
    assert [u.agent_version for u in units_of(versioned_session("s1", "1.0", "1.1", None))] == [
        "1.0",
        "1.1",
        None,
    ]


def test_a_step_without_version_takes_the_version_its_session_records() -> None:
    # A session written with only a session-level version (older canonical files).
    sess = versioned_session("s1", None, None)
    sess.agent = AgentInfo(name="support", version="7")
    assert [u.agent_version for u in units_of(sess)] == ["7", "7"]


def test_selection_by_agent_version_counts_why_it_left_units_out() -> None:
    units = units_of(versioned_session("s1", "1.0", "1.1", None, "1.0"))
    selection = Selection(agent_versions=frozenset({"1.0"}))
    assert [u.step_id for u in selection.apply(units)] == ["0", "3"]
    assert selection.dropped == {"other_agent_version": 1, "agent_version_not_recorded": 1}
    both = Selection(agent_versions=frozenset({"1.0", "1.1"}))
    assert [u.step_id for u in both.apply(units)] == ["0", "1", "3"]


def test_reclassify_applies_the_same_rule_as_a_fresh_unit() -> None:
    sess = session(
        llm_step("a", "dispatcher", ["search_flights"]),
        llm_step("b", "booking", ["handoff_billing"]),
        llm_step("c", "booking", ["go_to_help"]),
    )
    written = units_of(sess)
    assert [u.kind for u in written] == ["action", "action", "router"]
    read_back = [Unit.model_validate_json(u.model_dump_json(by_alias=True)) for u in written]
    config = AgentConfig(router_nodes=["dispatcher"], routing_tool_prefixes=["handoff_"])
    again = list(reclassify(read_back, config))
    assert [u.kind for u in again] == [u.kind for u in units_of(sess, config)]
    assert [u.kind for u in again] == ["router", "router", "action"]


def test_reclassify_keeps_the_written_kinds_without_router_rules() -> None:
    written = units_of(session(llm_step("a", "dispatcher", ["search_flights"])), None)
    written[0].kind = "router"  # as an earlier --router-nodes dispatcher made it
    assert [u.kind for u in reclassify(written, AgentConfig())] == ["router"]
    assert [u.kind for u in reclassify(written, AgentConfig(equivalent_tools=[]))] == ["router"]
    assert [u.kind for u in reclassify(written, AgentConfig(router_nodes=[]))] == ["action"]


def test_router_rules_set_by_a_file_or_by_assignment(tmp_path: Path) -> None:
    config_file = tmp_path / "agent.toml"
    config_file.write_text('equivalent_tools = [["a", "b"]]\n')
    config = load_agent_config(config_file)
    assert not config.sets_router_rules()
    config.router_nodes = ["dispatcher"]  # what --router-nodes does
    assert config.sets_router_rules()
    config_file.write_text('end_session_tools = ["bye"]\n')
    assert load_agent_config(config_file).sets_router_rules()
