"""Drives headless Chromium through an explorer that stops and starts again while its pages are open.
The check starts that explorer itself (`agent-env up --port P`, in the world of the environment it is
given: its HOME and state), on a port of its own so it can start it again at the same address.

- queued: five runs of a task whose second step waits for a file the check writes (only four run at
  once): the fifth's Run page says it waits for a free slot, and shows no start time; its live region
  (and a running run's) tells a screen reader the run's status.
- lost contact: with a running run's page and the Home page open, the explorer is stopped (Ctrl-C,
  which cancels its runs): each page says it lost contact with the explorer and is retrying, in place of
  the browser's own error, and the Run page's Cancel is not offered meanwhile.
- back: the explorer starts again at the same address. Without being loaded again, the Home page drops
  the notice and shows the runs as they ended; the Run page drops it too and says, in the UI's words,
  that the run was started by an explorer that has since stopped, with a link to the instance it had
  shown (the new explorer does not know the runs the old one started).

Exits non-zero, naming the step, when anything is not as expected."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote

from run_state_check import mark_load, same_load, texts, wait_until, waiting_bundle
from ui_check import browser_arguments, chromium_session
from webdriver import Session, WebDriverError

LOST = "#lost-contact"
WAITING = "Waiting for a free slot (at most 4 runs at once)"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Explorer:
    """`agent-env up --port PORT` in `home`, its output in `log`."""

    def __init__(self, agent_env: str, home: Path, port: int, log: Path) -> None:
        self.agent_env, self.home, self.port, self.log = agent_env, home, port, log
        self.base = f"http://127.0.0.1:{port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen([self.agent_env, "up", "--port", str(self.port)], cwd=self.home,
                                            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        wait_until(f"the explorer to answer at {self.base}", self.answers)

    def answers(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise WebDriverError(f"agent-env up exited ({self.process.returncode}): {self.output()}")
        try:
            with urllib.request.urlopen(self.base + "/api/v1/health", timeout=5) as response:
                return response.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def stop(self) -> None:
        """Ctrl-C, as a person stops it: it cancels its runs, waits for their teardown, exits 0."""
        if self.process is None:
            return
        process, self.process = self.process, None
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        try:
            code = process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise WebDriverError(f"agent-env up did not stop on Ctrl-C: {self.output()}") from None
        if code != 0:
            raise WebDriverError(f"agent-env up exited {code} on Ctrl-C: {self.output()}")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def api(self, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Origin": self.base} if body is not None else {}
        request = urllib.request.Request(self.base + path, data=data, headers=headers)
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())


def statuses(explorer: Explorer, workflows: list[str]) -> dict[str, str]:
    return {w: str(explorer.api(f"/api/v1/workflows/{quote(w, safe='')}")["status"]) for w in workflows}


def four_running_one_queued(explorer: Explorer, workflows: list[str]) -> dict[str, str] | None:
    now = statuses(explorer, workflows)
    words = sorted(now.values())
    return now if words == ["queued"] + ["running"] * 4 else None


def no_raw_error(browser: Session, page: str) -> None:
    shown = texts(browser, "main .error")
    if shown:
        raise WebDriverError(f"the {page} page shows the errors {shown!r} while the explorer is away")
    if "Failed to fetch" in str(browser.execute("return document.body.innerText;")):
        raise WebDriverError(f"the {page} page shows the browser's 'Failed to fetch'")


def said_live(browser: Session, expected: str) -> None:
    """The Run page's polite live region says `expected` (the run's status)."""
    region = browser.wait_css("#run-live")
    if browser.attribute(region, "aria-live") != "polite":
        raise WebDriverError("the Run page's live region is not polite")
    browser.wait_for(f"the live region to say {expected!r}", lambda: browser.execute(
        "return document.getElementById('run-live').textContent === arguments[0];", expected))


def check(explorer: Explorer, browser: Session, shots: Path, home: Path, work: Path) -> None:
    release = work / "gate.release"
    task_id = waiting_bundle(home, "gate", release)
    explorer.start()
    print("queued: store the gate task (one run with its gate open), then start five runs of it")
    release.touch()
    done = subprocess.run([explorer.agent_env, "run", "./gate"], cwd=home, capture_output=True, text=True,
                          timeout=300, check=False)
    if done.returncode != 0:
        raise WebDriverError(f"agent-env run ./gate exited {done.returncode}: {done.stdout}{done.stderr}")
    release.unlink()
    started = explorer.api(f"/api/v1/tasks/{quote(task_id, safe='')}/runs", {"count": 5})
    workflows = [str(r["workflow_id"]) for r in started["runs"]]
    now = wait_until("four runs going and one waiting for a slot", lambda: four_running_one_queued(explorer, workflows))
    queued = next(w for w, s in now.items() if s == "queued")
    running = next(w for w, s in now.items() if s == "running")

    windows: dict[str, str] = {}
    windows["queued"] = browser.window()
    browser.get(f"{explorer.base}/runs/{quote(queued, safe='')}")
    browser.wait_text("#run-waiting", WAITING)
    said_live(browser, "Run queued.")
    header = browser.text(browser.wait_css("#run-header"))
    if "started" in header:
        raise WebDriverError(f"the queued run's page says {header!r}: a start time before it started")
    browser.screenshot(shots / "17-queued-run.png")
    print(f"  its header: {header}")

    print("lost contact: a running run's page and Home are open; the explorer stops")
    windows["run"] = browser.new_window()
    browser.get(f"{explorer.base}/runs/{quote(running, safe='')}")
    card = browser.wait_css("#run-instances [data-instance]")
    instance_id = browser.attribute(card, "data-instance")
    browser.wait_text("#run-status", "running")
    said_live(browser, "Run running.")
    mark_load(browser)
    windows["home"] = browser.new_window()
    browser.get(explorer.base + "/")
    browser.wait_css("#recent-runs")
    mark_load(browser)

    explorer.stop()
    said = f"Lost contact with the explorer at {explorer.base}; retrying"
    for page in ("run", "home"):
        browser.switch_to(windows[page])
        browser.wait_text(LOST, said)
        no_raw_error(browser, page)
    browser.switch_to(windows["run"])
    offered = browser.execute("const c = document.getElementById('cancel-run'); return !!c && !c.hidden && !c.disabled;")
    if offered:
        raise WebDriverError("the Run page offers Cancel while the explorer is away")
    browser.screenshot(shots / "18-lost-contact.png")

    print("back: the explorer starts again at the same address")
    explorer.start()
    browser.switch_to(windows["run"])
    gone = browser.wait_text("#run-gone", "This run was started by an explorer that has since stopped")
    browser.wait_for("the notice to go", lambda: browser.find(LOST) is None)
    linked = browser.wait_css("#run-gone a.gone-instance")
    if browser.attribute(linked, "href") != f"/instances/{quote(str(instance_id), safe='')}":
        raise WebDriverError(f"the Run page links {browser.attribute(linked, 'href')!r}, not its instance {instance_id}")
    same_load(browser, "run")
    browser.screenshot(shots / "19-run-of-a-stopped-explorer.png")
    print(f"  the Run page: {gone}")
    browser.switch_to(windows["home"])
    browser.wait_for("the Home page to drop the notice", lambda: browser.find(LOST) is None)
    browser.wait_text(f'#recent-runs [data-instance="{instance_id}"] .badge', "cancelled")
    same_load(browser, "home")
    no_raw_error(browser, "home")
    explorer.stop()


def main() -> int:
    parser = browser_arguments(__doc__, explorer=False)
    parser.add_argument("--agent-env", required=True, help="the agent-env binary")
    parser.add_argument("--home", required=True, type=Path, help="the HOME of the world the explorer serves")
    parser.add_argument("--work", required=True, type=Path, help="a folder for the check's own files")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    explorer = Explorer(args.agent_env, args.home, free_port(), args.work / "explorer.out")
    try:
        with chromium_session(args.driver, args.chromium, args.screenshots, "failed-contact.png") as browser:
            check(explorer, browser, args.screenshots, args.home, args.work)
    except (WebDriverError, OSError, urllib.error.URLError, subprocess.SubprocessError) as error:
        print(f"FAILED: {error}", file=sys.stderr)
        print(f"--- explorer output\n{explorer.output() if explorer.log.exists() else ''}", file=sys.stderr)
        return 1
    finally:
        explorer.kill()
        (args.work / "gate.release").touch()  # a step left waiting ends at once
    print("The UI says when it lost contact with the explorer, and goes on once it is back")
    return 0


if __name__ == "__main__":
    sys.exit(main())
