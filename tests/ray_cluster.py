"""A real local Ray cluster for the Ray executor's tests: a head with no CPU (the driver's) and
two one-CPU worker nodes, all on 127.0.0.1.

One cluster serves every Ray test of a test session (``ray_cluster`` in the conftest; under
pytest-xdist, one per worker process that runs Ray tests): starting one takes 10 to 15 s on a
2-core machine. Its nodes' environments hold what the tests of every
job need: the same OpenAI key on both nodes (a replay's workers make their calls with it), and
in ``NODE_KEY_ENV`` a key of each node's own, so a server's log of keys says which process made
each call.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pytest

OPENAI_KEY = "sk-test-RAYRAYRAYRAY0123456789"
NODE_KEY_ENV = "ABT_BENCH_RAY_KEY"
NODE_KEYS = ("sk-test-NODEONE0123456789", "sk-test-NODETWO0123456789")
NODE_ENVIRONMENTS = [{"OPENAI_API_KEY": OPENAI_KEY, NODE_KEY_ENV: key} for key in NODE_KEYS]


@contextmanager
def local_cluster(node_environments: list[Mapping[str, str]]) -> Iterator[Any]:
    """A head node and one one-CPU worker node per mapping, each node's processes started with
    that mapping in their environment (as a cluster's ``ray start`` runs with its own); skipped
    without Ray, except under CI where its absence fails. Always shut down."""
    try:
        from ray.cluster_utils import Cluster
    except ImportError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"the Ray tests cannot run under CI: {exc}")
        pytest.skip(f"Ray is not installed ({exc}): pip install -e '.[ray]'")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAY_USAGE_STATS_ENABLED", "0")
        made = Cluster(
            initialize_head=True,
            head_node_args={"num_cpus": 0, "include_dashboard": False},
        )
        try:
            for environment in node_environments:
                for name, value in environment.items():
                    patch.setenv(name, value)
                made.add_node(num_cpus=1)
            made.wait_for_nodes()
            yield made
        finally:
            made.shutdown()
