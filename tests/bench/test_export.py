"""Training exports of a bench run: SFT chat JSONL, RL prompt groups, eligibility with reasons."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_backtest.bench.audit import audit
from agent_backtest.bench.export import export_training
from agent_backtest.bench.models import BenchmarkManifest
from agent_backtest.bench.reading import EpisodeTrace, read_run
from agent_backtest.cli.app import app
from agent_backtest.errors import InputError
from tests.bench.results_runs import Episode, manifest, tau_episodes, trajectories, write_run
from tests.optional import require

runner = CliRunner()


@pytest.fixture(scope="module")
def tau_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 100 recorded GPT-4o trajectories as a finished bench run."""
    return write_run(tmp_path_factory.mktemp("bench") / "run", tau_episodes())


def lines(path: Path) -> list[dict[str, Any]]:
    """The JSON lines of a file."""
    return [json.loads(line) for line in path.read_text().splitlines()]


def meta(path: Path) -> dict[str, Any]:
    """The sidecar of an export."""
    return json.loads(path.with_name(path.name + ".meta.json").read_text())


def reasons(document: dict[str, Any], kind: str) -> dict[str, list[str]]:
    """Each episode's reasons against ``kind`` (sft or rl), from an export's sidecar."""
    return {e["episode_id"]: [x["reason"] for x in e[kind]] for e in document["eligibility"]}


