"""`FolderObjectStore`: write-once objects as files under a root folder, `folder://<bucket>/<key>` URLs.

Select it in `.agentenv/config.toml`:

    [stores.object]
    impl = "agentenv-grader:FolderObjectStore"
    config = { root = "/srv/objects", bucket = "grades" }

Each write stages a temp file in `<root>/.agentenv-tmp/` and then links it into place (write-once: the
link fails when the key exists) or renames it over the old one (`allow_overwrite`), so an object appears
whole or not at all, even with several processes writing. Content types live in
`<root>/.agentenv-meta/<key>.json`.
"""

from __future__ import annotations

import os

from agent_env_plugin import (
    DEFAULT_CONTENT_TYPE,
    ForeignUrlError,
    InvalidValueError,
    ObjectAlreadyExistsError,
    ObjectMetadata,
    ObjectNotFoundError,
    ObjectStore,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterator, List

RESERVED = (".agentenv-tmp", ".agentenv-meta")
SCHEME = "folder://"


class FolderObjectStore(ObjectStore):
    config_keys = ("root", "bucket")
    required_keys = ("root",)

    def __init__(self, root: str, bucket: str = "objects") -> None:
        if not isinstance(root, str) or not root:
            raise InvalidValueError("root must be a folder path")
        if not bucket or "/" in bucket:
            raise InvalidValueError(f"bucket must be a name without '/', got {bucket!r}")
        self.root = os.path.abspath(os.path.expanduser(root))
        self.bucket = bucket

    # ---- keys and paths ----

    def _check_key(self, key: str) -> str:
        parts = key.split("/")
        if not key or key.startswith("/") or "\\" in key or "\x00" in key:
            raise InvalidValueError(f"Key {key!r} is not a relative object key.")
        if any(part in (".", "..") for part in parts):
            raise InvalidValueError(f"Key {key!r} escapes the store root.")
        if parts[0] in RESERVED:
            raise InvalidValueError(f"Key {key!r} is reserved: the store keeps its own {parts[0]} there.")
        return key

    def _path(self, key: str) -> str:
        return os.path.join(self.root, *self._check_key(key).split("/"))

    def _meta_path(self, key: str) -> str:
        return os.path.join(self.root, ".agentenv-meta", *key.split("/")) + ".json"

    def object_url(self, key: str) -> str:
        if key:
            self._check_key(key.rstrip("/") or key)
        return f"{SCHEME}{self.bucket}/{key}"

    def get_object_key(self, object_url: str) -> str:
        base = f"{SCHEME}{self.bucket}/"
        if not isinstance(object_url, str) or not object_url.startswith(base):
            raise ForeignUrlError(f"'{object_url}' is not an object in {SCHEME}{self.bucket}.")
        return object_url[len(base) :]

    # ---- writes ----

    def _stage(self) -> tuple[int, str]:
        tmp_dir = os.path.join(self.root, ".agentenv-tmp")
        os.makedirs(tmp_dir, exist_ok=True)
        import tempfile

        return tempfile.mkstemp(prefix="staged-", dir=tmp_dir)

    def _commit(self, staged: str, key: str, content_type: str, allow_overwrite: bool) -> str:
        target = self._path(key)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if allow_overwrite:
                os.replace(staged, target)
            else:
                try:
                    os.link(staged, target)
                except FileExistsError:
                    raise ObjectAlreadyExistsError(f"Object already exists at {target}.") from None
        finally:
            if os.path.exists(staged):
                os.unlink(staged)
        self._write_meta(key, content_type)
        return self.object_url(key)

    def _write_meta(self, key: str, content_type: str) -> None:
        meta = self._meta_path(key)
        if content_type == DEFAULT_CONTENT_TYPE:
            if os.path.exists(meta):
                os.unlink(meta)
            return
        os.makedirs(os.path.dirname(meta), exist_ok=True)
        import json

        fd, staged = self._stage()
        with os.fdopen(fd, "w") as handle:
            json.dump({"content_type": content_type}, handle)
        os.replace(staged, meta)

    def put(
        self, key: str, data: bytes, content_type: str = DEFAULT_CONTENT_TYPE, allow_overwrite: bool = False
    ) -> str:
        target = self._path(key)
        if not allow_overwrite and os.path.lexists(target):
            raise ObjectAlreadyExistsError(f"Object already exists at {target}.")
        fd, staged = self._stage()
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        return self._commit(staged, key, content_type, allow_overwrite)

    def put_file(self, key: str, file_path: str, content_type: str = DEFAULT_CONTENT_TYPE) -> str:
        target = self._path(key)
        if os.path.lexists(target):
            raise ObjectAlreadyExistsError(f"Object already exists at {target}.")
        import shutil

        fd, staged = self._stage()
        with os.fdopen(fd, "wb") as out, open(file_path, "rb") as source:
            shutil.copyfileobj(source, out, 1024 * 1024)
        return self._commit(staged, key, content_type, allow_overwrite=False)

    # ---- reads ----

    def _object_file(self, object_url: str) -> str:
        key = self.get_object_key(object_url)
        try:
            path = self._path(key)
        except InvalidValueError:
            raise ObjectNotFoundError(f"No object at {object_url}.") from None
        if not os.path.isfile(path):
            raise ObjectNotFoundError(f"No object at {object_url}.")
        return path

    def get(self, object_url: str) -> bytes:
        with open(self._object_file(object_url), "rb") as handle:
            return handle.read()

    def download_to_file(self, object_url: str, dest_path: str) -> None:
        source = self._object_file(object_url)
        import shutil

        os.makedirs(os.path.dirname(os.path.abspath(dest_path)), exist_ok=True)
        shutil.copyfile(source, dest_path)

    def get_object_metadata(self, key: str) -> ObjectMetadata | None:
        path = self._path(key)
        try:
            info = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        if not os.path.isfile(path):
            return None
        import json
        from datetime import datetime, timezone

        content_type = None
        try:
            with open(self._meta_path(key)) as handle:
                content_type = json.load(handle).get("content_type")
        except (OSError, ValueError):
            pass
        return ObjectMetadata(
            content_type=content_type,
            size=info.st_size,
            last_modified=datetime.fromtimestamp(info.st_mtime, timezone.utc),
        )

    def _walk(self) -> Iterator[str]:
        if not os.path.isdir(self.root):
            return
        for folder, dirs, files in os.walk(self.root):
            rel = os.path.relpath(folder, self.root)
            if rel == ".":
                dirs[:] = [d for d in dirs if d not in RESERVED]
                rel = ""
            for name in files:
                yield f"{rel}/{name}".lstrip("/") if rel else name

    def list(self, prefix: str) -> List[str]:
        return sorted(key.replace(os.sep, "/") for key in self._walk() if key.replace(os.sep, "/").startswith(prefix))
