"""Drives headless Chromium through an explorer whose configured document store answered when it
started and stops answering under it (its plugin refuses every read while a file, its "down" cue,
exists): the stored task's page, opened while the store is away, shows the explorer's answer that
the configured document store did not answer (a 503, or the 404 of the requests after it, which
say the task may be in the store left out), and asks again by itself; once the store answers again,
the same page, not loaded again, shows the task. Exits non-zero, naming the step, when anything is
not as expected."""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path
from urllib.parse import quote

from ui_check import browser_arguments, chromium_session, no_error_on_page
from webdriver import WebDriverError


def check(base: str, driver: str, chromium: str, shots: Path, down: Path, task: str) -> None:
    page = f"{base}/tasks/{quote(task, safe='')}"
    with urllib.request.urlopen(f"{base}/api/v1/tasks/{quote(task, safe='')}", timeout=60) as response:
        if json.loads(response.read()).get("id") != task:
            raise WebDriverError(f"the store does not hold {task} before it goes away")
    with chromium_session(driver, chromium, shots, "failed-store-outage.png") as browser:
        print(f"the store stops answering; {task}'s page is opened")
        down.write_text("")
        browser.get(page)
        said = browser.wait_text("main .error", "the configured document store did not answer")
        if browser.execute("return document.querySelector('main h2') !== null;"):
            raise WebDriverError("the task's page shows its steps while the store does not answer")
        browser.execute("window.__sameLoad = true;")
        browser.screenshot(shots / "12-store-outage.png")
        print(f"  it says: {said}")

        print("the store answers again; the page follows without being loaded again")
        down.unlink()
        browser.wait_text("h2", "Steps")
        browser.wait_text("main p.mono", task)
        if browser.execute("return window.__sameLoad === true;") is not True:
            raise WebDriverError("the task's page was loaded again instead of asking again by itself")
        no_error_on_page(browser, "stored task's")
        browser.screenshot(shots / "13-store-back.png")


def main() -> int:
    parser = browser_arguments(__doc__)
    parser.add_argument("--down", required=True, type=Path, help="the file whose presence makes the store refuse reads")
    parser.add_argument("--task", required=True, help="the id of the task the store holds")
    args = parser.parse_args()
    try:
        check(args.explorer.rstrip("/"), args.driver, args.chromium, args.screenshots, args.down, args.task)
    except (WebDriverError, OSError) as error:
        print(f"FAILED: {error}", file=sys.stderr)
        return 1
    print("The UI says a document store stopped answering, asks again, and shows the task once it answers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
