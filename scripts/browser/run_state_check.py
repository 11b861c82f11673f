"""Drives headless Chromium through two runs of `agent-env run`, started by this check in the world
the explorer reads (its HOME and state), each on a folder bundle whose second step waits for a file
the check writes (so no step's length is guessed):

- interrupted: the Task instance page of a run under way shows it running; the run's agent-env is
  killed (SIGKILL, its journal left behind), and the same page, not loaded again, shows the instance
  interrupted, the warning that its run ended without finishing it, and its steps as succeeded,
  interrupted, not run; the Home page lists it as interrupted.
  Redrawn, the page keeps what the person did: the instance document they opened stays open, and the
  link they focused keeps the focus.
- live: the Task page, open while the run goes on, shows its run group's runs as "1 so far" and the
  group not complete while its run goes; once the run ends, the same page, not loaded again, shows
  the group's total, 1 passed, and complete.
- failed: a task whose second step fails; its instance page says "1 of 2 steps succeeded, 1 failed"
  (the failed step is not counted with the ones that succeeded) and shows no empty Verifications
  heading. Its bundle's folder is then removed: its Task page's Run button answers an error, and a
  second click replaces that error rather than adding another.
- marked failed: the killed run's instance, once a later run marked it failed, says on its page that
  its end is not known and when it was marked, its times shown as `2026-12-07 04:18:27 UTC`.
- the Tasks page pages through the tasks (two a page, as its address asks); a page past the end says
  so, with a button to the last page; the whole list on one page says how much it holds; a page size
  the list does not take (`per_page=0`) is noted, and so is a page number that is none (a Task page's
  `runs_page=abc`). Enter on a Run button that fails leaves the focus
  on it.

Exits non-zero, naming the step, when anything is not as expected."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable, TypeVar
from urllib.parse import quote

from ui_check import browser_arguments, chromium_session, no_error_on_page
from webdriver import Session, WebDriverError

T = TypeVar("T")


def api(base: str, path: str) -> Any:
    with urllib.request.urlopen(base + path, timeout=60) as response:
        return json.loads(response.read())


def wait_until(what: str, check: Callable[[], T | None], timeout: float = 120.0) -> T:
    """Polls `check` (no browser) until it returns something truthy; fails naming `what`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.1)
    raise WebDriverError(f"timed out waiting for {what}")


