"""Drives headless Chromium through an explorer whose configured document store could not be read
when it started (its SQLite database is a folder): the Tasks, Home, Task and Task instance pages (of
a run recorded on this machine) show the notice that the store is left out, in the API's own words,
the stored task is not listed, and its own page says it was not found but may be in the store left
out. Each page stays open, in a window of its own, while the store comes back (the database is put
where it was): without being loaded again, the Tasks page lists the stored task, no page shows the
notice any more, and the stored task's page shows it, with no Run button (the explorer runs only
bundles' tasks) but the command that runs it. Exits non-zero, naming the step, when anything
is not as expected."""

from __future__ import annotations

import json
import os
import shutil
import sys
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ui_check import browser_arguments, chromium_session, no_error_on_page
from webdriver import Session, WebDriverError

NOTICE = "#answer-warnings"


def api(base: str, path: str) -> Any:
    with urllib.request.urlopen(base + path, timeout=60) as response:
        return json.loads(response.read())


def listed_tasks(browser: Session) -> list[str]:
    ids = browser.execute("return [...document.querySelectorAll('main table td a.mono')].map(a => a.textContent);")
    return [str(i) for i in ids or []]


def restore(store: Path, away: Path) -> None:
    """Puts the store's folder back where the explorer reads it, in place of the folder that stood in."""
    shutil.rmtree(store)
    os.rename(away, store)


def mark_load(browser: Session) -> None:
    """Marks the page load in the current window: a reload (or a navigation) would drop the mark."""
    browser.execute("window.__sameLoad = true;")


def same_load(browser: Session, page: str) -> None:
    if browser.execute("return window.__sameLoad === true;") is not True:
        raise WebDriverError(f"the {page} page was loaded again instead of updating in place")


def notice_gone(browser: Session, page: str) -> None:
    browser.wait_for(f"the {page} page to drop the notice", lambda: browser.find(NOTICE) is None)


def check(base: str, driver: str, chromium: str, shots: Path, store: Path, away: Path, retry: float, task: str) -> None:
    said = api(base, "/api/v1/tasks").get("warnings", [])
    if len(said) != 1 or "the configured document store can't be read" not in said[0]:
        raise WebDriverError(f"the API's task list warns {said!r}, not that the store is left out")
    if f"tried again every {retry:g} s" not in said[0]:
        raise WebDriverError(f"the API's task list warns {said[0]!r}, not that it is tried every {retry:g} s")
    runs = api(base, "/api/v1/task-instances?limit=1")["items"]
    if not runs:
        raise WebDriverError("the run recorded on this machine is not listed")
    with chromium_session(driver, chromium, shots, "failed-store-notice.png") as browser:
        # Each page in a window of its own, left open while the store comes back: none of them
        # refreshes itself for what it shows (no run is under way), and none is loaded again.
        windows: dict[str, str] = {}

        print("tasks page: the store is left out")
        windows["tasks"] = browser.window()
        browser.get(base + "/tasks")
        browser.wait_text("h1", "Tasks")
        shown = browser.wait_text(NOTICE, said[0])
        if browser.attribute(browser.wait_css(NOTICE), "role") != "status":
            raise WebDriverError("the notice is not a status region")
        if task in listed_tasks(browser):
            raise WebDriverError(f"the Tasks page lists {task} while its store is left out")
        no_error_on_page(browser, "tasks")
        mark_load(browser)
        browser.screenshot(shots / "09-store-left-out-tasks.png")
        print(f"  the notice: {shown}")

        print("home page: the store is left out")
        windows["home"] = browser.new_window()
        browser.get(base + "/")
        browser.wait_css("#recent-runs")
        browser.wait_text(NOTICE, said[0])
        mark_load(browser)

        print("task page: the store is left out")
        windows["task"] = browser.new_window()
        browser.get(f"{base}/tasks/{quote(runs[0]['task_id'], safe='')}")
        browser.wait_text("h2", "Steps")
        browser.wait_text(NOTICE, said[0])
        no_error_on_page(browser, "task")
        mark_load(browser)

        print("instance page: the store is left out")
        windows["instance"] = browser.new_window()
        browser.get(f"{base}/instances/{quote(runs[0]['instance_id'], safe='')}")
        browser.wait_css("#instance-scores")
        browser.wait_text(NOTICE, said[0])
        no_error_on_page(browser, "instance")
        mark_load(browser)
        browser.screenshot(shots / "10-store-left-out-instance.png")

        print(f"stored task's page: {task} not found, maybe in the store left out")
        windows["stored task"] = browser.new_window()
        browser.get(f"{base}/tasks/{quote(task, safe='')}")
        browser.wait_text(".error", "it may be in the store left out")
        mark_load(browser)

        print("config page: what config check finds about the store")
        browser.new_window()
        browser.get(base + "/config")
        browser.wait_text("h1", "Config")
        found = browser.wait_text("#config-check .error", "agent-env config check finds")
        if "[stores.document]" not in found and "documents" not in found:
            raise WebDriverError(f"the Config page's problems do not name the document store: {found!r}")
        print(f"  {found.splitlines()[0]}")

        print("the store comes back; each page follows without being loaded again")
        restore(store, away)

        browser.switch_to(windows["tasks"])
        browser.wait_for(f"the Tasks page to list {task}", lambda: task in listed_tasks(browser))
        notice_gone(browser, "tasks")
        same_load(browser, "tasks")
        no_error_on_page(browser, "tasks")
        browser.screenshot(shots / "11-store-read.png")

        for page in ("home", "task", "instance"):
            print(f"  {page} page: no notice")
            browser.switch_to(windows[page])
            notice_gone(browser, page)
            same_load(browser, page)
            no_error_on_page(browser, page)

        print(f"  stored task's page: {task}")
        browser.switch_to(windows["stored task"])
        browser.wait_text("h2", "Steps")
        browser.wait_text("main p.mono", task)
        same_load(browser, "stored task's")
        no_error_on_page(browser, "stored task's")
        if browser.find(NOTICE) is not None:
            raise WebDriverError("the stored task's page shows the notice once the store is read")
        # A stored task comes from no bundle: the explorer can't run it, and says what can.
        said = browser.wait_text("#run-task-stored", f"the explorer runs only bundles' tasks; run it with agent-env task run {task}")
        if browser.find("#run-task") is not None:
            raise WebDriverError("the stored task's page offers a Run button the API refuses")
        print(f"  instead of a Run button: {said}")


def main() -> int:
    parser = browser_arguments(__doc__)
    parser.add_argument("--store", required=True, type=Path, help="the store's folder, a stand-in now")
    parser.add_argument("--away", required=True, type=Path, help="where the store's folder was moved")
    parser.add_argument("--retry-seconds", required=True, type=float, help="[explorer] store_retry_seconds")
    parser.add_argument("--task", required=True, help="the id of the task stored in it")
    args = parser.parse_args()
    try:
        check(args.explorer.rstrip("/"), args.driver, args.chromium, args.screenshots,
              args.store, args.away, args.retry_seconds, args.task)
    except (WebDriverError, OSError) as error:
        print(f"FAILED: {error}", file=sys.stderr)
        return 1
    print("The UI shows a document store left out, and drops the notice once it is read")
    return 0


if __name__ == "__main__":
    sys.exit(main())
