"""Writes a plugin's manifest (`agent-env-plugin.toml`) from what it registered."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, List, Sequence, Tuple

_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def toml_string(text: str) -> str:
    # A JSON string with only the escapes json.dumps emits (\" \\ \n \t \uXXXX ...) is a TOML basic string.
    from ._codec import dumps

    return dumps(text)


def toml_key(key: str) -> str:
    return key if key and all(ch in _BARE for ch in key) else toml_string(key)


def render(
    name: str,
    version: str,
    exec_argv: Sequence[str],
    protocol: Tuple[int, int],
    provides: Dict[str, List[Tuple[str, str, str | None]]],
    stores: List[Tuple[str, str]],
    description: str | None = None,
    requires: Dict[str, str] | None = None,
) -> str:
    """The manifest text. `provides` maps a group to (name, class label, description) entries."""
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
        for entry_name, label, entry_description in entries:
            if entry_description:
                value = f"{{ class = {toml_string(label)}, description = {toml_string(entry_description)} }}"
            else:
                value = toml_string(label)
            lines.append(f"{toml_key(entry_name)} = {value}")
    if stores:
        lines.append("")
        lines.append("[provides.stores]")
        for label, kind in stores:
            lines.append(f"{toml_key(label)} = {toml_string(kind)}")
    return "\n".join(lines) + "\n"
