"""The object store conformance kit: 27 cases every object store passes, built-in or plugin.

The same cases, by the same names, as `agent-env store check object` runs: the original's 17, then 10
for the rules those leave open (a string-prefix and sorted `list`, foreign URLs refused by the `*_at`
methods, the content type and an aware `last_modified` kept, keys leaving the store refused, bytes that
are not UTF-8, objects over 64 KiB, the empty object, `put_file_at` writing at its URL).

Each case is a function `case(store, ns)`: `store` is an `ObjectStore` (a Python store in-process, or a
`WireObjectStore` whose operations cross a pipe), `ns` a key prefix for the case's objects (`""` for a
fresh store, a unique prefix ending in "/" for a shared bucket). A failing case raises
`ConformanceFailure` (an `AssertionError`) that says what the store did wrong. Run them from pytest::

    import pytest
    from agent_env_plugin.conformance import object_cases

    @pytest.mark.parametrize("case", object_cases.CASES, ids=object_cases.case_id)
    def test_object_store_conformance(case, tmp_path):
        case(MyStore(root=str(tmp_path)), "")
"""

from __future__ import annotations

import datetime
import functools
import os
import shutil
import tempfile

from ..errors import AlreadyExistsError, ForeignUrlError, InvalidValueError, NotFoundError, ObjectNotFoundError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator, List

    from ..stores import ObjectStore

    Case = Callable[[ObjectStore, str], None]


class ConformanceFailure(AssertionError):
    """The store under test broke a rule of the object store contract."""


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ConformanceFailure(message)


def _raises(expected: type[BaseException], action: Callable[[], Any], what: str) -> BaseException:
    try:
        action()
    except expected as exc:
        return exc
    except Exception as exc:  # noqa: BLE001 - report what came instead
        raise ConformanceFailure(f"{what} raised {type(exc).__name__}: {exc}, not {expected.__name__}") from exc
    raise ConformanceFailure(f"{what} raised nothing; it must raise {expected.__name__}")


class _TempDir:
    def __init__(self) -> None:
        self.path = tempfile.mkdtemp(prefix="agent-env-object-kit-")

    def file(self, name: str, data: bytes) -> str:
        path = os.path.join(self.path, name)
        with open(path, "wb") as handle:
            handle.write(data)
        return path

    def __enter__(self) -> _TempDir:
        return self

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def put_get_roundtrip(store: ObjectStore, ns: str) -> None:
    url = store.put(ns + "a/b.json", b"hello", "application/json")
    _check(isinstance(url, str) and bool(url), f"put returned {url!r}, not a URL")
    data = store.get(url)
    _check(data == b"hello", f"get(put url) returned {data!r}, not b'hello'")


def put_is_write_once(store: ObjectStore, ns: str) -> None:
    store.put(ns + "dup", b"one")
    _raises(AlreadyExistsError, lambda: store.put(ns + "dup", b"two"), "a second put to the same key")


def put_allow_overwrite_replaces(store: ObjectStore, ns: str) -> None:
    store.put(ns + "over", b"old")
    url = store.put(ns + "over", b"new", allow_overwrite=True)
    data = store.get(url)
    _check(data == b"new", f"after put with allow_overwrite, get returned {data!r}, not b'new'")


def put_file_roundtrip(store: ObjectStore, ns: str) -> None:
    with _TempDir() as tmp:
        path = tmp.file("in.bin", b"file-bytes\x00\xff")
        url = store.put_file(ns + "files/in.bin", path)
        data = store.get(url)
        _check(data == b"file-bytes\x00\xff", f"get(put_file url) returned {data!r}, not the file's bytes")


def put_file_is_write_once(store: ObjectStore, ns: str) -> None:
    with _TempDir() as tmp:
        path = tmp.file("in.bin", b"x")
        store.put_file(ns + "files/once.bin", path)
        _raises(
            AlreadyExistsError, lambda: store.put_file(ns + "files/once.bin", path), "a second put_file to the same key"
        )


def exists_reflects_writes(store: ObjectStore, ns: str) -> None:
    before = store.exists(ns + "exists/x")
    _check(before is False, f"exists before any put returned {before!r}, not False")
    store.put(ns + "exists/x", b"1")
    after = store.exists(ns + "exists/x")
    _check(after is True, f"exists after a put returned {after!r}, not True")