def test_sft_rows_are_the_passing_episodes_in_openai_chat_format(
    tau_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out" / "sft.jsonl"
    outcome = export_training(tau_run, sft=out)
    rows = lines(out)
    passing = [i for i in trajectories() if i["reward"] == 1.0]
    assert outcome.sft.rows == len(rows) == len(passing) == 31
    document = meta(out)
    assert document["row_ids"] == [f"ep-task{i['task_id']:02d}-r{i['trial']}" for i in passing]
    for row, item in zip(rows, passing, strict=True):
        assert set(row) == {"messages", "tools"}
        assert [t["function"]["name"] for t in row["tools"]][:2] == [
            "book_reservation",
            "calculate",
        ]
        assert len(row["tools"]) == 14 and {t["type"] for t in row["tools"]} == {"function"}
        assert [(m["role"], m.get("content")) for m in row["messages"]] == [
            (m["role"], m.get("content") or ("" if m["role"] == "tool" else None))
            for m in item["traj"]
        ]
        called = set()
        for message in row["messages"]:
            for call in message.get("tool_calls") or ():
                assert isinstance(call["function"]["arguments"], str)
                assert isinstance(json.loads(call["function"]["arguments"]), dict)
                called.add(call["id"])
            if message["role"] == "tool":
                assert message["tool_call_id"] in called
                assert "name" not in message
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert stat.S_IMODE(out.parent.stat().st_mode) == 0o700


def test_the_sft_file_loads_with_hugging_face_datasets(tau_run: Path, tmp_path: Path) -> None:
    datasets = require("datasets", "pip install datasets")
    out = tmp_path / "sft.jsonl"
    export_training(tau_run, sft=out)
    loaded = datasets.load_dataset(
        "json", data_files=str(out), split="train", cache_dir=str(tmp_path / "hf")
    )
    assert loaded.num_rows == 31
    assert loaded.column_names == ["messages", "tools"]
    first = loaded[0]
    assert first["messages"][0]["role"] == "system"
    calls = [c for m in first["messages"] for c in m.get("tool_calls") or ()]
    assert calls and all(isinstance(c["function"]["arguments"], str) for c in calls)
    assert first["tools"][0]["function"]["name"] == "book_reservation"


def test_the_sidecar_names_the_source_run_commit_and_benchmark_version(
    tau_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "sft.jsonl"
    export_training(tau_run, sft=out, min_reward=0.5)
    document = meta(out)
    assert document["schema"] == "abt.bench-export/1"
    assert document["kind"] == "sft" and document["min_reward"] == 0.5
    source = document["source"]
    assert source["run"] == str(tau_run)
    assert source["commit"] == "0123456789abcdef0123456789abcdef01234567"
    assert (source["benchmark"], source["benchmark_version"]) == ("tau_airline", "2024.06")
    assert document["excluded"] == {"below_min_reward": 69}
    assert len(document["eligibility"]) == 100
    by_episode = reasons(document, "sft")
    assert by_episode["ep-task12-r0"] == []
    assert by_episode["ep-task00-r0"] == ["below_min_reward"]


def trace_first_call(trace: EpisodeTrace) -> str:
    """The tool of the first call in a transcript."""
    return next(c.name for m in trace.messages for c in m.tool_calls or ())


def planted(episode: Episode, change: Any) -> Episode:
    """``episode`` whose first assistant tool call is changed by ``change(call)``."""
    messages = json.loads(json.dumps(episode.session.metadata["transcript"]))
    first = next(m for m in messages if m["role"] == "assistant" and m.get("tool_calls"))
    change(first["tool_calls"][0]["function"])
    return episode.with_transcript(messages)


def test_the_strict_audit_leaves_out_unknown_tools_and_invalid_arguments(tmp_path: Path) -> None:
    episodes = tau_episodes([12])  # four rollouts, every one passed
    episodes[0] = planted(episodes[0], lambda f: f.update(name="delete_every_reservation"))
    episodes[1] = planted(episodes[1], lambda f: f.update(arguments=json.dumps({"user_id": 123})))
    episodes[2] = planted(episodes[2], lambda f: f.update(arguments="{'user_id': 'x'"))
    run = write_run(tmp_path / "run", episodes)
    out = tmp_path / "sft.jsonl"
    outcome = export_training(run, sft=out)
    assert outcome.sft.rows == 1
    assert meta(out)["row_ids"] == ["ep-task12-r3"]
    assert outcome.sft.excluded == {"unknown_tool": 1, "invalid_arguments": 2}
    found = {e.episode_id: e.sft for e in outcome.eligibility}
    assert "delete_every_reservation is not an offered tool" in found["ep-task12-r0"][0].detail
    assert found["ep-task12-r1"][0].detail.endswith("['user_id']: 123 is not of type 'string'")
    assert "arguments are not JSON" in found["ep-task12-r2"][0].detail
    assert all(e.detail.startswith("message ") for e in found["ep-task12-r0"])
    # RL keeps them: a mistake is what a low advantage learns from
    assert all(e.rl == [] for e in outcome.eligibility)


def test_a_benchmark_that_prohibits_training_exports_nothing(tmp_path: Path) -> None:
    benchmark = {**manifest()["benchmark"], "training_prohibited": True}
    run = write_run(tmp_path / "run", tau_episodes(range(3)), manifest(benchmark=benchmark))
    sft, rl = tmp_path / "sft.jsonl", tmp_path / "rl.jsonl"
    outcome = export_training(run, sft=sft, rl=rl)
    assert sft.read_text() == rl.read_text() == ""
    assert outcome.sft.excluded["training_prohibited"] == 12
    assert outcome.rl.excluded == {"training_prohibited": 12}
    assert meta(rl)["excluded_groups"] == {
        f"pg-task{t:02d}": ["training_prohibited"] for t in range(3)
    }


def test_the_prohibition_is_read_from_the_benchmark_directory_and_never_assumed_absent(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "benchmark"
    folder.mkdir()
    own = BenchmarkManifest(
        name="airline-private",
        version="3",
        release="private",
        training_prohibited=True,
        environment="tau_airline",
    )
    (folder / "manifest.json").write_text(own.model_dump_json(by_alias=True))
    # the run recorded the benchmark as it was then, free to train on; its folder says otherwise
    recorded = {**own.model_dump(include={"name", "version", "release"}), "path": str(folder)}
    named = manifest(benchmark={**manifest()["benchmark"], **recorded})
    run = write_run(tmp_path / "named", tau_episodes([12]), named)
    outcome = export_training(run, sft=tmp_path / "a.jsonl")
    assert outcome.sft.excluded == {"training_prohibited": 4}
    assert "airline-private 3 private prohibits" in outcome.eligibility[0].sft[0].detail
    # a run.json that does not say whether training is allowed is no bench run's: refused
    silent = write_run(tmp_path / "silent", tau_episodes([12]), manifest(benchmark={}))
    with pytest.raises(InputError) as caught:
        export_training(silent, sft=tmp_path / "b.jsonl")
    assert caught.value.location is not None and caught.value.location.startswith("benchmark")
    assert not (tmp_path / "b.jsonl").exists()


def test_rl_groups_carry_rewards_and_advantages_over_their_eligible_members(
    tmp_path: Path,
) -> None:
    episodes = tau_episodes()
    failed = {("13", 0), ("13", 1), ("5", 0), ("5", 1), ("5", 2), ("5", 3)}
    episodes = [e.failed() if e.record.key in failed else e for e in episodes]
    run = write_run(tmp_path / "run", episodes)
    out = tmp_path / "rl.jsonl"
    outcome = export_training(run, rl=out)
    groups = {row["prompt_group"]: row for row in lines(out)}
    assert len(groups) == outcome.rl.rows == 24
    assert meta(out)["excluded_groups"] == {"pg-task05": ["engineering_error"]}
    recorded = {(str(i["task_id"]), i["trial"]): i["reward"] for i in trajectories()}
    for group in groups.values():
        members = group["members"]
        rewards = [recorded[group["case_id"], m["rollout"]] for m in members]
        mean = sum(rewards) / len(rewards)
        assert group["mean_reward"] == pytest.approx(mean)
        for member, reward in zip(members, rewards, strict=True):
            assert member["reward"] == reward
            assert member["advantage"] == pytest.approx(reward - mean)
            assert member["messages"][0]["role"] == "system"
        assert len(group["tools"]) == 14
    assert [m["rollout"] for m in groups["pg-task13"]["members"]] == [2, 3]
    assert outcome.rl.excluded == {"engineering_error": 6}


def test_the_command_prints_how_many_episodes_each_reason_left_out(tmp_path: Path) -> None:
    episodes = [e.failed() if e.record.key == ("12", 0) else e for e in tau_episodes()]
    run = write_run(tmp_path / "run", episodes)
    sft, rl = tmp_path / "sft.jsonl", tmp_path / "rl.jsonl"
    result = runner.invoke(app, ["bench", "export", str(run), "--sft", str(sft), "--rl", str(rl)])
    assert result.exit_code == 0, result.output
    assert f"wrote 30 SFT examples to {sft}" in result.stdout
    assert "    below_min_reward: 69\n" in result.stdout
    assert "    engineering_error: 1\n" in result.stdout
    assert f"wrote 25 RL prompt groups to {rl}" in result.stdout


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--sft", "{tmp}"], "--sft: {tmp} is a folder: name a file to write"),
        (["--sft", "{tmp}/ok.jsonl", "--rl", "{run}/run.json/rl.jsonl"], "--rl: cannot write"),
        ([], "--sft: name an output"),
    ],
)
def test_bad_outputs_end_with_one_line_and_write_nothing(
    tau_run: Path, tmp_path: Path, arguments: list[str], message: str
) -> None:
    filled = [a.format(tmp=tmp_path, run=tau_run) for a in arguments]
    result = runner.invoke(app, ["bench", "export", str(tau_run), *filled], terminal_width=300)
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert message.format(tmp=tmp_path) in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_running_run_is_exported_only_with_allow_partial(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", tau_episodes([12]), manifest(status="running"))
    out = tmp_path / "sft.jsonl"
    result = runner.invoke(app, ["bench", "export", str(run), "--sft", str(out)])
    assert result.exit_code == 2
    assert "--allow-partial: " in result.stderr
    assert not out.exists()
    result = runner.invoke(app, ["bench", "export", str(run), "--sft", str(out), "--allow-partial"])
    assert result.exit_code == 0, result.output
    assert len(lines(out)) == 4


def test_a_tool_whose_schema_is_invalid_is_named_by_the_audit(tmp_path: Path) -> None:
    episode = tau_episodes([12])[0]
    trace = read_run(write_run(tmp_path / "run", [episode])).trace(episode.record)
    tools = [
        tool.model_copy(update={"parameters": {"type": "objekt"}})
        if tool.name == trace_first_call(trace)
        else tool
        for tool in trace.tools
    ]
    findings = audit(trace.messages, tools)
    assert [f.reason for f in findings] == ["invalid_tool_schema"]
    assert "the schema of " + trace_first_call(trace) + " is invalid" in findings[0].detail
    assert audit(trace.messages, trace.tools) == []
