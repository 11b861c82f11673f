"""The document query rules (docs/protocol.md, "Documents"), evaluated on plain JSON values: what a
document store that holds its documents itself (in files, in memory) needs to answer filters, sorts,
updates, upserts and unique indexes the way every other document store does::

    from agent_env_plugin.documents import apply_update, check_update, matches, query_documents

    class MemoryDocuments(DocumentStore):
        def query(self, collection, filter, sort=None, limit=None, offset=0):
            return query_documents(self.held[collection], filter, sort, limit, offset)

The rules are agent-env's own evaluator's (the Rust crate's `store-api/src/document/eval.rs`, which the
built-in stores use), Mongo's in spirit: a filter maps a dotted path to predicates, all of which must
hold; a path reaches into objects and through arrays; a sort orders by type, then by value; an update
sets, unsets, increments and appends. `protocol/vectors/document-queries.jsonl` in the agent-env
repository holds cases that the Rust, Python and Go evaluators all pass.

Values are what `json.loads` makes: dict, list, str, int, float, bool and None; numbers compare by value
(`1 == 1.0`), and `true` is not `1`. A malformed filter, sort or update (an unknown predicate, `in`
without a list) is `InvalidParamsError`, as agent-env answers such a request; an update that cannot apply
(a path under two operators, `inc` of a string, a path through an array that is not an index) is
`InvalidValueError`; a unique index that refuses a document is `DuplicateKeyError`.
"""

from __future__ import annotations

from .errors import DuplicateKeyError, InvalidParamsError, InvalidValueError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

#: The predicate `op`s a filter may use.
PREDICATE_OPS = ("eq", "ne", "gte", "lte", "in", "exists", "lte_or_absent", "absent_or_null")
#: The parts of an update, in the order they apply.
UPDATE_PARTS = ("set", "unset", "inc", "add_to_set", "push")

_I64_MIN, _I64_MAX, _U64_MAX = -(2**63), 2**63 - 1, 2**64 - 1


# ---------------------------------------------------------------------------------------------- paths


def _index(name: str) -> Optional[int]:
    """The array index a path part names (digits, perhaps after a `+`), or None: any other part of a
    path that reaches an array looks into each object the array holds."""
    digits = name[1:] if name.startswith("+") else name
    if digits and digits.isascii() and digits.isdigit() and int(digits) <= _U64_MAX:
        return int(digits)
    return None


def resolve(doc: Dict[str, Any], path: str) -> List[Any]:
    """The values the dotted `path` reaches in `doc`; an empty list when it is absent.

    A numeric part indexes an array (`items.0.name`); any other part reaches into each object an array
    holds (`items.name` is the name of every item), so a path may reach several values.
    """
    names = path.split(".")
    found: List[Any] = []
    if names[0] in doc:
        _resolve_in(doc[names[0]], names, 1, found)
    return found


def _resolve_in(value: Any, names: List[str], at: int, found: List[Any]) -> None:
    if at == len(names):
        found.append(value)
        return
    name = names[at]
    if isinstance(value, dict):
        if name in value:
            _resolve_in(value[name], names, at + 1, found)
    elif isinstance(value, list):
        index = _index(name)
        if index is not None:
            if index < len(value):
                _resolve_in(value[index], names, at + 1, found)
        else:
            for item in value:
                if isinstance(item, dict):
                    _resolve_in(item, names, at, found)


# --------------------------------------------------------------------------------------------- values


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _as_float(number: Any) -> float:
    try:
        return float(number)
    except OverflowError:  # an int too large for a float: agent-env reads it as infinite
        return float("inf") if number > 0 else float("-inf")


