"""Measures a Python plugin's cold start: spawn to `initialize` answered, and its import cost.

    python bench/startup.py [--python PATH] [--runs N]

PATH is the interpreter that runs the plugin (default: this one); it must have agent_env_plugin
installed. Prints the median and the fastest run, and the interpreter's own start (`-c pass`) to compare.
"""

from __future__ import annotations

import argparse
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

INITIALIZE = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"host":{"name":"agent-env","version":"0.1.0"},'
    b'"protocol":{"min":1,"max":1},"package":"agentenv-bench","settings":{}}}\n'
)


def _cpu_of(pid: int) -> float:
    """Waits for the child and returns the CPU time (user + system) it used: unlike wall-clock time,
    that barely moves when other processes load the machine."""
    _, _, usage = os.wait4(pid, 0)
    return usage.ru_utime + usage.ru_stime


def spawn_to_initialized(python: str, script: str, env: dict[str, str]) -> tuple[float, float]:
    """(wall-clock seconds from spawn to the initialize answer, CPU seconds of the whole process)."""
    started = time.perf_counter()
    child = subprocess.Popen([python, script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(INITIALIZE)
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    env = dict(os.environ, AGENT_ENV_PLUGIN="1", AGENT_ENV_PROTOCOL_VERSIONS="1-1")
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "bench_plugin.py")
        with open(script, "w") as handle:
            handle.write(PLUGIN)
        spawn_to_initialized(args.python, script, env)  # warm the page cache and .pyc files
        plugin_runs = [spawn_to_initialized(args.python, script, env) for _ in range(args.runs)]
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
    costs = [cost for cost in import_costs if cost is not None]
    if costs:
        print(f"from agent_env_plugin import Plugin (-X importtime, fastest of {len(costs)}): {min(costs) * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
