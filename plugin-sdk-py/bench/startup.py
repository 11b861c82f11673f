"""Measures a Python plugin's cold start: spawn to `initialize` answered, and its import cost.

    python bench/startup.py [--python PATH] [--runs N] [--project DIR]

PATH is the interpreter that runs the plugin (default: this one); it must have agent_env_plugin
installed. Prints the median and the fastest run, and the interpreter's own start (`-c pass`) to compare.
With --project (a Python step plugin made by `agent-env plugin new`), also times that plugin started as
the script pip writes for its `[project.scripts]` entry starts it: that script imports `re` and `sys`,
then the plugin's module, and calls its `main`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

PLUGIN = """
from agent_env_plugin import Plugin

plugin = Plugin("agentenv-bench", "0.1.0")

@plugin.task_step("noop", cls="Noop")
def noop(step, context, host):
    return {}

plugin.serve()
"""


def initialize(package: str) -> bytes:
    """The host's `initialize` request for `package`, as one line."""
    params = {
        "host": {"name": "agent-env", "version": "0.1.0"},
        "protocol": {"min": 1, "max": 1},
        "package": package,
        "settings": {},
    }
    message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def _cpu_of(pid: int) -> float:
    """Waits for the child and returns the CPU time (user + system) it used: unlike wall-clock time,
    that barely moves when other processes load the machine."""
    _, _, usage = os.wait4(pid, 0)
    return usage.ru_utime + usage.ru_stime


def spawn_to_initialized(argv: list[str], package: str, env: dict[str, str]) -> tuple[float, float]:
    """(wall-clock seconds from spawn to the initialize answer, CPU seconds of the whole process)."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(initialize(package))
    child.stdin.flush()
    line = child.stdout.readline()
    elapsed = time.perf_counter() - started
    if b'"result"' not in line:
        raise SystemExit(f"the plugin did not answer initialize: {line!r}")
    child.stdin.close()
    cpu = _cpu_of(child.pid)
    child.returncode = 0
    child.stdout.close()
    return elapsed, cpu


def bare_start(python: str) -> tuple[float, float]:
    started = time.perf_counter()
    child = subprocess.Popen([python, "-c", "pass"])
    cpu = _cpu_of(child.pid)
    child.returncode = 0
    return time.perf_counter() - started, cpu


def import_cost(python: str) -> float | None:
    """Seconds `from agent_env_plugin import Plugin` takes, by `-X importtime` (None when it cannot tell).

    The package imports its modules on first use, so `agent_env_plugin.plugin` shows as an import of its
    own after the package's: this adds up every top-level import of the SDK (each one's cumulative time)."""
    lines = subprocess.run(
        [python, "-X", "importtime", "-c", "from agent_env_plugin import Plugin"], capture_output=True, text=True
    ).stderr.splitlines()
    own = [line.split("|") for line in lines if line.startswith("import time:") and "| agent_env_plugin" in line]
    return sum(int(fields[1]) for fields in own) / 1e6 if own else None


def _project_runs(python: str, project: str, env: dict[str, str], runs: int) -> list[tuple[float, float]]:
    """Spawn-to-initialize runs of the step plugin in `project` (its `src/<module>/plugin.py`)."""
    src = os.path.join(project, "src")
    modules = [name for name in os.listdir(src) if os.path.isfile(os.path.join(src, name, "plugin.py"))]
    if len(modules) != 1:
        raise SystemExit(f"{src} should hold one package with a plugin.py; it holds {modules}")
    module = modules[0]
    package = module.replace("_", "-")
    path = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    project_env = dict(env, PYTHONPATH=path)
    argv = [python, "-c", f"import re, sys\nfrom {module}.plugin import main\nsys.exit(main())"]
    spawn_to_initialized(argv, package, project_env)
    return [spawn_to_initialized(argv, package, project_env) for _ in range(runs)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--project", help="a Python step plugin project made by agent-env plugin new")
    args = parser.parse_args()
    env = dict(os.environ, AGENT_ENV_PLUGIN="1", AGENT_ENV_PROTOCOL_VERSIONS="1-1")
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "bench_plugin.py")
        with open(script, "w") as handle:
            handle.write(PLUGIN)
        argv = [args.python, script]
        spawn_to_initialized(argv, "agentenv-bench", env)  # warm the page cache and .pyc files
        plugin_runs = [spawn_to_initialized(argv, "agentenv-bench", env) for _ in range(args.runs)]
        project_runs = _project_runs(args.python, args.project, env, args.runs) if args.project else None
        bare_runs = [bare_start(args.python) for _ in range(args.runs)]
        import_costs = [import_cost(args.python) for _ in range(10)]

    def ms(runs: list[tuple[float, float]]) -> str:
        wall = [w for w, _ in runs]
        cpu = [c for _, c in runs]
        return (
            f"median {statistics.median(wall) * 1000:.1f} ms, fastest {min(wall) * 1000:.1f} ms "
            f"(CPU median {statistics.median(cpu) * 1000:.1f} ms)"
        )

    print(f"interpreter: {args.python}")
    print(f"spawn to initialize answered ({args.runs} runs): {ms(plugin_runs)}")
    print(f"bare interpreter start (-c pass):               {ms(bare_runs)}")
    if project_runs is not None:
        print(f"a plugin as plugin new writes it, started as its pip script starts it: {ms(project_runs)}")
    costs = [cost for cost in import_costs if cost is not None]
    if costs:
        print(f"from agent_env_plugin import Plugin (-X importtime, fastest of {len(costs)}): {min(costs) * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
