"""Render conversations to prompt token ids with the right chat template, tools included.

Many small models (SmolLM2 among them) ship a chat template that silently drops ``tools``. When
tools are given and the model's template ignores them, a tool-aware template is used instead:
``builtin:chatml-tools`` (ours, for models that speak ChatML, as SmolLM2 does), TRL's templates as
``trl:NAME`` (read from the installed trl package, e.g. ``trl:qwen2_5``), or a ``.jinja`` file.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from spade_core.errors import ConfigError

BUILTIN_TEMPLATES: dict[str, str] = {"chatml-tools": "chatml_tools.jinja"}
_PROBE_TOOL = {
    "type": "function",
    "function": {"name": "spade_probe_tool_3f9c", "description": "probe",
                 "parameters": {"type": "object", "properties": {}}},
}
#: Arguments of ``apply_chat_template`` itself, which template kwargs may not replace.
RESERVED_TEMPLATE_KWARGS = frozenset({
    "conversation", "tools", "documents", "chat_template", "add_generation_prompt",
    "continue_final_message", "tokenize", "padding", "truncation", "max_length",
    "return_tensors", "return_dict", "return_assistant_tokens_mask", "tokenizer_kwargs"})


def template_kwargs(*layers: Mapping[str, object] | None,
                    where: str = "chat_template_kwargs") -> dict[str, object]:
    """The chat template keyword arguments of ``layers`` merged left to right (later ones win);
    a name that ``apply_chat_template`` uses itself is a :class:`ConfigError`."""
    merged: dict[str, object] = {}
    for layer in layers:
        merged.update(layer or {})
    clash = sorted(RESERVED_TEMPLATE_KWARGS.intersection(merged))
    if clash:
        raise ConfigError(f"{where}: {', '.join(clash)} are arguments of apply_chat_template "
                          f"itself, not template variables; set them elsewhere or rename them")
    return merged


def load_template(ref: str, where: str = "chat_template") -> str:
    """The Jinja text of template ``ref``: ``builtin:NAME``, ``trl:NAME``, a file path, or the
    template text itself (anything containing ``{%`` or ``{{``)."""
    if ref.startswith("builtin:"):
        name = ref.removeprefix("builtin:")
        if name not in BUILTIN_TEMPLATES:
            raise ConfigError(f"{where}: unknown built-in template {name!r}; "
                              f"built-in: {', '.join('builtin:' + n for n in BUILTIN_TEMPLATES)}")
        return (resources.files("plugins.backends") / "templates" / BUILTIN_TEMPLATES[name]).read_text()
    if ref.startswith("trl:"):
        name = ref.removeprefix("trl:")
        try:
            folder = resources.files("trl") / "chat_templates"
        except ModuleNotFoundError as exc:
            raise ConfigError(f"{where}: {ref!r} needs the trl package, which is not installed") from exc
        candidate = folder / f"{name}.jinja"
        if not candidate.is_file():
            have = sorted(p.name.removesuffix(".jinja") for p in folder.iterdir()
                          if p.name.endswith(".jinja"))
            raise ConfigError(f"{where}: trl ships no chat template {name!r}; it has: {', '.join(have)}")
        return candidate.read_text()
    if "{%" in ref or "{{" in ref:
        return ref
    path = Path(ref).expanduser()
    if path.is_file():
        return path.read_text()
    raise ConfigError(f"{where}: {ref!r} is not builtin:NAME, trl:NAME, an existing .jinja file, "
                      f"or a Jinja template")


def _speaks_chatml(tokenizer: Any) -> bool:
    vocab = tokenizer.get_vocab()
    return "<|im_start|>" in vocab and "<|im_end|>" in vocab


class ChatFormatter:
    """Turns conversations (OpenAI-style message dicts) into prompt text and token ids.

    :param tokenizer: a Hugging Face tokenizer.
    :param chat_template: replaces the model's own template for every prompt (a ref for
        :func:`load_template`), or ``None`` to keep the model's.
    :param tool_chat_template: template used when ``tools`` are given and the main template ignores
        them: ``"auto"`` (``builtin:chatml-tools`` for ChatML models, else an error) or a ref.
    :param chat_template_kwargs: variables every prompt is rendered with (e.g.
        ``{"enable_thinking": False}``); a call's own go over them.
    """

    def __init__(self, tokenizer: Any, chat_template: str | None = None,
                 tool_chat_template: str = "auto",
                 chat_template_kwargs: Mapping[str, Any] | None = None) -> None:
        self.tokenizer = tokenizer
        self.template_kwargs = template_kwargs(chat_template_kwargs)
        self.template = load_template(chat_template) if chat_template else tokenizer.chat_template
        if not self.template:
            raise ConfigError("chat_template: the model has no chat template; set the backend "
                              "option chat_template (e.g. builtin:chatml-tools for ChatML models)")
        self._tool_choice = tool_chat_template
        self._tool_template: str | None = None

    def _renders_tools(self, template: str) -> bool:
        try:
            text = self.tokenizer.apply_chat_template(
                [{"role": "user", "content": "hi"}], tools=[_PROBE_TOOL], chat_template=template,
                tokenize=False, add_generation_prompt=True)
        except Exception:  # noqa: BLE001 - a template that raises on tools does not support them
            return False
        return _PROBE_TOOL["function"]["name"] in text

    def tool_template(self) -> str:
        """The template used for prompts with tools (chosen once, then cached)."""
        if self._tool_template is None:
            if self._tool_choice != "auto":
                self._tool_template = load_template(self._tool_choice, "tool_chat_template")
            elif self._renders_tools(self.template):
                self._tool_template = self.template
            elif _speaks_chatml(self.tokenizer):
                self._tool_template = load_template("builtin:chatml-tools")
            else:
                raise ConfigError(
                    "tool_chat_template: the model's chat template ignores tools and the model does "
                    "not use ChatML tokens; set tool_chat_template to a template for this model "
                    "(a .jinja file or trl:NAME)")
        return self._tool_template

    def render(self, conversation: list[dict[str, Any]],
               tools: list[dict[str, Any]] | None = None,
               chat_template_kwargs: Mapping[str, Any] | None = None) -> str:
        """The prompt text, ending with the assistant turn's opening. ``chat_template_kwargs``
        go over the formatter's own for this prompt."""
        template = self.tool_template() if tools else self.template
        extra = template_kwargs(self.template_kwargs, chat_template_kwargs)
        return self.tokenizer.apply_chat_template(
            conversation, tools=tools or None, chat_template=template, tokenize=False,
            add_generation_prompt=True, **extra)

    def encode(self, conversation: list[dict[str, Any]],
               tools: list[dict[str, Any]] | None = None,
               chat_template_kwargs: Mapping[str, Any] | None = None) -> list[int]:
        """The prompt's token ids (the template already holds the special tokens)."""
        text = self.render(conversation, tools, chat_template_kwargs)
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def stop_token_ids(self, model_eos: int | list[int] | None = None) -> list[int]:
        """Token ids that end a completion: the tokenizer's EOS plus the model's configured ones."""
        ids: list[int] = []
        for value in (self.tokenizer.eos_token_id, model_eos):
            for item in (value if isinstance(value, list) else [value]):
                if item is not None and item not in ids:
                    ids.append(int(item))
        if _speaks_chatml(self.tokenizer):
            end = self.tokenizer.convert_tokens_to_ids("<|im_end|>")
            if end not in ids:
                ids.append(end)
        if not ids:
            raise ConfigError("the tokenizer defines no EOS token; completions could not stop")
        return ids
