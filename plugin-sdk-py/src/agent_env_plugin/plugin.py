"""`Plugin`: register contributions and stores, then `serve()` (docs/protocol.md §2-§6, §9)."""

from __future__ import annotations

import gc
import os
import sys
import time

from . import _sync, wire
from .contributions import (
    GROUPS,
    CliCommand,
    Contribution,
    FunctionCommand,
    FunctionStep,
    RootOption,
    TaskStep,
    root_flag,
)
from .peer import CallContext, Connection

# The error classes, the explorer, the host handle and the store base classes are imported where they are
# first needed, not here: answering `initialize` needs none of them, and a plugin that uses one has
# imported it already.

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, NoReturn, Sequence, Tuple, Type, TypeVar, Union, overload

    from .contributions import (
        CliCommandDecorator,
        CommandFunction,
        GenericMethod,
        GenericMethodT,
        RootOptionFunctionT,
        StepFunction,
        TaskStepDecorator,
        ValidateFunction,
    )
    from .errors import PluginError, StepFailedError
    from .explorer import Explorer
    from .host import HostHandle
    from .manifest import Entry as ManifestEntry
    from .stores import Store

    StoreClassT = TypeVar("StoreClassT", bound=Type[Store])
else:

    def overload(function: object) -> object:
        """`typing.overload` without importing `typing` at start-up: the definition after the overloads wins."""
        return function


def _method_not_found(method: str, where: str) -> PluginError:
    from .errors import MethodNotFoundError

    return MethodNotFoundError(f"no method '{method}' in {where}")


def canonical_name(name: str) -> str:
    """A package name's canonical form: lowercase, each run of `-`, `_` and `.` one `-`."""
    out: List[str] = []
    for ch in name.lower():
        if ch in "-_.":
            if not out or out[-1] != "-":
                out.append("-")
        else:
            out.append(ch)
    return "".join(out)


def _step_failed(error_type: str, message: str, traceback_text: str | None = None) -> StepFailedError:
    """`step-failed`, as the run prints it: `<error_type>: <message>`; the traceback, when there is
    one, goes in `data.traceback` (agent-env shows it with `--verbose` and keeps it in the instance)."""
    text = f"{error_type}: {message}" if message else error_type
    data: Dict[str, Any] = {"error_type": error_type, "message": message}
    if traceback_text:
        data["traceback"] = traceback_text
    from .errors import StepFailedError

    return StepFailedError(text, data)


def _need_str(params: Dict[str, Any], method: str, name: str) -> str:
    value = params.get(name)
    if not isinstance(value, str):
        from .errors import InvalidParamsError

        raise InvalidParamsError(f"{method} needs '{name}' (a string)")
    return value


def _timeout_ms(params: Dict[str, Any]) -> int | None:
    """`execute`'s `timeout_ms`: a whole number of milliseconds, or None when the host did not say."""
    value = params.get("timeout_ms")
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    from .errors import InvalidParamsError

    raise InvalidParamsError(f"execute: 'timeout_ms' must be a whole number of milliseconds, 0 or more, got {value!r}")


def _need_dict(params: Dict[str, Any], method: str, name: str) -> Dict[str, Any]:
    value = params.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        from .errors import InvalidParamsError

        raise InvalidParamsError(f"{method}: '{name}' must be an object, got {type(value).__name__}")
    return value