def list_and_read_by_key(store: ObjectStore, ns: str) -> None:
    objects = {ns + "p/a.txt": b"a", ns + "p/sub/b.txt": b"b", ns + "other/c.txt": b"c"}
    for key, data in objects.items():
        store.put(key, data)
    listed = set(store.list(ns + "p/"))
    expected = {ns + "p/a.txt", ns + "p/sub/b.txt"}
    _check(listed == expected, f"list({ns + 'p/'!r}) returned {sorted(listed)}, not {sorted(expected)}")
    for key in expected:
        data = store.read(key)
        _check(data == objects[key], f"read({key!r}) returned {data!r}, not {objects[key]!r}")


def object_url_matches_put(store: ObjectStore, ns: str) -> None:
    key = ns + "url/x.bin"
    url = store.put(key, b"u")
    predicted = store.object_url(key)
    _check(predicted == url, f"object_url({key!r}) is {predicted!r}, but put returned {url!r}")
    _check(store.get(predicted) == b"u", "get(object_url(key)) did not return the object")


def get_object_key_inverts_object_url(store: ObjectStore, ns: str) -> None:
    key = ns + "inv/k.txt"
    url = store.put(key, b"k")
    back = store.get_object_key(url)
    _check(back == key, f"get_object_key({url!r}) is {back!r}, not {key!r}")
    again = store.object_url(back)
    _check(again == url, f"object_url(get_object_key(url)) is {again!r}, not {url!r}")


def download_to_file_streams_to_dest(store: ObjectStore, ns: str) -> None:
    url = store.put(ns + "dl/obj.bin", b"download me")
    with _TempDir() as tmp:
        dest = os.path.join(tmp.path, "nested", "out.bin")
        store.download_to_file(url, dest)
        _check(os.path.isfile(dest), f"download_to_file did not create {dest} (its parent folder did not exist)")
        with open(dest, "rb") as handle:
            data = handle.read()
        _check(data == b"download me", f"download_to_file wrote {data!r}, not b'download me'")


def open_streams_the_object(store: ObjectStore, ns: str) -> None:
    payload = b"0123456789abcdef"
    url = store.put(ns + "open/obj.bin", payload)
    stream = store.open(url)
    try:
        head = stream.read(8)
        rest = stream.read()
    finally:
        stream.close()
    _check(head + rest == payload, f"open(url) read {head + rest!r}, not {payload!r}")


def get_object_metadata_reflects_object(store: ObjectStore, ns: str) -> None:
    key = ns + "meta/m.bin"
    absent = store.get_object_metadata(key)
    _check(absent is None, f"get_object_metadata of an absent key returned {absent!r}, not None")
    store.put(key, b"12345")
    meta = store.get_object_metadata(key)
    _check(meta is not None, "get_object_metadata after a put returned None")
    assert meta is not None
    _check(meta.size == 5, f"metadata size is {meta.size!r} after a 5-byte put")
    _check(meta.last_modified is not None, "metadata last_modified is not set after a put")


def put_file_at_roundtrips(store: ObjectStore, ns: str) -> None:
    with _TempDir() as tmp:
        path = tmp.file("at.bin", b"at-bytes")
        url = store.put_file_at(store.object_url(ns + "at/obj.bin"), path)
        data = store.get(url)
        _check(data == b"at-bytes", f"get(put_file_at url) returned {data!r}, not the file's bytes")


def get_object_metadata_at_matches_key_variant(store: ObjectStore, ns: str) -> None:
    key = ns + "meta_at/m.bin"
    url = store.object_url(key)
    absent = store.get_object_metadata_at(url)
    _check(absent is None, f"get_object_metadata_at of an absent object returned {absent!r}, not None")
    store.put(key, b"12345")
    by_url = store.get_object_metadata_at(url)
    by_key = store.get_object_metadata(key)
    _check(by_url is not None and by_key is not None, "metadata after a put is None")
    assert by_url is not None and by_key is not None
    _check(
        by_url.size == by_key.size == 5, f"sizes by url ({by_url.size!r}) and by key ({by_key.size!r}) are not both 5"
    )


