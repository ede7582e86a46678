"""Look up a swappable part (partitioner, communicator) by name or take an instance as it is."""

from __future__ import annotations

from typing import Any


def lookup(registry: dict[str, type], name_or_instance: Any, base: type, kind: str) -> Any:
    """``name_or_instance`` if it is a ``base``, else a new ``registry[name_or_instance]()``.

    Raises
    ------
    ValueError
        An unknown name; the message lists the valid ones.
    """
    if isinstance(name_or_instance, base):
        return name_or_instance
    if isinstance(name_or_instance, str) and name_or_instance in registry:
        return registry[name_or_instance]()
    expected = ", ".join(repr(n) for n in sorted(registry))
    raise ValueError(
        f"unknown {kind} {name_or_instance!r}; expected one of {expected}, "
        f"or a {base.__name__} instance"
    )
