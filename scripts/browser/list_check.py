"""Drives headless Chromium through the explorer's lists and files, in the world the explorer reads
(its HOME and state), where the check first stores what it needs with `agent-env`: three tasks under
`team/`, one of them with a very long id (and a run of it), and an artifact holding a 1536-byte binary
file.

- long names: the Tasks table and Home's recent runs keep every column on screen (their geometry is
  measured) with the long id wrapped inside its cell, at a desktop's width and a narrower one.
- a file that cannot be shown: its size reads "1.5 KiB" with the exact count as its title, and its
  View says it cannot be shown here, with a Download link that downloads it.
- a list's place in the address: the Tasks page's filter, typed a key at a time, is written into the
  address without a history entry per key; the next page is a history entry of its own; a reload
  shows the same filter and page; a task opened from that page and Back returns to that page; Back
  once more turns the page back, without a reload. Home's outcome filter and the Artifacts page's
  filter are kept by a reload too.

Exits non-zero, naming the step, when anything is not as expected."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.error
from pathlib import Path
from typing import Any
from urllib.parse import quote

from run_state_check import mark_load, same_load
from ui_check import browser_arguments, chromium_session, no_error_on_page, pager_says
from webdriver import Session, WebDriverError

LONG_TASK = "team/" + "a-very-long-task-name-without-any-space-" * 5 + "end"
SHORT_TASKS = ["team/list-one", "team/list-two"]
BLOB = "team/blob"
BLOB_SIZE = 1536

TASK_STEPS = [
    {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
    {"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
     "criteria": [{"type": "bash_cmd_succeeds", "criterion": "ok", "bash_cmd": "true"}]},
]


def agent_env(binary: str, home: Path, *args: str) -> None:
    done = subprocess.run([binary, *args], cwd=home, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise WebDriverError(f"agent-env {' '.join(args)} exited {done.returncode}: {done.stdout}{done.stderr}")


def store_fixtures(binary: str, home: Path, work: Path) -> None:
    """The tasks and the artifact the checks look at, stored as a person would store them."""
    steps = work / "steps.json"
    steps.write_text(json.dumps(TASK_STEPS))
    for task_id in [LONG_TASK, *SHORT_TASKS]:
        agent_env(binary, home, "task", "put", "--id", task_id, str(steps))
    agent_env(binary, home, "task", "run", LONG_TASK)
    folder = work / "blob"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "blob.bin").write_bytes(bytes(range(256)) * (BLOB_SIZE // 256))
    agent_env(binary, home, "artifact", "put", str(folder), "--id", BLOB)


# Where the table `css` and its columns lie: whether its box scrolls, the right edge of each column
# header and of the window, and the long name's cell (the first cell holding `long`).
GEOMETRY = """
const table = document.querySelector(arguments[0]);
if (!table) return null;
const wrap = table.closest('.table-wrap');
const heads = [...table.querySelectorAll('thead th')].map((th) => th.getBoundingClientRect());
const cell = [...table.querySelectorAll('tbody td')].find((td) => td.textContent.includes(arguments[1]));
const line = cell ? parseFloat(getComputedStyle(cell).lineHeight) || 20 : 0;
return {
  window: document.documentElement.clientWidth,
  page: document.documentElement.scrollWidth,
  wrapScroll: wrap.scrollWidth, wrapClient: wrap.clientWidth, wrapRight: wrap.getBoundingClientRect().right,
  rights: heads.map((r) => r.right), widths: heads.map((r) => r.width),
  cell: cell ? {right: cell.getBoundingClientRect().right, height: cell.getBoundingClientRect().height, line} : null,
};
"""


def columns_on_screen(browser: Session, page: str, css: str, long: str) -> None:
    """The table `css` holds `long` wrapped in its cell, and none of its columns is pushed off screen."""
    at: dict[str, Any] = browser.wait_for(f"the {page} page's table {css} with the long name",
                                          lambda: (lambda g: g if g and g["cell"] else None)(browser.execute(GEOMETRY, css, long)))
    where = f"the {page} page's table {css} at {at['window']} px"
    if at["wrapScroll"] > at["wrapClient"]:
        raise WebDriverError(f"{where} is {at['wrapScroll']} px wide in a {at['wrapClient']} px box: a long name widened it")
    if at["page"] > at["window"]:
        raise WebDriverError(f"{where}: the page is {at['page']} px wide, it scrolls sideways")
    last = max(at["rights"])
    if last > at["window"] or last > at["wrapRight"] + 1:
        raise WebDriverError(f"{where}: its last column ends at {last} px, off screen (columns end at {at['rights']})")
    if min(at["widths"]) < 20:
        raise WebDriverError(f"{where}: a column is squeezed to {min(at['widths'])} px ({at['widths']})")
    cell = at["cell"]
    if cell["height"] < 2 * cell["line"]:
        raise WebDriverError(f"{where}: the long name's cell is {cell['height']} px high, one line: it was not wrapped")


def long_names(base: str, browser: Session, shots: Path) -> None:
    print("long names: the tables keep their columns on screen")
    for width in (1280, 820):
        browser.set_window_size(width, 1000)
        browser.get(base + "/tasks?per_page=500")
        columns_on_screen(browser, "Tasks", "#tasks", LONG_TASK)
        browser.get(base + "/")
        columns_on_screen(browser, "Home", "#recent-runs", LONG_TASK)
        if width == 820:
            browser.screenshot(shots / "20-long-names.png")
    browser.set_window_size(1280, 1000)


def no_preview(base: str, browser: Session, shots: Path) -> None:
    print("a binary file: its size in words, and no preview but a download")
    browser.get(f"{base}/artifacts/{quote(BLOB, safe='')}")
    size = browser.wait_css('[data-file="blob.bin"] .file-size .size')
    shown, title = browser.text(size), browser.attribute(size, "title")
    if shown != "1.5 KiB" or title != f"{BLOB_SIZE} bytes":
        raise WebDriverError(f"blob.bin's size reads {shown!r} (title {title!r}), not '1.5 KiB' ({BLOB_SIZE} bytes)")
    browser.click(browser.wait_css('[data-view-file="blob.bin"]'))
    said = browser.wait_text("#no-preview", "cannot be shown here")
    if "1.5 KiB" not in said:
        raise WebDriverError(f"the no-preview message does not give the file's size: {said!r}")
    if browser.find("#preview iframe") is not None:
        raise WebDriverError("a file that cannot be shown here is framed all the same")
    download = browser.wait_css("#no-preview-download")
    href = str(browser.execute("return document.getElementById('no-preview-download').href;"))
    if "download=true" not in href or browser.text(download) != "Download it":
        raise WebDriverError(f"the no-preview link reads {browser.text(download)!r} and leads to {href!r}")
    got = browser.execute_async(
        "const done = arguments[arguments.length - 1];"
        "fetch(arguments[0]).then(async (r) => done([r.headers.get('content-disposition'), (await r.arrayBuffer()).byteLength]),"
        " (e) => done(['fetch failed: ' + e, 0]));",
        href,
    )
    if not str(got[0]).startswith("attachment") or got[1] != BLOB_SIZE:
        raise WebDriverError(f"the Download link answers {got!r}, not the file's {BLOB_SIZE} bytes as an attachment")
    no_error_on_page(browser, "artifact")
    browser.screenshot(shots / "21-no-preview.png")
    print(f"  it says: {said}")


def history_length(browser: Session) -> int:
    return int(browser.execute("return history.length;"))


def shown_tasks(browser: Session) -> list[str]:
    return [str(t) for t in browser.execute("return [...document.querySelectorAll('#tasks [data-task]')].map((r) => r.dataset.task);")]


def url_state(base: str, browser: Session, shots: Path) -> None:
    ordered = sorted([LONG_TASK, *SHORT_TASKS])
    print("the Tasks page: its filter and page live in the address")
    browser.get(base + "/tasks?per_page=1")
    pager_says(browser, "tasks", "showing 1–1 of")
    before = history_length(browser)
    box = browser.wait_css('input[aria-label="Filter tasks by id"]')
    browser.send_keys(box, "team/")
    browser.wait_for("the filter in the address", lambda: "id=team%2F" in browser.current_url())
    pager_says(browser, "tasks", "showing 1–1 of 3")
    if history_length(browser) != before:
        raise WebDriverError(f"typing the filter added {history_length(browser) - before} history entries")
    if shown_tasks(browser) != ordered[:1]:
        raise WebDriverError(f"the filtered first page shows {shown_tasks(browser)}, not {ordered[:1]}")

    mark_load(browser)
    browser.click(browser.wait_css('[aria-label="Next page of tasks"]'))
    pager_says(browser, "tasks", "showing 2–2 of 3")
    same_load(browser, "Tasks")
    if not re.search(r"[?&]page=2", browser.current_url()) or history_length(browser) != before + 1:
        raise WebDriverError(f"the next page is not one history entry with its address: {browser.current_url()}")

    print("  a reload shows the same filter and page")
    browser.refresh()
    pager_says(browser, "tasks", "showing 2–2 of 3")
    if browser.execute("return window.__sameLoad === true;") is True:
        raise WebDriverError("the Tasks page was not loaded again by the reload")
    kept = browser.execute("return document.querySelector('input[aria-label=\"Filter tasks by id\"]').value;")
    if kept != "team/" or shown_tasks(browser) != ordered[1:2]:
        raise WebDriverError(f"after a reload the filter reads {kept!r} and the page shows {shown_tasks(browser)}")
    paged_url = browser.current_url()

    print("  a task opened from the page, then Back, returns to the page")
    browser.click(browser.wait_css("#tasks [data-task] a"))
    browser.wait_for("the Task page", lambda: browser.current_url().startswith(base + "/tasks/"))
    browser.wait_css("#task-runs")
    browser.back()
    browser.wait_for("the Tasks page again", lambda: browser.current_url() == paged_url)
    pager_says(browser, "tasks", "showing 2–2 of 3")
    if shown_tasks(browser) != ordered[1:2]:
        raise WebDriverError(f"Back to the Tasks page shows {shown_tasks(browser)}, not {ordered[1:2]}")

    print("  Back once more turns the page back")
    browser.back()
    browser.wait_for("the first page's address", lambda: not re.search(r"[?&]page=", browser.current_url()))
    pager_says(browser, "tasks", "showing 1–1 of 3")
    if shown_tasks(browser) != ordered[:1]:
        raise WebDriverError(f"Back to the first page shows {shown_tasks(browser)}, not {ordered[:1]}")
    no_error_on_page(browser, "tasks")
    browser.screenshot(shots / "22-tasks-filtered.png")

    print("Home: the recent runs' outcome filter is kept by a reload")
    browser.get(base + "/")
    browser.wait_css("#recent-runs")
    browser.click(browser.wait_css('#run-filter option[value="passed"]'))
    browser.wait_for("the outcome in the address", lambda: "status=passed" in browser.current_url())
    browser.refresh()
    browser.wait_css("#recent-runs [data-instance]")
    chosen = browser.execute("return document.getElementById('run-filter').value;")
    outcomes = set(browser.execute("return [...document.querySelectorAll('#recent-runs [data-instance] .badge')].map((b) => b.textContent);"))
    if chosen != "passed" or outcomes != {"passed"}:
        raise WebDriverError(f"after a reload Home's filter reads {chosen!r} and lists outcomes {sorted(outcomes)}")

    print("Artifacts: the filter is kept by a reload")
    browser.get(base + "/artifacts")
    browser.wait_css("#artifacts")
    browser.send_keys(browser.wait_css('input[aria-label="Filter artifacts by id"]'), "blob")
    browser.wait_for("the filter in the address", lambda: "id=blob" in browser.current_url())
    browser.refresh()
    browser.wait_css(f'#artifacts a[href="/artifacts/{quote(BLOB, safe="")}"]')
    rows = browser.execute("return document.querySelectorAll('#artifacts tbody tr').length;")
    kept = browser.execute("return document.querySelector('input[aria-label=\"Filter artifacts by id\"]').value;")
    if rows != 1 or kept != "blob":
        raise WebDriverError(f"after a reload the Artifacts filter reads {kept!r} over {rows} rows")


def main() -> int:
    parser = browser_arguments(__doc__)
    parser.add_argument("--agent-env", required=True, help="the agent-env binary")
    parser.add_argument("--home", required=True, type=Path, help="the HOME the explorer reads")
    parser.add_argument("--work", required=True, type=Path, help="a folder for the check's own files")
    args = parser.parse_args()
    base = args.explorer.rstrip("/")
    args.work.mkdir(parents=True, exist_ok=True)
    try:
        store_fixtures(args.agent_env, args.home, args.work)
        with chromium_session(args.driver, args.chromium, args.screenshots, "failed-lists.png") as browser:
            long_names(base, browser, args.screenshots)
            no_preview(base, browser, args.screenshots)
            url_state(base, browser, args.screenshots)
    except (WebDriverError, OSError, urllib.error.URLError) as error:
        print(f"FAILED: {error}", file=sys.stderr)
        return 1
    print("Long names wrap, a binary file offers its download, and a list's place survives reload and Back")
    return 0


if __name__ == "__main__":
    sys.exit(main())
