"""How a tokenizer.json's parts are read: a `Sequence`'s steps, strict true/false options, and
the one refusal message, naming the file and the component, that every unsupported part gets
(hf_import.py and hf_added.py share them)."""

from __future__ import annotations

from typing import Any

from .validate import TokenizerFileError


def sequence_steps(step: Any, key: str, source: str, where: str) -> list[Any]:
    """The steps of a `Sequence` (its list under `key`), or the step itself as the only one."""
    if not (isinstance(step, dict) and step.get("type") == "Sequence"):
        return [step]
    steps = step.get(key)
    if not isinstance(steps, list):
        refuse(source, where, kind(step))
    return steps


def refuse(source: str, where: str, what: str, why: str = "") -> None:
    raise TokenizerFileError(
        f"{source}: {where} {what} is not supported{': ' + why if why else ''}; only byte-level BPE "
        "files whose every step our tokenizer reproduces exactly are loaded (see tokenizer/hf_import.py)"
    )


def flag(
    step: dict[str, Any], key: str, default: bool, source: str, where: str, *, nullable: bool = False
) -> bool:
    """A true/false option: HF refuses any other value, where Python's truth read "false" as true.
    `nullable`: HF's optional flags (the model's) take null as the default."""
    value = step.get(key, default)
    if value is None and nullable:
        return default
    if not isinstance(value, bool):
        raise TokenizerFileError(f"{source}: {where}.{key} is {repr(value)[:40]}; it must be true or false")
    return value


def kind(step: Any) -> str:
    return repr(step.get("type")) if isinstance(step, dict) else repr(step)[:40]