def list_at_matches_list(store: ObjectStore, ns: str) -> None:
    for key in (ns + "lp/a.txt", ns + "lp/sub/b.txt", ns + "lpother/c.txt"):
        store.put(key, b"x")
    by_url = set(store.list_at(store.object_url(ns + "lp/")))
    by_key = {store.object_url(key) for key in store.list(ns + "lp/")}
    _check(by_url == by_key, f"list_at(object_url('lp/')) is {sorted(by_url)}, list('lp/') gives {sorted(by_key)}")
    _check(len(by_key) == 2, f"list('lp/') must hold exactly the two lp/ objects, got {sorted(by_key)}")


def owns_its_objects_and_prefixes(store: ObjectStore, ns: str) -> None:
    url = store.put(ns + "own/x.bin", b"o")
    _check(store.owns(url) is True, f"owns({url!r}) of its own object is not True")
    prefix = store.object_url(ns + "own/")
    _check(store.owns(prefix) is True, f"owns({prefix!r}) of its own prefix is not True")
    foreign = "https://example.test/not-this-store/x.bin"
    _check(store.owns(foreign) is False, f"owns({foreign!r}) is not False")


def missing_object_reads_raise_object_not_found(store: ObjectStore, ns: str) -> None:
    store.put(ns + "nf/dir/obj.bin", b"present")
    meta = store.get_object_metadata(ns + "nf/dir")
    _check(meta is None, f"get_object_metadata of a prefix returned {meta!r}, not None")
    _check(store.exists(ns + "nf/dir") is False, "exists of a prefix is not False")
    with _TempDir() as tmp:
        for key in (ns + "nf/absent.bin", ns + "nf/dir", ns + "nf/dir/obj.bin/below"):
            url = store.object_url(key)
            dest = os.path.join(tmp.path, "out.bin")
            for name, action in (
                ("get", lambda url=url: store.get(url)),
                ("open", lambda url=url: store.open(url).read()),
                ("download_to_file", lambda url=url, dest=dest: store.download_to_file(url, dest)),
            ):
                exc = _raises(ObjectNotFoundError, action, f"{name}({url!r})")
                _check(isinstance(exc, NotFoundError), f"{name}({url!r}) raised an error that is not a NotFoundError")
                _check(
                    isinstance(exc, FileNotFoundError),
                    f"{name}({url!r}) raised an error that is not a FileNotFoundError",
                )


FOREIGN_URL = "https://example.test/not/this/store.bin"
LARGE_OBJECT_BYTES = 300_007


def binary_payload() -> bytes:
    """Every byte value, then sequences that are not UTF-8, so no text decoding survives by luck."""
    return bytes(range(256)) + bytes([0x80, 0xC3, 0x28, 0xE2, 0x82, 0xC0, 0xAF, 0xED, 0xA0, 0x80, 0xFF, 0xFE, 0x00])


def large_payload(length: int) -> bytes:
    """A deterministic payload with no short period a truncation could hide behind."""
    return bytes(((i * 31) ^ (i >> 8)) & 0xFF for i in range(length))


def list_is_a_string_prefix(store: ObjectStore, ns: str) -> None:
    keys = [ns + "sp/a.txt", ns + "sp-x/b.txt", ns + "spx.txt", ns + "other/sp.txt"]
    for key in keys:
        store.put(key, b"s")
    listed = sorted(store.list(ns + "sp"))
    expected = sorted(keys[:3])
    _check(listed == expected, f"list({ns + 'sp'!r}) returned {listed}, not {expected} (a string prefix, not a folder)")


def list_is_sorted(store: ObjectStore, ns: str) -> None:
    for key in ("order/b.txt", "order/a/z.txt", "order/B.txt", "order/a-1.txt"):
        store.put(ns + key, b"o")
    listed = list(store.list(ns + "order/"))
    _check(listed == sorted(listed), f"list({ns + 'order/'!r}) returned {listed}, not in byte order")
    prefix_url = store.object_url(ns + "order/")
    urls = list(store.list_at(prefix_url))
    _check(urls == sorted(urls), f"list_at({prefix_url!r}) returned {urls}, not in byte order")


#: The key whose URL `at_methods_refuse_foreign_urls` turns into URLs of other stores; it is never written.
PROBE_KEY = "foreign-probe.bin"


