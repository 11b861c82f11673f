"""Registration refuses, when the plugin starts, what could only fail later: an `async def` handler (the SDK
calls handlers synchronously, so its coroutine would never run). The decorators hand back what they got."""

from __future__ import annotations

import pytest

from agent_env_plugin import CliCommand, Plugin, SecretStore, TaskStep


def new_plugin() -> Plugin:
    return Plugin("agentenv-registration", "0.1.0")


def test_an_async_step_function_is_refused_when_it_is_registered():
    plugin = new_plugin()

    async def later(step, context, host):
        return {}

    with pytest.raises(TypeError, match=r"@task_step\('later'\): later is an async def; .*write a plain def"):
        plugin.task_step("later")(later)
    assert plugin.contributions() == []


def test_an_async_execute_of_a_step_class_is_refused():
    class Later(TaskStep):
        async def execute(self, step, context, host):  # type: ignore[override]
            return {}

    with pytest.raises(TypeError, match=r"Later\.execute is an async def"):
        new_plugin().task_step("later")(Later)


def test_an_async_generator_is_refused_too():
    async def stream(step, context, host):
        yield {}

    with pytest.raises(TypeError, match="is an async def"):
        new_plugin().task_step("stream")(stream)


def test_async_commands_options_methods_and_handlers_are_refused():
    async def handler(*args):
        return None

    class LaterCommand(CliCommand):
        async def run(self, argv, host):  # type: ignore[override]
            return 0

    plugin = new_plugin()
    with pytest.raises(TypeError, match=r"@cli_command\('later'\): handler is an async def"):
        plugin.cli_command("later")(handler)
    with pytest.raises(TypeError, match=r"LaterCommand\.run is an async def"):
        plugin.cli_command("later")(LaterCommand)
    with pytest.raises(TypeError, match=r"@root_option\('tenant'\): handler is an async def"):
        plugin.root_option("tenant")(handler)
    with pytest.raises(TypeError, match=r"@method\('x\.later'\): handler is an async def"):
        plugin.method("x.later")(handler)
    with pytest.raises(TypeError, match=r"envs 'sandbox': the handler of 'from_dict' is an async def"):
        plugin.contribute("envs", "sandbox", {"from_dict": handler})
    assert plugin.contributions() == []


def test_plain_functions_and_classes_are_registered_and_handed_back():
    plugin = new_plugin()

    def grade(step, context, host):
        return None

    class Hello(CliCommand):
        def run(self, argv, host):
            return 0

    assert plugin.task_step("grade")(grade) is grade
    assert plugin.cli_command("hello")(Hello) is Hello
    assert [c["name"] for c in plugin.contributions()] == ["grade", "hello"]


def test_the_store_decorator_hands_back_the_class_in_each_spelling():
    plugin = new_plugin()

    class A(SecretStore):
        def get(self, name):
            return None

    class B(A):
        pass

    class C(A):
        pass

    assert plugin.store(A) is A
    assert plugin.store(cls="Bee")(B) is B
    assert plugin.store(C, cls="Sea") is C
    assert [s["class"] for s in plugin.stores()] == ["A", "Bee", "Sea"]
    with pytest.raises(TypeError, match="is not a subclass of ObjectStore, DocumentStore, ImageStore or SecretStore"):
        plugin.store(int)  # type: ignore[type-var]


def test_a_step_class_without_execute_does_not_report_it():
    class Half(TaskStep):
        type = "half"

    class Whole(TaskStep):
        type = "whole"

        def execute(self, step, context, host):  # type: ignore[override]
            return {}

    plugin = new_plugin()
    plugin.task_step("half")(Half)
    plugin.task_step("whole")(Whole)
    methods = {c["name"]: c["methods"] for c in plugin.contributions()}
    assert methods == {"half": ["from_dict"], "whole": ["execute", "from_dict"]}