class Plugin:
    """One plugin package: what it contributes, and the server that answers the host.

    >>> plugin = Plugin("agentenv-grader", "0.1.0")
    >>> @plugin.task_step("grade_essay", cls="GradeEssay")
    ... def grade(step, context, host):
    ...     return {"metadata": {"verifications": {step["id"]: {"score": 1.0, "results": []}}}}
    """

    def __init__(
        self,
        name: str,
        version: str,
        protocol: Tuple[int, int] = (wire.MIN_PROTOCOL_VERSION, wire.PROTOCOL_VERSION),
        description: str | None = None,
        requires: Dict[str, str] | None = None,
        exec: Sequence[str] | None = None,
    ) -> None:
        if protocol[0] > protocol[1]:
            raise ValueError(f"protocol range {protocol} has its minimum above its maximum")
        self.name = name
        self.version = version
        self.protocol: Tuple[int, int] = (int(protocol[0]), int(protocol[1]))
        self.description = description
        self.requires: Dict[str, str] = dict(requires or {})
        self.exec: List[str] | None = list(exec) if exec is not None else None
        self.package: str = name
        self.settings: Dict[str, Any] = {}
        self.chosen_protocol: int | None = None
        self._steps: Dict[str, TaskStep] = {}
        self._commands: Dict[str, CliCommand] = {}
        self._root_options: Dict[str, RootOption] = {}
        self._generic: Dict[Tuple[str, str], Contribution] = {}
        self._store_classes: Dict[str, type[Store]] = {}
        self._open_stores: Dict[str, Store] = {}
        self._store_lock = _sync.Lock()
        self._next_handle = 0
        self._shutdown_hooks: List[Callable[[], None]] = []
        self._methods: Dict[str, GenericMethod] = {}
        self._explorers: Dict[str, Explorer] = {}

    # ---------------------------------------------------------------- registration

    def task_step(
        self,
        name: str,
        cls: str | None = None,
        validate: ValidateFunction | None = None,
        description: str | None = None,
    ) -> TaskStepDecorator:
        """Registers a task step type: decorate a function `(step, context, host) -> dict`, or a
        `TaskStep` subclass. `cls` is the class label the manifest names (default: the function or
        class name). Steps run synchronously, on a thread of their own: an `async def` is refused."""

        def register(target: Any) -> Any:
            function: StepFunction = target  # what the type checker held the caller's function to
            if isinstance(target, type) and issubclass(target, TaskStep):
                _refuse_coroutine(target.execute, f"@task_step({name!r}): {target.__name__}.execute")
                step = target()
                step.type = name
                if cls is not None:
                    step.label = cls
                if description is not None:
                    step.description = description
            elif callable(target):
                _refuse_coroutine(target, f"@task_step({name!r}): {getattr(target, '__name__', 'the step')}")
                label = cls or str(getattr(target, "__name__", name))
                step = FunctionStep(name, function, label, validate)
                step.description = description or _first_doc_line(target)
            else:
                raise TypeError(f"@task_step({name!r}) decorates a function or a TaskStep subclass")
            self.add_task_step(step)
            return target

        return register

    def add_task_step(self, step: TaskStep) -> TaskStep:
        """Registers a `TaskStep` instance under its `type`."""
        if not step.type:
            raise ValueError(f'{type(step).__name__} has no type; set `type = "my_step"` on the class')
        if step.type in self._steps:
            raise ValueError(f"task step type '{step.type}' is registered twice in {self.name}")
        self._steps[step.type] = step
        return step

    @overload
    def store(self, target: StoreClassT, *, cls: str | None = None) -> StoreClassT: ...
    @overload
    def store(  # noqa: F811 - overloads, for type checkers only (see `overload` above)
        self, target: None = None, *, cls: str | None = None
    ) -> Callable[[StoreClassT], StoreClassT]: ...

    def store(  # noqa: F811
        self, target: StoreClassT | None = None, *, cls: str | None = None
    ) -> StoreClassT | Callable[[StoreClassT], StoreClassT]:
        """Registers a store class (a subclass of `ObjectStore`, `DocumentStore`, `ImageStore` or
        `SecretStore`) and returns it unchanged. Use as `@plugin.store`, `@plugin.store(cls="Label")` or
        `plugin.store(MyStore, cls="Label")`."""

        from .stores import STORE_BASES, Store

        def register(store_cls: StoreClassT) -> StoreClassT:
            if not (isinstance(store_cls, type) and issubclass(store_cls, Store)) or store_cls.kind not in STORE_BASES:
                raise TypeError(
                    f"{store_cls!r} is not a subclass of ObjectStore, DocumentStore, ImageStore or SecretStore"
                )
            label = cls or store_cls.__name__
            if label in self._store_classes:
                raise ValueError(f"store class '{label}' is registered twice in {self.name}")
            self._store_classes[label] = store_cls
            return store_cls

        return register(target) if target is not None else register

    def cli_command(self, name: str, cls: str | None = None, description: str | None = None) -> CliCommandDecorator:
        """Registers `agent-env <name>`: decorate a function `(argv, host) -> int` or a `CliCommand`
        subclass. Commands run synchronously: an `async def` is refused."""

        def register(target: Any) -> Any:
            function: CommandFunction = target  # what the type checker held the caller's function to
            if isinstance(target, type) and issubclass(target, CliCommand):
                _refuse_coroutine(target.run, f"@cli_command({name!r}): {target.__name__}.run")
                command = target()
                command.name = name
                command.label = cls or command.label or name
                if description is not None:
                    command.description = description
            elif callable(target):
                _refuse_coroutine(target, f"@cli_command({name!r}): {getattr(target, '__name__', 'the command')}")
                command = FunctionCommand(name, function, cls or name, description or _first_doc_line(target))
            else:
                raise TypeError(f"@cli_command({name!r}) decorates a function or a CliCommand subclass")
            self.add_cli_command(command)
            return target

        return register

    def add_cli_command(self, command: CliCommand) -> CliCommand:
        if not command.name:
            raise ValueError(f'{type(command).__name__} has no name; set `name = "my-command"` on the class')
        if command.name in self._commands:
            raise ValueError(f"CLI command '{command.name}' is registered twice in {self.name}")
        self._commands[command.name] = command
        return command

    def root_option(
        self,
        name: str,
        flag: str | None = None,
        cls: str | None = None,
        description: str | None = None,
        *,
        value: str | None = None,
        always: bool = False,
    ) -> Callable[[RootOptionFunctionT], RootOptionFunctionT]:
        """Registers a flag on `agent-env` itself: decorate a function `(value, host) -> config path or None`.

        `name` is the manifest key, and the key is the flag: `tenant` is `--tenant`, a one-letter name a
        short flag (`t` is `-t`), a name starting with `-` the flag itself. `cls` is the class label
        (default: `name`), `description` the `--help` text (default: the function's first doc line).
        `value="NAME"` makes a flag that takes a value (`--tenant NAME`), which the function gets as a
        string; without it the flag is a switch, and the function gets `"true"` when it is given. It gets
        `None` when the flag is absent: agent-env calls it then only if `always=True` (and `plugin list` /
        `check` do, to see that it works). Options run synchronously: an `async def` is refused.

        `flag` is no longer needed and is deprecated: the flag is the one the name makes. Giving that flag
        (or the name) warns (`DeprecationWarning`); any other flag is a `ValueError`, since agent-env would
        never send it."""
        option_flag = root_flag(name)
        if flag is not None:
            _deprecated_flag(name, flag, option_flag)
        if value is not None and (not isinstance(value, str) or not value):
            raise ValueError(
                f"@root_option({name!r}): value={value!r}; give the name of the flag's value in --help "
                '(value="NAME"), or leave it out for a switch'
            )

        def register(function: RootOptionFunctionT) -> RootOptionFunctionT:
            _refuse_coroutine(function, f"@root_option({name!r}): {getattr(function, '__name__', 'the option')}")
            if name in self._root_options:
                raise ValueError(f"root option '{name}' is registered twice in {self.name}")
            label = cls or name
            self._root_options[name] = RootOption(
                name, option_flag, function, label, description or _first_doc_line(function), value, bool(always)
            )
            return function

        return register

    def contribute(
        self,
        group: str,
        name: str,
        handlers: Dict[str, GenericMethod],
        cls: str | None = None,
        type: str | None = None,
        methods: Sequence[str] | None = None,
        description: str | None = None,
    ) -> Contribution:
        """Registers a contribution to any other group (`envs`, `sandbox_providers`, ...). `handlers` maps
        each method it implements to a function `(params, host) -> JSON value`; the host calls them as
        `<group>.<method>` with `type` in the params."""
        if group not in GROUPS:
            raise ValueError(f"'{group}' is not a contribution group; the groups are {', '.join(GROUPS)}")
        if group in ("task_steps", "cli_plugins", "cli_root_options"):
            raise ValueError(f"register {group} with task_step, cli_command or root_option")
        if (group, name) in self._generic:
            raise ValueError(f"{group} '{name}' is registered twice in {self.name}")
        for method_name, handler in handlers.items():
            _refuse_coroutine(handler, f"{group} '{name}': the handler of '{method_name}'")
        contribution = Contribution(group, name, cls or name, handlers, type, methods, description)
        self._generic[(group, name)] = contribution
        return contribution

    def explorer(
        self, name: str, cls: str | None = None, page: str | None = None, title: str | None = None
    ) -> Explorer:
        """Registers an explorer plugin (`explorer_plugins`) named `name`: routes served inside `agent-env
        up`. `page` is the route the explorer's navigation links to, `title` its link text. Add routes to
        the returned `Explorer` with its `get`, `post` or `route` decorators."""
        if name in self._explorers or ("explorer_plugins", name) in self._generic:
            raise ValueError(f"explorer_plugins '{name}' is registered twice in {self.name}")
        from .explorer import Explorer

        explorer = Explorer(name, cls or name, page, title)
        self._explorers[name] = explorer
        return explorer

    def method(self, name: str) -> Callable[[GenericMethodT], GenericMethodT]:
        """Answers the request method `name` with a function `(params, host) -> JSON value`: the escape
        hatch for anything the protocol adds that has no registration of its own (the Rust SDK's
        `Plugin::method`)."""

        def register(function: GenericMethodT) -> GenericMethodT:
            _refuse_coroutine(function, f"@method({name!r}): {getattr(function, '__name__', 'the handler')}")
            if name in self._methods:
                raise ValueError(f"method '{name}' is registered twice in {self.name}")
            self._methods[name] = function
            return function

        return register

    def on_shutdown(self, hook: Callable[[], None]) -> Callable[[], None]:
        """Runs `hook()` when the host is done with the plugin (`shutdown`, or stdin ended), once the
        requests still running have returned or the shutdown grace ran out, after the open stores are
        closed."""
        self._shutdown_hooks.append(hook)
        return hook

    # ---------------------------------------------------------------- what the host sees

    def contributions(self) -> List[Dict[str, Any]]:
        """The `contributions` of the `initialize` answer."""
        out: List[Dict[str, Any]] = []
        for step in self._steps.values():
            out.append(
                _info(
                    "task_steps",
                    step.type,
                    step.type,
                    step.label or type(step).__name__,
                    step.methods(),
                    step.description,
                )
            )
        for command in self._commands.values():
            label = command.label or command.name
            out.append(_info("cli_plugins", command.name, command.name, label, ["run"], command.description))
        for option in self._root_options.values():
            out.append(_info("cli_root_options", option.name, option.name, option.label, ["apply"], option.description))
        for explorer in self._explorers.values():
            out.append(_info("explorer_plugins", explorer.name, explorer.name, explorer.label, ["router"], None))
        for c in self._generic.values():
            out.append(_info(c.group, c.name, c.type_name, c.label, c.methods, c.description))
        return out

    def stores(self) -> List[Dict[str, Any]]:
        """The `stores` of the `initialize` answer."""
        out = []
        for label, cls in self._store_classes.items():
            entry: Dict[str, Any] = {"class": label, "kind": cls.kind, "config_keys": list(cls.config_keys)}
            if cls.required_keys:
                entry["required_keys"] = list(cls.required_keys)
            out.append(entry)
        return out

    def manifest(self, exec_argv: Sequence[str] | None = None) -> str:
        """The manifest (TOML) for what is registered; `exec` is this program unless given."""
        from . import manifest as manifest_text

        provides: Dict[str, List[ManifestEntry]] = {}
        for info in self.contributions():
            group, name = info["group"], info["name"]
            option = self._root_options.get(name) if group == "cli_root_options" else None
            extra = option.manifest_keys() if option is not None else {}
            provides.setdefault(group, []).append((name, info["class"], info.get("description"), extra))
        stores = [(label, cls.kind) for label, cls in self._store_classes.items()]
        argv = list(exec_argv) if exec_argv is not None else (self.exec or _own_argv())
        return manifest_text.render(
            self.name, self.version, argv, self.protocol, provides, stores, self.description, self.requires
        )

    # ---------------------------------------------------------------- answering

    def initialize(self, params: Dict[str, Any]) -> Dict[str, Any]:
        """Answers `initialize`: negotiates the protocol and reports what is registered."""
        requested = wire.parse_range(params.get("protocol"))
        if requested is None:
            requested = wire.parse_range(os.environ.get(wire.PROTOCOL_VERSIONS_VAR, ""))
        if requested is None:
            from .errors import InvalidParamsError

            raise InvalidParamsError('initialize needs \'protocol\': {"min": N, "max": M}')
        chosen = wire.negotiate(requested, self.protocol)
        if chosen is None:
            from .errors import ProtocolMismatchError

            raise ProtocolMismatchError(
                f"{self.name} {self.version} speaks protocol {wire.range_text(self.protocol)}, "
                f"the host speaks {wire.range_text(requested)}; install a version of one that speaks the other's",
                {
                    "supported": {"min": self.protocol[0], "max": self.protocol[1]},
                    "requested": {"min": requested[0], "max": requested[1]},
                },
            )
        self.chosen_protocol = chosen
        self.settings = _need_dict(params, "initialize", "settings")
        package = params.get("package")
        self.package = package if isinstance(package, str) and package else os.environ.get(wire.PACKAGE_VAR, self.name)
        if canonical_name(self.package) != canonical_name(self.name):
            sys.stderr.write(
                f"warning: agent-env started this plugin as package '{self.package}', but it is '{self.name}'; "
                f"make the manifest's [plugin] name '{self.name}'\n"
            )
        return {
            "protocol": chosen,
            "plugin": {"name": self.name, "version": self.version},
            "contributions": self.contributions(),
            "stores": self.stores(),
        }

    def shutdown(self) -> None:
        """Closes the open stores and runs the shutdown hooks; failures are logged, never raised."""
        with self._store_lock:
            stores = list(self._open_stores.values())
            self._open_stores.clear()
        for store in stores:
            _quietly(store.close, f"closing {type(store).__name__}")
        for hook in self._shutdown_hooks:
            _quietly(hook, f"the shutdown hook {getattr(hook, '__name__', hook)!r}")

    def handle(self, ctx: CallContext) -> Any:
        """Answers one request from the host (on a worker thread)."""
        from .host import HostHandle, _current

        host = HostHandle(ctx, self.settings)
        _current.host = host
        try:
            return self._dispatch(ctx.method, ctx.params, host)
        finally:
            # The call ends with its handler: a handle kept past it fails from now on.
            host._end()
            _current.host = None

    def _dispatch(self, method: str, params: Dict[str, Any], host: HostHandle) -> Any:
        custom = self._methods.get(method)
        if custom is not None:
            return custom(params, host)
        if method == "execute":
            return self._execute(params, host)
        if method == "task_step.validate":
            return self._validate(params)
        if method == "store.open":
            return self._store_open(params)
        if method.startswith("store."):
            return self._store_op(method, params)
        if method == "cli.run":
            return self._cli_run(params, host)
        if method == "cli.root_option":
            return self._root_option(params, host)
        if method == "initialize":
            return self.initialize(params)
        if method == "explorer.router" and self._explorers:
            return self._explorer_for(method, params).router()
        if method == "explorer.request" and self._explorers:
            return self._explorer_request(params, host)
        group, _, op = method.rpartition(".")
        if group in GROUPS:
            return self._generic_call(group, op, method, params, host)
        raise _method_not_found(method, self.name)

    def _step_for(self, method: str, params: Dict[str, Any]) -> TaskStep:
        type_name = params.get("type")
        if not isinstance(type_name, str):
            step = params.get("step")
            type_name = step.get("type") if isinstance(step, dict) else None
        if not isinstance(type_name, str):
            from .errors import InvalidParamsError

            raise InvalidParamsError(f"{method} needs 'type' (the task step type)")
        found = self._steps.get(type_name)
        if found is None:
            from .errors import InvalidValueError

            known = ", ".join(sorted(self._steps)) or "none"
            raise InvalidValueError(f"{self.name} has no task step type '{type_name}'; its types are {known}")
        return found

    def _execute(self, params: Dict[str, Any], host: HostHandle) -> Any:
        step = self._step_for("execute", params)
        step_doc = _need_dict(params, "execute", "step")
        context = _need_dict(params, "execute", "context")
        host._give_time(_timeout_ms(params))
        try:
            result = step.execute(step_doc, context, host)
        except BaseException as exc:  # noqa: BLE001 - a step's failure is reported, never fatal
            from .errors import CancelledError

            if isinstance(exc, CancelledError):
                raise
            if host.cancelled:
                raise CancelledError(f"execute of '{step.type}' was cancelled") from exc
            from ._tracebacks import user_traceback

            raise _step_failed(type(exc).__name__, str(exc), user_traceback(exc)) from exc
        if result is None:
            return {"metadata": {}}
        if not isinstance(result, dict):
            raise _step_failed("TypeError", f"task step '{step.type}' returned {type(result).__name__}, not a dict")
        unread = sorted(str(key) for key in result if key != "metadata")
        if unread:
            # agent-env reads `metadata` alone: a score returned beside it would be lost without a word.
            named = ", ".join(f"'{key}'" for key in unread)
            sys.stderr.write(
                f"agent-env-plugin: task step '{step.type}' returned {named} beside 'metadata', which agent-env "
                "does not read; return {'metadata': {...}}, whose keys are merged into the task's metadata\n"
            )
        return result

    def _validate(self, params: Dict[str, Any]) -> None:
        step = self._step_for("task_step.validate", params)
        try:
            step.validate(_need_dict(params, "task_step.validate", "step"))
        except Exception as exc:  # noqa: BLE001
            from .errors import InvalidValueError, PluginError

            if isinstance(exc, PluginError):
                raise
            raise InvalidValueError(str(exc) or type(exc).__name__, {"error_type": type(exc).__name__}) from exc

    def _store_open(self, params: Dict[str, Any]) -> Dict[str, Any]:
        from .errors import ConfigError, PluginError

        kind = _need_str(params, "store.open", "kind")
        label = _need_str(params, "store.open", "class")
        config = _need_dict(params, "store.open", "config")
        impl = f"{self.package}:{label}"
        cls = self._store_classes.get(label)
        if cls is None:
            known = ", ".join(sorted(self._store_classes)) or "none"
            raise ConfigError(f"impl '{impl}' names no store class of {self.name}; its store classes are {known}")
        if cls.kind != kind:
            raise ConfigError(f"impl '{impl}' is a {cls.kind} store, not a {kind} store")
        from .stores import check_config, check_value_types

        check_config(impl, cls, config)
        check_value_types(impl, cls, config)
        try:
            store = cls.from_config(**config)
        except PluginError:
            raise
        except Exception as exc:  # noqa: BLE001 - a store that cannot be built is a config problem
            raise ConfigError(f"Cannot build '{impl}' from its config table: {type(exc).__name__}: {exc}") from exc
        with self._store_lock:
            self._next_handle += 1
            handle = f"s{self._next_handle}"
            self._open_stores[handle] = store
        return {"handle": handle}

    def _store_op(self, method: str, params: Dict[str, Any]) -> Any:
        from .stores import STORE_BASES, call_store_op

        kind, _, op = method[len("store.") :].partition(".")
        if kind not in STORE_BASES or not op:
            raise _method_not_found(method, self.name)
        handle = _need_str(params, method, "handle")
        with self._store_lock:
            store = self._open_stores.get(handle)
        if store is None:
            from .errors import InvalidParamsError

            raise InvalidParamsError(f"{method}: no open store has handle '{handle}'; call store.open first")
        if store.kind != kind:
            from .errors import InvalidParamsError

            raise InvalidParamsError(f"{method}: handle '{handle}' is a {store.kind} store, not a {kind} store")
        args = {k: v for k, v in params.items() if k != "handle"}
        return call_store_op(store, op, args)

    def _cli_run(self, params: Dict[str, Any], host: HostHandle) -> Dict[str, Any]:
        from .errors import InvalidParamsError, InvalidValueError

        name = _need_str(params, "cli.run", "command")
        command = self._commands.get(name)
        if command is None:
            raise InvalidValueError(f"{self.name} has no CLI command '{name}'")
        argv = params.get("argv") or []
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            raise InvalidParamsError("cli.run: 'argv' must be a list of strings")
        cwd = params.get("cwd")
        if isinstance(cwd, str) and cwd:
            os.chdir(cwd)
        try:
            code = command.run(list(argv), host)
        except SystemExit as exit:
            code = _exit_code(exit.code)
        except Exception as exc:  # noqa: BLE001 - shown as Python shows an uncaught one; the exit code says it failed
            import traceback

            traceback.print_exc(file=sys.stderr)
            sys.stderr.write(f"Error: agent-env {name} failed: {type(exc).__name__}: {exc}\n")
            code = 1
        finally:
            _flush_std()
        return {"exit_code": _exit_code(code)}

    def _root_option(self, params: Dict[str, Any], host: HostHandle) -> Dict[str, Any]:
        from .errors import InvalidParamsError, InvalidValueError

        flag = _need_str(params, "cli.root_option", "flag")
        # agent-env sends the flag the name makes (`root_flag`); the bare name and `--<name>` are taken too.
        option = next((o for o in self._root_options.values() if flag in (o.flag, o.name, f"--{o.name}")), None)
        if option is None:
            raise InvalidValueError(f"{self.name} has no root option '{flag}'")
        value = params.get("value")
        if value is not None and not isinstance(value, str):
            raise InvalidParamsError("cli.root_option: 'value' must be a string or null")
        path = option.function(value, host)
        return {"config_path": os.path.abspath(path)} if path else {}

    def _explorer_for(self, method: str, params: Dict[str, Any]) -> Explorer:
        name = _need_str(params, method, "name")
        explorer = self._explorers.get(name)
        if explorer is None:
            raise _method_not_found(method, f"{self.name} (no explorer plugin '{name}')")
        return explorer

    def _explorer_request(self, params: Dict[str, Any], host: HostHandle) -> Dict[str, Any]:
        from .explorer import ExplorerRequest, to_response

        explorer = self._explorer_for("explorer.request", params)
        request = ExplorerRequest.from_params(params)
        handler = explorer.handler(request.method, request.route)
        if handler is None:
            raise _method_not_found(
                "explorer.request", f"the explorer plugin '{explorer.name}' (no route '{request.method} {request.route}')"
            )
        return to_response(handler(request, host)).to_wire()

    def _generic_call(self, group: str, op: str, method: str, params: Dict[str, Any], host: HostHandle) -> Any:
        type_name = params.get("type")
        candidates = [c for (g, _), c in self._generic.items() if g == group]
        if isinstance(type_name, str):
            candidates = [c for c in candidates if type_name in (c.type_name, c.name)]
        elif len(candidates) > 1:
            from .errors import InvalidParamsError

            raise InvalidParamsError(f"{method} needs 'type': {self.name} has several {group}")
        if not candidates:
            raise _method_not_found(method, self.name)
        handler = candidates[0].handlers.get(op)
        if handler is None:
            raise _method_not_found(method, f"{self.name} ({group} '{candidates[0].name}')")
        return handler(params, host)

    # ---------------------------------------------------------------- serving

    def serve(self, argv: Sequence[str] | None = None) -> NoReturn:
        """Runs the plugin until the host is done, then exits the process (see `run_server`)."""
        sys.exit(self.run_server(argv))

    def run_server(self, argv: Sequence[str] | None = None) -> int:
        """Checks how it was started, takes the protocol streams and answers the host until stdin ends
        or `shutdown` comes. Returns the exit status: 0, or 2 when run by hand. Before it answers, it
        freezes the objects that exist by then (`gc.freeze()`), as a plugin process's start-up objects
        live until it exits; a program that calls this and goes on afterwards can `gc.unfreeze()`."""
        args = list(sys.argv[1:] if argv is None else argv)
        if args[:1] == [wire.PRINT_MANIFEST_ARG]:
            return self._print_manifest(args[1:])
        if os.environ.get(wire.COOKIE_VAR) != "1":
            sys.stderr.write(
                f"{self.name} {self.version} is an agent-env plugin; agent-env starts it "
                f"(try agent-env plugin show {self.name})\n"
            )
            sys.stderr.flush()
            return 2
        fds = _protocol_fds()
        if fds is None:
            return 2
        read_fd, write_fd = fds
        _watch_parent(self.name)
        connection = Connection(
            read_fd,
            write_fd,
            self.handle,
            inline={"initialize": self._inline_initialize, "shutdown": self._inline_shutdown},
            name=self.name,
        )
        self._connection = connection
        # What exists by now (the interpreter's modules, the SDK, the plugin's classes and what it
        # registered) lives until the process ends. Frozen, the cyclic collector no longer walks it in
        # every full collection and again at exit, where that walk was about a tenth of a plugin's
        # start-up CPU. Objects made from here on are collected as usual.
        gc.freeze()
        connection.run()
        self.shutdown()
        _flush_std()
        return 0

    def _print_manifest(self, options: List[str]) -> int:
        """`--agent-env-manifest`: the manifest, its `exec` this program as it was run (for a plugin used
        where it is). With `--script NAME`, its `exec` is `../../../bin/NAME`, the console script NAME of a
        pip package that installs the manifest into `share/agent-env/plugins/` (README: Packaging)."""
        if len(options) == 1 and options[0].startswith(SCRIPT_OPTION + "="):
            options = [SCRIPT_OPTION, options[0][len(SCRIPT_OPTION) + 1 :]]
        if not options:
            text = self.manifest()
            if self.exec is None:
                _warn_of_a_module_agent_env_cannot_import()
        elif len(options) == 2 and options[0] == SCRIPT_OPTION and _is_script_name(options[1]):
            text = self.manifest(packaged_exec(options[1]))
        else:
            sys.stderr.write(
                f"usage: {wire.PRINT_MANIFEST_ARG} [{SCRIPT_OPTION} NAME]: prints the manifest; with "
                f"{SCRIPT_OPTION}, for a pip package whose console script is NAME (exec = "
                f'["../../../bin/NAME"]), not {" ".join(options)!r}\n'
            )
            sys.stderr.flush()
            return 2
        sys.stdout.write(text)
        sys.stdout.flush()
        return 0

    def _inline_initialize(self, ctx: CallContext) -> Any:
        return self.initialize(ctx.params)

    def _inline_shutdown(self, ctx: CallContext) -> None:
        # Answered at once: the host gives a plugin whose steps ignored its cancel only 0.5 s for it.
        # The stores and hooks are closed once the steps still running have returned (`run_server`).
        ctx.connection.stop()