def _number_order(x: Any, y: Any) -> int:
    """-1, 0 or 1: two ints in the 64-bit signed range exactly, any other pair as floats."""
    if isinstance(x, int) and isinstance(y, int) and _I64_MIN <= x <= _I64_MAX and _I64_MIN <= y <= _I64_MAX:
        return (x > y) - (x < y)
    fx, fy = _as_float(x), _as_float(y)
    return (fx > fy) - (fx < fy)


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value (`1` equals `1.0`; `True` is not `1`), arrays item by item,
    objects key by key (in any order)."""
    if _is_number(a) and _is_number(b):
        return _number_order(a, b) == 0
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return len(a) == len(b) and all(key in b and json_equal(value, b[key]) for key, value in a.items())
    return a is None and b is None


def _compare(a: Any, b: Any) -> Optional[int]:
    """-1, 0 or 1 for two numbers, two strings or two booleans; None for any other pair."""
    if _is_number(a) and _is_number(b):
        return _number_order(a, b)
    if isinstance(a, str) and isinstance(b, str):
        return (a > b) - (a < b)
    if isinstance(a, bool) and isinstance(b, bool):
        return int(a) - int(b)
    return None


def _copy(value: Any) -> Any:
    """A copy of a JSON value that shares no dict or list with it."""
    if isinstance(value, dict):
        return {key: _copy(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_copy(inner) for inner in value]
    return value


# -------------------------------------------------------------------------------------------- filters


def check_filter(filter: Dict[str, Any]) -> None:
    """Raises `InvalidParamsError` unless `filter` is a well-formed filter: an object from dotted path to a
    list of predicates `{"op": ..., "value": ...}`, each op one of `PREDICATE_OPS` with the value it needs
    (`in` a list, `exists` a boolean, `absent_or_null` none; every other op a value, `null` included).

    `matches` checks only what it evaluates; check a request's filter with this once, before matching.
    """
    if not isinstance(filter, dict):
        raise InvalidParamsError(f"a filter is an object from dotted path to predicates, not {filter!r}")
    for path, predicates in filter.items():
        if not isinstance(predicates, list):
            raise InvalidParamsError(f"the filter on '{path}' is not a list of predicates: {predicates!r}")
        for predicate in predicates:
            op = predicate.get("op") if isinstance(predicate, dict) else None
            if op not in PREDICATE_OPS:
                raise InvalidParamsError(
                    f"the filter on '{path}' has {predicate!r}, which is not a predicate: its op must be one of "
                    + ", ".join(PREDICATE_OPS)
                )
            value = predicate.get("value")
            if op == "absent_or_null":
                wrong = value is not None
            elif "value" not in predicate:
                wrong = True
            else:
                wrong = (op == "in" and not isinstance(value, list)) or (op == "exists" and not isinstance(value, bool))
            if wrong:
                needs = {"in": "a list", "exists": "true or false", "absent_or_null": "no value"}.get(op, "a value")
                raise InvalidParamsError(f"the filter on '{path}' has {predicate!r}, but '{op}' takes {needs}")


def _equals_one(values: List[Any], target: Any) -> bool:
    """`eq`: a value equals `target` or is an array holding it; an absent path equals only null."""
    if not values:
        return target is None
    return any(
        json_equal(value, target) or (isinstance(value, list) and any(json_equal(item, target) for item in value))
        for value in values
    )


def _any_compares(values: List[Any], bound: Any, accept: Callable[[int], bool]) -> bool:
    """Whether a value, or an element of an array value, compares to `bound` as `accept` wants (values
    of another type never do)."""
    for value in values:
        for candidate in [value, *value] if isinstance(value, list) else [value]:
            order = _compare(candidate, bound)
            if order is not None and accept(order):
                return True
    return False


def _holds(values: List[Any], predicate: Dict[str, Any]) -> bool:
    """Whether the values a path reached meet one predicate."""
    op, operand = predicate.get("op"), predicate.get("value")
    present = bool(values)
    if op == "eq":
        return _equals_one(values, operand)
    if op == "ne":
        return present and not _equals_one(values, operand)
    if op == "in":
        if not isinstance(operand, list):
            raise InvalidParamsError(f"'in' takes a list, not {operand!r}")
        return present and any(_equals_one(values, option) for option in operand)
    if op == "gte":
        return _any_compares(values, operand, lambda order: order >= 0)
    if op == "lte":
        return _any_compares(values, operand, lambda order: order <= 0)
    if op == "exists":
        return present == bool(operand)
    if op == "lte_or_absent":
        return not present or any(v is None for v in values) or _any_compares(values, operand, lambda o: o <= 0)
    if op == "absent_or_null":
        return not present or any(v is None for v in values)
    raise InvalidParamsError(f"{predicate!r} is not a predicate: its op must be one of " + ", ".join(PREDICATE_OPS))


def matches(doc: Dict[str, Any], filter: Dict[str, Any]) -> bool:
    """Whether `doc` meets every predicate of `filter` (`{}` matches every document).

    On a path, `eq` matches an equal value, an array holding one, and, for null, a null or absent field;
    `ne` needs the field present and different; `in` a value (or an element) in the list; `gte` and `lte`
    include the bound and match only a value of its type (numbers, strings, booleans); `exists` is
    presence, of null too; `lte_or_absent` an absent or null field or one `<=` the bound; `absent_or_null`
    an absent or null field.
    """
    return all(
        _holds(resolve(doc, path), predicate) for path, predicates in filter.items() for predicate in predicates
    )


# ---------------------------------------------------------------------------------------------- sorts


def check_sort(sort: Optional[List[Dict[str, Any]]]) -> None:
    """Raises `InvalidParamsError` unless `sort` is None or a list of `{"field": path, "descending": bool}`
    (`descending` may be left out: it defaults to true)."""
    if sort is None:
        return
    if not isinstance(sort, list):
        raise InvalidParamsError(f"a sort is a list of {{field, descending}}, not {sort!r}")
    for key in sort:
        if (
            not isinstance(key, dict)
            or not isinstance(key.get("field"), str)
            or not isinstance(key.get("descending", True), bool)
        ):
            raise InvalidParamsError(f"a sort key is {{field: a path, descending: true or false}}, not {key!r}")


def _rank(value: Any) -> int:
    """Where a value's JSON type sorts: null, numbers, strings, objects, arrays, booleans."""
    if value is None:
        return 0
    if isinstance(value, bool):  # before numbers: True is an int to Python
        return 5
    if isinstance(value, (int, float)):
        return 1
    if isinstance(value, str):
        return 2
    return 3 if isinstance(value, dict) else 4


