"""`MemoryObjectStore`: a small object store held in a dict, the reference the object kit is checked on.

URLs are `mem://<bucket>/<key>`. It is per process, so it suits tests and examples, not real data.
"""

from __future__ import annotations

from datetime import datetime, timezone

from .. import _sync
from ..errors import ForeignUrlError, InvalidValueError, ObjectAlreadyExistsError, ObjectNotFoundError
from ..stores import DEFAULT_CONTENT_TYPE, ObjectMetadata, ObjectStore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import ClassVar, Dict, List, Sequence, Tuple


class MemoryObjectStore(ObjectStore):
    """Objects in memory, write-once unless `allow_overwrite`."""

    config_keys: ClassVar[Sequence[str]] = ("bucket",)

    def __init__(self, bucket: str = "memory") -> None:
        if not bucket or "/" in bucket:
            raise InvalidValueError(f"bucket must be a non-empty name without '/', got {bucket!r}")
        self.bucket = bucket
        self._objects: Dict[str, Tuple[bytes, str, datetime]] = {}
        self._lock = _sync.Lock()

    def _key(self, key: str) -> str:
        if not isinstance(key, str) or key.startswith("/") or "\x00" in key or ".." in key.split("/"):
            raise InvalidValueError(f"Key {key!r} is not a relative object key inside the store.")
        return key

    def put(
        self, key: str, data: bytes, content_type: str = DEFAULT_CONTENT_TYPE, allow_overwrite: bool = False
    ) -> str:
        key = self._key(key)
        with self._lock:
            if key in self._objects and not allow_overwrite:
                raise ObjectAlreadyExistsError(f"Object already exists at {self.object_url(key)}.")
            self._objects[key] = (bytes(data), content_type, datetime.now(timezone.utc))
        return self.object_url(key)

    def get(self, object_url: str) -> bytes:
        key = self.get_object_key(object_url)
        with self._lock:
            found = self._objects.get(key)
        if found is None:
            raise ObjectNotFoundError(f"No object at {object_url}.")
        return found[0]

    def get_object_metadata(self, key: str) -> ObjectMetadata | None:
        with self._lock:
            found = self._objects.get(self._key(key))
        if found is None:
            return None
        data, content_type, when = found
        return ObjectMetadata(content_type=content_type, size=len(data), last_modified=when)

    def list(self, prefix: str) -> List[str]:
        with self._lock:
            return sorted(key for key in self._objects if key.startswith(prefix))

    def object_url(self, key: str) -> str:
        return f"mem://{self.bucket}/{self._key(key)}"

    def get_object_key(self, object_url: str) -> str:
        base = f"mem://{self.bucket}/"
        if not isinstance(object_url, str) or not object_url.startswith(base):
            raise ForeignUrlError(f"'{object_url}' is not an object in mem://{self.bucket}.")
        return object_url[len(base) :]