#: After `--agent-env-manifest`: the manifest of a pip package whose console script is the value.
SCRIPT_OPTION = "--script"


def packaged_exec(script: str) -> List[str]:
    """The `exec` of a manifest a pip package installs into `<prefix>/share/agent-env/plugins/`: its
    console script in `<prefix>/bin/`, relative to the manifest's folder."""
    return [f"../../../bin/{script}"]


def _is_script_name(name: str) -> bool:
    return bool(name) and "/" not in name and os.sep not in name and name not in (".", "..")


def _protocol_fds() -> Tuple[int, int] | None:
    """The fds the protocol runs over. In command mode (`AGENT_ENV_RPC_FDS=3,4`) they are given and the
    terminal keeps stdin/stdout; otherwise stdout is moved aside at the fd level so nothing but the
    protocol reaches it, and stdin is replaced by /dev/null so no child process can eat protocol input."""
    spec = os.environ.get(wire.RPC_FDS_VAR)
    if spec:
        try:
            read_text, write_text = spec.split(",")
            read_fd, write_fd = int(read_text), int(write_text)
            os.fstat(read_fd)
            os.fstat(write_fd)
        except (ValueError, OSError) as exc:
            sys.stderr.write(
                f"{wire.RPC_FDS_VAR}={spec!r} does not name two open file descriptors 'read,write': {exc}\n"
            )
            return None
        os.set_inheritable(read_fd, False)
        os.set_inheritable(write_fd, False)
        return read_fd, write_fd
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    try:
        write_fd = os.dup(1)  # non-inheritable: children never see the protocol stream
        read_fd = os.dup(0)
        os.dup2(2, 1)
        null_fd = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null_fd, 0)
        os.close(null_fd)
    except OSError as exc:
        sys.stderr.write(f"cannot take stdin and stdout for the agent-env protocol: {exc}\n")
        return None
    sys.stdout = sys.stderr
    return read_fd, write_fd


