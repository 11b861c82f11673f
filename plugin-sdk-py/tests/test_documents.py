"""`agent_env_plugin.documents`, the document query evaluator: the shared vectors
(protocol/vectors/document-queries.jsonl, which the Rust evaluator passes in store-api/tests/
document_vectors.rs), then what they cannot say (Python's own values, errors, unique indexes)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import pytest
from sdk_helpers import vectors_dir

from agent_env_plugin import DuplicateKeyError, InvalidParamsError, InvalidValueError, PluginError
from agent_env_plugin import documents as d
from agent_env_plugin.testing import read_vectors

VECTORS = read_vectors(vectors_dir(), "document-queries.jsonl")


def strict(value: object) -> str:
    """A value's JSON text, in which 2 and 2.0 differ (as they do to agent-env)."""
    return json.dumps(value, sort_keys=True)


def run(vector: dict) -> object:
    op = vector["op"]
    if op == "match":
        d.check_filter(vector["filter"])
        return d.matches(vector["doc"], vector["filter"])
    if op == "query":
        return d.query_documents(vector["docs"], vector["filter"], vector["sort"], vector["limit"], vector["offset"])
    if op == "update":
        return d.apply_update(vector["doc"], vector["update"])
    assert op == "upsert", op
    return d.upserted_from(vector["filter"], vector["update"])


def test_the_vectors_cover_every_op():
    assert len(VECTORS) >= 150
    assert {v["op"] for v in VECTORS} == {"match", "query", "update", "upsert"}
    assert len({v["name"] for v in VECTORS}) == len(VECTORS)


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_document_vector(vector):
    vector = copy.deepcopy(vector)
    if "error" in vector:
        with pytest.raises(PluginError) as caught:
            run(vector)
        assert caught.value.kind == vector["error"]
        return
    want = vector["matches"] if vector["op"] == "match" else vector["expect"]
    assert strict(run(vector)) == strict(want)


def where(path: str, op: str, *value: object) -> dict:
    return {path: [{"op": op, "value": value[0]} if value else {"op": op}]}


def test_resolve_reaches_every_value_a_path_names():
    doc = {"items": [{"k": 1}, {"k": [2, 3]}, "x", {"j": 0}], "m": {"0": "zero"}}
    assert d.resolve(doc, "items.k") == [1, [2, 3]]
    assert d.resolve(doc, "items.1.k.0") == [2]
    assert d.resolve(doc, "items.9") == []
    assert d.resolve(doc, "m.0") == ["zero"]
    assert d.resolve(doc, "absent.x") == []


def test_json_equal_keeps_types_apart_but_not_ints_and_floats():
    assert d.json_equal(1, 1.0) and d.json_equal({"a": [1, None]}, {"a": [1.0, None]})
    assert not d.json_equal(True, 1) and not d.json_equal(0, False) and not d.json_equal(None, 0)
    assert not d.json_equal("1", 1) and not d.json_equal([1], [1, 1]) and not d.json_equal({"a": 1}, {"b": 1})
    assert d.json_equal(0.0, -0.0)
    # Two ints compare exactly; an int and a float as floats, as agent-env compares them.
    assert not d.json_equal(2**53, 2**53 + 1)
    assert d.json_equal(2**53 + 1, float(2**53))


def test_big_ints_compare_as_agent_env_reads_them():
    doc = {"n": 2**63 + 5, "big": 10**30}
    assert d.matches(doc, where("n", "gte", 2**63))
    assert d.matches(doc, where("big", "eq", 1e30))


def test_a_filter_that_is_not_one_is_invalid_params():
    for bad in (
        [],
        where("a", "like", 1),
        where("a", "eq"),  # eq needs a value (null is one)
        where("a", "in"),
        where("a", "in", (1, 2)),
        where("a", "exists", 1),
        where("a", "absent_or_null", False),
        {"a": [["eq", 1]]},
        {"a": None},
    ):
        with pytest.raises(InvalidParamsError):
            d.check_filter(bad)  # type: ignore[arg-type]
    d.check_filter({"a": [{"op": "eq", "value": None}, {"op": "absent_or_null", "value": None}]})
    with pytest.raises(InvalidParamsError):
        d.matches({"a": 1}, where("a", "like", 1))  # matches refuses an op it does not know


