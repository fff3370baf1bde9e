"""A build backend of the standard library alone: a wheel of this folder's packages, with the
``[project]`` name, version, description and entry points of its pyproject.toml.

The plugin tests install the distribution with pip, offline and without build isolation; the
environment has setuptools but not the ``wheel`` package setuptools needs to build a wheel, so
the distribution brings its own (PEP 517's in-tree backend, ``backend-path``).
"""

from __future__ import annotations

import base64
import hashlib
import tomllib
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TAG = "py3-none-any"


def build_wheel(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """Write the wheel into ``wheel_directory``; its file name."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    project = pyproject["project"]
    stem = f"{project['name'].replace('-', '_')}-{project['version']}"
    files = {
        path.relative_to(ROOT).as_posix(): path.read_bytes()
        for package in pyproject["tool"]["plain_wheel"]["packages"]
        for path in sorted((ROOT / package).rglob("*.py"))
    }
    info = f"{stem}.dist-info"
    files[f"{info}/METADATA"] = _metadata(project).encode()
    files[f"{info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: plain_wheel\nRoot-Is-Purelib: true\nTag: {TAG}\n"
    ).encode()
    files[f"{info}/entry_points.txt"] = _entry_points(project).encode()
    record = [f"{name},sha256={_digest(data)},{len(data)}" for name, data in files.items()]
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,", ""]).encode()
    name = f"{stem}-{TAG}.whl"
    with zipfile.ZipFile(Path(wheel_directory) / name, "w", zipfile.ZIP_DEFLATED) as wheel:
        for path, data in files.items():
            wheel.writestr(path, data)
    return name


def _metadata(project: dict[str, Any]) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}"]
    if "description" in project:
        lines.append(f"Summary: {project['description']}")
    return "\n".join(lines) + "\n"


def _entry_points(project: dict[str, Any]) -> str:
    sections = []
    for group, points in project.get("entry-points", {}).items():
        lines = [f"[{group}]", *(f"{name} = {value}" for name, value in points.items())]
        sections.append("\n".join(lines) + "\n")
    return "\n".join(sections)


def _digest(data: bytes) -> str:
    """The RECORD form of a file's hash: urlsafe base64 of its sha256, without padding."""
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
