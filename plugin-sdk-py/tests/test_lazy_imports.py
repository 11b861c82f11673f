"""Start-up cost: `import agent_env_plugin` loads its names on first use, and a plugin answers `initialize`
without importing the modules only later requests need.

Each check runs in a child interpreter, because this test process has imported the whole SDK already.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import agent_env_plugin
from agent_env_plugin import wire

SRC = os.path.dirname(os.path.dirname(agent_env_plugin.__file__))

#: The SDK modules a plugin does not import to start and answer `initialize`; each one is imported by the
#: first request that needs it (or by the plugin's own code that uses it).
DEFERRED = (
    "agent_env_plugin.errors",
    "agent_env_plugin.explorer",
    "agent_env_plugin.host",
    "agent_env_plugin.manifest",
    "agent_env_plugin.stores",
)

#: A plugin with one task step that, when it exits, prints the SDK modules it had loaded.
PLUGIN = """
import atexit, sys

from agent_env_plugin import Plugin

plugin = Plugin("agentenv-lazy", "0.1.0")


@plugin.task_step("noop", cls="Noop")
def noop(step, context, host):
    return {}


def report():
    loaded = sorted(name for name in sys.modules if name.startswith("agent_env_plugin"))
    sys.stderr.write("LOADED " + ",".join(loaded) + "\\n")


atexit.register(report)
plugin.serve()
"""


def _run(code: str, stdin: bytes = b"", extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    # -S: without site and its .pth files, which may import modules of their own.
    env = dict(os.environ, PYTHONPATH=SRC, **(extra_env or {}))
    env.pop(wire.RPC_FDS_VAR, None)
    done = subprocess.run([sys.executable, "-S", "-c", code], input=stdin, env=env, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    return done


def test_importing_the_package_loads_none_of_its_modules():
    done = _run("import sys, agent_env_plugin; print(sorted(m for m in sys.modules if m.startswith('agent_env_plugin')))")
    assert done.stdout.decode().strip() == "['agent_env_plugin']"


def test_a_plugin_answers_initialize_without_the_deferred_modules():
    request = wire.encode_request(
        1, "initialize", {"protocol": {"min": 1, "max": 1}, "package": "agentenv-lazy", "settings": {}}
    )
    done = _run(PLUGIN, stdin=request, extra_env={wire.COOKIE_VAR: "1", wire.PROTOCOL_VERSIONS_VAR: "1-1"})
    answer = wire.decode(done.stdout.splitlines()[0])
    assert isinstance(answer, wire.Response), done.stdout
    assert answer.result["contributions"][0]["name"] == "noop"
    report = [line for line in done.stderr.decode().splitlines() if line.startswith("LOADED ")]
    assert report, done.stderr.decode()
    loaded = report[-1][len("LOADED ") :].split(",")
    assert "agent_env_plugin.plugin" in loaded
    assert [name for name in DEFERRED if name in loaded] == []


def test_every_exported_name_is_the_object_its_module_defines():
    code = """
import json, sys
import agent_env_plugin

out = {}
for name in agent_env_plugin.__all__:
    value = getattr(agent_env_plugin, name)
    module = getattr(value, "__module__", None) if isinstance(value, type) or callable(value) else None
    if module is not None and not module.startswith("agent_env_plugin"):
        module = None  # a type alias (LogLevel) is typing's object; its home is _EXPORTS's module
    home = agent_env_plugin._EXPORTS.get(name)
    at_home = home is None or getattr(sys.modules["agent_env_plugin." + home], name) is value
    out[name] = [module, at_home and (module is None or getattr(sys.modules[module], name) is value)]
print(json.dumps(out))
"""
    found = json.loads(_run(code).stdout)
    assert sorted(found) == sorted(agent_env_plugin.__all__)
    for name, (module, same) in found.items():
        assert same, name
        assert getattr(agent_env_plugin, name) is not None
        if module is not None:
            assert getattr(sys.modules[module], name) is getattr(agent_env_plugin, name), name


def test_star_import_dir_and_submodules_behave_as_before():
    code = """
import agent_env_plugin
names = {}
exec("from agent_env_plugin import *", names)
assert sorted(k for k in names if k != "__builtins__") == sorted(agent_env_plugin.__all__), names.keys()
assert set(agent_env_plugin.__all__) <= set(dir(agent_env_plugin))
# No stray public names (`annotations`, of `from __future__ import annotations`): what dir() lists beyond
# the API and the submodules starts with an underscore.
public = {n for n in dir(agent_env_plugin) if not n.startswith("_")}
modules = {n for n in public if type(getattr(agent_env_plugin, n)) is type(agent_env_plugin)}
extra = public - set(agent_env_plugin.__all__) - modules
assert not extra, extra
# The modules the package used to import stay reachable as its attributes.
assert agent_env_plugin.stores.Store is agent_env_plugin.Store
assert agent_env_plugin.wire.PROTOCOL_VERSION == agent_env_plugin.PROTOCOL_VERSION
from agent_env_plugin import manifest, peer
try:
    agent_env_plugin.NoSuchName
except AttributeError as exc:
    assert "NoSuchName" in str(exc)
else:
    raise AssertionError("an unknown name was found")
try:
    from agent_env_plugin import NoSuchName  # noqa: F401
except ImportError:
    pass
else:
    raise AssertionError("an unknown name was imported")
print("ok")
"""
    assert _run(code).stdout.decode().strip() == "ok"


def test_the_collector_is_paused_only_while_a_module_loads():
    code = """
import gc, sys
import agent_env_plugin

seen = []


def watch(event, args):
    if event == "import" and args[0].startswith("agent_env_plugin."):
        seen.append((args[0], gc.isenabled()))


sys.addaudithook(watch)
from agent_env_plugin import Plugin  # noqa: F401
assert seen and not any(enabled for _, enabled in seen), seen
assert gc.isenabled()

# A program that turned the collector off keeps it off.
gc.disable()
agent_env_plugin.stores
assert not gc.isenabled()
gc.enable()

# An import that fails turns it back on too.
sys.modules["agent_env_plugin.explorer"] = None
try:
    agent_env_plugin.Explorer
except ImportError:
    pass
else:
    raise AssertionError("the blocked import succeeded")
assert gc.isenabled()
print("ok")
"""
    assert _run(code).stdout.decode().strip() == "ok"
