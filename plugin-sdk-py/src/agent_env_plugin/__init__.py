"""Write an agent-env plugin in Python.

A plugin is a program agent-env starts as a child process and talks to with JSON-RPC over stdin and stdout
(docs/protocol.md). This package does the protocol; you register what the plugin contributes::

    from agent_env_plugin import Plugin

    plugin = Plugin("agentenv-grader", "0.1.0")

    @plugin.task_step("grade_essay", cls="GradeEssay")
    def grade_essay(step, context, host):
        return {"metadata": {"verifications": {step["id"]: {"score": 1.0, "results": []}}}}

    if __name__ == "__main__":
        plugin.serve()

Standard library only, and nothing heavy is imported at start-up: each name below is imported from its
module the first time it is used (PEP 562), so `from agent_env_plugin import Plugin` loads what a plugin
needs to answer `initialize` and no more; the stores, the host helpers and the explorer load when a
plugin uses them.
"""

from __future__ import annotations

import gc as _gc
import sys as _sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

    from .contributions import CliCommand, Contribution, TaskStep
    from .errors import (
        AlreadyExistsError,
        CallEndedError,
        CancelledError,
        ConcurrentModificationError,
        ConfigError,
        DuplicateKeyError,
        ForeignUrlError,
        InvalidParamsError,
        InvalidValueError,
        MessageTooLargeError,
        MethodNotFoundError,
        NotFoundError,
        NotSupportedError,
        ObjectAlreadyExistsError,
        ObjectNotFoundError,
        PluginError,
        ProtocolMismatchError,
        StepFailedError,
        StoreIOError,
    )
    from .explorer import Explorer, ExplorerRequest, ExplorerResponse
    from .host import HostHandle, current_host
    from .log_levels import LOG_DEBUG, LOG_ERROR, LOG_INFO, LOG_LEVELS, LOG_WARNING, LogLevel
    from .plugin import Plugin
    from .stores import (
        DEFAULT_CONTENT_TYPE,
        DocumentStore,
        ImageStore,
        ObjectMetadata,
        ObjectStore,
        SecretStore,
        Store,
    )
    from .wire import PROTOCOL_VERSION

__version__ = "0.1.0"

__all__ = [
    "AlreadyExistsError",
    "CallEndedError",
    "CancelledError",
    "CliCommand",
    "ConcurrentModificationError",
    "ConfigError",
    "Contribution",
    "DEFAULT_CONTENT_TYPE",
    "DocumentStore",
    "DuplicateKeyError",
    "Explorer",
    "ExplorerRequest",
    "ExplorerResponse",
    "ForeignUrlError",
    "HostHandle",
    "ImageStore",
    "InvalidParamsError",
    "InvalidValueError",
    "LOG_DEBUG",
    "LOG_ERROR",
    "LOG_INFO",
    "LOG_LEVELS",
    "LOG_WARNING",
    "LogLevel",
    "MessageTooLargeError",
    "MethodNotFoundError",
    "NotFoundError",
    "NotSupportedError",
    "ObjectAlreadyExistsError",
    "ObjectMetadata",
    "ObjectNotFoundError",
    "ObjectStore",
    "PROTOCOL_VERSION",
    "Plugin",
    "PluginError",
    "ProtocolMismatchError",
    "SecretStore",
    "StepFailedError",
    "Store",
    "StoreIOError",
    "TaskStep",
    "__version__",
    "current_host",
]

#: Where each name of `__all__` but `__version__` lives.
_EXPORTS = {
    "CliCommand": "contributions",
    "Contribution": "contributions",
    "TaskStep": "contributions",
    "AlreadyExistsError": "errors",
    "CallEndedError": "errors",
    "CancelledError": "errors",
    "ConcurrentModificationError": "errors",
    "ConfigError": "errors",
    "DuplicateKeyError": "errors",
    "ForeignUrlError": "errors",
    "InvalidParamsError": "errors",
    "InvalidValueError": "errors",
    "MessageTooLargeError": "errors",
    "MethodNotFoundError": "errors",
    "NotFoundError": "errors",
    "NotSupportedError": "errors",
    "ObjectAlreadyExistsError": "errors",
    "ObjectNotFoundError": "errors",
    "PluginError": "errors",
    "ProtocolMismatchError": "errors",
    "StepFailedError": "errors",
    "StoreIOError": "errors",
    "Explorer": "explorer",
    "ExplorerRequest": "explorer",
    "ExplorerResponse": "explorer",
    "HostHandle": "host",
    "current_host": "host",
    "LOG_DEBUG": "log_levels",
    "LOG_ERROR": "log_levels",
    "LOG_INFO": "log_levels",
    "LOG_LEVELS": "log_levels",
    "LOG_WARNING": "log_levels",
    "LogLevel": "log_levels",
    "Plugin": "plugin",
    "DEFAULT_CONTENT_TYPE": "stores",
    "DocumentStore": "stores",
    "ImageStore": "stores",
    "ObjectMetadata": "stores",
    "ObjectStore": "stores",
    "SecretStore": "stores",
    "Store": "stores",
    "PROTOCOL_VERSION": "wire",
}

#: The submodules `import agent_env_plugin` used to load, which stay reachable as attributes of the package.
_SUBMODULES = frozenset(
    ("_codec", "_sync", "contributions", "errors", "explorer", "host", "manifest", "peer", "plugin", "stores", "wire")
)

if not TYPE_CHECKING:
    # Only at run time: type checkers see the imports above, and a module `__getattr__` would make them
    # accept any name imported from the package.

    def __getattr__(name: str) -> object:
        """Imports an exported name, or one of the package's modules, on first use."""
        module_name = _EXPORTS.get(name)
        if module_name is None and name not in _SUBMODULES:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        # `__import__` rather than `importlib.import_module`: the `importlib` package imports `warnings`.
        full_name = f"{__name__}.{module_name or name}"
        # A module's import makes classes and functions that live as long as the process, so a
        # collection during it finds nothing to free: the collector waits until the import is done
        # (about a tenth of the SDK's import time).
        collecting = _gc.isenabled()
        _gc.disable()
        try:
            __import__(full_name)
        finally:
            if collecting:
                _gc.enable()
        module: ModuleType = _sys.modules[full_name]
        value = module if module_name is None else getattr(module, name)
        globals()[name] = value  # the next lookup finds it without coming here
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(__all__) | _SUBMODULES)


# Not part of the package's API. `annotations` is the name `from __future__ import annotations` binds: the
# compiler has read the future statement already, so deleting the name changes nothing but what dir() lists.
del TYPE_CHECKING, annotations