def urls_of_other_stores(own: str, key: str) -> List[str]:
    """URLs of the scheme of `own`, the store's URL of `key`, that name another store of that scheme.

    The same URL under another authority, that is another bucket or host (``mem://b/k`` →
    ``mem://other-b/k``), and, when `own` ends with `key` below a folder, `key` in a folder beside the
    store's root (``file:///data/objects/k`` → ``file:///data/objects-other/k``, ``https://host/bucket/k`` →
    ``https://host/bucket-other/k``). None for a URL without ``scheme://``. The Rust kit makes the same.
    """
    scheme, sep, rest = own.partition("://")
    if not sep:
        return []
    slash = rest.find("/")
    authority, path = (rest, "") if slash < 0 else (rest[:slash], rest[slash:])
    urls = []
    if authority:
        # After any user part (user@host), so that the host is what changes.
        user, at, host = authority.rpartition("@")
        urls.append(f"{scheme}://{user}{at}other-{host}{path}")
    if path.endswith(key):
        parent, sep, folder = path[: len(path) - len(key)].rstrip("/").rpartition("/")
        if sep and folder:
            urls.append(f"{scheme}://{authority}{parent}/{folder}-other/{key}")
    return urls


def _refuses_to_read_at(store: ObjectStore, url: str) -> None:
    """`owns(url)` is False, and `get_object_key`, `get_object_metadata_at` and `list_at` raise ForeignUrlError."""
    owned = store.owns(url)
    _check(owned is False, f"owns({url!r}) is {owned!r}; it must be False for a URL of another store")
    for name, action in (
        ("get_object_key", lambda: store.get_object_key(url)),
        ("get_object_metadata_at", lambda: store.get_object_metadata_at(url)),
        ("list_at", lambda: store.list_at(url)),
    ):
        _raises(ForeignUrlError, action, f"{name}({url!r})")


def at_methods_refuse_foreign_urls(store: ObjectStore, ns: str) -> None:
    """A URL of another store: `owns` is False, and `get_object_key` and the `*_at` methods raise ForeignUrlError.

    Tried with an https URL of another server, and with URLs of the store's own scheme naming another
    store (another bucket or host, a folder beside its root), made from its URL of a key
    (`urls_of_other_stores`). `put_file_at` is tried at the https URL only, so a store that takes the others
    writes nothing beside its own objects.
    """
    key = ns + PROBE_KEY
    for url in [FOREIGN_URL, *urls_of_other_stores(store.object_url(key), key)]:
        _refuses_to_read_at(store, url)
    with _TempDir() as tmp:
        path = tmp.file("foreign.bin", b"must not land")
        _raises(ForeignUrlError, lambda: store.put_file_at(FOREIGN_URL, path), f"put_file_at({FOREIGN_URL!r})")


def metadata_keeps_the_content_type(store: ObjectStore, ns: str) -> None:
    with _TempDir() as tmp:
        path = tmp.file("page.html", b"<p>typed</p>")
        writes = [
            (ns + "typed/put.json", "application/json", store.put(ns + "typed/put.json", b"{}", "application/json")),
            (
                ns + "typed/file.html",
                "text/html; charset=utf-8",
                store.put_file(ns + "typed/file.html", path, "text/html; charset=utf-8"),
            ),
        ]
    for key, content_type, url in writes:
        for what, meta in (("key", store.get_object_metadata(key)), ("url", store.get_object_metadata_at(url))):
            _check(meta is not None, f"metadata by {what} of {key!r} is None after a write")
            assert meta is not None
            _check(
                meta.content_type == content_type,
                f"content_type by {what} of {key!r} is {meta.content_type!r}, not {content_type!r}",
            )


def last_modified_is_rfc3339(store: ObjectStore, ns: str) -> None:
    key = ns + "stamp/obj.bin"
    url = store.put(key, b"t")
    for what, meta in (("key", store.get_object_metadata(key)), ("url", store.get_object_metadata_at(url))):
        _check(meta is not None, f"metadata by {what} is None after a put")
        assert meta is not None
        when = meta.last_modified
        _check(
            isinstance(when, datetime.datetime) and when.utcoffset() is not None,
            f"last_modified by {what} is {when!r}, not a datetime with a time zone (RFC 3339 on the wire)",
        )


