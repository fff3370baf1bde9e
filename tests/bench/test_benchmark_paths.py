"""A benchmark's files stay inside its directory: a gold named outside it, or a file that is a
link out of it, is refused with one line before anything runs."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from tests.bench.conftest import abt, write_benchmark


def run(benchmark: Path, out: Path) -> tuple[int, str]:
    return abt(
        "bench", "run", benchmark, "--agent", "mock/golden", "--user", "scripted",
        "--out", out, "--limit", "1",
    )  # fmt: skip


def with_gold(benchmark: Path, gold: str) -> None:
    manifest = json.loads((benchmark / "manifest.json").read_text())
    (benchmark / "manifest.json").write_text(json.dumps({**manifest, "gold": gold}))


def linked_out(benchmark: Path, name: str, outside: Path) -> None:
    """Move the benchmark's file ``name`` to ``outside``, leaving a link to it in its place."""
    (benchmark / name).rename(outside)
    (benchmark / name).symlink_to(outside)


def test_a_gold_named_outside_the_directory_is_refused(tmp_path: Path) -> None:
    benchmark = write_benchmark(tmp_path / "shop")
    (tmp_path / "elsewhere.jsonl").write_text((benchmark / "gold.jsonl").read_text())
    for gold in ("../elsewhere.jsonl", str(tmp_path / "elsewhere.jsonl"), "sub/../../x.jsonl"):
        with_gold(benchmark, gold)
        code, output = run(benchmark, tmp_path / "run")
        assert code == 2, output
        assert output.count("\n") == 1 and "manifest.json: gold:" in output, output
        assert "outside the benchmark directory" in output
        assert not (tmp_path / "run").exists()


def test_a_file_linked_out_of_the_directory_is_refused(tmp_path: Path) -> None:
    benchmark = write_benchmark(tmp_path / "shop")
    outside = tmp_path / "other-gold.jsonl"
    linked_out(benchmark, "gold.jsonl", outside)
    code, output = run(benchmark, tmp_path / "run")
    assert code == 2 and "gold.jsonl: is a link to a file outside" in output, output
    assert output.count("\n") == 1 and not (tmp_path / "run").exists()

    (benchmark / "gold.jsonl").unlink()
    outside.rename(benchmark / "gold.jsonl")
    linked_out(benchmark, "cases.jsonl", tmp_path / "cases.jsonl")
    code, output = run(benchmark, tmp_path / "run")
    assert code == 2 and "cases.jsonl: is a link to a file outside" in output, output


def test_a_link_inside_the_directory_is_followed(tmp_path: Path) -> None:
    benchmark = write_benchmark(tmp_path / "shop")
    (benchmark / "gold.jsonl").rename(benchmark / "gold-v1.jsonl")
    (benchmark / "gold.jsonl").symlink_to(benchmark / "gold-v1.jsonl")
    _, output = run(benchmark, tmp_path / "run")  # the mock agent's episode fails: not our point
    assert "is a link" not in output, output
    # grading read the gold through the link: run.json records the linked file's hash
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    gold_bytes = (benchmark / "gold-v1.jsonl").read_bytes()
    assert manifest["gold"]["sha256"] == hashlib.sha256(gold_bytes).hexdigest()


def test_a_manifest_or_a_folder_linked_out_of_the_directory_is_refused(tmp_path: Path) -> None:
    benchmark = write_benchmark(tmp_path / "shop")
    linked_out(benchmark, "manifest.json", tmp_path / "manifest.json")
    code, output = run(benchmark, tmp_path / "run")
    assert code == 2 and "manifest.json: is a link to a file outside" in output, output

    benchmark = write_benchmark(tmp_path / "shop2")
    (tmp_path / "secret").mkdir()
    (benchmark / "gold.jsonl").rename(tmp_path / "secret" / "gold.jsonl")
    (benchmark / "sub").symlink_to(tmp_path / "secret")
    with_gold(benchmark, "sub/gold.jsonl")
    code, output = run(benchmark, tmp_path / "run")
    assert code == 2 and "sub/gold.jsonl: is a link to a file outside" in output, output
    assert output.count("\n") == 1 and not (tmp_path / "run").exists()


def test_a_gold_that_is_no_regular_file_or_no_usable_name_is_one_line(tmp_path: Path) -> None:
    benchmark = write_benchmark(tmp_path / "shop")
    (benchmark / "gold.jsonl").unlink()
    os.mkfifo(benchmark / "gold.jsonl")
    code, output = run(benchmark, tmp_path / "run")  # a pipe nobody writes to: never opened
    assert code == 2 and "gold.jsonl: is a named pipe, not a gold file" in output, output

    for gold, problem in (("g" * 5000, "File name too long"), (".", "is a folder")):
        with_gold(benchmark, gold)
        code, output = run(benchmark, tmp_path / "run")
        assert code == 2 and problem in output, output
        assert output.count("\n") == 1 and not (tmp_path / "run").exists()
