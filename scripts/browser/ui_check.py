"""Drives headless Chromium through the explorer as a person would: Home, start the `hello` bundle
from the Bundles page and watch it pass on the live Run page, open the instance, the artifact it
loaded (and view its file), the plugin report, the config, and an explorer plugin's page (the grader
example's, reached from the navigation: paste a text, score it); saves a screenshot of each page. Exits non-zero,
naming the step, when anything is not as expected."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

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


def browser_arguments(description: str | None) -> argparse.ArgumentParser:
    """The options every browser check takes: the explorer, chromedriver, Chromium and where the
    screenshots go."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--explorer", required=True, help="the explorer's base URL")
    parser.add_argument("--driver", required=True, help="chromedriver's URL")
    parser.add_argument("--chromium", required=True, help="the Chromium binary")
    parser.add_argument("--screenshots", required=True, type=Path, help="where the screenshots go")
    return parser


def check(base: str, driver: str, chromium: str, shots: Path) -> None:
    with chromium_session(driver, chromium, shots, "failed.png") as browser:
        print("home page")
        browser.get(base + "/")
        browser.wait_text("h1", "Recent runs")
        browser.wait_css("#recent-runs")
        no_error_on_page(browser, "home")
        browser.screenshot(shots / "01-home.png")

        print("bundles page: start hello")
        browser.get(base + "/bundles")
        button = browser.wait_css('[data-run-task="hello/hello"]')
        browser.screenshot(shots / "02-bundles.png")
        browser.click(button)
        browser.wait_for("the Run page", lambda: "/runs/" in browser.current_url())
        # Marks this page load: if the page were reloaded to show progress, the mark would be gone.
        browser.execute("window.__sameLoad = true;")

        print("run page: hello passes live")
        browser.wait_text("#run-status", "finished")
        browser.wait_text("[data-instance] .badge", "passed")
        browser.wait_text("#run-log", "passed in")
        if browser.execute("return window.__sameLoad === true;") is not True:
            raise WebDriverError("the Run page reloaded instead of updating in place")
        steps = browser.execute("return [...document.querySelectorAll('[data-step] .badge')].map(b => b.textContent);")
        if steps != ["succeeded", "succeeded", "succeeded"]:
            raise WebDriverError(f"the Run page shows the steps as {steps}")
        no_error_on_page(browser, "run")
        browser.screenshot(shots / "03-run.png")

        print("instance page")
        browser.click(browser.wait_css(".instance-link"))
        browser.wait_text("#instance-scores", "hello: 1")
        browser.wait_text("td.criterion", "greets")
        verdicts = browser.execute("return [...document.querySelectorAll('td.criterion + td .badge')].map(b => b.textContent);")
        if verdicts != ["passed", "passed"]:
            raise WebDriverError(f"hello's two criteria show {verdicts!r}, not passed twice")
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
        browser.screenshot(shots / "05-artifact.png")

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
