"""Keyword grading: which keywords a text contains, as verifier rows and a score.

The rows have the shape the built-in `verify_sandbox` writes to `metadata.verifications[<id>]`:
`{criterion_index, score, result, justification, skipped}`, and the verification's `score` is the share
of keywords found (1.0 when every keyword is there).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Sequence

#: In a local sandbox, paths under /app live in the sandbox's work folder.
SANDBOX_APP_ROOT = "/app"

#: Where a step's text comes from: a file in a sandbox, or an object in the host's object store (by key or URL).
SOURCES = ("path", "source_key", "source_url")


def check_step(step: Dict[str, Any]) -> None:
    """Refuses a `grade_keywords` step that cannot run (raised while the host plans the run)."""
    step_id = step.get("id", "?")
    sources = [name for name in SOURCES if name in step]
    if len(sources) > 1:
        raise ValueError(f"step '{step_id}': give only one of {' and '.join(sources)}")
    source = sources[0] if sources else "path"
    value = step.get(source)
    if not isinstance(value, str) or not value:
        if source == "path":
            raise ValueError(
                f"step '{step_id}': 'path' must name the file to grade, e.g. \"answer.txt\" "
                "(or give 'source_key' or 'source_url': an object in the host's object store)"
            )
        raise ValueError(f"step '{step_id}': '{source}' must name an object in the host's object store")
    if "sandbox_name" in step and source != "path":
        raise ValueError(f"step '{step_id}': 'sandbox_name' picks where a 'path' is read; this step has {source}")
    keywords = step.get("keywords")
    if not isinstance(keywords, list) or not keywords:
        raise ValueError(f"step '{step_id}': 'keywords' must be a non-empty list of strings")
    for index, keyword in enumerate(keywords):
        if not isinstance(keyword, str) or not keyword.strip():
            raise ValueError(f"step '{step_id}': keywords[{index}] must be a non-empty string, got {keyword!r}")
    for flag in ("case_sensitive", "whole_word", "upload_report"):
        if flag in step and not isinstance(step[flag], bool):
            raise ValueError(f"step '{step_id}': '{flag}' must be true or false, got {step[flag]!r}")


def find_sandbox(context: Dict[str, Any], name: str | None) -> Dict[str, Any]:
    """The deployed sandbox named `name`, or the only one when no name is given."""
    sandboxes = [s for s in context.get("deployed_sandboxes") or [] if isinstance(s, dict)]
    if name is not None:
        for sandbox in sandboxes:
            if sandbox.get("sandbox_name") == name:
                return sandbox
        known = ", ".join(repr(s.get("sandbox_name")) for s in sandboxes) or "none"
        raise LookupError(f"no deployed sandbox is named {name!r}; the run has {known}")
    if len(sandboxes) == 1:
        return sandboxes[0]
    if not sandboxes:
        raise LookupError("the run has no deployed sandbox; add a deploy_sandbox step before this one")
    raise LookupError("the run has several sandboxes; name one with 'sandbox_name'")


def resolve_path(sandbox: Dict[str, Any], path: str) -> str:
    """Where a sandbox path is on this machine: relative paths and /app/... are in the work folder."""
    work_dir = sandbox.get("work_dir")
    if not isinstance(work_dir, str) or not work_dir:
        raise LookupError(f"sandbox {sandbox.get('sandbox_name')!r} has no work_dir; grade_keywords reads local files")
    if path == SANDBOX_APP_ROOT or path.startswith(SANDBOX_APP_ROOT + "/"):
        path = path[len(SANDBOX_APP_ROOT) :].lstrip("/")
    if os.path.isabs(path):
        return path
    return os.path.join(work_dir, path)


def count_hits(text: str, keyword: str, case_sensitive: bool, whole_word: bool) -> int:
    import re  # here, not at the top: the plugin starts faster without it

    pattern = re.escape(keyword)
    if whole_word:
        pattern = rf"(?<!\w){pattern}(?!\w)"
    return len(re.findall(pattern, text, 0 if case_sensitive else re.IGNORECASE))


def grade_text(
    text: str | None,
    keywords: Sequence[str],
    shown_path: str,
    case_sensitive: bool = False,
    whole_word: bool = False,
) -> Dict[str, Any]:
    """The verification for `text` (None when the file is missing): `{"score", "results"}`."""
    rows: List[Dict[str, Any]] = []
    for index, keyword in enumerate(keywords):
        if text is None:
            hits = 0
            justification = f"{shown_path} does not exist"
        else:
            hits = count_hits(text, keyword, case_sensitive, whole_word)
            times = "once" if hits == 1 else f"{hits} times"
            justification = (
                f"{keyword!r} appears {times} in {shown_path}" if hits else f"{keyword!r} is not in {shown_path}"
            )
        rows.append(
            {
                "criterion_index": index,
                "score": 1.0 if hits else 0.0,
                "result": "pass" if hits else "fail",
                "justification": justification,
                "skipped": False,
                "keyword": keyword,
                "hits": hits,
            }
        )
    score = sum(row["score"] for row in rows) / len(rows) if rows else 0.0
    return {"score": score, "results": rows}


def read_text(path: str) -> str | None:
    """The file's text (undecodable bytes replaced), or None when there is no such file."""
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
