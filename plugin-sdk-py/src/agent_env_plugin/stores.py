"""Base classes for the four store kinds a plugin can provide (docs/protocol.md §4.4).

A store class names the config keys it takes (`config_keys`, and optionally `required_keys`); the SDK
checks a `[stores.<kind>] config` table against them before building the store, and answers anything else
with the same `config-error` the built-in stores give. `from_config(**config)` builds the store; the
default passes the table to the constructor as keyword arguments.
"""

from __future__ import annotations

import itertools
import os
from abc import ABC, abstractmethod

from .errors import ConfigError, MethodNotFoundError, NotSupportedError, ObjectNotFoundError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime
    from typing import IO, Any, ClassVar, Dict, List, Sequence, Tuple, Union

DEFAULT_CONTENT_TYPE = "application/octet-stream"


class Store(ABC):  # noqa: B024 - the kinds below add the abstract methods
    """What every store kind shares: its kind, its config keys and how it is built."""

    kind: ClassVar[str] = ""
    #: The keys its config table may hold, in the order the error message lists them.
    config_keys: ClassVar[Sequence[str]] = ()
    #: The keys its config table must hold.
    required_keys: ClassVar[Sequence[str]] = ()

    @classmethod
    def from_config(cls, **config: Any) -> Store:
        """Builds the store from its (already checked) config table."""
        return cls(**config)

    def close(self) -> None:  # noqa: B027 - optional hook
        """Called at `shutdown`: flush and release what the store holds."""


def check_config(label: str, cls: type[Store], config: Dict[str, Any]) -> None:
    """Raises `ConfigError` when `config` has a key `cls` does not take or lacks one it requires.

    The message is the built-in stores' own: ``The config table for '<label>' has unknown key 'compress';
    it takes root, bucket``.
    """
    takes = list(cls.config_keys)
    unknown = sorted(key for key in config if key not in takes)
    missing = [key for key in cls.required_keys if key not in config]
    if not unknown and not missing:
        return
    parts = []
    if unknown:
        parts.append("unknown key " + ", ".join(f"'{key}'" for key in unknown))
    if missing:
        parts.append("no value for " + ", ".join(f"'{key}'" for key in missing))
    takes_text = ", ".join(takes) if takes else "no keys"
    raise ConfigError(
        f"The config table for '{label}' has {' and '.join(parts)}; it takes {takes_text}{_meant_keys(unknown, takes)}"
    )


def check_value_types(label: str, cls: type[Store], config: Dict[str, Any]) -> None:
    """Raises `ConfigError` when a value in `config` is not of the type the store's builder annotates it with.

    The builder is `from_config` when the class overrides it, else the constructor. Only plain annotations
    are held to (`str`, `int`, `float`, `bool`, `list`, `dict`, and an `Optional` or union of them); any
    other, or none, takes every value. Each annotation is resolved on its own: one this Python cannot
    resolve (a name imported only for type checkers) takes every value, and the others are still held to.
    The message is the Go SDK's: ``Cannot build 'agentenv-x:Vault' from its config table: the store config
    key 'root' must be a string, not 5``.
    """
    annotations, namespace = _builder_annotations(cls)
    for key, value in config.items():
        if value is None or key not in annotations:
            continue
        accepted = _accepted_types(_resolve(annotations[key], namespace), namespace)
        if accepted is None or _is_one_of(value, accepted):
            continue
        import json  # only on this error's path

        wanted = " or ".join(_TYPE_WORDS[t] for t in accepted)
        raise ConfigError(
            f"Cannot build '{label}' from its config table: the store config key '{key}' must be {wanted}, "
            f"not {json.dumps(value)}"
        )


#: How a message names each type a config value can be held to.
_TYPE_WORDS: Dict[type, str] = {
    str: "a string",
    bool: "true or false",
    int: "an integer",
    float: "a number",
    list: "a list",
    dict: "a table",
}