def waiting_bundle(home: Path, name: str, release: Path) -> str:
    """A folder bundle `name` in `home` whose one task deploys a sandbox, then waits (at most two
    minutes) until `release` exists, then checks a command succeeds. Its task's id."""
    folder = home / name / "tasks"
    folder.mkdir(parents=True, exist_ok=True)
    wait = f"for _ in $(seq 1 1200); do [ -e '{release}' ] && exit 0; sleep 0.1; done; exit 1"
    task = [
        {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
        {"id": "wait", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "w",
         "criteria": [{"type": "bash_cmd_succeeds", "criterion": "released", "bash_cmd": wait}]},
        {"id": "after", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "a",
         "criteria": [{"type": "bash_cmd_succeeds", "criterion": "ok", "bash_cmd": "true"}]},
    ]
    (folder / f"{name}.json").write_text(json.dumps(task))
    return f"@local/~/{name}/{name}"


class Run:
    """`agent-env run ./NAME` in `home`, in the background, its output in `log`."""

    def __init__(self, agent_env: str, home: Path, name: str, log: Path) -> None:
        self.log = log
        with open(log, "wb") as out:
            self.process = subprocess.Popen([agent_env, "run", f"./{name}"], cwd=home, stdout=out,
                                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def alive(self) -> bool:
        if self.process.poll() is not None:
            raise WebDriverError(f"agent-env run exited ({self.process.returncode}): {self.output()}")
        return True

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def running_instance(base: str, task_id: str, run: Run) -> dict[str, Any] | None:
    """The instance of `task_id` under way at its second step (the first one recorded), if any."""
    run.alive()
    items = api(base, "/api/v1/task-instances?status=running&limit=50")["items"]
    found = [i for i in items if i.get("task_id") == task_id and i.get("current_step") == 1]
    return found[0] if found else None


def mark_load(browser: Session) -> None:
    browser.execute("window.__sameLoad = true;")


def same_load(browser: Session, page: str) -> None:
    if browser.execute("return window.__sameLoad === true;") is not True:
        raise WebDriverError(f"the {page} page was loaded again instead of updating in place")


def texts(browser: Session, css: str) -> list[str]:
    found = browser.execute("return [...document.querySelectorAll(arguments[0])].map(e => e.textContent);", css)
    return [str(t) for t in found or []]


def interrupted(base: str, browser: Session, shots: Path, agent_env: str, home: Path, work: Path) -> str:
    release = work / "sleepy.release"
    task_id = waiting_bundle(home, "sleepy", release)
    print("interrupted: agent-env run ./sleepy, under way")
    run = Run(agent_env, home, "sleepy", work / "sleepy.out")
    try:
        instance = wait_until("the sleepy task's instance at its second step",
                              lambda: running_instance(base, task_id, run))
        instance_id = str(instance["instance_id"])
        browser.get(f"{base}/instances/{quote(instance_id, safe='')}")
        browser.wait_text("h1 .badge", "running")
        mark_load(browser)
        # What a person did on the page, which its next redraw keeps: opened the instance document,
        # and moved the focus to the task's link.
        browser.click(browser.wait_css("#instance-document summary"))
        browser.execute("document.getElementById('instance-task').focus();")

        print("interrupted: kill -9 the run; the instance page follows")
        run.stop()
    finally:
        run.stop()
        release.touch()  # the step's shell, left behind by the killed run, ends by itself
    warning = browser.wait_text("#instance-warning", "ended without finishing")
    browser.wait_text("h1 .badge", "interrupted")
    expected = ["succeeded", "interrupted", "not run"]

    def steps_interrupted() -> list[str] | None:
        steps = texts(browser, "[data-step] .badge")
        return steps if steps == expected else None

    steps = browser.wait_for(f"the steps to show as {expected}", steps_interrupted, timeout=30)
    same_load(browser, "instance")
    if browser.execute("return document.getElementById('instance-document').open;") is not True:
        raise WebDriverError("the redrawn instance page closed the instance document the person opened")
    focused = browser.execute("return document.activeElement && document.activeElement.id;")
    if focused != "instance-task":
        raise WebDriverError(f"the redrawn instance page moved the focus from the task's link to {focused!r}")
    no_error_on_page(browser, "instance")
    browser.screenshot(shots / "12-interrupted-instance.png")
    print(f"  the warning: {warning}")
    print(f"  the steps: {steps}")

    print("interrupted: the Home page lists it")
    browser.get(base + "/")
    browser.wait_text(f'[data-instance="{instance_id}"] .badge', "interrupted")
    no_error_on_page(browser, "home")
    return instance_id


# A time as the pages show it: in UTC, to the second (to the minute for one recorded to the minute),
# without microseconds.
SHOWN_TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? UTC")


def marked_failed(base: str, browser: Session, shots: Path, instance_id: str) -> None:
    """The interrupted instance, once a later run (the live check's) marked it failed: its page says
    its end is not known and when it was marked, each time as Started's is shown."""
    print("marked failed: the interrupted instance, once a later run marked it failed")
    summary = wait_until("a later run to mark the interrupted instance failed", lambda: (lambda d: d if d["summary"]["status"] == "failed" else None)(
        api(base, f"/api/v1/task-instances/{quote(instance_id, safe='')}")), timeout=60)
    if summary["summary"]["ended_at_utc"] is not None:
        raise WebDriverError(f"the API gives the marked instance an end: {summary['summary']['ended_at_utc']!r}")
    browser.get(f"{base}/instances/{quote(instance_id, safe='')}")
    browser.wait_text("h1 .badge", "failed")
    ended = browser.wait_text("#instance-ended", "not known")
    marked = browser.text(browser.wait_css("#instance-marked-failed"))
    started = browser.text(browser.wait_css("#instance-started"))
    if not SHOWN_TIME.fullmatch(started) or not SHOWN_TIME.match(marked) or "later run" not in marked:
        raise WebDriverError(f"the marked instance shows Started {started!r} and Marked failed {marked!r}")
    browser.screenshot(shots / "15-marked-failed-instance.png")
    print(f"  Ended: {ended!r}; Marked failed: {marked!r}")


def group_cells(browser: Session, runs: str, complete: str | None = None) -> tuple[str, str, str] | None:
    """The one run group's (runs, outcomes, complete) cells once they show `runs` (and `complete`)."""
    shown = texts(browser, "#run-groups td.group-runs")
    if shown != [runs]:
        return None
    outcomes = texts(browser, "#run-groups td.group-outcomes")
    done = texts(browser, "#run-groups td.group-complete")
    if complete is not None and done != [complete]:
        return None
    return shown[0], outcomes[0], done[0]


def live(base: str, browser: Session, shots: Path, agent_env: str, home: Path, work: Path) -> None:
    release = work / "slow.release"
    task_id = waiting_bundle(home, "slow", release)
    print("live: agent-env run ./slow, under way")
    run = Run(agent_env, home, "slow", work / "slow.out")
    try:
        wait_until("the slow task's instance at its second step", lambda: running_instance(base, task_id, run))
        browser.get(f"{base}/tasks/{quote(task_id, safe='')}")
        going = browser.wait_for("the run group's runs so far", lambda: group_cells(browser, "1 so far"))
        if going[2] != "no (its run is going)":
            raise WebDriverError(f"the group of a run under way shows complete as {going[2]!r}")
        if "1 running" not in going[1]:
            raise WebDriverError(f"the group of a run under way shows its outcomes as {going[1]!r}")
        mark_load(browser)
        no_error_on_page(browser, "task")
        browser.screenshot(shots / "13-run-group-so-far.png")
        print(f"  while it runs: {going}")

        print("live: the run ends; the task page follows")
        release.touch()
        wait_until("agent-env run ./slow to end", lambda: run.process.poll() is not None)
        if run.process.returncode != 0:
            raise WebDriverError(f"agent-env run ./slow exited {run.process.returncode}: {run.output()}")
    finally:
        release.touch()
        run.stop()
    ended = browser.wait_for("the run group's final counts", lambda: group_cells(browser, "1", "yes"), timeout=30)
    if ended[1] != "1 passed":
        raise WebDriverError(f"the ended group shows its outcomes as {ended[1]!r}")
    same_load(browser, "task")
    no_error_on_page(browser, "task")
    browser.screenshot(shots / "14-run-group-ended.png")
    print(f"  once it ended: {ended}")


def failing_bundle(home: Path, name: str) -> str:
    """A folder bundle `name` in `home` whose one task deploys a sandbox, then verifies in one it
    never deployed (a step that fails). Its task's id."""
    folder = home / name / "tasks"
    folder.mkdir(parents=True, exist_ok=True)
    task = [
        {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
        {"id": "check", "type": "verify_sandbox", "sandbox_name": "elsewhere", "verifier_id": "v",
         "criteria": [{"type": "bash_cmd_succeeds", "criterion": "ok", "bash_cmd": "true"}]},
    ]
    (folder / f"{name}.json").write_text(json.dumps(task))
    return f"@local/~/{name}/{name}"


def failed(base: str, browser: Session, shots: Path, agent_env: str, home: Path, work: Path) -> None:
    task_id = failing_bundle(home, "broken")
    print("failed: agent-env run ./broken, whose second step fails")
    run = Run(agent_env, home, "broken", work / "broken.out")
    wait_until("agent-env run ./broken to end", lambda: run.process.poll() is not None)
    items = api(base, f"/api/v1/task-instances?task_id={quote(task_id, safe='')}&limit=1")["items"]
    if not items or items[0]["outcome"] != "failed":
        raise WebDriverError(f"the broken task's run is listed as {items!r}, not failed: {run.output()}")
    browser.get(f"{base}/instances/{quote(str(items[0]['instance_id']), safe='')}")
    browser.wait_text("h1 .badge", "failed")
    said = browser.wait_text(".progress .progress-text", "1 of 2 steps succeeded, 1 failed")
    if browser.find(".progress .bar-failed") is None:
        raise WebDriverError("the progress bar does not show the failed step apart")
    if "Verifications" in texts(browser, "main h2"):
        raise WebDriverError("the instance page shows a Verifications heading with no verification under it")
    error_cell = browser.wait_text('[data-step="check"] .step-error', "")
    if not error_cell.strip():
        raise WebDriverError("the failed step's Error cell is empty")
    if browser.find('[data-step="check"] details.traceback pre *') is not None:
        raise WebDriverError("the failed step's traceback holds markup, not text")
    browser.screenshot(shots / "16-failed-instance.png")
    print(f"  its progress: {said}; its error: {error_cell}")

    print("failed: its bundle's folder is gone; Run twice shows one error")
    shutil.rmtree(home / "broken")
    browser.get(f"{base}/tasks/{quote(task_id, safe='')}")
    button = browser.wait_css("#run-task")
    # Each click's error is a box of its own, marked once seen: the next click's is a new one.
    fresh_error = "#run-task + .error:not([data-seen])"
    for attempt in (1, 2):
        browser.wait_for("the Run button to be enabled", lambda: browser.execute("return !document.getElementById('run-task').disabled;"))
        browser.click(button)
        browser.wait_for(f"the error of Run #{attempt}", lambda: browser.find(fresh_error))
        browser.execute("document.querySelector(arguments[0]).dataset.seen = 'yes';", fresh_error)
    errors = texts(browser, "main .error")
    if len(errors) != 1 or "neither installed nor a folder" not in errors[0]:
        raise WebDriverError(f"two failed runs show the errors {errors!r}, not one saying the bundle is gone")
    print("failed: Enter on Run, which fails, leaves the focus on Run")
    browser.wait_for("the Run button to be enabled", lambda: browser.execute("return !document.getElementById('run-task').disabled;"))
    browser.send_keys(button, "\ue007")
    browser.wait_for("the error of Run with Enter", lambda: browser.find(fresh_error))
    focused = browser.wait_for("the focus back on Run", lambda: browser.execute(
        "const a = document.activeElement; return a && a.id === 'run-task' ? a.id : null;"), timeout=10)
    print(f"  the focus is on #{focused}")


def tasks_paged(base: str, browser: Session) -> None:
    total = int(api(base, "/api/v1/tasks?limit=1")["total"])
    print(f"the Tasks page, two a page, of {total}")
    if total < 3:
        raise WebDriverError(f"only {total} tasks are stored: too few to page through")
    browser.get(base + "/tasks?per_page=2")
    browser.wait_text('[data-pager="tasks"] .pager-count', f"showing 1–2 of {total}")
    first = texts(browser, "#tasks [data-task] a")
    browser.click(browser.wait_css('[aria-label="Next page of tasks"]'))
    browser.wait_text('[data-pager="tasks"] .pager-count', f"showing 3–{min(4, total)} of {total}")
    second = texts(browser, "#tasks [data-task] a")
    if set(first) & set(second):
        raise WebDriverError(f"the Tasks page's second page {second} repeats its first {first}")
    if total <= 4:
        # Next is disabled on the last page: the keyboard focus goes to Previous, not the page's body.
        focused = browser.wait_for("the focus on the pager's other button", lambda: browser.execute(
            "const a = document.activeElement; return a && a.getAttribute('aria-label') === 'Previous page of tasks' ? 'Previous' : null;"))
        print(f"  on the last page the focus is on {focused}")
    no_error_on_page(browser, "tasks")

    print("the Tasks page past its end: said so, with a button to its last page")
    browser.get(base + "/tasks?per_page=2&page=99")
    said = browser.wait_text('[data-pager="tasks"] .pager-count', "No tasks on this page")
    if f"holds {total}" not in said or "Nothing yet" in browser.text(browser.wait_css("#tasks")):
        raise WebDriverError(f"the Tasks page past its end says {said!r}")
    browser.click(browser.wait_css('[aria-label="The last page of tasks"]'))
    last = (total + 1) // 2
    browser.wait_text('[data-pager="tasks"] .pager-count', f"showing {2 * last - 1}–{total} of {total}")
    if f"page={last}" not in browser.current_url() and last > 1:
        raise WebDriverError(f"the last page of tasks is at {browser.current_url()}")
    print(f"  {said!r}, then the last page, {last}")

    print("a list one page holds says how much it holds")
    browser.get(base + "/tasks")
    browser.wait_text('[data-pager="tasks"] .pager-count', f"showing 1–{total} of {total}")

    print("a page size the list does not take is noted")
    browser.get(base + "/tasks?per_page=0")
    noted = browser.wait_text("#query-notice", "per_page takes a whole number from 1 to 500, not '0'")
    browser.wait_text('[data-pager="tasks"] .pager-count', f"showing 1–{total} of {total}")
    print(f"  {noted!r}")

    print("a page number the address gives that is none is noted, on a Task page too")
    hello = quote("@local/agentenv-framework/hello/hello", safe="")
    browser.get(f"{base}/tasks/{hello}?runs_page=abc")
    noted = browser.wait_text("#query-notice", "runs_page takes a page number, a whole number from 1, not 'abc': showing the first page.")
    browser.wait_css("#task-runs [data-instance]")
    print(f"  {noted!r}")

    print("an id whose '/' the address left as it is: the page says how to write it, and links it")
    browser.get(base + "/tasks/team/not/encoded")
    said = browser.wait_text("#not-found-id", "%2F")
    href = browser.attribute(browser.wait_css("#encoded-link"), "href") or ""
    if not href.endswith("/tasks/team%2Fnot%2Fencoded"):
        raise WebDriverError(f"the page for an unencoded id links {href!r}")
    print(f"  {said!r}")

    print("a run the page never saw: /runs/wf-doesnotexist")
    browser.get(base + "/runs/wf-doesnotexist")
    said = browser.wait_text("#run-unknown", "No run wf-doesnotexist here")
    if browser.find("#run-gone") is not None or browser.find('#run-unknown a[href="/"]') is None:
        raise WebDriverError("a mistyped run's page says the run's explorer stopped, or links no way home")
    print(f"  it says: {said}")
    no_error_on_page(browser, "tasks")


def main() -> int:
    parser = browser_arguments(__doc__)
    parser.add_argument("--agent-env", required=True, help="the agent-env binary")
    parser.add_argument("--home", required=True, type=Path, help="the HOME the explorer reads (the runs start there)")
    parser.add_argument("--work", required=True, type=Path, help="a folder for the check's own files")
    args = parser.parse_args()
    base = args.explorer.rstrip("/")
    args.work.mkdir(parents=True, exist_ok=True)
    try:
        with chromium_session(args.driver, args.chromium, args.screenshots, "failed-run-state.png") as browser:
            killed = interrupted(base, browser, args.screenshots, args.agent_env, args.home, args.work)
            live(base, browser, args.screenshots, args.agent_env, args.home, args.work)
            failed(base, browser, args.screenshots, args.agent_env, args.home, args.work)
            marked_failed(base, browser, args.screenshots, killed)
            tasks_paged(base, browser)
    except (WebDriverError, OSError, urllib.error.URLError) as error:
        print(f"FAILED: {error}", file=sys.stderr)
        for log in sorted(args.work.glob("*.out")):
            print(f"--- {log.name}\n{log.read_text(errors='replace')}", file=sys.stderr)
        return 1
    print("The UI shows an interrupted instance, and a run group's counts while its run goes and after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
