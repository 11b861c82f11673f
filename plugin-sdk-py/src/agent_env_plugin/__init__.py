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

Standard library only, and nothing heavy is imported at start-up.
"""

from __future__ import annotations

from .contributions import CliCommand, Contribution, TaskStep
from .errors import (
    AlreadyExistsError,
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
