"""The SDK in a real child process, driven over pipes the way agent-env drives it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sdk_helpers import FIXTURE

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11: the same parser, as a package (tests/requirements.txt)
    import tomli as tomllib

from agent_env_plugin import ConfigError, PluginError, wire
from agent_env_plugin.errors import MessageTooLargeError
from agent_env_plugin.testing import memory_host_object_store

CONTEXT = {"instance_id": "@local/~/demo/t-1", "metadata": {"task_id": "@local/~/demo/t"}, "deployed_sandboxes": []}


def execute(plugin, type_name, **step):
    step.setdefault("id", type_name)
    step["type"] = type_name
    return plugin.request("execute", {"type": type_name, "step": step, "context": CONTEXT})


def test_initialize_reports_every_registered_contribution_and_store(start):
    plugin = start()
    answer = plugin.initialize(settings={"timeout": 30})
    assert answer["protocol"] == 1
    assert answer["plugin"] == {"name": "agentenv-fixture", "version": "0.3.0"}
    by_name = {(c["group"], c["name"]): c for c in answer["contributions"]}
    assert by_name[("task_steps", "echo")] == {
        "group": "task_steps",
        "name": "echo",
        "type": "echo",
        "class": "Echo",
        "methods": ["execute", "from_dict"],
        "description": "Returns what it was given.",
    }
    assert by_name[("task_steps", "checked")]["methods"] == ["execute", "from_dict", "validate"]
    assert by_name[("task_steps", "sleepy")]["class"] == "Sleepy"
    assert by_name[("cli_plugins", "fixture-hello")]["methods"] == ["run"]
    assert by_name[("cli_plugins", "fixture-hello")]["class"] == "hello"
    assert by_name[("cli_root_options", "tenant")]["methods"] == ["apply"]
    assert by_name[("sandbox_providers", "fixture_box")]["methods"] == ["create_sandbox"]
    stores = {s["class"]: s for s in answer["stores"]}
    assert stores["ContentAddressedObjectStore"] == {
        "class": "ContentAddressedObjectStore",
        "kind": "object",
        "config_keys": ["root", "bucket"],
        "required_keys": ["root"],
    }
    assert stores["FixtureSecrets"]["kind"] == "secret"
    assert plugin.shutdown() == 0


def test_protocol_mismatch_is_error_32010_with_both_ranges(start):
    plugin = start()
    id = plugin.start_request("initialize", {"protocol": {"min": 2, "max": 3}, "package": "agentenv-fixture"})
    answer = plugin.wait_message(id)
    assert isinstance(answer, wire.ErrorResponse)
    assert answer.code == -32010
    assert answer.data == {
        "kind": "protocol-mismatch",
        "supported": {"min": 1, "max": 1},
        "requested": {"min": 2, "max": 3},
    }
    assert "speaks protocol 1" in answer.message and "2-3" in answer.message


def test_execute_gets_step_context_and_settings(start):
    plugin = start()
    plugin.initialize(settings={"timeout": 30})
    result = execute(plugin, "echo", essay_path="/tmp/x")
    echoed = result["metadata"]["echo"]
    assert echoed["step"] == {"id": "echo", "type": "echo", "essay_path": "/tmp/x"}
    assert echoed["context"] == CONTEXT
    assert echoed["settings"] == {"timeout": 30}


def test_a_step_has_the_time_the_host_gave_it_and_no_deadline_when_it_gave_none(start):
    plugin = start()
    plugin.initialize()
    step = {"id": "d", "type": "deadline"}
    told = plugin.request("execute", {"type": "deadline", "step": step, "context": CONTEXT, "timeout_ms": 600_000})
    # Ten minutes from when the plugin read the request, less the moment the step took to look.
    assert told["metadata"]["has_deadline"] is True
    assert 300.0 <= told["metadata"]["remaining"] <= 600.0, told
    untold = plugin.request("execute", {"type": "deadline", "step": step, "context": CONTEXT})
    assert untold["metadata"] == {"remaining": None, "has_deadline": False}
    plugin.shutdown()


def test_a_timeout_ms_that_is_not_whole_milliseconds_is_invalid_params(start):
    plugin = start()
    plugin.initialize()
    for bad in (-1, 1.5, "5000", True):
        params = {"type": "deadline", "step": {"id": "d", "type": "deadline"}, "context": CONTEXT, "timeout_ms": bad}
        answer = plugin.wait_message(plugin.start_request("execute", params))
        assert isinstance(answer, wire.ErrorResponse), (bad, answer)
        assert answer.kind == "invalid-params", (bad, answer)
        assert "'timeout_ms' must be a whole number of milliseconds" in answer.message
    plugin.shutdown()


def test_a_result_beside_metadata_is_answered_and_said_to_be_unread(start):
    plugin = start()
    plugin.initialize()
    assert execute(plugin, "misplaced") == {"verifications": {"v": {"score": 1.0}}}
    plugin.shutdown()
    assert (
        "agent-env-plugin: task step 'misplaced' returned 'verifications' beside 'metadata', which agent-env "
        "does not read; return {'metadata': {...}}, whose keys are merged into the task's metadata\n"
    ) in plugin.stderr


def test_a_step_that_raises_is_step_failed_with_its_type_and_message(start):
    plugin = start()
    plugin.initialize()
    id = plugin.start_request("execute", {"type": "fails", "step": {"id": "grade", "type": "fails"}, "context": {}})
    answer = plugin.wait_message(id)
    assert isinstance(answer, wire.ErrorResponse)
    assert answer.code == -32020
    traceback = answer.data.pop("traceback")
    assert answer.data == {"kind": "step-failed", "error_type": "ValueError", "message": "essay is empty"}
    assert answer.message == "ValueError: essay is empty"
    # The traceback travels with the answer (agent-env shows it with --verbose), not on stderr.
    assert traceback.startswith("Traceback (most recent call last):")
    assert traceback.rstrip().endswith("ValueError: essay is empty")
    # The plugin's own frames and the exception's chain, without the SDK's frames that called the step, as
    # the Go and Rust SDKs send only the plugin's chain.
    assert "agent_env_plugin" not in traceback, traceback
    assert 'in fails\n    return read_essay(step)' in traceback, traceback
    assert "in read_essay\n    return step[\"essay\"]" in traceback and "KeyError: 'essay'" in traceback, traceback
    assert "direct cause of the following exception" in traceback, traceback
    plugin.shutdown()
    assert "Traceback" not in plugin.stderr


def test_an_answer_json_cannot_carry_says_why_and_names_the_plugin(start):
    plugin = start()
    plugin.initialize()
    id = plugin.start_request("execute", {"type": "not_a_number", "step": {"id": "g", "type": "not_a_number"}, "context": {}})
    answer = plugin.wait_message(id)
    assert isinstance(answer, wire.ErrorResponse) and answer.kind == "internal-error", answer
    assert answer.message.startswith("agentenv-fixture could not send its answer to execute: it holds NaN"), answer
    plugin.shutdown()


def test_class_based_steps_and_an_unknown_type(start):
    plugin = start()
    plugin.initialize()
    assert execute(plugin, "sleepy", seconds=0.01) == {"metadata": {"slept": True}}
    with pytest.raises(PluginError) as caught:
        execute(plugin, "nope")
    assert caught.value.kind == "invalid-value"
    assert "no task step type 'nope'" in caught.value.message


def test_validate_refuses_a_bad_step_with_invalid_value(start):
    plugin = start()
    plugin.initialize()
    assert plugin.request("task_step.validate", {"type": "checked", "step": {"threshold": 0.5}}) is None
    with pytest.raises(PluginError) as caught:
        plugin.request("task_step.validate", {"type": "checked", "step": {"threshold": 3}})
    assert caught.value.kind == "invalid-value"
    assert caught.value.message == "threshold must be between 0 and 1, got 3"


def test_nested_host_calls_during_execute_get_their_answers(start):
    methods = memory_host_object_store()
    methods["host.store.secret.get"] = lambda params: {"value": "s3cret" if params["name"] == "token" else None}
    methods["host.settings"] = lambda params: {"from": "host.settings"}
    plugin = start(host_methods=methods)
    plugin.initialize()
    meta = execute(plugin, "nested")["metadata"]
    assert meta["url"] == "mem://host/nested/a.txt"
    assert meta["back"] == "from the plugin"
    assert meta["missing"] == "ObjectNotFoundError: No object at mem://host/nested/absent."
    assert meta["secret"] == "s3cret"
    assert meta["settings"] == {"from": "host.settings"}
    called = [method for method, _ in plugin.host_calls]
    assert called == [
        "host.store.object.put",
        "host.store.object.get",
        "host.store.object.get",
        "host.store.secret.get",
        "host.settings",
    ]
    put_params = plugin.host_calls[0][1]
    assert put_params["content_type"] == "text/plain" and put_params["allow_overwrite"] is False


def test_a_host_handle_kept_past_its_call_fails_without_sending_anything(start):
    plugin = start(host_methods=memory_host_object_store())
    plugin.initialize()
    keep = plugin.start_request("fixture.keep_host", {})
    # During its call the handle works, and its put names that call.
    assert plugin.wait(keep) == {"url": "mem://host/kept/during.txt"}
    assert [(method, params["call_id"]) for method, params in plugin.host_calls] == [("host.store.object.put", keep)]
    late = plugin.request("fixture.use_kept_host", {})
    assert late == {
        "error_type": "CallEndedError",
        "kind": "invalid-request",
        "ended": True,
        "message": f"host.store.object.put was not sent: the call {keep} this host handle was given for has ended; "
        "a host handle is valid only while its call runs, so call the host from inside the handler, "
        "not from a thread or value that outlives it",
    }
    assert len(plugin.host_calls) == 1, plugin.host_calls
    # Progress about the ended call is dropped; a log line is still sent (as the Rust SDK does), naming it.
    sent = [(n.method, n.params) for n in plugin.notifications]
    assert sent == [("$/log", {"level": "info", "message": "logged after the call", "call_id": keep})], sent


def test_many_requests_in_flight_at_once_are_answered_by_id(start):
    plugin = start()
    plugin.initialize()
    slow = plugin.start_request("execute", {"type": "sleepy", "step": {"seconds": 0.5}, "context": {}})
    fast = [plugin.start_request("execute", {"type": "echo", "step": {"n": i}, "context": {}}) for i in range(20)]
    for i, id in enumerate(fast):
        assert plugin.wait(id)["metadata"]["echo"]["step"] == {"n": i}
    assert plugin.wait(slow) == {"metadata": {"slept": True}}


def test_cancel_request_stops_a_running_step_and_answers_cancelled(start):
    plugin = start()
    plugin.initialize()
    id = plugin.start_request("execute", {"type": "slow", "step": {}, "context": {}})
    # Wait for the first progress notification, so the step is surely running.
    for _ in range(200):
        if plugin.notifications:
            break
        time.sleep(0.05)
    progress = plugin.notifications[0]
    assert progress.method == "$/progress"
    assert progress.params["id"] == id and progress.params["total"] == 300 and progress.params["message"] == "waiting"
    plugin.notify("$/cancelRequest", {"id": id})
    answer = plugin.wait_message(id)
    assert isinstance(answer, wire.ErrorResponse) and answer.code == -32800
    # The plugin carries on after a cancel.
    assert execute(plugin, "echo")["metadata"]["echo"]["step"]["id"] == "echo"


def test_print_and_child_processes_inside_a_step_land_on_stderr(start):
    plugin = start()
    plugin.initialize()
    assert execute(plugin, "noisy") == {"metadata": {"noisy": True}}
    assert plugin.shutdown() == 0
    assert plugin.noise == []  # nothing but protocol lines on stdout
    for text in ("hi from print", "hi from sys.stdout", "hi from fd 1", "hi from a child process"):
        assert text in plugin.stderr


def test_unknown_methods_notifications_and_garbage_input(start):
    plugin = start()
    plugin.initialize()
    with pytest.raises(PluginError) as caught:
        plugin.request("no.such.method")
    assert caught.value.kind == "method-not-found"
    plugin.send_raw(b'this is not json\n[1,2,3]\n\n{"jsonrpc":"2.0","method":"$/whatever"}\n')
    plugin.send_raw(b"[" * 200_000 + b"\n")  # too deep for the parser: noise, not a crash
    plugin.send_raw(b"\xff\xfe not utf-8\n")
    assert execute(plugin, "echo")["metadata"]["echo"]["step"]["id"] == "echo"
    plugin.shutdown()
    assert plugin.stderr.count("not a JSON-RPC message") == 4


def test_a_16_mib_payload_crosses_both_ways(start):
    plugin = start()
    plugin.initialize()
    size = 16 * 1024 * 1024
    result = execute(plugin, "big", blob="y" * size, answer_size=size)
    assert result["metadata"]["received"] == size
    assert len(result["metadata"]["blob"]) == size


def test_an_answer_over_64_mib_is_replaced_by_message_too_large(start):
    plugin = start()
    plugin.initialize()
    id = plugin.start_request("execute", {"type": "big", "step": {"answer_size": 64 * 1024 * 1024 + 1}, "context": {}})
    answer = plugin.wait_message(id, timeout=120)
    assert isinstance(answer, wire.ErrorResponse) and answer.code == -32009
    assert "pass large data by file path" in answer.message
    assert execute(plugin, "echo")["metadata"]["echo"]["step"]["id"] == "echo"


def test_a_line_over_64_mib_is_refused_with_message_too_large(start):
    plugin = start()
    plugin.initialize()
    head = b'{"jsonrpc":"2.0","id":77,"method":"execute","params":{"blob":"'
    plugin.expect(77)
    chunk = b"z" * (1024 * 1024)
    plugin.send_raw(head)
    for _ in range(65):
        plugin.send_raw(chunk)
    plugin.send_raw(b'"}}\n')
    with pytest.raises(MessageTooLargeError):
        plugin.wait(77, timeout=60)
    # The connection goes on.
    assert execute(plugin, "echo")["metadata"]["echo"]["step"]["id"] == "echo"


def test_the_plugin_exits_0_when_stdin_ends(start):
    plugin = start()
    plugin.initialize()
    plugin.close_stdin()
    assert plugin.process.wait(10) == 0


def test_requests_written_just_before_stdin_ends_are_still_answered(start):
    plugin = start()
    init = plugin.start_request("initialize", {"protocol": {"min": 1, "max": 1}})
    echo = plugin.start_request("execute", {"type": "echo", "step": {"id": "e"}, "context": {}})
    plugin.close_stdin()
    assert plugin.wait(init)["protocol"] == 1
    assert plugin.wait(echo)["metadata"]["echo"]["step"] == {"id": "e"}
    assert plugin.process.wait(10) == 0


def test_a_step_still_running_when_stdin_ends_is_cancelled_and_the_plugin_exits_0(start):
    plugin = start()
    plugin.initialize()
    slow = plugin.start_request("execute", {"type": "slow", "step": {}, "context": {}})
    while not plugin.notifications:
        time.sleep(0.02)
    plugin.close_stdin()
    assert plugin.process.wait(20) == 0
    answer = plugin.wait_message(slow)
    # Its answer, if it made it out before the exit, says it was cancelled; it never claims success.
    assert answer is None or (isinstance(answer, wire.ErrorResponse) and answer.kind == "cancelled")


def test_the_plugin_exits_0_after_shutdown_even_with_stdin_open(start):
    plugin = start()
    plugin.initialize()
    assert plugin.request("shutdown") is None
    assert plugin.process.wait(10) == 0


def test_run_by_hand_it_says_what_it_is_and_exits_2(plugin_env):
    done = subprocess.run([sys.executable, str(FIXTURE)], env=plugin_env, input=b"", capture_output=True, timeout=30)
    assert done.returncode == 2
    assert done.stdout == b""
    lines = done.stderr.decode().splitlines()
    assert lines == [
        "agentenv-fixture 0.3.0 is an agent-env plugin; agent-env starts it "
        "(try agent-env plugin show agentenv-fixture)"
    ]


def test_agent_env_manifest_prints_a_manifest_discovery_can_read(plugin_env):
    done = subprocess.run(
        [sys.executable, str(FIXTURE), "--agent-env-manifest"], env=plugin_env, capture_output=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    manifest = tomllib.loads(done.stdout.decode())
    assert manifest["plugin"]["name"] == "agentenv-fixture"
    assert manifest["plugin"]["version"] == "0.3.0"
    assert manifest["plugin"]["protocol"] == [1, 1]
    assert manifest["plugin"]["exec"] == [sys.executable, str(FIXTURE)]
    assert manifest["provides"]["task_steps"]["echo"] == {"class": "Echo", "description": "Returns what it was given."}
    assert manifest["provides"]["task_steps"]["fails"] == "Fails"
    assert manifest["provides"]["cli_plugins"]["fixture-hello"] == "hello"
    assert manifest["provides"]["stores"] == {
        "MemoryObjectStore": "object",
        "ContentAddressedObjectStore": "object",
        "FixtureSecrets": "secret",
        "TinyDocuments": "document",
    }


def test_agent_env_manifest_of_a_package_module_run_with_dash_m_runs_it_so_again(plugin_env, tmp_path):
    # A module of its own run as `python -m` runs as well by its path, wherever agent-env starts it.
    env = dict(plugin_env, PYTHONPATH=str(FIXTURE.parent))
    done = subprocess.run(
        [sys.executable, "-m", "fixture_plugin", "--agent-env-manifest"],
        env=env,
        capture_output=True,
        timeout=30,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert tomllib.loads(done.stdout.decode())["plugin"]["exec"] == [sys.executable, str(FIXTURE)]
    # A package's module is run by its name again: its file alone would lose the package it sits in. So is
    # a package run by its name (its `__main__` module).
    package = tmp_path / "pkgs" / "grader_pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(
        "import agent_env_plugin\n"
        "plugin = agent_env_plugin.Plugin('agentenv-pkg', '1.0')\n"
        "plugin.serve()\n"
    )
    env = dict(plugin_env, PYTHONPATH=str(tmp_path / "pkgs"))
    done = subprocess.run(
        [sys.executable, "-m", "grader_pkg", "--agent-env-manifest"], env=env, capture_output=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert tomllib.loads(done.stdout.decode())["plugin"]["exec"] == [sys.executable, "-m", "grader_pkg"]
    (package / "plugin.py").write_text((package / "__main__.py").read_text())
    done = subprocess.run(
        [sys.executable, "-m", "grader_pkg.plugin", "--agent-env-manifest"], env=env, capture_output=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert tomllib.loads(done.stdout.decode())["plugin"]["exec"] == [sys.executable, "-m", "grader_pkg.plugin"]


GRADER_MAIN = "import agent_env_plugin\nplugin = agent_env_plugin.Plugin('agentenv-pkg', '1.0')\nplugin.serve()\n"


def _grader_package(folder):
    """A package `grader_pkg` in `folder`, run as `python -m grader_pkg`."""
    package = folder / "grader_pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(GRADER_MAIN)
    return package


def _without_search_path(env):
    return {k: v for k, v in env.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}


def test_agent_env_manifest_of_a_package_agent_env_cannot_import_warns_on_stderr(plugin_env, tmp_path):
    # Found only through PYTHONPATH or the current folder, neither of which agent-env gives the plugin: the
    # exec is kept, stdout is the manifest alone, and stderr says what to do.
    _grader_package(tmp_path / "pkgs")
    through_pythonpath = dict(_without_search_path(plugin_env), PYTHONPATH=str(tmp_path / "pkgs"))
    cases = [
        (through_pythonpath, tmp_path, "PYTHONPATH"),
        (_without_search_path(plugin_env), tmp_path / "pkgs", "the current folder"),
    ]
    for env, cwd, through in cases:
        argv = [sys.executable, "-m", "grader_pkg", "--agent-env-manifest"]
        done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, timeout=30)
        assert done.returncode == 0, done.stderr
        assert tomllib.loads(done.stdout.decode())["plugin"]["exec"] == [sys.executable, "-m", "grader_pkg"]
        assert done.stderr.decode() == (
            f"warning: agent-env will not find grader_pkg from another folder: this run found it through {through}, "
            f"which agent-env does not give the plugin, and it is not installed in {sys.executable}. Install the "
            "package into this interpreter (pip install -e . in its project folder), or, for a pip package with a "
            "console script NAME, print its manifest with --agent-env-manifest --script NAME\n"
        )
        # The packaged form names the console script, which agent-env finds: nothing to warn of.
        done = subprocess.run(
            [sys.executable, "-m", "grader_pkg", "--agent-env-manifest", "--script", "agentenv-pkg"],
            env=env,
            cwd=cwd,
            capture_output=True,
            timeout=30,
        )
        assert done.returncode == 0 and done.stderr == b"", done.stderr


def test_agent_env_manifest_of_a_package_in_a_site_packages_folder_does_not_warn(plugin_env, tmp_path):
    # The user site-packages folder of a PYTHONUSERBASE of the test's own (a venv leaves it off sys.path, so
    # PYTHONPATH names it too): a package installed there is this interpreter's.
    env = dict(_without_search_path(plugin_env), PYTHONUSERBASE=str(tmp_path / "user"))
    asked = [sys.executable, "-c", "import site; print(site.getusersitepackages())"]
    found = subprocess.run(asked, env=env, capture_output=True, check=True, timeout=30)
    user_site = Path(found.stdout.decode().strip())
    _grader_package(user_site)
    env["PYTHONPATH"] = str(user_site)
    argv = [sys.executable, "-m", "grader_pkg", "--agent-env-manifest"]
    done = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert tomllib.loads(done.stdout.decode())["plugin"]["exec"] == [sys.executable, "-m", "grader_pkg"]
    assert done.stderr == b""


def test_agent_env_manifest_names_the_interpreter_by_its_normalised_path(plugin_env, tmp_path):
    # Started as `../venv/bin/python` from a folder beside the venv, Python may report its path as
    # `/x/loose/../venv/bin/python`; exec names `/x/venv/bin/python`, its symlinks kept (a venv's python is one).
    loose = tmp_path / "loose"
    loose.mkdir()
    python = os.path.relpath(sys.executable, loose)
    assert python.startswith(".."), python
    _grader_package(tmp_path / "pkgs")
    env = dict(_without_search_path(plugin_env), PYTHONPATH=str(tmp_path / "pkgs"))
    for args, exec_argv in [
        ([str(FIXTURE)], [sys.executable, str(FIXTURE)]),
        (["-m", "grader_pkg"], [sys.executable, "-m", "grader_pkg"]),
    ]:
        done = subprocess.run(
            [python, *args, "--agent-env-manifest"], env=env, cwd=loose, capture_output=True, timeout=30
        )
        assert done.returncode == 0, done.stderr
        assert tomllib.loads(done.stdout.decode())["plugin"]["exec"] == exec_argv


def test_agent_env_manifest_with_script_prints_what_a_pip_package_ships(plugin_env):
    # The packaged form (README: Packaging): exec is the console script, relative to the folder pip installs
    # the manifest into (<prefix>/share/agent-env/plugins/); the rest is the same as for the plain option.
    def printed(*args):
        argv = [sys.executable, str(FIXTURE), "--agent-env-manifest", *args]
        return subprocess.run(argv, env=plugin_env, capture_output=True, timeout=30)

    plain, packaged = printed(), printed("--script", "agentenv-fixture")
    assert packaged.returncode == 0, packaged.stderr
    assert printed("--script=agentenv-fixture").stdout == packaged.stdout
    manifest = tomllib.loads(packaged.stdout.decode())
    assert manifest["plugin"]["exec"] == ["../../../bin/agentenv-fixture"]
    manifest["plugin"]["exec"] = [sys.executable, str(FIXTURE)]
    assert manifest == tomllib.loads(plain.stdout.decode())
    for wrong in (["--script"], ["--script", "bin/x"], ["--scrip", "x"], ["--script="]):
        done = printed(*wrong)
        assert done.returncode == 2 and done.stdout == b"", wrong
        assert b"usage: --agent-env-manifest [--script NAME]" in done.stderr, done.stderr


def test_store_open_checks_config_keys_with_the_built_in_message(start):
    plugin = start()
    plugin.initialize()
    with pytest.raises(ConfigError) as caught:
        plugin.request(
            "store.open",
            {"kind": "object", "class": "ContentAddressedObjectStore", "config": {"root": "/r", "compress": True}},
        )
    assert caught.value.message == (
        "The config table for 'agentenv-fixture:ContentAddressedObjectStore' has unknown key 'compress'; "
        "it takes root, bucket"
    )
    with pytest.raises(ConfigError) as caught:
        plugin.request("store.open", {"kind": "object", "class": "ContentAddressedObjectStore", "config": {}})
    assert caught.value.message == (
        "The config table for 'agentenv-fixture:ContentAddressedObjectStore' has no value for 'root'; "
        "it takes root, bucket"
    )
    with pytest.raises(ConfigError) as caught:
        plugin.request("store.open", {"kind": "object", "class": "Nope", "config": {}})
    assert "names no store class" in caught.value.message
    # A value of another type than the constructor's annotation: the Go SDK's message, before anything is built.
    with pytest.raises(ConfigError) as caught:
        plugin.request("store.open", {"kind": "object", "class": "ContentAddressedObjectStore", "config": {"root": 5}})
    assert caught.value.message == (
        "Cannot build 'agentenv-fixture:ContentAddressedObjectStore' from its config table: "
        "the store config key 'root' must be a string, not 5"
    )


def test_store_errors_keep_their_kind_across_the_pipe(start):
    plugin = start()
    plugin.initialize()
    handle = plugin.request("store.open", {"kind": "object", "class": "MemoryObjectStore", "config": {"bucket": "b"}})[
        "handle"
    ]
    assert handle == "s1"
    url = plugin.request("store.object.put", {"handle": handle, "key": "k", "data": "aGk=", "content_type": None})[
        "url"
    ]
    assert url == "mem://b/k"
    cases = [
        ("store.object.get", {"url": "mem://b/absent"}, -32000, "not-found"),
        ("store.object.put", {"key": "k", "data": "aGk="}, -32001, "already-exists"),
        ("store.object.get_object_key", {"url": "s3://other/k"}, -32002, "foreign-url"),
        ("store.object.get", {}, -32602, "invalid-params"),
        ("store.object.frobnicate", {}, -32601, "method-not-found"),
        ("store.document.find_one", {}, -32602, "invalid-params"),
    ]
    for method, params, code, kind in cases:
        answer = plugin.wait_message(plugin.start_request(method, {"handle": handle, **params}))
        assert isinstance(answer, wire.ErrorResponse), method
        assert (answer.code, answer.kind) == (code, kind), (method, answer)
    secrets = plugin.request(
        "store.open", {"kind": "secret", "class": "FixtureSecrets", "config": {"values": {"a": "", "b": "2"}}}
    )["handle"]
    assert plugin.request("store.secret.get", {"handle": secrets, "name": "a"}) == {"value": ""}
    assert plugin.request("store.secret.get", {"handle": secrets, "name": "zz"}) == {"value": None}
    # An exception no one meant to raise: its traceback goes to stderr, where agent-env shows it.
    answer = plugin.wait_message(plugin.start_request("store.secret.get", {"handle": secrets, "name": "explode"}))
    assert isinstance(answer, wire.ErrorResponse) and answer.kind == "internal-error", answer
    # Its type in the message, as the Go SDK sends a store's unexpected error: agent-env words both alike.
    assert answer.message == "RuntimeError: the vault is sealed", answer
    assert answer.data == {"kind": "internal-error", "error_type": "RuntimeError"}, answer
    # Written before the answer, but read by the test's own stderr thread: give it a moment.
    deadline = time.monotonic() + 10
    while "the vault is sealed" not in plugin.stderr and time.monotonic() < deadline:
        time.sleep(0.01)
    assert "store.secret.get raised:" in plugin.stderr
    assert "Traceback" in plugin.stderr and "the vault is sealed" in plugin.stderr
    # From the store's own code down: not the SDK's frames that answered the request.
    assert "in get\n" in plugin.stderr and "peer.py" not in plugin.stderr, plugin.stderr
    meta = plugin.request("store.object.get_object_metadata", {"handle": handle, "key": "k"})["metadata"]
    assert meta["size"] == 2 and meta["content_type"] == "application/octet-stream"
    assert meta["last_modified"].endswith("Z")


def test_generic_contributions_and_root_options(start):
    plugin = start()
    plugin.initialize()
    assert plugin.request("sandbox_providers.create_sandbox", {"type": "fixture_box", "name": "b1"}) == {
        "sandbox_id": "box-b1"
    }
    assert plugin.request("cli.root_option", {"flag": "--tenant", "value": "acme"}) == {
        "config_path": "/tenants/acme.toml"
    }
    assert plugin.request("cli.root_option", {"flag": "--tenant", "value": None}) == {}
    assert plugin.request("fixture.ping", {"n": 41}) == {"pong": 42}


def test_serving_freezes_the_start_up_objects_and_still_collects_new_cycles(start):
    plugin = start()
    plugin.initialize()
    answer = plugin.request("fixture.collector", {})
    # The modules, classes and registrations of the start-up are left to the end of the process ...
    assert answer["frozen"] > 1000
    # ... and what the plugin makes while it serves is still collected, cycles included.
    assert answer["cycle_collected"] is True
    assert plugin.shutdown() == 0


def _command_mode(plugin_env, tmp_path, argv):
    """Runs the fixture's `fixture-hello` command with `argv` the way the host's command mode does:
    the protocol on two extra pipes (fds 3 and 4), the terminal on stdin/stdout/stderr. Returns the
    answers by id, the process's exit code, its stdout and its stderr."""
    to_plugin_r, to_plugin_w = os.pipe()
    from_plugin_r, from_plugin_w = os.pipe()
    env = dict(plugin_env, AGENT_ENV_PLUGIN="1", AGENT_ENV_RPC_FDS="3,4")

    def setup() -> None:
        # Move both ends above 4 first: a pipe end may itself be fd 3 or 4.
        read_end, write_end = os.dup(to_plugin_r), os.dup(from_plugin_w)
        while min(read_end, write_end) <= 4:
            read_end, write_end = os.dup(read_end), os.dup(write_end)
        os.dup2(read_end, 3)
        os.dup2(write_end, 4)

    child = subprocess.Popen(
        [sys.executable, str(FIXTURE)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=setup,
        close_fds=False,  # subprocess would close fds 3 and 4 after setup; every other fd is non-inheritable
    )
    os.close(to_plugin_r)
    os.close(from_plugin_w)
    requests = [
        wire.encode_request(1, "initialize", {"protocol": {"min": 1, "max": 1}, "package": "agentenv-fixture"}),
        wire.encode_request(
            2,
            "cli.run",
            {"command": "fixture-hello", "argv": argv, "cwd": str(tmp_path), "interactive": False},
        ),
    ]
    os.write(to_plugin_w, b"".join(requests))
    answers = {}
    with os.fdopen(from_plugin_r, "rb") as replies:
        for _ in range(2):
            message = wire.decode(replies.readline().rstrip(b"\n"))
            assert message is not None, child.communicate(timeout=30)
            answers[message.id] = message
        os.close(to_plugin_w)
        stdout, stderr = child.communicate(timeout=30)
    return answers, child.returncode, stdout, stderr


def test_command_mode_runs_a_cli_command_over_fds_3_and_4(plugin_env, tmp_path):
    answers, code, stdout, stderr = _command_mode(plugin_env, tmp_path, ["a", "b", "c"])
    assert code == 0, stderr
    assert answers[1].result["plugin"]["name"] == "agentenv-fixture"
    assert answers[2].result == {"exit_code": 3}
    assert stdout == b"hello a b c\n"  # the terminal's stdout is the command's own


def test_a_command_that_raises_shows_its_traceback_and_exits_1(plugin_env, tmp_path):
    answers, code, _, stderr = _command_mode(plugin_env, tmp_path, ["fail"])
    assert code == 0, stderr
    assert answers[2].result == {"exit_code": 1}
    text = stderr.decode()
    # As an uncaught exception in any Python program: where it came from, then what it was.
    assert text.startswith("Traceback (most recent call last):\n"), text
    assert 'in run\n    raise RuntimeError("told to fail")' in text, text
    assert text.endswith(
        "RuntimeError: told to fail\nError: agent-env fixture-hello failed: RuntimeError: told to fail\n"
    ), text


def test_the_sdk_imports_nothing_heavy_at_start_up(plugin_env):
    code = (
        "import sys; before = set(sys.modules); import agent_env_plugin;"
        "heavy = [m for m in ('asyncio', 'typing', 'inspect', 'dataclasses', 'subprocess', 'tempfile', 'datetime',"
        " 'json', 're', 'threading', 'functools', 'collections')"
        " if m in sys.modules and m not in before];"
        "print(','.join(heavy))"
    )
    # -S: without site and its .pth files, which on some machines import half the standard library.
    import agent_env_plugin

    env = dict(plugin_env, PYTHONPATH=os.path.dirname(os.path.dirname(agent_env_plugin.__file__)))
    done = subprocess.run([sys.executable, "-S", "-c", code], env=env, capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().strip() == ""


def test_manifest_of_a_plugin_is_valid_toml_with_quoted_keys():
    from agent_env_plugin import Plugin

    plugin = Plugin("agentenv-odd", "1.0.0", exec=["/opt/odd bin/run"], requires={"agentenv-framework": ">=0.1.0"})
    plugin.contribute("envs", "weird.name", {"from_dict": lambda p, h: {}}, cls='Class "Q"')
    text = plugin.manifest()
    parsed = tomllib.loads(text)
    assert parsed["plugin"]["exec"] == ["/opt/odd bin/run"]
    assert parsed["plugin"]["requires"] == {"agentenv-framework": ">=0.1.0"}
    assert parsed["provides"]["envs"] == {"weird.name": 'Class "Q"'}
    assert json.loads(json.dumps(parsed))  # plain data


def test_a_document_store_answers_in_the_wire_shapes(start):
    plugin = start()
    plugin.initialize()
    handle = plugin.request("store.open", {"kind": "document", "class": "TinyDocuments", "config": {}})["handle"]

    def call(op, **params):
        return plugin.request(f"store.document.{op}", {"handle": handle, "collection": "tasks", **params})

    assert call("insert", doc={"id": "t1", "v": 1}) is None
    assert call("find_one", filter={"id": [{"op": "eq", "value": "t1"}]}, sort=None) == {"doc": {"id": "t1", "v": 1}}
    assert call("find_one", filter={"id": [{"op": "eq", "value": "zz"}]}) == {"doc": None}
    assert call("count", filter={}, some_future_param=True) == {"count": 1}  # unknown params are ignored
    for op, params, kind in (
        ("insert", {"doc": {"id": "t1"}}, "duplicate-key"),
        ("delete", {"filter": {}}, "not-supported"),
        ("count", {}, "invalid-params"),
    ):
        with pytest.raises(PluginError) as caught:
            call(op, **params)
        assert caught.value.kind == kind, op
    assert "TinyDocuments does not implement delete" in str(pytest.raises(PluginError, call, "delete", filter={}).value)


def test_host_documents_unwrap_the_wire_shapes(start):
    methods = {
        "host.store.document.find_one": lambda p: {"doc": {"id": "t1", "filter_was": p["filter"]}},
        "host.store.document.count": lambda p: {"count": 7},
    }
    plugin = start(host_methods=methods)
    plugin.initialize()
    meta = execute(plugin, "documents")["metadata"]
    assert meta == {"found": {"id": "t1", "filter_was": {"id": [{"op": "eq", "value": "t1"}]}}, "count": 7}
    # The call names the execute request it works for (call_id), so a host with several in flight knows.
    method, params = plugin.host_calls[0]
    assert method == "host.store.document.find_one"
    assert params == {"collection": "tasks", "filter": {"id": [{"op": "eq", "value": "t1"}]}, "sort": None,
                      "call_id": params["call_id"]}
    assert isinstance(params["call_id"], int)


def test_a_host_that_names_another_package_gets_answered_and_warned_about(start):
    plugin = start(package="agentenv-other")
    assert plugin.initialize()["plugin"]["name"] == "agentenv-fixture"
    plugin.shutdown()
    assert "started this plugin as package 'agentenv-other', but it is 'agentenv-fixture'" in plugin.stderr


def test_canonical_names_fold_case_and_separator_runs():
    from agent_env_plugin.plugin import canonical_name

    assert canonical_name("AgentEnv_Old") == "agentenv-old"
    assert canonical_name("acme.browser") == "acme-browser"
    assert canonical_name("a-_.b") == "a-b"


def _gone(pid: int) -> bool:
    """True once the process has exited (a zombie that nobody reaps counts as exited)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_the_plugin_exits_when_agent_env_dies_even_if_stdin_stays_open(plugin_env, tmp_path):
    # A stand-in for agent-env starts the plugin and dies; the test keeps the plugin's stdin open.
    read_end, write_end = os.pipe()
    stderr_path = tmp_path / "stderr.txt"
    starter = (
        "import subprocess, sys\n"
        f"child = subprocess.Popen([sys.executable, {str(FIXTURE)!r}], stdin=0, stdout=subprocess.PIPE,"
        f" stderr=open({str(stderr_path)!r}, 'w'))\n"
        "child.stdout.readline()\n"  # the answer to initialize: the plugin runs, with this as its parent
        "print(child.pid)\n"
    )
    env = dict(plugin_env, AGENT_ENV_PLUGIN="1")
    os.write(write_end, wire.encode_request(1, "initialize", {"protocol": {"min": 1, "max": 1}}))
    done = subprocess.run(
        [sys.executable, "-c", starter], stdin=read_end, capture_output=True, text=True, env=env, timeout=60
    )
    os.close(read_end)
    try:
        assert done.returncode == 0, done.stderr
        pid = int(done.stdout)
        for _ in range(300):
            if _gone(pid):
                break
            time.sleep(0.05)
        assert _gone(pid), "the plugin is still running after its parent died"
        assert "is gone; exiting" in stderr_path.read_text()
    finally:
        os.close(write_end)