#: serde_json's escapes, the ones agent-env's compact JSON text uses.
_ESCAPES = {i: f"\\u{i:04x}" for i in range(0x20)}
_ESCAPES.update({ord('"'): '\\"', ord("\\"): "\\\\", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t"})


def _float_text(x: float) -> str:
    """`x` as agent-env writes a float: the shortest digits that read back as `x`, in plain notation
    for exponents -5 to 15 (`0.00001`, `1000000000000000.0`), else as `1.5e+16` or `1e-6`."""
    if x != x or x in (float("inf"), float("-inf")):
        return "null"  # never read from JSON
    if x == 0:
        return "-0.0" if str(x).startswith("-") else "0.0"
    sign = "-" if x < 0 else ""
    mantissa, _, exponent = repr(abs(x)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    significant = digits.lstrip("0")
    point = len(whole) + int(exponent or 0) - (len(digits) - len(significant))  # digits before the point
    digits = significant.rstrip("0")
    if -4 <= point <= 16:
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return f"{sign}{digits}{'0' * (point - len(digits))}.0"
        return f"{sign}{digits[:point]}.{digits[point:]}"
    rest = f".{digits[1:]}" if len(digits) > 1 else ""
    return f"{sign}{digits[0]}{rest}e{'+' if point > 0 else '-'}{abs(point - 1)}"


def _text(value: Any) -> str:
    """`value` as agent-env's compact JSON text (keys sorted), which orders objects and arrays in a sort."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if _I64_MIN <= value <= _U64_MAX else _float_text(_as_float(value))
    if isinstance(value, float):
        return _float_text(value)
    if isinstance(value, str):
        return '"' + value.translate(_ESCAPES) + '"'
    if isinstance(value, list):
        return "[" + ",".join(_text(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(_text(key) + ":" + _text(value[key]) for key in sorted(value)) + "}"
    return _text(str(value))


def _sort_value(doc: Dict[str, Any], field: str) -> Any:
    found = resolve(doc, field)
    return found[0] if found else None


def _order(a: Dict[str, Any], b: Dict[str, Any], keys: List[Tuple[str, bool]]) -> int:
    for field, descending in keys:
        x, y = _sort_value(a, field), _sort_value(b, field)
        order = (_rank(x) > _rank(y)) - (_rank(x) < _rank(y))
        if order == 0:
            same_type = _compare(x, y)
            if same_type is None:
                tx, ty = _text(x), _text(y)
                same_type = (tx > ty) - (tx < ty)
            order = same_type
        if order:
            return -order if descending else order
    return 0


def sort_documents(docs: Iterable[Dict[str, Any]], sort: Optional[List[Dict[str, Any]]]) -> List[Dict[str, Any]]:
    """`docs` in the order of `sort` (a new list; the same order when `sort` is None or empty).

    On each key, primary first, a document sorts by the first value its field reaches (absent counts as
    null): by type first (null, numbers, strings, objects, arrays, booleans), then by value (objects and
    arrays by their JSON text). Absent and null values come first ascending and last descending; later
    keys break ties, and documents that tie on every key keep their order.
    """
    check_sort(sort)
    out = list(docs)
    if sort:
        from functools import cmp_to_key

        keys = [(key["field"], bool(key.get("descending", True))) for key in sort]
        out.sort(key=cmp_to_key(lambda a, b: _order(a, b, keys)))
    return out


def query_documents(
    docs: Iterable[Dict[str, Any]],
    filter: Dict[str, Any],
    sort: Optional[List[Dict[str, Any]]] = None,
    limit: Optional[int] = None,
    offset: int = 0,
) -> List[Dict[str, Any]]:
    """What `query` answers over `docs`: the documents that match `filter`, sorted by `sort`, then
    `offset` of them skipped, then `limit` kept (None, 0 or a negative limit keeps all; a negative offset
    skips none), as the Go SDK's `QueryDocuments` does. `find_one` is its first with `limit=1`, `count`
    the length with no sort."""
    check_filter(filter)
    found = sort_documents((doc for doc in docs if matches(doc, filter)), sort)
    found = found[max(offset or 0, 0) :]
    return found[:limit] if limit is not None and limit > 0 else found


# -------------------------------------------------------------------------------------------- updates


def _update_paths(update: Dict[str, Any]) -> List[str]:
    """Every path the update writes, with repeats, in the order the parts apply."""
    paths: List[str] = []
    for part in UPDATE_PARTS:
        given = update.get(part)
        if given:
            paths.extend(given if part == "unset" else sorted(given))
    return paths


def _quoted_list(paths: Iterable[str]) -> str:
    return "[" + ", ".join(f"'{path}'" for path in paths) + "]"


def check_update(update: Dict[str, Any]) -> None:
    """Raises unless `update` can apply: `InvalidParamsError` when it is not `{"set": {path: value},
    "unset": [path], "inc": {path: number}, "add_to_set": {path: value}, "push": {path: value}}` (parts
    may be left out; a part of another name, such as MongoDB's `$set`, is refused: an update that changed
    nothing would still say it matched), `InvalidValueError` when it writes a path twice or a path and
    one inside it (`a` and `a.b`).

    Check a request's update with this before looking for the document to change: an update that cannot
    apply is refused even when nothing matches."""
    if not isinstance(update, dict):
        raise InvalidParamsError(f"an update is an object of set, unset, inc, add_to_set and push, not {update!r}")
    others = sorted(key for key in update if key not in UPDATE_PARTS)
    if others:
        raise InvalidParamsError(
            f"an update's parts are set, unset, inc, add_to_set and push, not {_quoted_list(others)}"
        )
    for part in UPDATE_PARTS:
        if part not in update:
            continue
        given = update[part]
        if part == "unset":
            if not isinstance(given, list) or not all(isinstance(path, str) for path in given):
                raise InvalidParamsError(f"an update's unset is a list of paths, not {given!r}")
        elif not isinstance(given, dict):
            raise InvalidParamsError(f"an update's {part} is an object from path to value, not {given!r}")
    paths = _update_paths(update)
    repeated = sorted({path for i, path in enumerate(paths) if path in paths[:i]})
    if repeated:
        raise InvalidValueError(f"UpdateSpec emits the same path under multiple operators: {_quoted_list(repeated)}")
    nested = sorted({path for p in paths for q in paths if q.startswith(p + ".") for path in (p, q)})
    if nested:
        raise InvalidValueError(f"UpdateSpec emits a path and one of its ancestors: {_quoted_list(nested)}")


def _slot(doc: Dict[str, Any], path: str) -> Tuple[Any, Any]:
    """The dict or list that holds the end of `path` in `doc`, and its key there (a name or an index).
    The objects on the way are made where they are missing or hold something else than an object or an
    array; a part that reaches an array must be an index inside it."""
    names = path.split(".")
    container: Any = doc
    key: Any = names[0]
    for name in names[1:]:
        current = container[key] if isinstance(container, list) else container.setdefault(key, None)
        if isinstance(current, list):
            index = _index(name)
            if index is None:
                raise InvalidValueError(f"cannot set '{path}': '{name}' is not an index of the array it names")
            if index >= len(current):
                raise InvalidValueError(
                    f"cannot set '{path}': index {index} is past the end of an array of {len(current)}"
                )
            container, key = current, index
        else:
            if not isinstance(current, dict):
                current = container[key] = {}
            container, key = current, name
    return container, key


def _get(container: Any, key: Any) -> Any:
    return container[key] if isinstance(container, list) else container.get(key)


def _unset(doc: Dict[str, Any], path: str) -> None:
    *parents, last = path.split(".")
    holder: Any = doc
    for name in parents:
        if isinstance(holder, dict) and name in holder:
            holder = holder[name]
        elif isinstance(holder, list) and (index := _index(name)) is not None and index < len(holder):
            holder = holder[index]
        else:
            return
    if isinstance(holder, dict):
        holder.pop(last, None)
    elif isinstance(holder, list) and (index := _index(last)) is not None and index < len(holder):
        holder[index] = None  # an array keeps its length


def _add(path: str, current: Any, by: Any) -> Any:
    current = 0 if current is None else current  # an absent or null field counts as 0
    if not _is_number(current) or not _is_number(by):
        raise InvalidValueError(f"cannot inc '{path}': both the field and the amount must be numbers")
    if isinstance(current, int) and isinstance(by, int):
        total = current + by
        if _I64_MIN <= current <= _I64_MAX and _I64_MIN <= by <= _I64_MAX and _I64_MIN <= total <= _I64_MAX:
            return total
    total_float = _as_float(current) + _as_float(by)
    return None if total_float in (float("inf"), float("-inf")) else total_float


def _array_at(doc: Dict[str, Any], path: str, part: str) -> List[Any]:
    container, key = _slot(doc, path)
    items = _get(container, key)
    if items is None:  # an absent or null field starts as an empty array
        items = container[key] = []
    if not isinstance(items, list):
        raise InvalidValueError(f"cannot {part} to '{path}': it holds a value that is not an array")
    return items


def apply_update(doc: Dict[str, Any], update: Dict[str, Any]) -> Dict[str, Any]:
    """Changes `doc` in place by `update` and returns it: `set` (making the objects on the way), `unset`
    (an array element becomes null), `inc` (an absent or null field counts as 0), `add_to_set` (appends
    unless an equal value is there) and `push` (appends), in that order. Raises as `check_update` does,
    and `InvalidValueError` when a part cannot apply (then `doc` may be half changed: change a copy).

    The values written are copies: the document shares nothing with `update`."""
    check_update(update)
    for path, value in sorted(update.get("set", {}).items()):
        container, key = _slot(doc, path)
        container[key] = _copy(value)
    for path in update.get("unset", []):
        _unset(doc, path)
    for path, by in sorted(update.get("inc", {}).items()):
        container, key = _slot(doc, path)
        container[key] = _add(path, _get(container, key), by)
    for path, value in sorted(update.get("add_to_set", {}).items()):
        items = _array_at(doc, path, "add_to_set")
        if not any(json_equal(item, value) for item in items):
            items.append(_copy(value))
    for path, value in sorted(update.get("push", {}).items()):
        _array_at(doc, path, "push").append(_copy(value))
    return doc


def upserted_from(filter: Dict[str, Any], update: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The document an upsert inserts on a miss: the `eq` values of `filter` at their paths (in path
    order, making the objects on the way), then `update` applied to it when given. (An upsert of
    `replace` inserts its document as it is.)"""
    check_filter(filter)
    doc: Dict[str, Any] = {}
    for path in sorted(filter):
        for predicate in filter[path]:
            if predicate["op"] == "eq":
                container, key = _slot(doc, path)
                container[key] = _copy(predicate.get("value"))
    if update is not None:
        apply_update(doc, update)
    return doc


# ------------------------------------------------------------------------------------- unique indexes


def unique_key(doc: Dict[str, Any], fields: Sequence[str]) -> Optional[List[Any]]:
    """The values a unique index on `fields` holds for `doc`: the first value each field reaches; None
    when one is absent or null, as such a document is not in the index (two of them never collide)."""
    key: List[Any] = []
    for field in fields:
        found = resolve(doc, field)
        if not found or found[0] is None:
            return None
        key.append(found[0])
    return key


def _refused(fields: Sequence[str]) -> DuplicateKeyError:
    names = ", ".join(fields)
    return DuplicateKeyError(f"another document has the same {names}, which the unique index on [{names}] refuses")


def check_unique(
    docs: Sequence[Dict[str, Any]],
    indexes: Iterable[Sequence[str]],
    doc: Dict[str, Any],
    skip: Optional[int] = None,
) -> None:
    """Raises `DuplicateKeyError` when one of the unique `indexes` (each a list of fields) holds the key of
    `doc` in one of `docs` already, leaving out `docs[skip]` (the document `doc` takes the place of)."""
    for fields in indexes:
        key = unique_key(doc, fields)
        if key is None:
            continue
        for i, other in enumerate(docs):
            taken = unique_key(other, fields) if i != skip else None
            if taken is not None and all(json_equal(a, b) for a, b in zip(key, taken)):
                raise _refused(fields)


def _coarse(value: Any) -> Any:
    """`value` with every number a float (and -0.0 as 0.0): equal values have the same text then."""
    if _is_number(value):
        return _as_float(value) + 0.0
    if isinstance(value, dict):
        return {key: _coarse(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_coarse(inner) for inner in value]
    return value


def check_unique_index(docs: Iterable[Dict[str, Any]], fields: Sequence[str]) -> None:
    """Raises `DuplicateKeyError` when two of `docs` have the same key on `fields`: what a new unique index
    on a collection that holds documents already must refuse."""
    groups: Dict[str, List[List[Any]]] = {}
    for doc in docs:
        key = unique_key(doc, fields)
        if key is None:
            continue
        group = groups.setdefault(_text(_coarse(key)), [])
        if any(all(json_equal(a, b) for a, b in zip(key, taken)) for taken in group):
            raise _refused(fields)
        group.append(key)
