"""A document store plugin for the `drop_collection` tests: each collection is a JSON file under the
store's `root`, so a test can see what a check left behind after the plugin has exited.

`FileDocuments` answers `count`, `delete`, `insert`, `find_one` and `query` (filters of `eq` only) and
does not implement `drop_collection`; `DroppingFileDocuments` does, removing the file and writing
`dropped <collection>` to `<root>/.drops`.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any, Dict, List

from agent_env_plugin import DocumentStore, Plugin

plugin = Plugin("agentenv-documents", "0.1.0", description="File-backed document stores for the SDK's tests")


class FileDocuments(DocumentStore):
    """Collections as `<root>/<collection>.json`; no `drop_collection` of its own."""

    config_keys = ("root",)
    required_keys = ("root",)

    def __init__(self, root: str) -> None:
        self.root = root
        self.lock = threading.Lock()
        os.makedirs(root, exist_ok=True)

    def path(self, collection: str) -> str:
        return os.path.join(self.root, f"{collection}.json")

    def load(self, collection: str) -> List[Dict[str, Any]]:
        try:
            with open(self.path(collection)) as handle:
                docs: List[Dict[str, Any]] = json.load(handle)
                return docs
        except FileNotFoundError:
            return []

    def save(self, collection: str, docs: List[Dict[str, Any]]) -> None:
        with open(self.path(collection), "w") as handle:
            json.dump(docs, handle)

    @staticmethod
    def matches(doc: Dict[str, Any], filter: Dict[str, Any]) -> bool:
        return all(
            all(p.get("op") == "eq" and doc.get(path) == p.get("value") for p in predicates)
            for path, predicates in filter.items()
        )

    def find_one(self, collection: str, filter: Dict[str, Any], sort: List[Dict[str, Any]] | None = None) -> Any:
        return next(iter(self.query(collection, filter)), None)

    def query(
        self,
        collection: str,
        filter: Dict[str, Any],
        sort: List[Dict[str, Any]] | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> List[Any]:
        with self.lock:
            return [d for d in self.load(collection) if self.matches(d, filter)]

    def count(self, collection: str, filter: Dict[str, Any]) -> int:
        return len(self.query(collection, filter))

    def insert(self, collection: str, doc: Dict[str, Any]) -> None:
        with self.lock:
            docs = self.load(collection)
            docs.append(doc)
            self.save(collection, docs)

    def delete(self, collection: str, filter: Dict[str, Any]) -> int:
        with self.lock:
            docs = self.load(collection)
            for i, doc in enumerate(docs):
                if self.matches(doc, filter):
                    del docs[i]
                    self.save(collection, docs)
                    return 1
            return 0


class DroppingFileDocuments(FileDocuments):
    """`FileDocuments` that removes a collection's file when asked to drop it."""

    def drop_collection(self, collection: str) -> None:
        with self.lock:
            try:
                os.unlink(self.path(collection))
            except FileNotFoundError:
                pass
            with open(os.path.join(self.root, ".drops"), "a") as handle:
                handle.write(f"dropped {collection}\n")


plugin.store(FileDocuments)
plugin.store(DroppingFileDocuments)


if __name__ == "__main__":
    plugin.serve()