def _builder_annotations(cls: type[Store]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The annotations of what builds `cls` from its table, as written (text under `from __future__ import
    annotations`), and the module namespace they are resolved in."""
    overridden = cls.from_config.__func__ is not Store.from_config.__func__  # type: ignore[attr-defined]
    builder: Any = cls.from_config if overridden else cls.__init__
    annotations = getattr(builder, "__annotations__", None)
    function = getattr(builder, "__func__", builder)
    while hasattr(function, "__wrapped__"):  # a decorated builder: its names are the wrapped function's
        function = function.__wrapped__
    namespace = getattr(function, "__globals__", None)
    if not isinstance(annotations, dict):
        return {}, {}
    return annotations, namespace if isinstance(namespace, dict) else {}


def _resolve(annotation: Any, namespace: Dict[str, Any]) -> Any:
    """One parameter's annotation resolved in its module's namespace; None when it cannot be (a name
    imported only under `TYPE_CHECKING`), which takes every value. `X | None` written as text resolves on
    Python 3.9 too, where types have no `|`."""
    if not isinstance(annotation, str):
        return annotation
    try:
        return eval(annotation, namespace, {})  # noqa: S307 - the plugin's own annotation, as typing evaluates it
    except Exception:  # noqa: BLE001 - tried again below with `|` as `Union`, else it holds no value to anything
        pass
    return _resolve_with_unions(annotation, namespace)


#: The name `_resolve_with_unions` gives `typing.Union` in the annotation it rewrites.
_UNION_NAME = "__agent_env_union__"


def _resolve_with_unions(annotation: str, namespace: Dict[str, Any]) -> Any:
    """`annotation` evaluated with each `a | b` in it rewritten as `Union[a, b]`; None when it still
    cannot be."""
    import ast
    import typing

    class UnionsAsSubscripts(ast.NodeTransformer):
        def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
            self.generic_visit(node)
            if not isinstance(node.op, ast.BitOr):
                return node
            union = ast.Name(id=_UNION_NAME, ctx=ast.Load())
            arms = ast.Tuple(elts=[node.left, node.right], ctx=ast.Load())
            return ast.Subscript(value=union, slice=arms, ctx=ast.Load())

    try:
        tree = ast.fix_missing_locations(UnionsAsSubscripts().visit(ast.parse(annotation, mode="eval")))
        code = compile(tree, "<annotation>", "eval")
        return eval(code, namespace, {_UNION_NAME: typing.Union})  # noqa: S307 - as in `_resolve`
    except Exception:  # noqa: BLE001 - an annotation this Python cannot resolve holds no value to anything
        return None


def _accepted_types(hint: Any, namespace: Dict[str, Any]) -> Tuple[type, ...] | None:
    """The plain types `hint` allows (None dropped from an `Optional`), or None when it is no such hint.
    Text inside it (`Optional['int']`) is resolved in `namespace`, once."""
    import typing

    if isinstance(hint, typing.ForwardRef):
        hint = hint.__forward_arg__
    if isinstance(hint, str):
        hint = _resolve(hint, namespace)
        if isinstance(hint, (str, typing.ForwardRef)):
            return None
    if hint is None:
        return None
    if hint in _TYPE_WORDS:
        return (hint,)
    origin = typing.get_origin(hint)
    if origin in (list, dict):
        return (origin,)
    if origin is typing.Union or type(hint).__name__ == "UnionType":
        accepted: List[type] = []
        for arm in typing.get_args(hint):
            if arm is type(None):
                continue
            arm_types = _accepted_types(arm, namespace)
            if arm_types is None:
                return None
            accepted.extend(arm_types)
        return tuple(accepted) or None
    return None


def _is_one_of(value: Any, accepted: Tuple[type, ...]) -> bool:
    """Whether `value` is of one of `accepted`, as TOML gives it: a boolean is not an integer, and an
    integer is a number."""
    if isinstance(value, bool):
        return bool in accepted
    if isinstance(value, int) and float in accepted:
        return True
    return isinstance(value, accepted)


def _meant_keys(unknown: List[str], takes: List[str]) -> str:
    """For each unknown key close to a key the store takes: ``; did you mean 'root' for 'rooot'?``."""
    if not unknown or not takes:
        return ""
    import difflib  # only on this error's path: a plugin pays for no import at start

    meant = []
    for key in unknown:
        close = difflib.get_close_matches(key, takes, n=1, cutoff=0.75)
        if close:
            meant.append(f"'{close[0]}' for '{key}'")
    return f"; did you mean {', '.join(meant)}?" if meant else ""


class ObjectMetadata:
    """What a store knows about one object; every field may be None."""

    __slots__ = ("content_type", "size", "last_modified", "content_encoding", "etag")

    def __init__(
        self,
        content_type: str | None = None,
        size: int | None = None,
        last_modified: datetime.datetime | None = None,
        content_encoding: str | None = None,
        etag: str | None = None,
    ) -> None:
        self.content_type: str | None = content_type
        self.size: int | None = size
        self.last_modified: datetime.datetime | None = last_modified
        self.content_encoding: str | None = content_encoding
        self.etag: str | None = etag

    def to_wire(self) -> Dict[str, Any]:
        stamp = None
        if self.last_modified is not None:
            from datetime import timezone

            utc = self.last_modified.astimezone(timezone.utc)
            stamp = utc.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return {
            "content_type": self.content_type,
            "size": self.size,
            "last_modified": stamp,
            "content_encoding": self.content_encoding,
            "etag": self.etag,
        }

    @classmethod
    def from_wire(cls, value: Dict[str, Any]) -> ObjectMetadata:
        stamp = value.get("last_modified")
        when = None
        if isinstance(stamp, str):
            from datetime import datetime

            when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        return cls(value.get("content_type"), value.get("size"), when, value.get("content_encoding"), value.get("etag"))

    def __repr__(self) -> str:
        return (
            f"ObjectMetadata(content_type={self.content_type!r}, size={self.size!r}, "
            f"last_modified={self.last_modified!r}, content_encoding={self.content_encoding!r}, etag={self.etag!r})"
        )


_PARTIALS = itertools.count()


def write_whole(dest_path: str, data: bytes) -> None:
    """Writes `data` to `dest_path`, creating its folder: under a hidden name beside it first, renamed
    once every byte is written, so a write that fails midway (a full disk) leaves no truncated file and
    keeps a file already there. A destination that exists and is not a plain file (a device, a pipe, a
    symlink) is written in place."""
    parent = os.path.dirname(os.path.abspath(dest_path))
    os.makedirs(parent, exist_ok=True)
    if os.path.lexists(dest_path) and (os.path.islink(dest_path) or not os.path.isfile(dest_path)):
        with open(dest_path, "wb") as handle:
            handle.write(data)
        return
    partial = os.path.join(parent, f".{os.path.basename(dest_path)}.{os.getpid()}-{next(_PARTIALS)}.partial")
    try:
        with open(partial, "xb") as handle:
            handle.write(data)
        os.replace(partial, dest_path)
    except BaseException:
        try:
            os.unlink(partial)
        except OSError:
            pass
        raise


class ObjectStore(Store):
    """Write-once blobs addressed by key; every write returns an opaque URL that reads accept back.

    Implement the abstract methods. The provided ones (`put_file`, `put_file_at`, `download_to_file`,
    `get_object_metadata_at`, `list_at`, `exists`, `owns`, `read`, `open`) are built on them; override the
    file ones to stream when objects can be large.

    A read of an address that holds no object raises `ObjectNotFoundError`; a second write to a key raises
    `ObjectAlreadyExistsError`; `get_object_key` of a URL that is not this store's raises `ForeignUrlError`.
    """

    kind = "object"

    @abstractmethod
    def put(
        self, key: str, data: bytes, content_type: str = DEFAULT_CONTENT_TYPE, allow_overwrite: bool = False
    ) -> str: ...

    @abstractmethod
    def get(self, object_url: str) -> bytes: ...

    @abstractmethod
    def get_object_metadata(self, key: str) -> ObjectMetadata | None: ...

    @abstractmethod
    def list(self, prefix: str) -> List[str]:
        """The keys that start with `prefix` (a string prefix, not a folder), sorted."""

    @abstractmethod
    def object_url(self, key: str) -> str: ...

    @abstractmethod
    def get_object_key(self, object_url: str) -> str: ...

    def put_file(self, key: str, file_path: str, content_type: str = DEFAULT_CONTENT_TYPE) -> str:
        with open(file_path, "rb") as handle:
            return self.put(key, handle.read(), content_type, allow_overwrite=False)

    def put_file_at(self, object_url: str, file_path: str, content_type: str = DEFAULT_CONTENT_TYPE) -> str:
        return self.put_file(self.get_object_key(object_url), file_path, content_type)

    def download_to_file(self, object_url: str, dest_path: str) -> None:
        """Writes the object to `dest_path`, whole or not at all (see `write_whole`)."""
        write_whole(dest_path, self.get(object_url))

    def get_object_metadata_at(self, object_url: str) -> ObjectMetadata | None:
        return self.get_object_metadata(self.get_object_key(object_url))

    def list_at(self, url_prefix: str) -> List[str]:
        return [self.object_url(key) for key in self.list(self.get_object_key(url_prefix))]

    def exists(self, key: str) -> bool:
        return self.get_object_metadata(key) is not None

    def owns(self, object_url: str) -> bool:
        try:
            self.get_object_key(object_url)
        except ValueError:
            return False
        return True

    def read(self, key: str) -> bytes:
        return self.get(self.object_url(key))

    def open(self, object_url: str) -> IO[bytes]:
        import io

        return io.BytesIO(self.get(object_url))


class DocumentStore(Store):
    """Collections of JSON documents (docs/protocol.md, "Documents").

    A `filter` maps a dotted path to a list of predicates (`{"op": "eq", "value": ...}`; ops `eq`, `ne`,
    `gte`, `lte`, `in`, `exists`, `lte_or_absent`, `absent_or_null`), ANDed; `{}` matches every document.
    A `sort` is a list of `{"field", "descending"}`. An `update` is `{"set", "unset", "inc", "add_to_set",
    "push"}`. Implement the operations the store supports; the others answer `not-supported`. Return plain
    values: the SDK shapes them for the wire (`find_one` -> `{"doc"}`, `query` -> `{"docs"}`, ...).

    `drop_collection` is optional: override it when the store can remove a collection whole (its
    documents, indexes and whatever it keeps for the collection). A class that does not override it
    answers `store.document.drop_collection` with `method-not-found`, and agent-env empties the
    collection with `count` and `delete` instead.
    """

    kind = "document"
    operations: ClassVar[Sequence[str]] = (
        "find_one",
        "query",
        "count",
        "insert",
        "update",
        "update_one_and_get",
        "replace",
        "delete",
        "ensure_index",
        "drop_collection",
    )

    def _unsupported(self, op: str) -> NotSupportedError:
        return NotSupportedError(f"{type(self).__name__} does not implement {op}")

    def find_one(self, collection: str, filter: Dict[str, Any], sort: List[Dict[str, Any]] | None = None) -> Any:
        """The first matching document, or None."""
        raise self._unsupported("find_one")

    def query(
        self,
        collection: str,
        filter: Dict[str, Any],
        sort: List[Dict[str, Any]] | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> List[Any]:
        """The matching documents; `limit` None or 0 means all."""
        raise self._unsupported("query")

    def count(self, collection: str, filter: Dict[str, Any]) -> int:
        raise self._unsupported("count")

    def insert(self, collection: str, doc: Dict[str, Any]) -> None:
        """Raises `DuplicateKeyError` on a unique index violation."""
        raise self._unsupported("insert")

    def update(self, collection: str, filter: Dict[str, Any], update: Dict[str, Any], upsert: bool = False) -> int:
        """Updates the first match or, with `upsert` and no match, inserts the document the filter's
        equalities and `update` make.

        Returns 1 when it matched or, with upsert, inserted; 0 otherwise (agent-env's compare-and-swap reads
        0 as a lost race and tries again).
        """
        raise self._unsupported("update")

    def update_one_and_get(
        self,
        collection: str,
        filter: Dict[str, Any],
        update: Dict[str, Any],
        return_after: bool = True,
        upsert: bool = False,
    ) -> Any:
        """The document before or after the update, or None when nothing matched."""
        raise self._unsupported("update_one_and_get")

    def replace(self, collection: str, filter: Dict[str, Any], doc: Dict[str, Any], upsert: bool = False) -> int:
        """Replaces the first match with `doc` or, with `upsert` and no match, inserts `doc`.

        Returns 1 when it matched or, with upsert, inserted; 0 otherwise.
        """
        raise self._unsupported("replace")

    def delete(self, collection: str, filter: Dict[str, Any]) -> int:
        """Deletes the first match; returns how many were deleted (0 or 1)."""
        raise self._unsupported("delete")

    def ensure_index(self, collection: str, fields: List[str], unique: bool = False) -> None:
        raise self._unsupported("ensure_index")

    def drop_collection(self, collection: str) -> None:
        """Removes the collection and everything the store keeps for it; a collection that does not exist
        is no error.

        Override it to drop a collection whole. This default deletes the documents one at a time (at
        most as many times as `count` said, plus one), and the SDK does not offer it on the wire: a class
        that leaves it answers `method-not-found`, so agent-env does the same from its side.
        """
        held = self.count(collection, {})
        for _ in range(held + 1):
            if not self.delete(collection, {}):
                break


class ImageStore(Store):
    """Where container images are pushed and pulled."""

    kind = "image"

    @abstractmethod
    def image_ref(self, repository: str, tag: str) -> str: ...

    def ensure_repository(self, repository: str) -> None:
        """Creates the repository if the registry needs that; the default does nothing."""

    @abstractmethod
    def owns(self, ref: str) -> bool: ...

    def auth(self, ref: str) -> Dict[str, str] | None:
        """`{registry, username, password}` to push or pull `ref`, or None when none is needed."""
        return None


class SecretStore(Store):
    """Named secret values. `get` returns None when the name is absent; an empty string is a value."""

    kind = "secret"

    @abstractmethod
    def get(self, name: str) -> str | None: ...


STORE_BASES: Dict[str, type[Store]] = {
    "object": ObjectStore,
    "document": DocumentStore,
    "image": ImageStore,
    "secret": SecretStore,
}


def _b64encode(data: Union[bytes, bytearray, memoryview]) -> str:
    import base64

    return base64.b64encode(bytes(data)).decode("ascii")


def _b64decode(text: str) -> bytes:
    import base64
    import binascii

    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as exc:
        from .errors import InvalidParamsError

        raise InvalidParamsError(f"'data' is not standard base64: {exc}") from exc


def _metadata(value: Any) -> Dict[str, Any] | None:
    if value is None:
        return None
    if isinstance(value, ObjectMetadata):
        return value.to_wire()
    if isinstance(value, dict):
        fields = {name: value.get(name) for name in ObjectMetadata.__slots__}
        if fields["last_modified"] is not None and not isinstance(fields["last_modified"], str):
            fields["last_modified"] = ObjectMetadata(last_modified=fields["last_modified"]).to_wire()["last_modified"]
        return fields
    raise TypeError(f"get_object_metadata returned {type(value).__name__}, not ObjectMetadata or None")


def _need(params: Dict[str, Any], method: str, name: str, kind: type = str) -> Any:
    from .errors import InvalidParamsError

    if name not in params:
        raise InvalidParamsError(f"{method} needs '{name}'")
    value = params[name]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise InvalidParamsError(f"{method}: '{name}' must be a {kind.__name__}, got {type(value).__name__}")
    return value


def _content_type(params: Dict[str, Any]) -> str:
    value = params.get("content_type")
    return value if isinstance(value, str) and value else DEFAULT_CONTENT_TYPE


def call_object_op(store: ObjectStore, op: str, params: Dict[str, Any]) -> Any:
    """Runs `store.object.<op>` on a store and shapes its answer for the wire."""
    m = f"store.object.{op}"
    if op == "put":
        data = _b64decode(_need(params, m, "data"))
        url = store.put(
            _need(params, m, "key"), data, _content_type(params), allow_overwrite=bool(params.get("allow_overwrite"))
        )
        return {"url": url}
    if op == "put_file":
        return {"url": store.put_file(_need(params, m, "key"), _need(params, m, "path"), _content_type(params))}
    if op == "put_file_at":
        return {"url": store.put_file_at(_need(params, m, "url"), _need(params, m, "path"), _content_type(params))}
    if op == "get":
        return {"data": _b64encode(store.get(_need(params, m, "url")))}
    if op == "read":
        return {"data": _b64encode(store.read(_need(params, m, "key")))}
    if op == "download_to_file":
        store.download_to_file(_need(params, m, "url"), _need(params, m, "path"))
        return None
    if op == "get_object_metadata":
        return {"metadata": _metadata(store.get_object_metadata(_need(params, m, "key")))}
    if op == "get_object_metadata_at":
        return {"metadata": _metadata(store.get_object_metadata_at(_need(params, m, "url")))}
    if op == "list":
        return {"keys": list(store.list(_need(params, m, "prefix")))}
    if op == "list_at":
        return {"urls": list(store.list_at(_need(params, m, "url_prefix")))}
    if op == "object_url":
        return {"url": store.object_url(_need(params, m, "key"))}
    if op == "get_object_key":
        return {"key": store.get_object_key(_need(params, m, "url"))}
    if op == "exists":
        return {"exists": bool(store.exists(_need(params, m, "key")))}
    if op == "owns":
        return {"owns": bool(store.owns(_need(params, m, "url")))}
    return _unknown_op("object", op)


def call_image_op(store: ImageStore, op: str, params: Dict[str, Any]) -> Any:
    m = f"store.image.{op}"
    if op == "image_ref":
        return {"ref": store.image_ref(_need(params, m, "repository"), _need(params, m, "tag"))}
    if op == "ensure_repository":
        store.ensure_repository(_need(params, m, "repository"))
        return None
    if op == "owns":
        return {"owns": bool(store.owns(_need(params, m, "ref")))}
    if op == "auth":
        return {"auth": store.auth(_need(params, m, "ref"))}
    return _unknown_op("image", op)


def call_secret_op(store: SecretStore, op: str, params: Dict[str, Any]) -> Any:
    if op == "get":
        return {"value": store.get(_need(params, "store.secret.get", "name"))}
    return _unknown_op("secret", op)


#: Each document operation: its params (required ones first, then optional ones), and the key its plain
#: return value travels under (None: the answer is `null`).
DOCUMENT_OPS: Dict[str, Tuple[Tuple[str, ...], Tuple[str, ...], str | None]] = {
    "find_one": (("filter",), ("sort",), "doc"),
    "query": (("filter",), ("sort", "limit", "offset"), "docs"),
    "count": (("filter",), (), "count"),
    "insert": (("doc",), (), None),
    "update": (("filter", "update"), ("upsert",), "matched"),
    "update_one_and_get": (("filter", "update"), ("return_after", "upsert"), "doc"),
    "replace": (("filter", "doc"), ("upsert",), "matched"),
    "delete": (("filter",), (), "deleted"),
    "ensure_index": (("fields",), ("unique",), None),
    "drop_collection": ((), (), None),
}
DOCUMENT_RESULT_KEYS: Dict[str, str | None] = {op: spec[2] for op, spec in DOCUMENT_OPS.items()}


def call_document_op(store: DocumentStore, op: str, params: Dict[str, Any]) -> Any:
    """Runs `store.document.<op>`. Params the operation does not know are ignored (a newer host may send
    more); a missing required one is `invalid-params`."""
    spec = DOCUMENT_OPS.get(op)
    if spec is None:
        return _unknown_op("document", op)
    required, optional, key = spec
    method = f"store.document.{op}"
    collection = _need(params, method, "collection")
    if op == "drop_collection" and type(store).drop_collection is DocumentStore.drop_collection:
        raise MethodNotFoundError(f"no method '{method}': {type(store).__name__} does not implement drop_collection")
    args: Dict[str, Any] = {}
    for name in required:
        if params.get(name) is None:
            from .errors import InvalidParamsError

            raise InvalidParamsError(f"{method} needs '{name}'")
        args[name] = params[name]
    for name in optional:
        if params.get(name) is not None:
            args[name] = params[name]
    value = getattr(store, op)(collection, **args)
    if key is None:
        return None
    if key == "docs":
        value = list(value)
    return {key: value}


def call_store_op(store: Store, op: str, params: Dict[str, Any]) -> Any:
    """Dispatches one `store.<kind>.<op>` request (without its `handle`) to an open store."""
    if isinstance(store, ObjectStore):
        return call_object_op(store, op, params)
    if isinstance(store, DocumentStore):
        return call_document_op(store, op, params)
    if isinstance(store, ImageStore):
        return call_image_op(store, op, params)
    if isinstance(store, SecretStore):
        return call_secret_op(store, op, params)
    raise NotSupportedError(f"{type(store).__name__} is not an object, document, image or secret store")


def _unknown_op(kind: str, op: str) -> Any:
    from .errors import MethodNotFoundError

    raise MethodNotFoundError(f"no method 'store.{kind}.{op}': {kind} stores have no operation '{op}'")


__all__ = [
    "DEFAULT_CONTENT_TYPE",
    "DocumentStore",
    "ImageStore",
    "ObjectMetadata",
    "ObjectNotFoundError",
    "ObjectStore",
    "SecretStore",
    "Store",
    "check_config",
]
