"""Load a config file, apply ``--set`` overrides, validate it and resolve its plugins.

Validation happens in two passes, both before anything heavy is imported: the top-level schema,
then each selected component's options against that plugin's own schema. All problems found are
reported together in one paragraph: a core section's errors do not hide the components' option
errors, and an unknown option does not hide the errors of the component's other options.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from spade_core.components import Component, Registry
from spade_core.config.reachable import async_problems, status_rollout_problems
from spade_core.config.schema import SECTION_KINDS, Selection, SpadeConfig
from spade_core.config.yaml_safe import load_yaml_text, parse_scalar
from spade_core.errors import ConfigError


@dataclass
class ResolvedComponent:
    """One config section's selected component and its validated options."""

    section: str
    component: Component
    options: Any

    def options_dict(self) -> dict[str, Any]:
        if isinstance(self.options, BaseModel):
            return self.options.model_dump(mode="json")
        return TypeAdapter(type(self.options)).dump_python(self.options, mode="json")


@dataclass
class ResolvedConfig:
    """A validated config with every component resolved."""

    source: str
    config: SpadeConfig
    components: dict[str, ResolvedComponent] = field(default_factory=dict)
    families: list[ResolvedComponent] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The fully resolved config (defaults filled in), as written into the run directory."""
        data = self.config.model_dump(mode="json")
        for section, rc in self.components.items():
            *nodes, key = section.split(".")  # ``hints.backend`` lives inside ``hints``
            parent = data
            for node in nodes:
                parent = parent[node]
            parent[key] = {"plugin": rc.component.name, "options": rc.options_dict()}
        data["families"] = [
            {"plugin": rc.component.name, "options": rc.options_dict()} for rc in self.families
        ]
        return data

    def run_dir(self, now: float | None = None) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
        run = self.config.run
        try:
            return Path(run.dir.format(name=run.name, timestamp=stamp))
        except (KeyError, IndexError, ValueError) as exc:
            raise ConfigError(
                f"{self.source}: run.dir: {run.dir!r} has a bad placeholder ({exc}); "
                "allowed placeholders are {name} and {timestamp}."
            ) from None


def read_config_file(path: str | Path) -> Any:
    """Read and parse a config file into plain data."""
    path = Path(path)
    source = str(path)
    if not path.exists():
        raise ConfigError(f"{source}: no such config file.")
    if not path.is_file():
        raise ConfigError(f"{source}: not a regular file; give the path of a YAML config.")
    with path.open("rb") as fh:
        raw = fh.read(2_000_000)
    return load_yaml_text(raw, source)


def _switched_sections(data: dict[str, Any], overrides: list[str]) -> list[tuple[str, ...]]:
    """The sections whose ``plugin`` the overrides change to another name (``--set
    estimator.plugin=gap``), as key paths."""
    switched = []
    for item in overrides:
        key, sep, raw_value = item.partition("=")
        parts = tuple(key.strip().split("."))
        if not sep or len(parts) < 2 or parts[-1] != "plugin":
            continue
        node: Any = data
        for part in parts[:-1]:
            if isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            elif isinstance(node, dict):
                node = node.get(part)
            else:
                node = None
        current = node if isinstance(node, str) else (
            node.get("plugin") if isinstance(node, dict) else None)
        if current is not None and str(current) != raw_value.strip():
            switched.append(parts[:-1])
    return switched


def apply_overrides(data: dict[str, Any], overrides: list[str], source: str) -> None:
    """Apply ``--set a.b=value`` overrides in place; values are read as YAML scalars.

    An override that selects another plugin for a section (``--set estimator.plugin=gap``) drops
    the options the config gave the previous plugin: they belong to it. Options set by the same
    overrides (``--set estimator.options.floor_negative=false``, before or after) apply to the
    new plugin."""
    for parts in _switched_sections(data, overrides):
        node: Any = data
        for part in parts:
            node = node[int(part)] if isinstance(node, list) else node.get(part)
        if isinstance(node, dict):
            node.pop("options", None)
    for item in overrides:
        key, sep, raw_value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set {item!r}: expected KEY.PATH=VALUE, e.g. --set run.seed=3.")
        parts = key.strip().split(".")
        value = parse_scalar(raw_value, f"--set {key}")
        node: Any = data
        for depth, part in enumerate(parts[:-1]):
            selects = parts[depth + 1] in ("plugin", "options")
            if isinstance(node, list) and part.isdigit() and int(part) < len(node):
                if selects and isinstance(node[int(part)], str):  # ``families: [name]``
                    node[int(part)] = {"plugin": node[int(part)]}
                node = node[int(part)]
                continue
            if not isinstance(node, dict):
                where = ".".join(parts[:depth]) or "the top level"
                raise ConfigError(f"--set {key}: {where} is not a mapping, cannot set {part!r}.")
            if isinstance(node.get(part), str) and (
                    selects or (depth == 0 and part in SECTION_KINDS)):
                node[part] = {"plugin": node[part]}  # expand the ``section: name`` shorthand
            node = node.setdefault(part, {})
        last = parts[-1]
        if isinstance(node, list) and last.isdigit() and int(last) < len(node):
            node[int(last)] = value
        elif isinstance(node, dict):
            node[last] = value
        else:
            raise ConfigError(f"--set {key}: its parent is not a mapping.")


def _format_loc(prefix: str, loc: tuple[Any, ...]) -> str:
    parts = [prefix] if prefix else []
    parts += [str(p) for p in loc]
    return ".".join(parts) or "(top level)"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _validation_problems(exc: ValidationError, prefix: str, model: type | None) -> list[str]:
    problems = []
    for err in exc.errors(include_url=False):
        loc = tuple(p for p in err["loc"] if not str(p).startswith("function-"))
        where = _format_loc(prefix, loc)
        if err["type"] == "extra_forbidden":
            allowed = _allowed_keys(model, loc[:-1])
            hint = f"; allowed keys: {', '.join(allowed)}" if allowed else ""
            problems.append(f"{where}: unknown key{hint}")
        elif err["type"] == "missing":
            problems.append(f"{where}: required key is missing")
        else:
            problems.append(f"{where}: {err['msg']} (got {_short(err.get('input'))})")
    return problems


def _allowed_keys(model: type | None, loc: tuple[Any, ...]) -> list[str]:
    """Field names of the (nested) model at ``loc``, for "unknown key" messages."""
    current = model
    for part in loc:
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return []
        if isinstance(part, int):
            continue
        info = current.model_fields.get(str(part))
        if info is None:
            return []
        current = info.annotation
        args = getattr(current, "__args__", None)
        if args and not (isinstance(current, type) and issubclass(current, BaseModel)):
            current = next((a for a in args if isinstance(a, type) and issubclass(a, BaseModel)),
                           None)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return sorted(current.model_fields)
    return []


def _fail(source: str, problems: list[str]) -> ConfigError:
    problems = [p.rstrip(".") for p in problems]
    if len(problems) == 1:
        return ConfigError(f"{source}: {problems[0]}.")
    listed = "; ".join(problems)
    return ConfigError(f"{source}: {len(problems)} problems: {listed}.")


def _validate_options(rc_section: str, component: Component, options: dict[str, Any]) -> Any:
    """The validated options; raises :class:`_OptionProblems` listing every problem (unknown
    options and the errors of the known ones together)."""
    model = component.options
    if model is None:
        if options:
            raise _OptionProblems([f"{rc_section}: {component.name!r} takes no options, got "
                                   f"{', '.join(sorted(options))}"])
        return {}
    if isinstance(model, type) and issubclass(model, BaseModel):
        unknown = sorted(set(options) - set(model.model_fields))
        problems = [f"{rc_section}.{key}: unknown option for {component.name!r}; allowed: "
                    f"{', '.join(sorted(model.model_fields)) or 'none'}" for key in unknown]
        known = {k: v for k, v in options.items() if k not in unknown}
        try:
            validated = model.model_validate(known)
        except ValidationError as exc:
            problems += _validation_problems(exc, rc_section, model)
        if problems:
            raise _OptionProblems(problems)
        return validated
    try:
        return TypeAdapter(model).validate_python(options)
    except ValidationError as exc:
        raise _OptionProblems(_validation_problems(exc, rc_section, None)) from None


class _OptionProblems(Exception):
    """Every problem of one component's options."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def _selections(data: dict[str, Any], config: SpadeConfig | None
                ) -> list[tuple[str, str, Selection]]:
    """Every component selection as ``(section, kind, selection)``: from the validated config,
    or, when a core section failed validation, from the raw data of each section that is itself
    well-formed (so that its plugin options are still checked and reported)."""
    backend_kind = SECTION_KINDS["backend"]
    if config is not None:
        out: list[tuple[str, str, Selection | None]] = []
        for section, kind in SECTION_KINDS.items():
            if section == "families":
                out += [(f"families.{i}", kind, s) for i, s in enumerate(config.families)]
            else:
                out.append((section, kind, getattr(config, section)))
        if config.hints.backend is not None:  # a second generation backend, for hints only
            out.append(("hints.backend", backend_kind, config.hints.backend))
        if config.validation.llm.backend is not None:  # the LLM validator's own backend
            out.append(("validation.llm.backend", backend_kind, config.validation.llm.backend))
        return out

    def parse(raw: Any) -> Selection | None:
        try:
            return Selection.model_validate({"plugin": raw} if isinstance(raw, str) else raw)
        except ValidationError:
            return None  # its problem is among the core section's

    raw_families = data.get("families")
    if isinstance(raw_families, (str, dict)):
        raw_families = [raw_families]
    out = []
    for section, kind in SECTION_KINDS.items():
        if section == "families":
            out += [(f"families.{i}", kind, parse(raw)) for i, raw in
                    enumerate(raw_families if isinstance(raw_families, list) else [])]
        elif section in data:
            out.append((section, kind, parse(data[section])))
    hints = data.get("hints")
    if isinstance(hints, dict) and hints.get("backend") is not None:
        out.append(("hints.backend", backend_kind, parse(hints["backend"])))
    llm = (data.get("validation") or {}).get("llm") if isinstance(data.get("validation"),
                                                                   dict) else None
    if isinstance(llm, dict) and llm.get("backend") is not None:
        out.append(("validation.llm.backend", backend_kind, parse(llm["backend"])))
    return [(section, kind, sel) for section, kind, sel in out if sel is not None]


