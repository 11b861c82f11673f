"""Writes a plugin's manifest (`agent-env-plugin.toml`) from what it registered."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, Mapping, Optional, Sequence, Tuple, Union

    #: One `[provides.<group>]` entry: (name, class label, description), optionally followed by the entry's
    #: other keys in the order to write them (a root option's `{"value": "NAME", "always": True}`).
    Entry = Union[
        Tuple[str, str, Optional[str]],
        Tuple[str, str, Optional[str], Mapping[str, Union[str, bool]]],
    ]

_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def toml_string(text: str) -> str:
    # A JSON string with only the escapes json.dumps emits (\" \\ \n \t \uXXXX ...) is a TOML basic string.
    from ._codec import dumps

    return dumps(text)


def toml_key(key: str) -> str:
    return key if key and all(ch in _BARE for ch in key) else toml_string(key)


def toml_value(value: str | bool) -> str:
    """A string or a boolean as TOML writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return toml_string(value)


def render(
    name: str,
    version: str,
    exec_argv: Sequence[str],
    protocol: Tuple[int, int],
    provides: Mapping[str, Sequence[Entry]],
    stores: Sequence[Tuple[str, str]],
    description: str | None = None,
    requires: Dict[str, str] | None = None,
) -> str:
    """The manifest text. `provides` maps a group to its entries (`Entry`): (name, class label,
    description), and optionally the entry's other keys."""
    lines = [
        "[plugin]",
        f"name = {toml_string(name)}",
        f"version = {toml_string(version)}",
        "exec = [" + ", ".join(toml_string(arg) for arg in exec_argv) + "]",
        f"protocol = [{protocol[0]}, {protocol[1]}]",
    ]
    if description:
        lines.append(f"description = {toml_string(description)}")
    if requires:
        inner = ", ".join(f"{toml_key(k)} = {toml_string(v)}" for k, v in requires.items())
        lines.append(f"requires = {{ {inner} }}")
    for group, entries in provides.items():
        if not entries:
            continue
        lines.append("")
        lines.append(f"[provides.{group}]")
        for entry in entries:
            entry_name, label, entry_description = entry[0], entry[1], entry[2]
            fields = [f"class = {toml_string(label)}"]
            if entry_description:
                fields.append(f"description = {toml_string(entry_description)}")
            for key, field in (entry[3] if len(entry) > 3 else {}).items():
                fields.append(f"{toml_key(key)} = {toml_value(field)}")
            value = f"{{ {', '.join(fields)} }}" if len(fields) > 1 else toml_string(label)
            lines.append(f"{toml_key(entry_name)} = {value}")
    if stores:
        lines.append("")
        lines.append("[provides.stores]")
        for label, kind in stores:
            lines.append(f"{toml_key(label)} = {toml_string(kind)}")
    return "\n".join(lines) + "\n"