def test_a_sort_that_is_not_one_is_invalid_params():
    for bad in ({"field": "a"}, [{"descending": True}], [{"field": 1}], [{"field": "a", "descending": None}], ["a"]):
        with pytest.raises(InvalidParamsError):
            d.sort_documents([], bad)  # type: ignore[arg-type]
    assert d.sort_documents(iter([{"a": 2}, {"a": 1}]), [{"field": "a", "descending": False, "extra": 1}]) == [
        {"a": 1},
        {"a": 2},
    ]


def test_sort_documents_returns_a_new_list():
    docs = [{"a": 1}, {"a": 2}]
    assert d.sort_documents(docs, [{"field": "a"}]) == [{"a": 2}, {"a": 1}]
    assert docs == [{"a": 1}, {"a": 2}]
    assert d.sort_documents(docs, None) is not docs


def test_sort_text_is_agent_envs():
    # Objects and arrays order by agent-env's JSON text: keys sorted, compact, its escapes and floats.
    assert d._text({"b": [None, True, 1, 2.0], "a": "é\x01\n"}) == '{"a":"é\\u0001\\n","b":[null,true,1,2.0]}'
    for value, text in [
        (0.1, "0.1"),
        (1e-5, "0.00001"),
        (1e-6, "1e-6"),
        (1.5e-7, "1.5e-7"),
        (1e15, "1000000000000000.0"),
        (1e16, "1e+16"),
        (123456.789, "123456.789"),
        (-2.5e-300, "-2.5e-300"),
        (-0.0, "-0.0"),
        (10**20, "1e+20"),  # past the 64-bit range agent-env reads an integer as a float
        (2**64 - 1, "18446744073709551615"),
    ]:
        assert d._text(value) == text, value
    docs = [{"o": {"x": 1.0}}, {"o": {"x": 1}}, {"o": {"x": 0.5}}]
    assert d.sort_documents(docs, [{"field": "o", "descending": False}]) == [docs[2], docs[1], docs[0]]


def test_check_update_refuses_what_cannot_apply():
    for bad in ([], {"set": None}, {"unset": None}, {"inc": []}, {"push": "x"}, {"unset": ["a", 1]}):
        with pytest.raises(InvalidParamsError):
            d.check_update(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidValueError, match=r"multiple operators: \['a', 'b'\]$"):
        d.check_update({"set": {"b": 1, "a": 1}, "unset": ["b", "a"]})
    with pytest.raises(InvalidValueError, match=r"one of its ancestors: \['a', 'a.b', 'a.c'\]$"):
        d.check_update({"set": {"a": 1}, "inc": {"a.c": 1, "a.b": 1}})
    with pytest.raises(InvalidParamsError, match=r"push, not \['\$set', 'rename'\]$"):
        d.check_update({"$set": {"a": 1}, "rename": {"x": "y"}})
    d.check_update({"set": {"a": 1, "ab": 2, "b.a": 3}})


def test_apply_update_copies_what_it_writes():
    value = {"list": [1]}
    doc = d.apply_update({}, {"set": {"v": value}, "push": {"p": value}})
    d.apply_update(doc, {"push": {"v.list": 2, "p.0.list": 3}})
    assert value == {"list": [1]}
    assert doc == {"v": {"list": [1, 2]}, "p": [{"list": [1, 3]}]}


def test_inc_keeps_agent_envs_number_types():
    doc = d.apply_update({"i": 2, "f": 2.0, "big": 2**63 - 1}, {"inc": {"i": 1, "f": 1, "big": 1, "new": 0.5}})
    assert strict(doc) == strict({"i": 3, "f": 3.0, "big": 9.223372036854776e18, "new": 0.5})
    assert d.apply_update({"x": 1.5e308}, {"inc": {"x": 1.5e308}}) == {"x": None}  # no infinity in JSON
    with pytest.raises(InvalidValueError):
        d.apply_update({"x": False}, {"inc": {"x": 1}})
    with pytest.raises(InvalidValueError):
        d.apply_update({}, {"inc": {"x": True}})