def resolve_config(data: Any, registry: Registry, source: str) -> ResolvedConfig:
    """Validate plain config data and resolve every component section against ``registry``."""
    if data is None:
        raise ConfigError(f"{source}: the config is empty; see configs/quickstart.yaml for one "
                          "that works.")
    if not isinstance(data, dict):
        raise ConfigError(
            f"{source}: the top level must be a mapping of sections (run, model, loop, corpus, "
            f"designer, families, sandbox, estimator, memory, backend, trainer), got "
            f"{type(data).__name__} {_short(data)}."
        )
    bad_keys = [k for k in data if not isinstance(k, str)]
    if bad_keys:
        raise ConfigError(f"{source}: top-level keys must be strings, got {_short(bad_keys[0])}.")
    problems: list[str] = []
    config: SpadeConfig | None = None
    try:
        config = SpadeConfig.model_validate(data)
    except ValidationError as exc:  # reported with every component's problems below
        problems += _validation_problems(exc, "", SpadeConfig)

    resolved = ResolvedConfig(source=source, config=config)  # type: ignore[arg-type]
    for section, kind, selection in _selections(data, config):
        try:
            component = registry.resolve(kind, selection.plugin, f"{section}.plugin")
            options = _validate_options(f"{section}.options", component, selection.options)
        except ConfigError as exc:
            problems.append(str(exc))
            continue
        except _OptionProblems as exc:
            problems += exc.problems
            continue
        rc = ResolvedComponent(section=section, component=component, options=options)
        if section.startswith("families."):
            resolved.families.append(rc)
        else:
            resolved.components[section] = rc
    memory = resolved.components.get("memory")
    if config is not None and memory is not None:
        problems.extend(status_rollout_problems(config, memory.options))
    if config is not None:
        problems.extend(async_problems(config, resolved))
    names = [rc.component.name for rc in resolved.families]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        problems.append(f"families: {', '.join(dupes)} selected more than once")
    if problems:
        raise _fail(source, problems)
    resolved.run_dir()  # checks the run.dir placeholders now, not at run time
    return resolved


def load_config(
    path: str | Path, registry: Registry, overrides: list[str] | None = None
) -> ResolvedConfig:
    """Read, override, validate and resolve the config at ``path``."""
    source = str(path)
    data = read_config_file(path)
    if overrides:
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: the top level must be a mapping to apply --set to.")
        apply_overrides(data, overrides, source)
    return resolve_config(data, registry, source)
