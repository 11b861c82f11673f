"""The `grade_essay` plugin of the SDK's README.md ("A plugin"), run as written, as agent-env runs it: the same
task twice, and a retry inside one run."""

from __future__ import annotations

import sys
from pathlib import Path

from sdk_helpers import REPO

from agent_env_plugin.testing import memory_host_object_store

README = REPO / "plugin-sdk-py" / "README.md"
#: The task step of the README, as the task document writes it.
STEP = {"id": "grade", "type": "grade_essay", "essay_path": "essay.txt", "verifier_id": "grade"}


def readme_plugin() -> str:
    """The first Python block after the README's "## A plugin" heading."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("\n## A plugin\n") :]
    start = section.index("```python\n") + len("```python\n")
    return section[start : section.index("```\n", start)]


def test_the_readme_plugin_grades_the_same_task_again(start, tmp_path: Path):
    (tmp_path / "grader.py").write_text(readme_plugin(), encoding="utf-8")
    run_folder = tmp_path / "where-agent-env-runs"
    run_folder.mkdir()
    (run_folder / "essay.txt").write_text("Photosynthesis makes sugar.", encoding="utf-8")
    plugin = start(
        [sys.executable, str(tmp_path / "grader.py")],
        package="agentenv-grader",
        cwd=str(run_folder),
        host_methods=memory_host_object_store(),
    )
    plugin.initialize()

    def run(instance_id: str) -> dict:
        context = {"instance_id": instance_id, "metadata": {"task_id": "@local/~/demo/grade"}, "deployed_sandboxes": []}
        answer = plugin.request("execute", {"type": "grade_essay", "step": dict(STEP), "context": context})
        return answer["metadata"]["verifications"]["grade"]

    first = run("@local/~/demo/grade-3k2x9a0q")
    second = run("@local/~/demo/grade-7hq2m4zt")  # a second `agent-env run` of the same bundle
    assert first["score"] == second["score"] == 1.0
    assert first["copy"] == "mem://host/essays/grade-3k2x9a0q/grade.txt"
    assert second["copy"] == "mem://host/essays/grade-7hq2m4zt/grade.txt"
    assert run("@local/~/demo/grade-7hq2m4zt") == second  # the step again inside that run (retry_config)
    assert plugin.shutdown() == 0
