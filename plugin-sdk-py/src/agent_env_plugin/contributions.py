"""What a plugin contributes: task steps, CLI commands, root options and the other groups.

Each contribution knows the manifest name it answers for (`name`), the type it writes documents under
(`type`, equal to the name for a well-formed plugin), its class label (the manifest's value) and the
methods it implements, which is what `initialize` reports (docs/protocol.md §4.1).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Protocol, Sequence, Tuple, Type, TypeVar, Union, overload

    from .host import HostHandle

    #: What a task step function is: `(step, context, host) -> dict or None`, run synchronously.
    StepFunction = Callable[[Dict[str, Any], Dict[str, Any], HostHandle], Optional[Dict[str, Any]]]
    #: A step's `validate`: raise `ValueError` to refuse the step; what it returns is ignored.
    ValidateFunction = Callable[[Dict[str, Any]], object]
    #: A CLI command function: `(argv, host) -> exit code or None`.
    CommandFunction = Callable[[List[str], HostHandle], Optional[int]]
    #: A root option function: `(value or None, host) -> config path or None`.
    RootOptionFunction = Callable[[Optional[str], HostHandle], Optional[str]]
    #: What a handler may answer: anything the JSON encoder takes (a coroutine is not among them).
    JsonValue = Union[None, bool, int, float, str, List[Any], Tuple[Any, ...], Dict[str, Any]]
    #: A handler of a generic contribution or `Plugin.method`: `(params, host) -> JSON value`.
    GenericMethod = Callable[[Dict[str, Any], HostHandle], JsonValue]

    StepFunctionT = TypeVar("StepFunctionT", bound=StepFunction)
    StepClassT = TypeVar("StepClassT", bound=Type["TaskStep"])
    CommandFunctionT = TypeVar("CommandFunctionT", bound=CommandFunction)
    CommandClassT = TypeVar("CommandClassT", bound=Type["CliCommand"])
    RootOptionFunctionT = TypeVar("RootOptionFunctionT", bound=RootOptionFunction)
    GenericMethodT = TypeVar("GenericMethodT", bound=GenericMethod)

    class TaskStepDecorator(Protocol):
        """What `Plugin.task_step(...)` returns: it takes a `TaskStep` subclass or a function
        `(step: dict, context: dict, host: HostHandle) -> dict | None` and returns it unchanged."""

        @overload
        def __call__(self, target: StepClassT, /) -> StepClassT: ...
        @overload
        def __call__(self, target: StepFunctionT, /) -> StepFunctionT: ...

    class CliCommandDecorator(Protocol):
        """What `Plugin.cli_command(...)` returns: it takes a `CliCommand` subclass or a function
        `(argv: list[str], host: HostHandle) -> int | None` and returns it unchanged."""

        @overload
        def __call__(self, target: CommandClassT, /) -> CommandClassT: ...
        @overload
        def __call__(self, target: CommandFunctionT, /) -> CommandFunctionT: ...


GROUPS = (
    "envs",
    "artifacts",
    "task_steps",
    "sandbox_providers",
    "state_providers",
    "env_providers",
    "explorer_plugins",
    "cli_plugins",
    "cli_root_options",
    "bundles",
)


class TaskStep:
    """A task step type. Subclass it, set `type`, implement `execute`, optionally `validate`.

    `execute(step, context, host)` gets the step as the task document wrote it and the run's context, and
    returns what the step adds to the context: ``{"metadata": {...}}`` is merged into `context.metadata`.
    Raising fails the step (`step-failed`, with the exception's type and message).
    """

    type: str = ""
    #: The class label the manifest names; the class's own name when unset.
    label: str | None = None
    description: str | None = None

    def execute(self, step: Dict[str, Any], context: Dict[str, Any], host: HostHandle) -> Dict[str, Any] | None:
        raise NotImplementedError(f"{type(self).__name__} does not implement execute")

    def validate(self, step: Dict[str, Any]) -> None:
        """Checks a step while the host plans the run; raise `ValueError` to refuse it."""

    def implements_validate(self) -> bool:
        return type(self).validate is not TaskStep.validate

    def implements_execute(self) -> bool:
        return type(self).execute is not TaskStep.execute

    def methods(self) -> List[str]:
        # A subclass that never wrote `execute` does not report it, so agent-env refuses the class when
        # it loads (`must implement execute`) instead of failing each step at run time.
        methods = ["execute", "from_dict"] if self.implements_execute() else ["from_dict"]
        if self.implements_validate():
            methods.append("validate")
        return methods

    def class_label(self) -> str:
        return self.label or type(self).__name__


class FunctionStep(TaskStep):
    """A task step made from a plain function (what `@plugin.task_step(...)` registers)."""

    def __init__(
        self, type_name: str, function: StepFunction, label: str, validate: ValidateFunction | None = None
    ) -> None:
        self.type = type_name
        self.label: str | None = label
        self._function = function
        self._validate = validate

    def execute(self, step: Dict[str, Any], context: Dict[str, Any], host: HostHandle) -> Dict[str, Any] | None:
        return self._function(step, context, host)

    def validate(self, step: Dict[str, Any]) -> None:
        if self._validate is not None:
            self._validate(step)

    def implements_validate(self) -> bool:
        return self._validate is not None


class CliCommand:
    """A CLI command: `agent-env <name> ARGS...` runs `run(argv, host)` in command mode (§4.5).

    stdin, stdout and stderr are the terminal's; return the exit code (None means 0). `SystemExit`
    (argparse's way out) becomes the exit code it carries.
    """

    name: str = ""
    label: str | None = None
    description: str | None = None

    def run(self, argv: List[str], host: HostHandle) -> int | None:
        raise NotImplementedError(f"{type(self).__name__} does not implement run")

    def class_label(self) -> str:
        return self.label or self.name


class FunctionCommand(CliCommand):
    def __init__(self, name: str, function: CommandFunction, label: str, description: str | None) -> None:
        self.name = name
        self.label: str | None = label
        self.description = description
        self._function = function

    def run(self, argv: List[str], host: HostHandle) -> int | None:
        return self._function(argv, host)


def root_flag(name: str) -> str:
    """The flag agent-env makes of a `[provides.cli_root_options]` name, and sends as `cli.root_option`'s
    `flag`: `tenant` is `--tenant`, a one-letter name a short flag (`t` is `-t`), and a name starting with
    `-` is the flag itself (docs/protocol.md §4.5)."""
    if name.startswith("-"):
        return name
    return f"-{name}" if len(name) == 1 else f"--{name}"


class RootOption:
    """A flag on the root command (`agent-env --tenant acme ...`). `apply(value, host)` gets the flag's
    value (None when it is absent) and may return a config file path the host then reads.

    Its manifest entry is `name = { class = label, description = ..., value = ..., always = ... }`: `value`
    (e.g. `"NAME"`) makes a flag that takes a value, shown as `--tenant <NAME>` in `--help`; without it the
    flag is a switch, sent the value `"true"` when given. `always` asks agent-env to call it on every
    invocation, the flag given or not. `flag` is the flag the name makes (`root_flag`)."""

    def __init__(
        self,
        name: str,
        flag: str,
        function: RootOptionFunction,
        label: str,
        description: str | None,
        value: str | None = None,
        always: bool = False,
    ) -> None:
        self.name = name
        self.flag = flag
        self.function = function
        self.label: str = label
        self.description = description
        self.value = value
        self.always = always

    def manifest_keys(self) -> Dict[str, str | bool]:
        """The entry's keys beyond `class` and `description`, as the manifest writes them."""
        keys: Dict[str, str | bool] = {}
        if self.value is not None:
            keys["value"] = self.value
        if self.always:
            keys["always"] = True
        return keys


class Contribution:
    """A contribution to any other group. The host calls its methods as `<group>.<method>` with the
    contribution's `type` in the params; each handler gets `(params, host)` and returns a JSON value."""

    def __init__(
        self,
        group: str,
        name: str,
        label: str,
        handlers: Dict[str, GenericMethod],
        type_name: str | None = None,
        methods: Sequence[str] | None = None,
        description: str | None = None,
    ) -> None:
        self.group = group
        self.name = name
        self.label: str = label
        self.handlers: Dict[str, GenericMethod] = dict(handlers)
        self.type_name: str = type_name or name
        self.methods: List[str] = list(methods) if methods is not None else sorted(self.handlers)
        self.description = description