def test_upserted_from_without_an_update():
    assert d.upserted_from({"id": [{"op": "eq", "value": {"k": [1]}}], "n": [{"op": "gte", "value": 1}]}) == {
        "id": {"k": [1]}
    }
    with pytest.raises(InvalidParamsError):
        d.upserted_from({"id": {"op": "eq", "value": 1}})  # type: ignore[dict-item]


def test_query_documents_windows_after_sorting():
    docs = [{"i": i} for i in range(5)]
    assert d.query_documents(docs, {}, [{"field": "i"}], limit=2, offset=1) == [{"i": 3}, {"i": 2}]
    assert d.query_documents(docs, {}, None, limit=0, offset=3) == [{"i": 3}, {"i": 4}]
    assert d.query_documents(iter(docs), where("i", "in", [1, 3]), None) == [{"i": 1}, {"i": 3}]


def test_query_documents_treats_negative_windows_as_go_does():
    """A negative offset skips none and a negative limit keeps all, as Go's QueryDocuments: never Python's
    slicing from the end."""
    docs = [{"i": i} for i in range(4)]
    assert d.query_documents(docs, {}, None, limit=-1) == docs
    assert d.query_documents(docs, {}, None, offset=-2) == docs
    assert d.query_documents(docs, {}, None, limit=-1, offset=-2) == docs
    assert d.query_documents(docs, {}, None, limit=2, offset=-2) == docs[:2]
    assert d.query_documents(docs, {}, None, limit=-3, offset=1) == docs[1:]


def test_unique_keys_leave_out_absent_and_null_fields():
    assert d.unique_key({"id": "a", "v": {"n": 1}}, ["id", "v.n"]) == ["a", 1]
    assert d.unique_key({"id": "a"}, ["id", "v"]) is None
    assert d.unique_key({"id": "a", "v": None}, ["id", "v"]) is None
    assert d.unique_key({"items": [{"k": 1}, {"k": 2}]}, ["items.k"]) == [1]


def test_check_unique():
    docs = [{"id": "a", "v": 1}, {"id": "a"}, {"id": "a", "v": None}, {"id": "b", "v": 1}]
    indexes = [["x"], ["id", "v"]]
    with pytest.raises(DuplicateKeyError, match=r"same id, v, which the unique index on \[id, v\] refuses"):
        d.check_unique(docs, indexes, {"id": "a", "v": 1.0})
    d.check_unique(docs, indexes, {"id": "a", "v": 1, "n": 2}, skip=0)  # the document it replaces
    d.check_unique(docs, indexes, {"id": "a"})  # absent: not in the index
    d.check_unique(docs, indexes, {"id": "a", "v": None})  # null: not in the index either
    d.check_unique(docs, [], {"id": "a", "v": 1})


def test_check_unique_index():
    d.check_unique_index([{"k": 1}, {"k": "1"}, {"k": True}, {}, {"k": None}, {"k": None}], ["k"])
    for twice in ([{"k": 1}, {"k": 1.0}], [{"k": {"a": [0.0]}}, {"k": {"a": [-0]}}], [{"k": 2**53}, {"k": 2.0**53}]):
        with pytest.raises(DuplicateKeyError):
            d.check_unique_index(twice, ["k"])
    d.check_unique_index([{"k": 2**53}, {"k": 2**53 + 1}], ["k"])  # two ints compare exactly, floats or not


def test_importing_the_evaluator_imports_no_typing():
    # A document store's plugin imports it to start; typing alone would add a third to its start-up.
    code = "import sys, agent_env_plugin.documents; sys.exit('typing' in sys.modules)"
    src = os.path.dirname(os.path.dirname(d.__file__))
    assert subprocess.run([sys.executable, "-S", "-c", code], env={"PYTHONPATH": src}).returncode == 0
