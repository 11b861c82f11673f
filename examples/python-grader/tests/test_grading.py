"""The grading logic on its own."""

from __future__ import annotations

import pytest

from agentenv_grader import grading


def test_each_keyword_is_a_row_and_the_score_is_the_share_found():
    verification = grading.grade_text("Plants use Chlorophyll. chlorophyll!", ["chlorophyll", "xylem"], "a.txt")
    assert verification["score"] == 0.5
    first, second = verification["results"]
    assert first == {
        "criterion_index": 0,
        "score": 1.0,
        "result": "pass",
        "justification": "'chlorophyll' appears 2 times in a.txt",
        "skipped": False,
        "keyword": "chlorophyll",
        "hits": 2,
    }
    assert second["score"] == 0.0 and second["result"] == "fail"
    assert second["justification"] == "'xylem' is not in a.txt"


def test_case_and_whole_word_options():
    assert grading.grade_text("Cat catalog", ["cat"], "f", case_sensitive=True)["results"][0]["hits"] == 1
    assert grading.grade_text("Cat catalog", ["cat"], "f", whole_word=True)["results"][0]["hits"] == 1
    assert grading.grade_text("Cat catalog", ["cat"], "f")["results"][0]["hits"] == 2
    assert grading.grade_text("a+b", ["a+b"], "f")["results"][0]["hits"] == 1  # keywords are not regexes


def test_a_missing_file_scores_zero_and_says_so():
    verification = grading.grade_text(None, ["x"], "answer.txt in sandbox 'box'")
    assert verification["score"] == 0.0
    assert verification["results"][0]["justification"] == "answer.txt in sandbox 'box' does not exist"


def test_sandbox_paths_map_into_the_work_folder():
    box = {"sandbox_name": "box", "work_dir": "/w"}
    assert grading.resolve_path(box, "answer.txt") == "/w/answer.txt"
    assert grading.resolve_path(box, "/app/out/answer.txt") == "/w/out/answer.txt"
    assert grading.resolve_path(box, "/etc/hostname") == "/etc/hostname"


def test_sandbox_lookup_messages():
    ctx = {"deployed_sandboxes": [{"sandbox_name": "a", "work_dir": "/a"}, {"sandbox_name": "b", "work_dir": "/b"}]}
    assert grading.find_sandbox(ctx, "b")["work_dir"] == "/b"
    with pytest.raises(LookupError, match="several sandboxes"):
        grading.find_sandbox(ctx, None)
    with pytest.raises(LookupError, match="no deployed sandbox is named 'c'; the run has 'a', 'b'"):
        grading.find_sandbox(ctx, "c")
    with pytest.raises(LookupError, match="add a deploy_sandbox step"):
        grading.find_sandbox({}, None)


@pytest.mark.parametrize(
    "step, message",
    [
        ({"id": "g", "keywords": ["a"]}, "step 'g': 'path' must name the file to grade"),
        ({"id": "g", "path": "a.txt"}, "step 'g': 'keywords' must be a non-empty list of strings"),
        ({"id": "g", "path": "a.txt", "keywords": ["a", " "]}, "step 'g': keywords\\[1\\] must be a non-empty string"),
        ({"id": "g", "path": "a.txt", "keywords": ["a"], "whole_word": "yes"}, "'whole_word' must be true or false"),
    ],
)
def test_check_step_refuses_bad_steps(step, message):
    with pytest.raises(ValueError, match=message):
        grading.check_step(step)
