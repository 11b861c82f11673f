"""Drives headless Chromium through the explorer as a person would: Home, the Bundles page before
`hello` ran (its task id says it has not run yet, and the task's page says to run it from Bundles),
start the `hello` bundle from the Bundles page and watch it pass on the live Run page (its run log linked, the link
serving the log's text; Back to the Bundles page, which the
browser restores from its back/forward cache: its Run buttons work again), open the instance, the
artifact it loaded (and view its file), run the task again from its Task page (Back: the restored page
lists the new run and its button works), page through the Task and Home pages' lists (Home's Next,
after a run recorded meanwhile, shows the run after the page's, not its run again), the plugin
report, the config, the artifacts (greeting's file artifacts folded under it until unfolded), and an explorer plugin's page (the grader example's, reached from the navigation:
paste a text, score it); then the pages at a phone's width, none of which scrolls sideways. On the way,
every link and button says what it does, every column header has a name, the navigation marks the
page's own section. Saves a screenshot of each page. Exits non-zero, naming the step, when anything is
not as expected."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator
from urllib.parse import quote

from webdriver import Session, WebDriverError

CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,1000",
]


def no_error_on_page(browser: Session, page: str) -> None:
    error = browser.find(".error")
    if error is not None:
        raise WebDriverError(f"the {page} page shows an error: {browser.text(error)}")


def stored(base: str, task_id: str) -> bool:
    """Whether a run stored the task `task_id` (its API answer is not a 404)."""
    try:
        with urllib.request.urlopen(f"{base}/api/v1/tasks/{quote(task_id, safe='')}", timeout=60):
            return True
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return False
        raise


def mark_load(browser: Session) -> None:
    """Marks the page load in the current window: a reload (or a navigation) would drop the mark."""
    browser.execute("window.__sameLoad = true;")


def same_load(browser: Session) -> bool:
    return browser.execute("return window.__sameLoad === true;") is True


# What is wrong with the names the page gives its links, buttons, column headers and progress bars:
# one with no name, or one name for links that lead to different places (or for several buttons),
# which a screen reader's list of links and buttons cannot tell apart.
NAME_PROBLEMS = """
const named = (el) => (el.getAttribute('aria-label') || el.textContent || '').replace(/\\s+/g, ' ').trim();
const problems = [];
for (const th of document.querySelectorAll('main th')) {
  if (!th.textContent.trim()) problems.push('a column header with no text');
}
for (const bar of document.querySelectorAll('main [role=progressbar]')) {
  if (!bar.getAttribute('aria-label')) problems.push('a progress bar with no label');
  if (bar.getAttribute('aria-valuenow') === null) problems.push('a progress bar with no value');
}
const targets = new Map();
let buttons = 0;
for (const el of document.querySelectorAll('main a[href], main button')) {
  if (el.hidden || el.closest('[hidden]')) continue;
  const name = named(el);
  if (!name) { problems.push(`a ${el.tagName.toLowerCase()} with no name`); continue; }
  const target = el.tagName === 'A' ? el.getAttribute('href') : `button ${buttons++}`;
  if (!targets.has(name)) targets.set(name, new Set());
  targets.get(name).add(target);
}
for (const [name, where] of targets) {
  if (where.size > 1) problems.push(`${where.size} links or buttons all named ${JSON.stringify(name)}`);
}
return problems;
"""


def names_say_what(browser: Session, page: str) -> None:
    problems = browser.execute(NAME_PROBLEMS)
    if problems:
        raise WebDriverError(f"the {page} page's names: {'; '.join(sorted(set(problems)))}")


def section_is(browser: Session, page: str, expected: list[str]) -> None:
    current = browser.execute("return [...document.querySelectorAll('nav a[aria-current=page]')].map(a => a.dataset.nav);")
    if current != expected:
        raise WebDriverError(f"the {page} page's navigation marks {current}, not {expected}")


def enabled(browser: Session, css: str) -> bool:
    return browser.execute("const b = document.querySelector(arguments[0]); return !!b && !b.disabled;", css) is True


def pager_says(browser: Session, what: str, expected: str) -> str:
    return browser.wait_text(f'[data-pager="{what}"] .pager-count', expected)


def no_sideways_scroll(browser: Session, page: str) -> None:
    widths = browser.execute("const d = document.documentElement; return [d.scrollWidth, d.clientWidth];")
    if widths[0] > widths[1]:
        raise WebDriverError(f"the {page} page is {widths[0]} px wide in a {widths[1]} px window: it scrolls sideways")


@contextmanager
def chromium_session(driver: str, chromium: str, shots: Path, failed: str) -> Iterator[Session]:
    """Headless Chromium in a profile of its own, removed afterwards. When the check fails, what the
    page showed goes to the screenshot `failed`, for whoever reads the failure."""
    profile = tempfile.mkdtemp(prefix="agent-env-chromium-")
    options = {"binary": chromium, "args": CHROMIUM_ARGS + [f"--user-data-dir={profile}"]}
    browser = Session(driver, {"browserName": "chrome", "goog:chromeOptions": options})
    try:
        yield browser
    except WebDriverError:
        try:
            browser.screenshot(shots / failed)
            print(f"the page at {browser.current_url()} is in {shots / failed}", file=sys.stderr)
        except (WebDriverError, OSError):
            pass
        raise
    finally:
        browser.quit()
        shutil.rmtree(profile, ignore_errors=True)


def browser_arguments(description: str | None, explorer: bool = True) -> argparse.ArgumentParser:
    """The options every browser check takes: the explorer (unless the check starts its own),
    chromedriver, Chromium and where the screenshots go."""
    parser = argparse.ArgumentParser(description=description)
    if explorer:
        parser.add_argument("--explorer", required=True, help="the explorer's base URL")
    parser.add_argument("--driver", required=True, help="chromedriver's URL")
    parser.add_argument("--chromium", required=True, help="the Chromium binary")
    parser.add_argument("--screenshots", required=True, type=Path, help="where the screenshots go")
    return parser


def api_total(base: str, path: str) -> int:
    """The `total` of an API list."""
    with urllib.request.urlopen(base + path, timeout=60) as response:
        return int(json.loads(response.read())["total"])


def check(base: str, driver: str, chromium: str, shots: Path) -> None:
    with chromium_session(driver, chromium, shots, "failed.png") as browser:
        print("home page")
        browser.get(base + "/")
        browser.wait_text("h1", "Recent runs")
        browser.wait_css("#recent-runs")
        no_error_on_page(browser, "home")
        browser.screenshot(shots / "01-home.png")

        names_say_what(browser, "home")
        section_is(browser, "home", ["home"])

        hello = "@local/agentenv-framework/hello/hello"
        if not stored(base, hello):
            print("bundles page: hello has not run yet, and says so rather than link a page not there yet")
            browser.get(base + "/bundles")
            cell = browser.wait_text('[data-bundle="hello"] td.task-id', "(not run yet)")
            if browser.find('[data-bundle="hello"] td.task-id a') is not None:
                raise WebDriverError(f"the Bundles page links hello's task before it ran: {cell!r}")
            browser.get(f"{base}/tasks/{quote(hello, safe='')}")
            said = browser.wait_text("#task-not-run", "has not run yet")
            if browser.find('#task-not-run a[href="/bundles"]') is None:
                raise WebDriverError(f"the page of a task not run yet does not lead to Bundles: {said!r}")
            print(f"  its page says: {said!r}")

        print("bundles page: start hello")
        browser.get(base + "/bundles")
        button = browser.wait_css('[data-run-task="hello/hello"]')
        # A built-in bundle has no folder: its card says how to get a copy of it instead.
        browser.wait_text('[data-bundle="hello"] .bundle-folder', "--from-bundle hello")
        names_say_what(browser, "bundles")
        browser.screenshot(shots / "02-bundles.png")
        mark_load(browser)
        browser.click(button)
        browser.wait_for("the Run page", lambda: "/runs/" in browser.current_url())
        # Marks this page load: if the page were reloaded to show progress, the mark would be gone.
        mark_load(browser)

        print("run page: hello passes live")
        live_region = browser.wait_css("#run-live")
        if browser.attribute(live_region, "aria-live") != "polite":
            raise WebDriverError("the Run page's live region is not polite")
        first_said = str(browser.execute("return document.getElementById('run-live').textContent;"))
        browser.wait_text("#run-status", "finished")
        browser.wait_text("[data-instance] .badge", "passed")
        browser.wait_text("#run-log", "passed in")
        print("run page: its run log is linked, and the link serves the log's text")
        log_text = browser.execute(
            "const a = document.getElementById('run-log-link');"
            " if (!a) return null;"
            " const r = new XMLHttpRequest(); r.open('GET', a.href, false); r.send();"
            " return r.status === 200 && r.getResponseHeader('content-type').startsWith('text/plain')"
            " ? r.responseText : 'status ' + r.status;")
        if not log_text or "started v1" not in str(log_text):
            raise WebDriverError(f"the Run page's run log link does not serve the log: {str(log_text)[:200]!r}")
        if browser.execute("return window.__sameLoad === true;") is not True:
            raise WebDriverError("the Run page reloaded instead of updating in place")
        print("run page: its live region said the new status, not the output's lines")
        said = browser.wait_for("the live region to say the run finished", lambda: browser.execute(
            "const t = document.getElementById('run-live').textContent; return t.includes('finished') ? t : null;"))
        if said != "Run finished: hello passed.":
            raise WebDriverError(f"the Run page's live region says {said!r} once the run finished")
        if first_said and not first_said.startswith("Run "):
            raise WebDriverError(f"the live region said {first_said!r} as the page opened")
        print(f"  it said {first_said!r} as the page opened, then {said!r}")
        steps = browser.execute("return [...document.querySelectorAll('[data-step] .badge')].map(b => b.textContent);")
        if steps != ["succeeded", "succeeded", "succeeded"]:
            raise WebDriverError(f"the Run page shows the steps as {steps}")
        no_error_on_page(browser, "run")
        browser.wait_text("[data-instance] .progress-text", "3 of 3 steps succeeded")
        names_say_what(browser, "run")
        section_is(browser, "run", ["bundles"])
        browser.screenshot(shots / "03-run.png")
        run_url = browser.current_url()
        task_id = browser.text(browser.wait_css(".task-link"))
        task_href = str(browser.execute("return document.querySelector('.task-link').getAttribute('href');"))
        if task_href != f"/tasks/{quote(task_id, safe='')}":
            raise WebDriverError(f"the Run page's task {task_id} leads to {task_href}, not its Task page")
        instance_url = str(browser.execute("return document.querySelector('.instance-link').href;"))

        print("back to the bundles page: its buttons work again, as they would on a fresh load")
        browser.back()
        browser.wait_for("the Bundles page", lambda: browser.current_url().endswith("/bundles"))
        cached = same_load(browser)
        browser.wait_for("the Bundles page's Run button to work again", lambda: enabled(browser, '[data-run-task="hello/hello"]'))
        browser.wait_for("the Bundles page's Run all tasks button to work again", lambda: enabled(browser, "#run-bundle-hello"))
        print(f"  restored from the back/forward cache: {'yes' if cached else 'no (loaded again)'}")
        browser.get(run_url)

        print("instance page")
        browser.click(browser.wait_css(".instance-link"))
        browser.wait_text("#instance-scores", "hello: 1")
        section_is(browser, "instance", ["tasks"])
        names_say_what(browser, "instance")
        browser.wait_text("td.criterion", "greets")
        verdicts = browser.execute("return [...document.querySelectorAll('td.criterion + td .badge')].map(b => b.textContent);")
        if verdicts != ["passed", "passed"]:
            raise WebDriverError(f"hello's two criteria show {verdicts!r}, not passed twice")
        whys = browser.execute("return [...document.querySelectorAll('td.why')].map(c => c.textContent);")
        if any(why.rstrip().endswith("stderr=") for why in whys):
            raise WebDriverError(f"a criterion's Why ends in an empty stderr: {whys!r}")
        no_error_on_page(browser, "instance")
        browser.screenshot(shots / "04-instance.png")

        print("artifact page: view hello.txt")
        browser.click(browser.wait_css(".artifact-link"))
        view = browser.wait_css('[data-view-file="hello.txt"]')
        browser.click(view)
        frame = browser.wait_css("#preview iframe")
        source = browser.attribute(frame, "src") or ""
        if "/api/v1/objects/content?object_url=" not in source:
            raise WebDriverError(f"the preview shows {source!r}, not the object")
        body = browser.execute_async(
            "const done = arguments[arguments.length - 1];"
            "fetch(arguments[0]).then(r => r.text()).then(done, e => done('fetch failed: ' + e));",
            source,
        )
        if body != "hello\n":
            raise WebDriverError(f"the artifact's file reads {body!r}")
        no_error_on_page(browser, "artifact")
        names_say_what(browser, "artifact")
        for name in ("View hello.txt", "Download hello.txt", "Open hello.txt in a new tab"):
            if browser.find(f'[aria-label="{name}"]') is None:
                raise WebDriverError(f"the artifact page has no link or button named {name!r}")
        browser.screenshot(shots / "05-artifact.png")

        task_url = f"{base}/tasks/{quote(task_id, safe='')}"
        print("task page: run it, then Back")
        browser.get(task_url)
        run_button = browser.wait_css("#run-task")
        browser.wait_css("#task-runs [data-instance]")
        names_say_what(browser, "task")
        section_is(browser, "task", ["tasks"])
        mark_load(browser)
        browser.click(run_button)
        browser.wait_for("the Run page", lambda: "/runs/" in browser.current_url())
        browser.wait_text("#run-status", "finished")
        new_instance = browser.attribute(browser.wait_css("#run-instances [data-instance]"), "data-instance")
        browser.back()
        browser.wait_for("the Task page", lambda: browser.current_url() == task_url)
        cached = same_load(browser)
        browser.wait_for("the Task page to list the new run",
                         lambda: browser.find(f'#task-runs [data-instance="{new_instance}"]'))
        browser.wait_for("the Task page's Run button to work again", lambda: enabled(browser, "#run-task"))
        no_error_on_page(browser, "task")
        print(f"  restored from the back/forward cache: {'yes' if cached else 'no (loaded again)'}")

        print("task page: its lists page through what they hold")
        runs_total = api_total(base, f"/api/v1/tasks/{quote(task_id, safe='')}/runs?limit=1")
        groups_total = api_total(base, f"/api/v1/tasks/{quote(task_id, safe='')}/run-groups?limit=1")
        browser.get(task_url + "?per_page=1")
        pager_says(browser, "runs", f"showing 1–1 of {runs_total}")
        pager_says(browser, "run groups", f"showing 1–1 of {groups_total}")
        first = browser.execute("return document.querySelector('#task-runs [data-instance]').dataset.instance;")
        browser.click(browser.wait_css('[aria-label="Next page of runs"]'))
        pager_says(browser, "runs", f"showing 2–2 of {runs_total}")
        if "runs_page=2" not in browser.current_url():
            raise WebDriverError(f"the Task page's second page of runs is not in its address: {browser.current_url()}")
        second = browser.execute("return document.querySelector('#task-runs [data-instance]').dataset.instance;")
        if first == second:
            raise WebDriverError(f"the Task page's next page of runs shows {first} again")
        names_say_what(browser, "task")
        browser.screenshot(shots / "05b-task-paged.png")

        print("home page: its lists page through what they hold")
        browser.get(base + "/?per_page=1")
        pager_says(browser, "recent runs", f"showing 1–1 of {api_total(base, '/api/v1/task-instances?limit=1')}")
        pager_says(browser, "runs started here", f"showing 1–1 of {api_total(base, '/api/v1/workflows?limit=1')}")
        names_say_what(browser, "home")

        print("home page: Next after a run recorded meanwhile shows the run after the page's, not its run again")
        started = urllib.request.Request(base + "/api/v1/bundles/hello/run", data=b"{}", method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(started, timeout=120) as response:
            workflow = str(json.loads(response.read())["workflow_id"])

        def run_done() -> bool:
            with urllib.request.urlopen(f"{base}/api/v1/workflows/{workflow}", timeout=60) as response:
                return bool(json.loads(response.read())["done"])
        browser.wait_for("the run started meanwhile to end", run_done, timeout=180)
        # The page does not update itself while no run of it goes, so it still shows the run it showed.
        shown = browser.execute("return document.querySelector('#recent-runs [data-instance]').dataset.instance;")
        with urllib.request.urlopen(base + "/api/v1/task-instances?limit=3", timeout=60) as response:
            now = [str(i["instance_id"]) for i in json.loads(response.read())["items"]]
        expected = now[now.index(shown) + 1]
        browser.click(browser.wait_css('[aria-label="Next page of recent runs"]'))
        after = browser.wait_for("Home's next page of recent runs", lambda: browser.execute(
            "const r = document.querySelector('#recent-runs [data-instance]');"
            "return r && r.dataset.instance !== arguments[0] ? r.dataset.instance : null;", shown), timeout=30)
        if after != expected:
            raise WebDriverError(f"Home's Next after a run recorded meanwhile shows {after}, not {expected}, the run after {shown}")
        if "runs_page=2" not in browser.current_url():
            raise WebDriverError(f"Home's second page of recent runs is not in its address: {browser.current_url()}")

        print("plugins page")
        browser.get(base + "/plugins")
        browser.wait_css('[data-plugin="agentenv-framework"]')
        failed = browser.wait_text('[data-plugin="agentenv-broken"] [data-status]', "failed")
        reason = browser.wait_text('[data-plugin="agentenv-broken"] .reason', "")
        if not reason.strip():
            raise WebDriverError(f"the broken plugin's failure ({failed}) shows no reason")
        browser.screenshot(shots / "06-plugins.png")

        print("plugins page: the explorer plugins")
        browser.wait_css('#explorer-plugins [data-explorer-plugin="grader"]')

        print("explorer plugin page: the grader example's, from the navigation")
        browser.get(base + "/")
        browser.click(browser.wait_css('[data-nav="explorer-plugin"][data-plugin="grader"]'))
        browser.wait_for("the grader's page", lambda: browser.current_url().endswith("/ext/grader"))
        browser.wait_text("h1", "Keyword grader")
        browser.execute(
            "document.getElementById('keywords').value = arguments[0];"
            "document.getElementById('text').value = arguments[1];",
            "alpha, gamma",
            "alpha and beta",
        )
        browser.click(browser.wait_css("#score"))
        browser.wait_text("#result", "score 0.5")
        browser.screenshot(shots / "08-explorer-plugin.png")

        print("config page")
        browser.get(base + "/config")
        browser.wait_css("#config-text")
        no_error_on_page(browser, "config")
        browser.screenshot(shots / "07-config.png")

        print("artifacts: the file artifacts derived from greeting are folded under it")
        greeting = "@local/agentenv-framework/hello/greeting"
        with urllib.request.urlopen(f"{base}/api/v1/artifacts?id={quote(greeting + '__', safe='')}&limit=500", timeout=60) as response:
            derived = [str(a["id"]) for a in json.loads(response.read())["items"]]
        if not derived:
            raise WebDriverError("the runs of hello stored no file artifact of greeting to fold")
        browser.get(base + "/artifacts")
        fold = browser.wait_css(f'#artifacts [data-artifact="{greeting}"] [data-fold="{greeting}"]')
        shown = browser.execute(
            "return [...document.querySelectorAll('#artifacts [data-artifact]')].filter((r) => r.dataset.artifact.startsWith(arguments[0])).length;",
            greeting + "__")
        if shown != 0 or browser.attribute(fold, "aria-expanded") != "false":
            raise WebDriverError(f"the Artifacts list shows {shown} of greeting's file artifacts before they are unfolded")
        browser.click(fold)
        unfolded = browser.wait_for("greeting's file artifacts unfolded", lambda: browser.execute(
            "const r = [...document.querySelectorAll('#artifacts [data-derived-of]')].filter((r) => r.dataset.derivedOf === arguments[0]).map((r) => r.dataset.artifact);"
            "return r.length ? r : null;", greeting))
        if sorted(unfolded) != sorted(derived):
            raise WebDriverError(f"unfolded, greeting shows the file artifacts {unfolded}, not {derived}")
        if browser.execute("const b = document.activeElement; return b && b.dataset.fold === arguments[0] && b.getAttribute('aria-expanded');", greeting) != "true":
            raise WebDriverError("unfolding greeting's file artifacts left the focus elsewhere, or the button not expanded")
        browser.screenshot(shots / "05c-artifacts-folded.png")
        print(f"  {len(derived)} file artifacts folded under greeting, shown once unfolded")

        print("a phone's width: no page scrolls sideways (a table scrolls in its own box)")
        browser.set_window_size(390, 844)
        artifact_url = base + "/artifacts"
        for page, url in [("home", base + "/"), ("tasks", base + "/tasks"), ("artifacts", artifact_url),
                          ("task", task_url), ("instance", instance_url), ("run", run_url)]:
            browser.get(url)
            browser.wait_css("main table")
            no_sideways_scroll(browser, page)
        browser.screenshot(shots / "15-phone-run.png")
        browser.set_window_size(1280, 1000)


def main() -> int:
    parser = browser_arguments(__doc__)
    args = parser.parse_args()
    with urllib.request.urlopen(args.explorer + "/api/v1/health", timeout=30) as response:
        print("explorer:", json.loads(response.read()))
    try:
        check(args.explorer.rstrip("/"), args.driver, args.chromium, args.screenshots)
    except (WebDriverError, OSError) as error:
        print(f"FAILED: {error}", file=sys.stderr)
        return 1
    print(f"The UI works in Chromium; screenshots in {args.screenshots}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