#: How often the plugin checks that agent-env is still its parent.
PARENT_CHECK_SECONDS = 1.0


def _watch_parent(name: str) -> None:
    """Exits the plugin when agent-env dies even though stdin has not ended (something else may hold the
    pipe open): once a second, a daemon thread checks that the parent process is still the one that
    started the plugin."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(PARENT_CHECK_SECONDS)
            if os.getppid() != parent:
                sys.stderr.write(f"{name}: agent-env (pid {parent}) is gone; exiting\n")
                _flush_std()
                os._exit(0)

    _sync.start(watch)


def _own_argv() -> List[str]:
    """This program as it was started, for a manifest's `exec`: `python -m NAME` again when it was run as a
    module of a package (its file alone would lose the package it sits in), else its executable or script."""
    python = _interpreter()
    module = _package_module_name()
    if module:
        return [python, "-m", module]
    program = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if not program or not os.path.isfile(program):
        return [python]
    if program.endswith(".py") or not os.access(program, os.X_OK):
        return [python, program]
    return [program]


def _interpreter() -> str:
    """This interpreter's path as a manifest's `exec` names it: normalised (`/x/loose/../venv/bin/python` is
    `/x/venv/bin/python`) but with its symlinks kept, since a venv's `python` is one and must stay the venv's."""
    return os.path.normpath(sys.executable) if sys.executable else sys.executable


def _warn_of_a_module_agent_env_cannot_import() -> None:
    """`--agent-env-manifest` of `python -m NAME`: on stderr, a warning when NAME is not installed in this
    interpreter and was found only through the current folder or `PYTHONPATH`, neither of which the plugin
    has where agent-env starts it (another folder, `PYTHONSAFEPATH=1`, no `PYTHONPATH`)."""
    module = _package_module_name()
    found_through = _only_found_through(module) if module else None
    if found_through is None:
        return
    sys.stderr.write(
        f"warning: agent-env will not find {module} from another folder: this run found it through "
        f"{found_through}, which agent-env does not give the plugin, and it is not installed in {_interpreter()}. "
        "Install the package into this interpreter (pip install -e . in its project folder), or, for a pip "
        f"package with a console script NAME, print its manifest with {wire.PRINT_MANIFEST_ARG} "
        f"{SCRIPT_OPTION} NAME\n"
    )
    sys.stderr.flush()


def _only_found_through(module: str) -> str | None:
    """`the current folder` or `PYTHONPATH` when the package of `module` is outside this interpreter's
    site-packages folders and this run imported it through that alone; None when agent-env finds it too (an
    installed package, an editable install's folder, the standard library)."""
    spec = getattr(sys.modules.get(module.partition(".")[0]), "__spec__", None)
    folders = list(getattr(spec, "submodule_search_locations", None) or [])
    if not folders:
        return None
    import site  # only on this path: `--agent-env-manifest` of a module run with `python -m`

    site_folders = [*getattr(site, "getsitepackages", list)(), site.getusersitepackages()]
    if any(_is_inside(folder, site_folders) for folder in folders):
        return None
    parents = {os.path.realpath(os.path.dirname(folder)) for folder in folders}
    pythonpath = [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    run_only = {os.path.realpath(entry) for entry in pythonpath}
    current = os.path.realpath(sys.path[0] or os.curdir) if sys.path and not _safe_path() else None
    if current is not None:
        run_only.add(current)
    kept = {os.path.realpath(entry or os.curdir) for entry in sys.path} - run_only
    if parents & kept or not parents & run_only:
        return None
    return "the current folder" if current in parents else "PYTHONPATH"


def _safe_path() -> bool:
    """Whether this interpreter left the current folder off `sys.path` (`-P`, `PYTHONSAFEPATH`; Python 3.11+)."""
    return bool(getattr(sys.flags, "safe_path", False))


def _is_inside(path: str, folders: Sequence[str]) -> bool:
    """Whether `path` is one of `folders` or inside one, their symlinks resolved."""
    real = os.path.realpath(path)
    for folder in folders:
        top = os.path.realpath(folder)
        if real == top or real.startswith(top.rstrip(os.sep) + os.sep):
            return True
    return False


def _package_module_name() -> str:
    """The module of a package `python -m` ran as `__main__` (a package's name for its `__main__` module);
    empty when the program was started another way (a script, a console script, `-c`) or the module is a
    file of its own, which runs as well by its path, wherever agent-env starts it."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    name = getattr(spec, "name", None)
    if not isinstance(name, str) or not name:
        return ""
    if name == "__main__":
        return ""
    suffix = ".__main__"
    if name.endswith(suffix):
        return name[: -len(suffix)]
    return name if "." in name else ""


def _info(
    group: str, name: str, type_name: str, label: str, methods: List[str], description: str | None
) -> Dict[str, Any]:
    info: Dict[str, Any] = {"group": group, "name": name, "type": type_name, "class": label, "methods": methods}
    if description:
        info["description"] = description
    return info


#: `co_flags` bits of an `async def` function and of an `async def` generator (the `inspect` constants,
#: without importing `inspect`).
_CO_COROUTINE = 0x80
_CO_ASYNC_GENERATOR = 0x200


def _refuse_coroutine(function: object, what: str) -> None:
    """Raises `TypeError` when `function` is an `async def`: the SDK calls handlers synchronously, so its
    coroutine would never run (the call would answer with an unawaited coroutine object)."""
    code = getattr(getattr(function, "__func__", function), "__code__", None)
    if code is not None and code.co_flags & (_CO_COROUTINE | _CO_ASYNC_GENERATOR):
        raise TypeError(
            f"{what} is an async def; agent-env calls it synchronously on a thread of its own, so write a plain "
            "def (run a coroutine inside it with asyncio.run(...) if you need one)"
        )


def _deprecated_flag(name: str, flag: str, option_flag: str) -> None:
    """`root_option(name, flag=...)`: the manifest has no place for a flag of its own (its key is the flag),
    so `flag` can only repeat the one the name makes. Repeating it warns; another one is refused."""
    if flag not in (option_flag, name):
        # The name that makes the flag asked for: `org` for `--org` and `o` for `-o`, but the flag itself
        # where the bare name would make another one (`y` is `-y`, so `--y` is `@root_option('--y')`).
        wanted = flag if flag.startswith("-") else root_flag(flag)
        register = wanted.lstrip("-")
        if not register or root_flag(register) != wanted:
            register = wanted
        raise ValueError(
            f"@root_option({name!r}, flag={flag!r}): the flag is the manifest name, so this option is "
            f"{option_flag}; agent-env never sends {flag}. Register the option under the name of the flag you "
            f"want (@root_option({register!r}) is {root_flag(register)}) and leave out flag="
        )
    import warnings

    warnings.warn(
        f"@root_option({name!r}, flag={flag!r}): flag= is deprecated and changes nothing; the flag is the one "
        f"the name makes ({option_flag}), so leave it out",
        DeprecationWarning,
        stacklevel=3,
    )


def _first_doc_line(target: Any) -> str | None:
    doc = getattr(target, "__doc__", None)
    if not doc:
        return None
    line = doc.strip().splitlines()[0].strip()
    return line or None


def _exit_code(code: Union[int, str, None, object]) -> int:
    if code is None:
        return 0
    if isinstance(code, bool):
        return int(code)
    if isinstance(code, int):
        return code
    if isinstance(code, str):
        sys.stderr.write(code + "\n")
    return 1


def _flush_std() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


def _quietly(action: Callable[[], None], what: str) -> None:
    try:
        action()
    except Exception as exc:  # noqa: BLE001 - shutdown goes on
        sys.stderr.write(f"{what} failed during shutdown: {type(exc).__name__}: {exc}\n")
