"""The SDK README's "Packaging" section, followed as written: its pyproject.toml, the manifest printed with
`--agent-env-manifest --script NAME`, and a pip install that puts the manifest where agent-env looks
(`<prefix>/share/agent-env/plugins/`), its `exec` leading to the console script in `<prefix>/bin/`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from sdk_helpers import REPO

from agent_env_plugin import testing
from agent_env_plugin.testing import PluginProcess

README = REPO / "plugin-sdk-py" / "README.md"

PLUGIN = """
from agent_env_plugin import Plugin

from . import helpers  # a relative import, as a package's modules have: the README's command must run it

plugin = Plugin("agentenv-grader", "0.1.0")


@plugin.task_step("grade_essay", cls="GradeEssay")
def grade_essay(step, context, host):
    return {"metadata": {}}


def main():
    plugin.serve()


if __name__ == "__main__":
    main()
"""


def packaging_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("\n## Packaging\n")
    return text[start : text.index("\n## ", start + 1)]


def _block(section: str, language: str) -> str:
    found = re.search(rf"```{language}\n(.*?)```", section, re.S)
    assert found, f"no {language} block in the README's Packaging section"
    return found.group(1)


def test_the_readme_packaging_example_installs_a_manifest_agent_env_finds(plugin_env, tmp_path: Path):
    try:
        import setuptools  # noqa: F401
    except ImportError:
        testing.missing_in_ci("setuptools is not installed (scripts/test-python.sh installs it)")
    section = packaging_section()
    project = tmp_path / "agentenv-grader"
    (project / "src" / "agentenv_grader").mkdir(parents=True)
    (project / "pyproject.toml").write_text(_block(section, "toml"), encoding="utf-8")
    (project / "src" / "agentenv_grader" / "__init__.py").write_text("", encoding="utf-8")
    (project / "src" / "agentenv_grader" / "plugin.py").write_text(PLUGIN, encoding="utf-8")
    (project / "src" / "agentenv_grader" / "helpers.py").write_text("", encoding="utf-8")

    # The README's commands: print the manifest into the project, then install it.
    go_in, print_manifest, install = [line.split("#")[0].split() for line in _block(section, "bash").splitlines()]
    assert go_in == ["cd", "agentenv-grader"] and install == ["pip", "install", "."], section
    assigned = dict(word.split("=", 1) for word in print_manifest if "=" in word and word.isascii() and word[0].isupper())
    command = [word for word in print_manifest if word.split("=", 1)[0] not in assigned]
    assert command[0] == "python" and command[-2:] == [">", "agentenv-grader.toml"], section
    env = dict(plugin_env)
    for key, value in assigned.items():  # PYTHONPATH=src: the project's src, before what the tests had
        env[key] = os.pathsep.join(filter(None, [str(project / value), plugin_env.get(key, "")]))
    printed = subprocess.run(
        [sys.executable, *command[1:-2]], cwd=project, env=env, capture_output=True, check=True
    )
    (project / "agentenv-grader.toml").write_bytes(printed.stdout)
    prefix = tmp_path / "prefix"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input"]
        # --ignore-installed: pip would otherwise uninstall a distribution of that name from the venv
        # the tests run in (the example agentenv-grader, whose own tests run next) before installing.
        + ["--no-deps", "--no-build-isolation", "--no-index", "--ignore-installed"]
        + ["--prefix", str(prefix), str(project)],
        env=plugin_env,
        check=True,
        capture_output=True,
    )

    manifest = prefix / "share" / "agent-env" / "plugins" / "agentenv-grader.toml"
    assert manifest.is_file(), sorted(str(p.relative_to(prefix)) for p in prefix.rglob("*"))
    assert 'exec = ["../../../bin/agentenv-grader"]' in manifest.read_text()
    script = (manifest.parent / "../../../bin/agentenv-grader").resolve()
    assert script == (prefix / "bin" / "agentenv-grader").resolve() and script.is_file()

    # Started as agent-env starts it, through the console script the manifest names.
    # Where pip put the package under the prefix (lib/python3.X/site-packages, or a distribution's own layout).
    site = str(next(prefix.rglob("agentenv_grader/__init__.py")).parent.parent)
    with PluginProcess([str(script)], env=dict(plugin_env, PYTHONPATH=site), package="agentenv-grader") as plugin:
        answer = plugin.initialize()
        assert [c["name"] for c in answer["contributions"]] == ["grade_essay"]
        assert plugin.shutdown() == 0
