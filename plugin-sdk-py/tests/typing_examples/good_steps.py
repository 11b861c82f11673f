"""Task steps in every shape the SDK takes, and what the decorator hands back."""

from __future__ import annotations

from typing import Any, Dict, Mapping

from agent_env_plugin import HostHandle, Plugin, TaskStep

plugin = Plugin("agentenv-typing", "0.1.0")


def check_threshold(step: Dict[str, Any]) -> None:
    if not isinstance(step.get("threshold"), float):
        raise ValueError("threshold must be a number")


@plugin.task_step("grade", cls="Grade", validate=check_threshold)
def grade(step: Dict[str, Any], context: Dict[str, Any], host: HostHandle) -> Dict[str, Any]:
    return {"metadata": {"verifications": {step["id"]: {"score": 1.0, "results": []}}}}


@plugin.task_step("quiet")
def quiet(step: Mapping[str, Any], context: Mapping[str, Any], host: HostHandle) -> None:
    """Reads its inputs through wider types and returns nothing (the same as `{"metadata": {}}`)."""


@plugin.task_step("maybe")
def maybe(step: Dict[str, Any], context: Dict[str, Any], host: HostHandle) -> Dict[str, Any] | None:
    return None if step.get("skip") else {"metadata": {"ran": True}}


@plugin.task_step("classy", cls="Classy")
class Classy(TaskStep):
    def execute(self, step: Dict[str, Any], context: Dict[str, Any], host: HostHandle) -> Dict[str, Any]:
        return {"metadata": {"classy": self.type}}

    def validate(self, step: Dict[str, Any]) -> None:
        if "id" not in step:
            raise ValueError("a classy step needs an id")


class Counted(TaskStep):
    type = "counted"

    def execute(self, step: Dict[str, Any], context: Dict[str, Any], host: HostHandle) -> Dict[str, Any]:
        return {"metadata": {"count": len(step)}}


plugin.add_task_step(Counted())


def the_decorators_hand_back_what_they_were_given(host: HostHandle) -> None:
    # The decorated names keep their own types: a function stays callable as itself, a class stays a class.
    result: Dict[str, Any] = grade({"id": "s1"}, {}, host)
    step: Classy = Classy()
    label: str | None = step.label
    print(result, label)


if __name__ == "__main__":
    plugin.serve()