def keys_outside_the_store_are_refused(store: ObjectStore, ns: str) -> None:
    with _TempDir() as tmp:
        path = tmp.file("escape.bin", b"e")
        for key in ("../" + ns + "escape.bin", "/" + ns + "absolute.bin"):
            _raises(InvalidValueError, functools.partial(store.put, key, b"e"), f"put({key!r})")
            _raises(InvalidValueError, functools.partial(store.put_file, key, path), f"put_file({key!r})")


def _roundtrip_every_way(store: ObjectStore, base: str, data: bytes) -> None:
    size = len(data)
    key = base + "/put.bin"
    url = store.put(key, data)
    _check(store.exists(key) is True, f"exists({key!r}) is not True after a put of {size} bytes")
    _same_bytes(store.get(url), data, "get(put url)")
    meta = store.get_object_metadata(key)
    _check(meta is not None and meta.size == size, f"metadata of a {size}-byte put is {meta!r}")
    stream = store.open(url)
    try:
        streamed = stream.read()
    finally:
        stream.close()
    _same_bytes(streamed, data, "open(put url)")
    with _TempDir() as tmp:
        source = tmp.file("source.bin", data)
        file_url = store.put_file(base + "/file.bin", source)
        dest = os.path.join(tmp.path, "out.bin")
        store.download_to_file(file_url, dest)
        with open(dest, "rb") as handle:
            _same_bytes(handle.read(), data, "download_to_file(put_file url)")


def _same_bytes(got: bytes, want: bytes, what: str) -> None:
    if got == want:
        return
    first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    raise ConformanceFailure(f"{what}: expected {len(want)} bytes, got {len(got)}, first differing at byte {first}")


def binary_bytes_roundtrip(store: ObjectStore, ns: str) -> None:
    _roundtrip_every_way(store, ns + "binary", binary_payload())


def large_objects_roundtrip(store: ObjectStore, ns: str) -> None:
    _roundtrip_every_way(store, ns + "large", large_payload(LARGE_OBJECT_BYTES))


def empty_object_roundtrips(store: ObjectStore, ns: str) -> None:
    _roundtrip_every_way(store, ns + "empty", b"")


def put_file_at_writes_at_its_url(store: ObjectStore, ns: str) -> None:
    key = ns + "put-at/target.bin"
    url = store.object_url(key)
    with _TempDir() as tmp:
        path = tmp.file("payload.bin", b"put-at-url")
        written = store.put_file_at(url, path)
        _check(written == url, f"put_file_at({url!r}) returned {written!r}, not the url it was given")
        data = store.read(key)
        _check(data == b"put-at-url", f"read({key!r}) after put_file_at of its url returned {data!r}")
        _raises(AlreadyExistsError, lambda: store.put_file_at(url, path), f"a second put_file_at({url!r})")


CASES: List[Case] = [
    put_get_roundtrip,
    put_is_write_once,
    put_allow_overwrite_replaces,
    put_file_roundtrip,
    put_file_is_write_once,
    exists_reflects_writes,
    list_and_read_by_key,
    object_url_matches_put,
    get_object_key_inverts_object_url,
    download_to_file_streams_to_dest,
    open_streams_the_object,
    get_object_metadata_reflects_object,
    put_file_at_roundtrips,
    get_object_metadata_at_matches_key_variant,
    list_at_matches_list,
    owns_its_objects_and_prefixes,
    missing_object_reads_raise_object_not_found,
    list_is_a_string_prefix,
    list_is_sorted,
    at_methods_refuse_foreign_urls,
    metadata_keeps_the_content_type,
    last_modified_is_rfc3339,
    keys_outside_the_store_are_refused,
    binary_bytes_roundtrip,
    large_objects_roundtrip,
    empty_object_roundtrips,
    put_file_at_writes_at_its_url,
]


def case_id(case: Case) -> str:
    """A pytest id for a case: its name."""
    return case.__name__


def run_all(store_factory: Callable[[], ObjectStore], ns: str = "") -> Iterator[tuple[str, Exception | None]]:
    """Runs every case on a fresh store from `store_factory`; yields (case name, failure or None)."""
    for case in CASES:
        try:
            case(store_factory(), ns)
        except Exception as exc:  # noqa: BLE001 - reported per case
            yield case.__name__, exc
        else:
            yield case.__name__, None
