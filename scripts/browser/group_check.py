"""Drives headless Chromium through a group of runs of `hello` (agent-env's own bundle, which runs in a
moment), started from its Task page as a person would:

- the count's limit is the one the API's document gives (`/openapi.json`), not one of the page's own.
- a wrong count is refused before it is sent: one over the limit, 0, -1 and 2.5 runs each get the same
  sentence under the button, naming the field by its label (never the request's `body count`), the
  count marked as what is wrong and focused; seed values of only commas likewise; the page stays
  where it is.
- a group of 3, started with Enter in the count: the browser lands on the group's page, which (not
  loaded again) shows the 3 runs end passed with their scores and how long each took, the scores'
  spread (mean, min and max of 3 runs), 3 planned and 3 done, and whose polite live region says the
  group is complete; no Cancel is left once it is.
- the group's runs two a page (`?per_page=2`): the first page shows runs 1 and 2 and says of how many,
  Next shows run 3 and writes the page into the address, a reload keeps it, and Back turns it back;
  the counts are the whole group's on either page.
- the group's runs filtered by outcome from the address (`?outcome=failed`): none, said so, and the
  filter shows it; an outcome no run is said in (`?outcome=bogus`) is noted, and every run shown.
- the Task page's row of that group leads to its page, and shows the scores' spread.
- a seed token no step of `hello` has (`<who>`) is refused, in the explorer's words naming the token,
  the token field focused; a group of one run per seed value of a folder task whose check names
  `<who>` (a token and its values, separated by a space and a comma): its page shows each run's seed.
- a group whose runs wait (a folder bundle whose step waits for a file the check never writes while
  the group runs): its page shows it running with a Cancel button; Cancel (with Enter) asks first, its
  question focused; No puts Cancel back, focused; Yes cancels both its runs, and the page, not loaded
  again, shows them cancelled and the group complete, the focus on its heading. A run of that task
  started with Enter on its Task page's Run button is cancelled with Enter on the Run page's Cancel,
  and the focus goes to the run's heading. Then another such group,
  cancelled from the API while its Task page is open with a count typed into the form: the page,
  redrawn with the group's end, keeps what was typed and where the focus was.
- a group id nobody knows is said to be unknown.

Exits non-zero, naming the step, when anything is not as expected."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote

from run_state_check import waiting_bundle
from ui_check import browser_arguments, chromium_session, mark_load, names_say_what, no_error_on_page, same_load, section_is
from webdriver import Session, WebDriverError

HELLO_TASK = "@local/agentenv-framework/hello/hello"
ENTER = "\ue007"


def hello_is_stored(base: str, binary: str, home: Path) -> None:
    """`hello`'s task is stored (a run of it stores it) before its Task page is opened."""
    try:
        with urllib.request.urlopen(f"{base}/api/v1/tasks/{quote(HELLO_TASK, safe='')}", timeout=60):
            return
    except urllib.error.HTTPError as error:
        if error.code != 404:
            raise
    done = subprocess.run([binary, "run", "hello"], cwd=home, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise WebDriverError(f"agent-env run hello exited {done.returncode}: {done.stdout}{done.stderr}")


def type_count(browser: Session, text: str) -> str:
    """Empties the form's count and types `text` into it, a key at a time."""
    field = browser.wait_css("#group-count")
    browser.execute("document.getElementById('group-count').value = '';")
    browser.send_keys(field, text)
    return field


def refused(browser: Session, task_url: str, count: str, reason: str) -> None:
    type_count(browser, count)
    browser.click(browser.wait_css("#start-group"))
    said = browser.wait_text("#group-problem", reason)
    if browser.current_url() != task_url:
        raise WebDriverError(f"a group of {count} runs left the Task page for {browser.current_url()}")
    marked = browser.execute(
        "const f = document.getElementById('group-count');"
        "return [f.getAttribute('aria-invalid'), f.getAttribute('aria-describedby'), document.activeElement === f];")
    if marked != ["true", "group-problem", True]:
        raise WebDriverError(f"after a refused count of {count}, the count is not marked and focused: {marked}")
    boxes = browser.execute("return document.querySelectorAll('#group-form .error').length;")
    if boxes != 1:
        raise WebDriverError(f"the form shows {boxes} errors after a refused count of {count}")
    if "body " in said:
        raise WebDriverError(f"a refused count of {count} names the field by its place in the request: {said!r}")
    print(f"  {count} runs: {said!r}")


def group_runs(browser: Session) -> list[list[str]]:
    """Each run row of the group's page: its outcome, scores and how long it took."""
    return [[str(c) for c in row] for row in browser.execute(
        "return [...document.querySelectorAll('#group-run-list [data-run]')].map((r) =>"
        " [r.querySelector('.badge').textContent, r.querySelector('.run-scores').textContent, r.querySelector('.run-took').textContent]);")]


def run_limit(base: str) -> int:
    """The most runs a group request may ask for, as the API's document says it."""
    with urllib.request.urlopen(f"{base}/openapi.json", timeout=60) as response:
        document = json.loads(response.read())
    limit = document["components"]["schemas"]["RunGroupRequest"]["properties"]["count"]["maximum"]
    if not isinstance(limit, int) or limit < 1:
        raise WebDriverError(f"the API's document gives {limit!r} as a group's most runs")
    return limit


def shown_places(browser: Session) -> list[str]:
    return [str(p) for p in browser.execute(
        "return [...document.querySelectorAll('#group-run-list [data-run]')].map((r) => r.dataset.run);")]


def paged(browser: Session, group_url: str) -> None:
    """The group's 3 runs two a page: Next, a reload and Back, the counts the whole group's."""
    browser.get(group_url + "?per_page=2")
    browser.wait_text("[data-pager='runs'] .pager-count", "showing 1–2 of 3")
    if shown_places(browser) != ["1", "2"]:
        raise WebDriverError(f"the first page of 2 shows the runs {shown_places(browser)}")
    browser.click(browser.wait_css("[data-pager='runs'] button[aria-label='Next page of runs']"))
    browser.wait_text("[data-pager='runs'] .pager-count", "showing 3–3 of 3")
    if shown_places(browser) != ["3"] or "page=2" not in browser.current_url():
        raise WebDriverError(f"Next shows the runs {shown_places(browser)} at {browser.current_url()}")
    if browser.text(browser.wait_css("#group-outcomes")) != "3 passed":
        raise WebDriverError("the second page of runs does not count the whole group's outcomes")
    browser.refresh()
    browser.wait_text("[data-pager='runs'] .pager-count", "showing 3–3 of 3")
    browser.back()
    browser.wait_text("[data-pager='runs'] .pager-count", "showing 1–2 of 3")
    print("  two a page: runs 1–2, then 3 (kept through a reload), and Back to 1–2")


def check(base: str, browser: Session, shots: Path) -> None:
    task_url = f"{base}/tasks/{quote(HELLO_TASK, safe='')}"
    limit = run_limit(base)
    print(f"the Task page: the count's limit is the API's ({limit})")
    browser.get(task_url)
    browser.wait_css("#group-form")
    names_say_what(browser, "task")
    said = browser.wait_for("the count to take the API's limit", lambda: browser.execute(
        "const f = document.getElementById('group-count');"
        f"return f && f.max === '{limit}' ? f.getAttribute('aria-label') : null;"))
    if said != f"How many runs (1 to {limit})":
        raise WebDriverError(f"the count's name is {said!r} with the API's limit of {limit}")
    print("the Task page: a wrong count is refused in one sentence naming the field by its label")
    for wrong in (str(limit + 1), "0", "-1", "2.5"):
        refused(browser, task_url, wrong, f"How many runs: a whole number from 1 to {limit} (got {wrong}).")
    print("the Task page: seed values of only commas are refused the same way")
    browser.click(browser.wait_css("#group-by-seeds"))
    browser.send_keys(browser.wait_css("#group-seed-token"), "who")
    browser.send_keys(browser.wait_css("#group-seeds"), ", ,," + ENTER)
    said = browser.wait_text("#group-problem", f"Seed values: from 1 to {limit}, one run each")
    if browser.execute("return document.activeElement.id;") != "group-seeds" or "body " in said:
        raise WebDriverError(f"seed values of only commas say {said!r}, focused on {browser.execute('return document.activeElement.id;')!r}")
    print(f"  ', ,,': {said!r}")
    browser.execute("document.getElementById('group-seed-token').value = ''; document.getElementById('group-seeds').value = '';")
    browser.click(browser.wait_css("#group-by-count"))
    browser.screenshot(shots / "30-group-refused.png")

    print("the Task page: a group of 3, started with Enter, lands on its page")
    field = type_count(browser, "3")
    browser.send_keys(field, ENTER)
    browser.wait_for("the group's page", lambda: "/run-groups/rg-" in browser.current_url())
    group_url = browser.current_url()
    group_id = group_url.rsplit("/", 1)[1]
    mark_load(browser)
    region = browser.wait_css("#group-live")
    if browser.attribute(region, "aria-live") != "polite":
        raise WebDriverError("the group page's live region is not polite")

    print("the group's page: 3 runs end, with their scores and the spread")
    browser.wait_text("#group-status", "complete", timeout=180)
    runs = browser.wait_for("3 runs that ended", lambda: (lambda r: r if len(r) == 3 and all(x[2] for x in r) else None)(group_runs(browser)))
    for outcome, scores, took in runs:
        if outcome != "passed" or scores != "hello: 1" or not took.endswith("s"):
            raise WebDriverError(f"the group's runs show {runs}, not 3 passed with hello: 1 and how long each took")
    spread = browser.execute(
        "const r = document.querySelector('#group-scores [data-score=\"hello\"]');"
        "return r ? [...r.querySelectorAll('td')].map((c) => c.textContent) : null;")
    if spread != ["hello", "3", "1", "1", "1"]:
        raise WebDriverError(f"the scores' spread reads {spread}, not hello over 3 runs: mean, min and max 1")
    facts = {k: browser.text(browser.wait_css(f"#group-{k}")) for k in ("total", "done", "running", "outcomes")}
    if facts != {"total": "3", "done": "3", "running": "0", "outcomes": "3 passed"}:
        raise WebDriverError(f"the group's page says {facts}")
    if not same_load(browser):
        raise WebDriverError("the group's page was loaded again instead of updating in place")
    said = browser.wait_for("the live region to say the group is complete", lambda: browser.execute(
        "const t = document.getElementById('group-live').textContent; return t.includes('complete') ? t : null;"))
    if said != "Run group complete: 3 passed.":
        raise WebDriverError(f"the group page's live region says {said!r} once the group is complete")
    if browser.execute("const b = document.getElementById('cancel-group'); return !!b && !b.hidden;"):
        raise WebDriverError("a complete group still offers to cancel its runs")
    no_error_on_page(browser, "run group")
    names_say_what(browser, "run group")
    section_is(browser, "run group", ["tasks"])
    browser.screenshot(shots / "31-group.png")
    print(f"  {group_id}: {runs}; it said {said!r}")

    print("the group's runs a page at a time")
    paged(browser, group_url)

    print("the group's runs filtered by outcome from the address")
    browser.get(group_url + "?outcome=failed")
    browser.wait_text("#group-run-list", "No run of this group is failed.")
    chosen = browser.execute("return document.getElementById('group-filter').value;")
    if chosen != "failed":
        raise WebDriverError(f"the group's filter reads {chosen!r}, not the address's 'failed'")
    print("an outcome no run is said in: noted, and every run shown")
    browser.get(group_url + "?outcome=bogus")
    noted = browser.wait_text("#query-notice", "'bogus'")
    browser.wait_for("the group's 3 runs under the notice", lambda: len(shown_places(browser)) == 3)
    if "showing runs of any outcome" not in noted or browser.find("#group-body .error") is not None:
        raise WebDriverError(f"an unknown outcome says {noted!r}, or the page shows an error")
    print(f"  it says: {noted!r}")

    print("the Task page: the group's row leads to its page")
    browser.get(task_url)
    row = f'#run-groups [data-run-group="{group_id}"]'
    browser.wait_text(f"{row} .group-scores", "hello: mean 1 (1–1)")
    browser.click(browser.wait_css(f"{row} a.group-link"))
    browser.wait_for("the group's page from its row", lambda: browser.current_url() == group_url)
    browser.wait_text("#group-outcomes", "3 passed")
    task_link = browser.execute("const a = document.querySelector('#group-facts .group-task'); return a ? [a.textContent, a.getAttribute('href')] : null;")
    if task_link != [HELLO_TASK, f"/tasks/{quote(HELLO_TASK, safe='')}"]:
        raise WebDriverError(f"the group's page names its task as {task_link}")

    print("the Task page: a seed token no step of hello has is refused, naming the token")
    browser.get(task_url)
    browser.click(browser.wait_css("#group-by-seeds"))
    browser.click(browser.wait_css("#start-group"))
    browser.wait_text("#group-problem", "Name the seed token")
    if browser.execute("return document.activeElement.id;") != "group-seed-token":
        raise WebDriverError("a seed group with no token does not put the focus on the token")
    browser.send_keys(browser.wait_css("#group-seed-token"), "who")
    browser.send_keys(browser.wait_css("#group-seeds"), "ann bo,  cy" + ENTER)
    said = browser.wait_text("#group-problem", "Seed token: no step of the task has the token <who>")
    if browser.execute("return document.activeElement.id;") != "group-seed-token" or browser.current_url() != task_url:
        raise WebDriverError(f"a seed token hello does not have says {said!r}, but the focus or the page moved")
    print(f"  <who>: {said!r}")

    print("an unknown group is said to be unknown")
    browser.get(base + "/run-groups/rg-000000000000")
    said = browser.wait_text("#group-unknown", "Unknown run group")
    if "rg-000000000000" not in said:
        raise WebDriverError(f"the unknown group's page does not name it: {said!r}")
    browser.screenshot(shots / "32-group-unknown.png")


def seeded(base: str, browser: Session, binary: str, home: Path) -> None:
    """A group of one run per seed value, of a folder task whose check names its `<who>` token."""
    print("the Task page: one run per seed value")
    folder = home / "seeded" / "tasks"
    folder.mkdir(parents=True, exist_ok=True)
    task = [
        {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
        {"id": "greet", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "greet",
         "criteria": [{"type": "bash_cmd_succeeds", "criterion": "greets", "bash_cmd": "test -n '<who>'"}]},
    ]
    (folder / "seeded.json").write_text(json.dumps(task))
    done = subprocess.run([binary, "run", "./seeded"], cwd=home, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise WebDriverError(f"agent-env run ./seeded exited {done.returncode}: {done.stdout}{done.stderr}")
    task_url = f"{base}/tasks/{quote('@local/~/seeded/seeded', safe='')}"
    browser.get(task_url)
    browser.click(browser.wait_css("#group-by-seeds"))
    browser.send_keys(browser.wait_css("#group-seed-token"), "who")
    browser.send_keys(browser.wait_css("#group-seeds"), "ann bo,  cy" + ENTER)
    browser.wait_for("the seeded group's page", lambda: "/run-groups/rg-" in browser.current_url())
    browser.wait_text("#group-status", "complete", timeout=180)
    seeds = browser.wait_for("each run's seed", lambda: browser.execute(
        "const s = [...document.querySelectorAll('#group-run-list [data-run] td:last-child')].map((c) => c.textContent);"
        "return s.length === 3 ? s : null;"))
    if seeds != ["who=ann", "who=bo", "who=cy"]:
        raise WebDriverError(f"the seeded group's runs show the seeds {seeds}")


def cancelled(base: str, browser: Session, shots: Path, binary: str, home: Path, work: Path) -> None:
    release = work / "held.release"
    release.touch()
    task_id = waiting_bundle(home, "held", release)
    print("a group whose runs wait: its page cancels them")
    # A first run, released at once, stores the task the Task page starts the group of.
    done = subprocess.run([binary, "run", "./held"], cwd=home, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise WebDriverError(f"agent-env run ./held exited {done.returncode}: {done.stdout}{done.stderr}")
    release.unlink()
    try:
        browser.get(f"{base}/tasks/{quote(task_id, safe='')}")
        type_count(browser, "2" + ENTER)
        browser.wait_for("the held group's page", lambda: "/run-groups/rg-" in browser.current_url())
        mark_load(browser)
        browser.wait_text("#group-running", "2", timeout=120)
        browser.wait_text("#group-status", "running")
        cancel = browser.wait_for("the Cancel button", lambda: (lambda b: b if b and browser.execute(
            "return !document.getElementById('cancel-group').hidden;") else None)(browser.find("#cancel-group")))
        names_say_what(browser, "run group")
        browser.screenshot(shots / "33-group-running.png")
        print("  Cancel asks first; No puts it back; Yes cancels, the focus on the heading")
        browser.send_keys(cancel, ENTER)
        question = browser.wait_text("#cancel-group-question", "Cancel the 2 runs of this group that are not done?")
        if browser.execute("return document.activeElement.id;") != "cancel-group-question":
            raise WebDriverError("Cancel's question does not get the focus")
        browser.send_keys(browser.wait_css("#cancel-group-no"), ENTER)
        browser.wait_for("Cancel back, focused", lambda: browser.execute(
            "const b = document.getElementById('cancel-group'); return !b.hidden && document.activeElement === b;"))
        if browser.execute("return document.getElementById('group-running').textContent;") != "2":
            raise WebDriverError("No cancelled the group's runs")
        browser.send_keys(cancel, ENTER)
        browser.send_keys(browser.wait_css("#cancel-group-yes"), ENTER)
        browser.wait_text("#group-status", "complete", timeout=120)
        focused = browser.wait_for("the focus on the group's heading", lambda: browser.execute(
            "const a = document.activeElement; return a && a.id === 'group-heading' ? a.id : null;"), timeout=10)
        print(f"  asked {question!r}; once cancelled the focus is on #{focused}")
        browser.wait_text("#group-outcomes", "2 cancelled")
        if not same_load(browser):
            raise WebDriverError("the cancelled group's page was loaded again instead of updating in place")
        outcomes = browser.execute("return [...document.querySelectorAll('#group-run-list [data-run] .badge')].map((b) => b.textContent);")
        if outcomes != ["cancelled", "cancelled"]:
            raise WebDriverError(f"the cancelled group's runs show {outcomes}")
        if browser.execute("return !document.getElementById('cancel-group').hidden;"):
            raise WebDriverError("a cancelled group still offers to cancel its runs")
        browser.screenshot(shots / "34-group-cancelled.png")

        print("the Run page: Cancel, with Enter, leaves the focus on the run's heading")
        browser.get(f"{base}/tasks/{quote(task_id, safe='')}")
        browser.send_keys(browser.wait_css("#run-task"), ENTER)
        browser.wait_for("the held run's page", lambda: "/runs/" in browser.current_url())
        cancel_run = browser.wait_for("the Run page's Cancel", lambda: (lambda b: b if b and browser.execute(
            "const c = document.getElementById('cancel-run'); return !c.hidden && !c.disabled;") else None)(browser.find("#cancel-run")))
        browser.send_keys(cancel_run, ENTER)
        browser.wait_text("#run-status", "cancelled", timeout=120)
        focused = browser.wait_for("the focus on the run's heading", lambda: browser.execute(
            "const a = document.activeElement; return a && a.id === 'run-heading' ? a.id : null;"), timeout=10)
        print(f"  once cancelled the focus is on #{focused}")

        print("the Task page keeps a count typed into its form while a group's end redraws it")
        task_url = f"{base}/tasks/{quote(task_id, safe='')}"
        started = post(base, f"/api/v1/tasks/{quote(task_id, safe='')}/runs", {"count": 1})
        group_id = str(started["run_group_id"])
        browser.get(task_url)
        row = f'#run-groups [data-run-group="{group_id}"] .group-complete'
        browser.wait_text(row, "no")
        type_count(browser, "7")
        mark_load(browser)
        post(base, f"/api/v1/tasks/{quote(task_id, safe='')}/cancel-run", {"run_group_id": group_id})
        browser.wait_text(row, "yes", timeout=120)
        kept = browser.execute("const f = document.getElementById('group-count'); return [f.value, document.activeElement === f];")
        if kept != ["7", True] or not same_load(browser):
            raise WebDriverError(f"the Task page's redraw left the typed count and its focus as {kept}")
    finally:
        release.touch()


def post(base: str, path: str, body: dict[str, object]) -> dict[str, object]:
    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        answer: dict[str, object] = json.loads(response.read())
        return answer


def main() -> int:
    parser = browser_arguments(__doc__)
    parser.add_argument("--agent-env", required=True, help="the agent-env binary")
    parser.add_argument("--home", required=True, type=Path, help="the HOME the explorer reads")
    parser.add_argument("--work", required=True, type=Path, help="a folder for the check's own files")
    args = parser.parse_args()
    base = args.explorer.rstrip("/")
    args.work.mkdir(parents=True, exist_ok=True)
    try:
        hello_is_stored(base, args.agent_env, args.home)
        with chromium_session(args.driver, args.chromium, args.screenshots, "failed-group.png") as browser:
            check(base, browser, args.screenshots)
            seeded(base, browser, args.agent_env, args.home)
            cancelled(base, browser, args.screenshots, args.agent_env, args.home, args.work)
    except (WebDriverError, OSError, urllib.error.URLError) as error:
        print(f"FAILED: {error}", file=sys.stderr)
        return 1
    print("A group of runs starts from the Task page, and its page shows its runs, their scores and the spread")
    return 0


if __name__ == "__main__":
    sys.exit(main())
