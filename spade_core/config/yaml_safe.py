"""Read YAML config text safely: safe loader only, bounded size, depth and alias expansion.

PyYAML's ``SafeLoader`` already refuses ``!!python/...`` tags. What it does not bound is the
expanded size of a document built from aliases (the "billion laughs" bomb): aliases share one
object, so loading is cheap, but anything that walks the result (validation, writing the resolved
config) would visit every expanded node. We compose the node graph first and count its expanded
size with memoisation, refusing it before any Python object is built.
"""

from __future__ import annotations

from typing import Any

import yaml

from spade_core.errors import ConfigError

MAX_BYTES = 1_000_000
MAX_EXPANDED_NODES = 100_000
MAX_DEPTH = 64


def _where(source: str, mark: Any) -> str:
    if mark is None:
        return source
    return f"{source} line {mark.line + 1}, column {mark.column + 1}"


def _expanded_size(root: yaml.Node, source: str) -> int:
    """Number of nodes the document has once every alias is expanded; refuses cycles and depth."""
    memo: dict[int, int] = {}
    on_path: set[int] = set()

    def size(node: yaml.Node, depth: int) -> int:
        key = id(node)
        if key in memo:
            return memo[key]
        if depth > MAX_DEPTH:
            raise ConfigError(
                f"{_where(source, node.start_mark)}: nesting deeper than {MAX_DEPTH} levels; "
                "a config is a few levels of mappings and lists."
            )
        if key in on_path:
            raise ConfigError(
                f"{_where(source, node.start_mark)}: an alias refers to itself (recursive "
                "structure); configs must be finite trees."
            )
        on_path.add(key)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            for child in node.value:
                total += size(child, depth + 1)
                if total > MAX_EXPANDED_NODES:
                    break
        elif isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                total += size(k, depth + 1) + size(v, depth + 1)
                if total > MAX_EXPANDED_NODES:
                    break
        on_path.discard(key)
        memo[key] = total
        if total > MAX_EXPANDED_NODES:
            raise ConfigError(
                f"{_where(source, node.start_mark)}: the document expands to more than "
                f"{MAX_EXPANDED_NODES} values through aliases (an alias bomb?); write the config "
                "out plainly or use fewer aliases."
            )
        return total

    return size(root, 0)


def _describe_yaml_error(exc: yaml.YAMLError, source: str) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if "could not determine a constructor for the tag" in problem:
        tag = problem.split("tag", 1)[1].strip().strip("'")
        tag = tag.replace("tag:yaml.org,2002:", "!!")
        return (
            f"{_where(source, mark)}: the tag {tag} is not allowed; configs are plain YAML "
            "(mappings, lists, strings, numbers, booleans, null) and never build Python objects."
        )
    return f"{_where(source, mark)}: not valid YAML: {problem}."


def load_yaml_text(raw: bytes | str, source: str) -> Any:
    """Parse one YAML document from ``raw``; every problem becomes a :class:`ConfigError`."""
    if isinstance(raw, bytes):
        if len(raw) > MAX_BYTES:
            raise ConfigError(f"{source}: {len(raw)} bytes is larger than the {MAX_BYTES}-byte "
                              "limit for a config file.")
        if b"\x00" in raw:
            raise ConfigError(f"{source}: this is a binary file, not a YAML config.")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"{source}: not UTF-8 text (byte {exc.start}); a config is a UTF-8 YAML file."
            ) from None
    else:
        text = raw
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, source)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise ConfigError(_describe_yaml_error(exc, source)) from None
    except RecursionError:
        raise ConfigError(f"{source}: nesting too deep to be a config.") from None
    finally:
        loader.dispose()


def parse_scalar(text: str, source: str) -> Any:
    """Parse a ``--set`` value the way YAML would read it (``3`` is an int, ``true`` a bool)."""
    return load_yaml_text(text, source) if text.strip() else ""
