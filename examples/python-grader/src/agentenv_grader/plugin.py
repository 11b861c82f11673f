"""The agentenv-grader plugin: the `grade_keywords` task step, the `grader` command, a folder object store,
and a page in the explorer (`agent-env up`, "Keyword grader") that scores pasted text by keywords.

A task step that uses it:

    {"id": "grade", "type": "grade_keywords", "sandbox_name": "box", "path": "/app/answer.txt",
     "keywords": ["photosynthesis", "chlorophyll"], "verifier_id": "keywords", "upload_report": true}

writes `metadata.verifications.keywords = {"score": 0.5, "results": [...]}`, one row per keyword, and with
`upload_report` also puts the report in the host's object store and records its URL. Instead of `path`, a
step may grade an object of the host's object store: `"source_key": "counts/essay.json"` (or `source_url`).
"""

from __future__ import annotations

import sys

from agent_env_plugin import ExplorerResponse, Plugin, TaskStep

from . import grading
from .store import FolderObjectStore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Tuple

    from agent_env_plugin import ExplorerRequest, HostHandle

__version__ = "0.1.0"

plugin = Plugin(
    "agentenv-grader",
    __version__,
    description="Grades a file in a sandbox by the keywords it contains",
    requires={"agentenv-framework": ">=0.1.0"},
)


class GradeKeywords(TaskStep):
    """Scores keyword hits in a sandbox file into metadata.verifications."""

    type = "grade_keywords"
    description = "Scores keyword hits in a sandbox file into metadata.verifications"

    def validate(self, step: Dict[str, Any]) -> None:
        grading.check_step(step)

    def execute(self, step: Dict[str, Any], context: Dict[str, Any], host: HostHandle) -> Dict[str, Any]:
        grading.check_step(step)
        text, shown = self._read_source(step, context, host)
        verification = grading.grade_text(
            text,
            step["keywords"],
            shown,
            case_sensitive=bool(step.get("case_sensitive", False)),
            whole_word=bool(step.get("whole_word", False)),
        )
        verifier_id = step.get("verifier_id") or step.get("id") or self.type
        if step.get("upload_report"):
            import json

            instance = str(context.get("instance_id") or "run").replace("/", "_").replace("@", "")
            source = next(name for name in grading.SOURCES if name in step)
            report = {"verifier_id": verifier_id, source: step[source], **verification}
            url = host.objects.put(
                f"grader/{instance}/{verifier_id}.json",
                json.dumps(report, indent=2).encode(),
                "application/json",
            )
            verification["report_url"] = url
        return {"metadata": {"verifications": {verifier_id: verification}}}


    def _read_source(self, step: Dict[str, Any], context: Dict[str, Any], host: HostHandle) -> Tuple[str | None, str]:
        """The text to grade (None when the sandbox file is missing) and how messages name it."""
        if "source_key" in step:
            data = host.objects.read(step["source_key"])
            return data.decode("utf-8", "replace"), f"object {step['source_key']!r}"
        if "source_url" in step:
            return host.objects.get(step["source_url"]).decode("utf-8", "replace"), step["source_url"]
        sandbox_name = step.get("sandbox_name")
        sandbox = grading.find_sandbox(context, sandbox_name if isinstance(sandbox_name, str) else None)
        path = grading.resolve_path(sandbox, step["path"])
        return grading.read_text(path), f"{step['path']} in sandbox {sandbox.get('sandbox_name')!r}"


plugin.add_task_step(GradeKeywords())
plugin.store(FolderObjectStore)


@plugin.cli_command("grader", description="Score a file by keywords from the command line")
def grader_command(argv: List[str], host: HostHandle) -> int:
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="agent-env grader", description="Score a file by the keywords it contains.")
    parser.add_argument("file", help="the file to grade")
    parser.add_argument("-k", "--keyword", action="append", required=True, help="a keyword (repeat for more)")
    parser.add_argument("--case-sensitive", action="store_true")
    parser.add_argument("--whole-word", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the verification as JSON")
    args = parser.parse_args(argv)
    text = grading.read_text(args.file)
    if text is None:
        print(f"Error: {args.file} does not exist", file=sys.stderr)
        return 1
    verification = grading.grade_text(text, args.keyword, args.file, args.case_sensitive, args.whole_word)
    if args.json:
        print(json.dumps(verification, indent=2))
    else:
        for row in verification["results"]:
            print(f"{row['result']:4}  {row['justification']}")
        print(f"score {verification['score']:g}")
    return 0 if verification["score"] == 1.0 else 1


page = plugin.explorer("grader", cls="GraderPage", page="/ext/grader", title="Keyword grader")

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Keyword grader · agent-env explorer</title>
<link rel="stylesheet" href="/static/style.css"></head>
<body><header><a class="brand" href="/">agent-env explorer</a></header><main>
<h1>Keyword grader</h1>
<p class="muted">Scores a text by the keywords it contains, as the <code>grade_keywords</code> step does.</p>
<form method="post" action="/ext/grader/score">
<p><label>Keywords (comma-separated)<br><input name="keywords" id="keywords" size="60" value="{keywords}"></label></p>
<p><label>Text<br><textarea name="text" id="text" rows="8" cols="60">{text}</textarea></label></p>
<p><button type="submit" id="score">Score</button></p>
</form>
{result}
</main></body></html>
"""


def _render(keywords: str = "", text: str = "", result: str = "") -> str:
    import html

    return _PAGE.format(keywords=html.escape(keywords), text=html.escape(text), result=result)


@page.get("/ext/grader")
def grader_page(request: ExplorerRequest, host: HostHandle) -> ExplorerResponse:
    return ExplorerResponse.html(_render())


@page.post("/ext/grader/score")
def grader_score(request: ExplorerRequest, host: HostHandle) -> ExplorerResponse:
    import html
    from urllib.parse import parse_qs

    form = parse_qs(request.text(), keep_blank_values=True)
    keywords_text = form.get("keywords", [""])[0]
    text = form.get("text", [""])[0]
    keywords = [k.strip() for k in keywords_text.split(",") if k.strip()]
    if not keywords:
        return ExplorerResponse.html(_render(keywords_text, text, '<p class="error" role="alert">Give at least one keyword.</p>'), 400)
    verification = grading.grade_text(text, keywords, "the text")
    rows = "".join(
        f"<tr><td>{html.escape(str(row['result']))}</td><td>{html.escape(str(row['justification']))}</td></tr>"
        for row in verification["results"]
    )
    result = f'<p id="result">score <strong>{verification["score"]:g}</strong></p><table><tbody>{rows}</tbody></table>'
    return ExplorerResponse.html(_render(keywords_text, text, result))


def main(argv: List[str] | None = None) -> None:
    """The console script agent-env starts (`agentenv-grader`)."""
    plugin.serve(argv)


if __name__ == "__main__":
    main()
