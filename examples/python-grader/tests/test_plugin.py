"""The installed plugin, started the way agent-env starts it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11: the same parser, as a package (plugin-sdk-py/tests/requirements.txt)
    import tomli as tomllib
from agent_env_plugin import ConfigError, PluginError, wire
from agent_env_plugin.conformance import object_cases
from agent_env_plugin.testing import memory_host_object_store
from grader_helpers import INSTALLED_MANIFEST, PREFIX, require_agent_env_binary

from agentenv_grader.store import FolderObjectStore


def run_step(plugin, sandbox, **step):
    step = {"id": "grade", "type": "grade_keywords", **step}
    context = {"instance_id": "@local/~/essays/grade-3k2x9a0q", "metadata": {}, "deployed_sandboxes": [sandbox]}
    return plugin.request("execute", {"type": "grade_keywords", "step": step, "context": context})


def test_the_manifest_is_installed_where_discovery_looks_and_its_exec_is_the_console_script(installed):
    assert INSTALLED_MANIFEST.is_file()
    manifest = tomllib.loads(INSTALLED_MANIFEST.read_text())
    exec_path = (INSTALLED_MANIFEST.parent / manifest["plugin"]["exec"][0]).resolve()
    assert exec_path == installed.resolve()
    assert os.access(exec_path, os.X_OK)
    # discovery: <PATH dir>/../share/agent-env/plugins/<name>.toml for the PATH dir <prefix>/bin
    assert (installed.parent / ".." / "share" / "agent-env" / "plugins" / "agentenv-grader.toml").resolve() == (
        INSTALLED_MANIFEST.resolve()
    )


def test_the_installed_manifest_matches_what_the_plugin_registers(installed, plugin_env):
    printed = subprocess.run(
        [str(installed), "--agent-env-manifest"], env=plugin_env, capture_output=True, text=True, check=True
    ).stdout
    generated = tomllib.loads(printed)
    shipped = tomllib.loads(INSTALLED_MANIFEST.read_text())
    assert generated["provides"] == shipped["provides"]
    for key in ("name", "version", "protocol", "description", "requires"):
        assert generated["plugin"][key] == shipped["plugin"][key], key
    assert generated["plugin"]["exec"] == [str(installed)]


def test_initialize_answer_matches_the_manifest(grader):
    plugin = grader()
    answer = plugin.initialize()
    shipped = tomllib.loads(INSTALLED_MANIFEST.read_text())
    assert answer["plugin"] == {"name": shipped["plugin"]["name"], "version": shipped["plugin"]["version"]}
    declared = {
        (group, name) for group, entries in shipped["provides"].items() if group != "stores" for name in entries
    }
    answered = {(c["group"], c["name"]) for c in answer["contributions"]}
    assert answered == declared
    step = next(c for c in answer["contributions"] if c["name"] == "grade_keywords")
    assert step["type"] == "grade_keywords" and step["class"] == "GradeKeywords"
    assert step["methods"] == ["execute", "from_dict", "validate"]
    assert answer["stores"] == [
        {"class": "FolderObjectStore", "kind": "object", "config_keys": ["root", "bucket"], "required_keys": ["root"]}
    ]


def test_the_explorer_page_scores_pasted_text_through_the_pipe(grader):
    plugin = grader()
    plugin.initialize()
    routes = plugin.request("explorer.router", {"name": "grader", "class": "GraderPage"})
    assert routes["page"] == "/ext/grader" and routes["title"] == "Keyword grader"
    assert {"method": "POST", "path": "/ext/grader/score"} in routes["routes"]
    page = plugin.request(
        "explorer.request",
        {"name": "grader", "class": "GraderPage", "route": "/ext/grader", "method": "GET", "path": "/ext/grader"},
    )
    assert page["status"] == 200 and '<form method="post" action="/ext/grader/score">' in page["body"]
    scored = plugin.request(
        "explorer.request",
        {
            "name": "grader",
            "class": "GraderPage",
            "route": "/ext/grader/score",
            "method": "POST",
            "path": "/ext/grader/score",
            "body": "keywords=alpha%2C+gamma&text=alpha+%3Cb%3Ebeta%3C%2Fb%3E",
        },
    )
    assert scored["status"] == 200
    assert '<p id="result">score <strong>0.5</strong></p>' in scored["body"]
    assert "alpha &lt;b&gt;beta&lt;/b&gt;" in scored["body"], "the text is escaped back into the form"
    empty = plugin.request(
        "explorer.request",
        {"name": "grader", "class": "GraderPage", "route": "/ext/grader/score", "method": "POST", "path": "/ext/grader/score", "body": "keywords=&text=x"},
    )
    assert empty["status"] == 400 and "at least one keyword" in empty["body"]


def test_grade_keywords_scores_a_file_in_the_sandbox_work_folder(grader, sandbox):
    Path(sandbox["work_dir"], "answer.txt").write_text("Photosynthesis needs light. Chlorophyll is green.")
    plugin = grader()
    plugin.initialize()
    result = run_step(
        plugin,
        sandbox,
        sandbox_name="box",
        path="/app/answer.txt",
        keywords=["photosynthesis", "chlorophyll", "xylem"],
        verifier_id="keywords",
    )
    verification = result["metadata"]["verifications"]["keywords"]
    assert verification["score"] == pytest.approx(2 / 3)
    assert [row["result"] for row in verification["results"]] == ["pass", "pass", "fail"]
    assert verification["results"][2]["justification"] == "'xylem' is not in /app/answer.txt in sandbox 'box'"


def test_the_verifier_id_defaults_to_the_step_id_and_a_missing_file_scores_zero(grader, sandbox):
    plugin = grader()
    plugin.initialize()
    result = run_step(plugin, sandbox, path="missing.txt", keywords=["a"])
    verification = result["metadata"]["verifications"]["grade"]
    assert verification["score"] == 0.0
    assert "does not exist" in verification["results"][0]["justification"]


def test_upload_report_puts_the_report_in_the_hosts_object_store(grader, sandbox):
    Path(sandbox["work_dir"], "answer.txt").write_text("alpha beta")
    plugin = grader(host_methods=memory_host_object_store())
    plugin.initialize()
    result = run_step(plugin, sandbox, path="answer.txt", keywords=["alpha"], upload_report=True)
    verification = result["metadata"]["verifications"]["grade"]
    url = verification["report_url"]
    assert url == "mem://host/grader/local_~_essays_grade-3k2x9a0q/grade.json"
    method, params = plugin.host_calls[0]
    assert method == "host.store.object.put" and params["content_type"] == "application/json"
    import base64

    report = json.loads(base64.b64decode(params["data"]))
    assert report["score"] == 1.0 and report["verifier_id"] == "grade"


def test_grade_keywords_grades_an_object_of_the_hosts_object_store(grader, sandbox):
    plugin = grader(host_methods=memory_host_object_store())
    plugin.initialize()
    put = plugin.host_methods["host.store.object.put"]
    import base64

    put({"key": "counts/essay.json", "data": base64.b64encode(b'{"words":9}').decode(), "allow_overwrite": False})
    result = run_step(plugin, sandbox, source_key="counts/essay.json", keywords=['"words":9', "absent"])
    verification = result["metadata"]["verifications"]["grade"]
    assert verification["score"] == 0.5
    assert verification["results"][0]["justification"] == "'\"words\":9' appears once in object 'counts/essay.json'"
    method, params = plugin.host_calls[0]
    assert (method, params["key"]) == ("host.store.object.read", "counts/essay.json")
    with pytest.raises(PluginError) as caught:
        plugin.request(
            "task_step.validate",
            {"type": "grade_keywords", "step": {"id": "g", "path": "a", "source_key": "k", "keywords": ["k"]}},
        )
    assert caught.value.message == "step 'g': give only one of path and source_key"


def test_a_bad_step_is_refused_at_validate_and_fails_at_execute(grader, sandbox):
    plugin = grader()
    plugin.initialize()
    with pytest.raises(PluginError) as caught:
        plugin.request("task_step.validate", {"type": "grade_keywords", "step": {"id": "g", "path": "a.txt"}})
    assert caught.value.kind == "invalid-value"
    assert caught.value.message == "step 'g': 'keywords' must be a non-empty list of strings"
    id = plugin.start_request(
        "execute",
        {
            "type": "grade_keywords",
            "step": {"id": "g", "path": "a.txt", "keywords": ["k"], "sandbox_name": "nope"},
            "context": {"deployed_sandboxes": [sandbox]},
        },
    )
    answer = plugin.wait_message(id)
    assert isinstance(answer, wire.ErrorResponse) and answer.code == -32020
    assert answer.data["error_type"] == "LookupError"
    assert answer.data["message"] == "no deployed sandbox is named 'nope'; the run has 'box'"


def test_run_by_hand_it_exits_2(installed, plugin_env):
    done = subprocess.run([str(installed)], env=plugin_env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "agentenv-grader 0.1.0 is an agent-env plugin; agent-env starts it (try agent-env plugin show agentenv-grader)"
    )


def test_the_folder_store_refuses_unknown_config_keys(grader, tmp_path):
    plugin = grader()
    plugin.initialize()
    with pytest.raises(ConfigError) as caught:
        plugin.request(
            "store.open",
            {"kind": "object", "class": "FolderObjectStore", "config": {"root": str(tmp_path), "compress": True}},
        )
    assert caught.value.message == (
        "The config table for 'agentenv-grader:FolderObjectStore' has unknown key 'compress'; it takes root, bucket"
    )


@pytest.mark.parametrize("case", object_cases.CASES, ids=object_cases.case_id)
def test_folder_store_passes_the_object_kit(case, tmp_path):
    case(FolderObjectStore(root=str(tmp_path / "objects"), bucket="kit"), "")


@pytest.mark.parametrize("case", object_cases.CASES, ids=object_cases.case_id)
def test_folder_store_passes_the_object_kit_through_the_pipe(case, grader, tmp_path):
    plugin = grader()
    plugin.initialize()
    store = plugin.open_object_store("FolderObjectStore", {"root": str(tmp_path / "objects"), "bucket": "piped"})
    case(store, "ns/")


def test_the_folder_store_keeps_its_own_files_out_of_reach(tmp_path):
    store = FolderObjectStore(root=str(tmp_path))
    store.put("a.txt", b"a", "text/plain")
    assert store.list("") == ["a.txt"]
    assert store.get_object_metadata("a.txt").content_type == "text/plain"
    for key in ("../escape", ".agentenv-meta/a.txt.json", "a/./b"):
        with pytest.raises(ValueError):
            store.put(key, b"x")


def test_the_grader_command_in_command_mode(installed, plugin_env, tmp_path):
    answer = tmp_path / "answer.txt"
    answer.write_text("alpha beta")
    to_plugin_r, to_plugin_w = os.pipe()
    from_plugin_r, from_plugin_w = os.pipe()

    def setup() -> None:
        read_end, write_end = os.dup(to_plugin_r), os.dup(from_plugin_w)
        while min(read_end, write_end) <= 4:
            read_end, write_end = os.dup(read_end), os.dup(write_end)
        os.dup2(read_end, 3)
        os.dup2(write_end, 4)

    child = subprocess.Popen(
        [str(installed)],
        env=dict(plugin_env, AGENT_ENV_PLUGIN="1", AGENT_ENV_RPC_FDS="3,4"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=setup,
        close_fds=False,
    )
    os.close(to_plugin_r)
    os.close(from_plugin_w)
    os.write(
        to_plugin_w,
        wire.encode_request(1, "initialize", {"protocol": {"min": 1, "max": 1}, "package": "agentenv-grader"})
        + wire.encode_request(2, "cli.run", {"command": "grader", "argv": [str(answer), "-k", "alpha", "-k", "gamma"]})
        + wire.encode_request(3, "cli.run", {"command": "grader", "argv": ["--nope"]}),
    )
    answers = {}
    with os.fdopen(from_plugin_r, "rb") as replies:
        for _ in range(3):
            message = wire.decode(replies.readline().rstrip(b"\n"))
            assert message is not None
            answers[message.id] = message
        os.close(to_plugin_w)
        stdout, stderr = child.communicate(timeout=30)
    assert child.returncode == 0
    assert answers[2].result == {"exit_code": 1}  # gamma is missing
    assert answers[3].result == {"exit_code": 2}  # argparse's usage error
    assert "pass  'alpha' appears once in" in stdout.decode()
    assert "score 0.5" in stdout.decode()
    assert "unrecognized arguments: --nope" in stderr.decode() or "required" in stderr.decode()


def _agent_env(tmp_path, plugin_env):
    """The agent-env binary and an environment where PATH holds only this venv's bin and the system's."""
    binary = require_agent_env_binary()
    env = dict(
        plugin_env,
        PATH=f"{PREFIX / 'bin'}{os.pathsep}/usr/bin:/bin",
        AGENT_ENV_PLUGIN_DIR=str(tmp_path / "no-plugins-dir"),
        AGENT_ENV_LOCAL_SANDBOX_DIR=str(tmp_path / "sandboxes"),
    )
    return binary, env



def test_agent_env_discovers_the_plugin_from_path_and_it_takes_effect(installed, plugin_env, tmp_path):
    binary, env = _agent_env(tmp_path, plugin_env)
    done = subprocess.run([binary, "plugin", "list", "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    packages = {p["name"]: p for p in json.loads(done.stdout)["plugins"]}
    grader = packages["agentenv-grader"]
    assert grader["version"] == "0.1.0"
    statuses = {(c["group"], c["name"]): c["status"] for c in grader["contributions"]}
    assert statuses == {
        ("agent_env.task_steps", "grade_keywords"): "active",
        ("agent_env.cli_plugins", "grader"): "active",
        ("agent_env.explorer_plugins", "grader"): "active",
    }
    check = subprocess.run([binary, "plugin", "check"], env=env, capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    show = subprocess.run(
        [binary, "plugin", "show", "agentenv-grader"], env=env, capture_output=True, text=True, timeout=120
    )
    assert show.returncode == 0, show.stderr
    assert str(INSTALLED_MANIFEST) in show.stdout
    assert "answered initialize" in show.stdout


def test_agent_env_runs_the_grader_command(installed, plugin_env, tmp_path):
    binary, env = _agent_env(tmp_path, plugin_env)
    answer = tmp_path / "answer.txt"
    answer.write_text("alpha beta")
    done = subprocess.run(
        [binary, "grader", str(answer), "-k", "alpha", "-k", "beta"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "score 1" in done.stdout


def test_agent_env_runs_a_bundle_graded_by_the_plugin(installed, plugin_env, tmp_path):
    binary, env = _agent_env(tmp_path, plugin_env)
    bundle = tmp_path / "essay-bundle"
    (bundle / "tasks").mkdir(parents=True)
    (bundle / "artifacts" / "essay").mkdir(parents=True)
    (bundle / "artifacts" / "essay" / "answer.txt").write_text("Photosynthesis uses chlorophyll.\n")
    steps = [
        {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box", "sandbox_mode": "vm", "sandbox_type": "local"},
        {
            "id": "load",
            "type": "load_artifact",
            "sandbox_name": "box",
            "artifact_id": "essay",
            "destination_path": "/app/essay/",  # a folder: the artifact is a single file
        },
        {
            "id": "grade",
            "type": "grade_keywords",
            "sandbox_name": "box",
            "path": "/app/essay/answer.txt",
            "keywords": ["photosynthesis", "chlorophyll"],
            "verifier_id": "keywords",
            "upload_report": True,
        },
    ]
    (bundle / "tasks" / "grade.json").write_text(json.dumps(steps))
    done = subprocess.run(
        [binary, "run", str(bundle)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # The summary names a verification by the id of the step that wrote it.
    assert "tasks/grade.json v1: passed (grade: 1)" in done.stdout, done.stdout
    # The report went through host.store.object.put into the host's (built-in, local) object store.
    found = (Path(env["XDG_STATE_HOME"]) / "agent-env").rglob("keywords.json")
    reports = [p for p in found if ".agentenv-meta" not in p.parts]  # not the content-type sidecar
    assert len(reports) == 1, done.stdout
    report = json.loads(reports[0].read_text())
    assert report["score"] == 1.0 and report["path"] == "/app/essay/answer.txt"


def _store_check(binary, env, project, config_toml):
    (project / ".agentenv").mkdir(parents=True, exist_ok=True)
    (project / ".agentenv" / "config.toml").write_text(config_toml)
    done = subprocess.run(
        [binary, "store", "check", "object", "--json"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done


def test_agent_env_store_check_passes_the_folder_store_found_on_path(installed, plugin_env, tmp_path):
    binary, env = _agent_env(tmp_path, plugin_env)
    root = tmp_path / "objects"
    done = _store_check(
        binary,
        env,
        tmp_path / "project",
        '[stores.object]\nimpl = "agentenv-grader:FolderObjectStore"\n'
        f'config = {{ root = "{root}", bucket = "kit" }}\n',
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["passed"] is True
    passed = sorted(c["name"] for c in report["cases"] if c["outcome"] == "passed")
    assert passed == sorted(case.__name__ for case in object_cases.CASES)
    assert any(root.rglob("*.bin")), "the kit's objects are files under the configured root"


def test_agent_env_store_check_reports_an_unknown_config_key_in_the_plugin_s_words(installed, plugin_env, tmp_path):
    binary, env = _agent_env(tmp_path, plugin_env)
    done = _store_check(
        binary,
        env,
        tmp_path / "project",
        '[stores.object]\nimpl = "agentenv-grader:FolderObjectStore"\nconfig = { root = "/tmp/x", compress = true }\n',
    )
    assert done.returncode != 0
    assert (
        "The config table for 'agentenv-grader:FolderObjectStore' has unknown key 'compress'; it takes root, bucket"
        in done.stdout + done.stderr
    )
