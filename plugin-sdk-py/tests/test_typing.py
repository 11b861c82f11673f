"""The SDK's types hold a plugin to the protocol, under both type checkers a plugin author may use.

`mypy --strict` and pyright each check `typing_examples/` once: the good examples pass, and each bad one is
rejected on exactly the lines its `# expect:` comments name, with the codes they name (README.md there).
`pyright --verifytypes` finds the public API typed, and `mypy --strict -p agent_env_plugin` finds the installed
package clean, with pytest beside it or not. scripts/test-python.sh installs both checkers (pinned)
into its venv; without them these tests skip, and fail in CI.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, Set

import pytest
from sdk_helpers import HERE, REPO

from agent_env_plugin import testing

EXAMPLES = HERE / "typing_examples"
GOOD = sorted(p.name for p in EXAMPLES.glob("good_*.py"))
BAD = sorted(p.name for p in EXAMPLES.glob("bad_*.py"))
CHECKERS = ("mypy", "pyright")
#: What `pyright --verifytypes agent_env_plugin` must score: every public symbol typed, as the README says.
MIN_COMPLETENESS = 1.0

# file name -> line -> the error codes there
Findings = Dict[str, Dict[int, Set[str]]]

_EXPECT = re.compile(r"#\s*expect:(.*)$")
_CHECKER_CODES = re.compile(r"(mypy|pyright)\[([^\]]*)\]")
_MYPY_ERROR = re.compile(r"^(?P<file>[^:\s]+\.py):(?P<line>\d+): error: .*\[(?P<code>[a-z0-9-]+)\]$")


def expectations(name: str, checker: str) -> Dict[int, Set[str]]:
    """The `# expect:` comments of one example for one checker: line -> codes."""
    out: Dict[int, Set[str]] = {}
    for number, text in enumerate((EXAMPLES / name).read_text().splitlines(), start=1):
        match = _EXPECT.search(text)
        if not match:
            continue
        for who, codes in _CHECKER_CODES.findall(match.group(1)):
            if who == checker:
                out[number] = {code.strip() for code in codes.split(",") if code.strip()}
    return out


def _tool_env(tmp: Path) -> Dict[str, str]:
    """The checkers' environment: a temp HOME, this venv first on PATH (pyright finds the installed SDK
    through it), and no pyright-python version check (it would ask PyPI)."""
    env = testing.isolated_env(tmp)
    bin_dir = os.path.dirname(sys.executable)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    env["VIRTUAL_ENV"] = sys.prefix
    env["PYRIGHT_PYTHON_IGNORE_WARNINGS"] = "1"
    env["PYRIGHT_PYTHON_CACHE_DIR"] = str(tmp / "pyright-python")
    env.pop("PYTHONPATH", None)
    return env


def _need_mypy() -> None:
    import importlib.util

    if importlib.util.find_spec("mypy") is None:
        testing.missing_in_ci(f"mypy is not installed in {sys.prefix} (scripts/test-python.sh installs it)")


def _need_pyright() -> str:
    found = shutil.which("pyright", path=os.path.dirname(sys.executable))
    if found is None:
        testing.missing_in_ci(f"pyright is not installed in {sys.prefix} (scripts/test-python.sh installs it)")
    return found


@pytest.fixture(scope="session")
def tool_env(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, str]:
    return _tool_env(tmp_path_factory.mktemp("checkers"))


@pytest.fixture(scope="session")
def mypy_findings(tool_env: Dict[str, str]) -> Findings:
    _need_mypy()
    cache = REPO / "target" / "mypy-cache"  # survives between runs: a warm check takes a second
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--cache-dir", str(cache)]
        + ["--no-error-summary", "--show-error-codes", "--hide-error-context", "--no-pretty", *GOOD, *BAD],
        cwd=EXAMPLES,
        env=tool_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), f"mypy did not run (exit {done.returncode}):\n{done.stdout}{done.stderr}"
    findings: Findings = {}
    for line in done.stdout.splitlines():
        match = _MYPY_ERROR.match(line)
        if match:
            findings.setdefault(match["file"], {}).setdefault(int(match["line"]), set()).add(match["code"])
        elif ": error:" in line:
            raise AssertionError(f"a mypy error without an error code: {line}")
    return findings


@pytest.fixture(scope="session")
def pyright_findings(tool_env: Dict[str, str]) -> Findings:
    pyright = _need_pyright()
    done = subprocess.run(
        [pyright, "--outputjson", "--pythonpath", sys.executable, "-p", "pyrightconfig.json", *GOOD, *BAD],
        cwd=EXAMPLES,
        env=tool_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), f"pyright did not run (exit {done.returncode}):\n{done.stdout}{done.stderr}"
    report = json.loads(done.stdout)
    findings: Findings = {}
    for diagnostic in report["generalDiagnostics"]:
        if diagnostic["severity"] != "error":
            continue
        name = Path(diagnostic["file"]).name
        line = diagnostic["range"]["start"]["line"] + 1
        findings.setdefault(name, {}).setdefault(line, set()).add(diagnostic.get("rule", "(no rule)"))
    assert report["summary"]["filesAnalyzed"] == len(GOOD) + len(BAD), report["summary"]
    return findings


@pytest.fixture
def findings(request: pytest.FixtureRequest, checker: str) -> Findings:
    result: Findings = request.getfixturevalue(f"{checker}_findings")
    return result


def test_there_are_good_and_bad_examples():
    assert len(GOOD) >= 3 and len(BAD) >= 4, (GOOD, BAD)


@pytest.mark.parametrize("checker", CHECKERS)
@pytest.mark.parametrize("name", GOOD)
def test_a_good_example_checks_clean(checker: str, name: str, findings: Findings):
    assert findings.get(name, {}) == {}, f"{checker} rejects {name}: {findings[name]}"


@pytest.mark.parametrize("checker", CHECKERS)
@pytest.mark.parametrize("name", BAD)
def test_a_bad_example_is_rejected_on_the_expected_lines_with_the_expected_codes(
    checker: str, name: str, findings: Findings
):
    expected = expectations(name, checker)
    assert expected, f"{name} expects nothing of {checker}, so this test could not fail"
    assert findings.get(name, {}) == expected


def test_the_expectation_comments_are_read_as_written():
    assert expectations("bad_step_signature.py", "pyright")[12] == {"reportCallIssue", "reportArgumentType"}
    assert expectations("bad_step_signature.py", "mypy")[12] == {"type-var"}


def test_the_public_api_is_typed_for_pyright_verifytypes(tool_env: Dict[str, str], tmp_path: Path):
    pyright = _need_pyright()
    # Run outside the repository, so that pyright reads the installed package (with its py.typed).
    done = subprocess.run(
        [pyright, "--outputjson", "--verifytypes", "agent_env_plugin"],
        cwd=tmp_path,
        env=tool_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads(done.stdout)
    completeness = report["typeCompleteness"]
    assert completeness["packageName"] == "agent_env_plugin"
    assert completeness["exportedSymbolCounts"]["withKnownType"] > 100, completeness["exportedSymbolCounts"]
    problems = [
        f"{symbol['name']}: {diagnostic['message'].splitlines()[0]}"
        for symbol in completeness["symbols"]
        if symbol["isExported"]
        for diagnostic in symbol["diagnostics"]
        if diagnostic["severity"] == "error" and "docstring" not in diagnostic["message"]
    ]
    assert completeness["completenessScore"] >= MIN_COMPLETENESS, "\n".join(problems[:40])


@pytest.mark.parametrize("with_pytest", [True, False], ids=["with-pytest", "without-pytest"])
def test_the_installed_sdk_passes_mypy_strict(tool_env: Dict[str, str], tmp_path: Path, with_pytest: bool):
    """`mypy --strict -p agent_env_plugin`, as a plugin author may run it on the installed SDK: clean, whether
    pytest (an optional extra) is installed beside it or not."""
    _need_mypy()
    import agent_env_plugin

    args = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), "-p", "agent_env_plugin"]
    env = dict(tool_env)
    if not with_pytest:
        # A copy of the package alone on mypy's path, no site-packages: pytest cannot be found.
        source = tmp_path / "alone"
        shutil.copytree(Path(agent_env_plugin.__file__).parent, source / "agent_env_plugin")
        args.append("--no-site-packages")
        env["MYPYPATH"] = str(source)
    # Run outside the repository, so that mypy reads the installed package and no project config.
    done = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"mypy --strict -p agent_env_plugin:\n{done.stdout}{done.stderr}"
