"""The registry of kernels, keyed by (functor, semiring or operation name, backend name, direction).

A built-in functor has a generic, vectorised ``__call__`` that is right on every backend; a
fused kernel does the same work in one pass where a backend has one. The module that holds
a kernel registers it where it defines it; an operator or functor asks for it by name::

    @fused.register("visit_unvisited", "cupy", "push")
    def visit_push(graph, ids, edges, depth, value, parent): ...

    kernel = fused.lookup("visit_unvisited", graph.backend, "push")  # None: the generic path

Directions: "push" (over a frontier's out-edges), "pull" (each candidate over its in-edges),
"repeat" (push level after level from its own output; it returns None where it does not
start) and "step" (a whole step of another shape: a vertex update, a union-find pass, an
intersection); "op" holds a backend's array operations, called through :mod:`.ops` (backend
first). A kernel's signature is its name's business (the functor or operation that calls it).
Registration happens on import; ``bspgraph`` imports every kernel module.
"""

from __future__ import annotations

from collections.abc import Callable

DIRECTIONS = ("push", "pull", "repeat", "step", "op")
REGISTRY: dict[tuple[str, str, str], Callable] = {}


def register(name: str, backends: str | tuple[str, ...], direction: str):
    """A decorator that registers a kernel under ``name`` for each of ``backends`` (a backend
    name or a tuple of them) and ``direction``; it returns the kernel unchanged.

    Raises
    ------
    ValueError
        An unknown ``direction``, or another kernel already registered under a key.
    """
    _check(direction, "register")
    names = (backends,) if isinstance(backends, str) else tuple(backends)

    def add(kernel: Callable) -> Callable:
        for backend in names:
            key = (name, backend, direction)
            known = REGISTRY.get(key)
            if known is not None and _where(known) != _where(kernel):
                raise ValueError(f"fused.register{key}: {_where(known)} is registered already")
            REGISTRY[key] = kernel
        return kernel

    return add


def lookup(name, backend, direction: str) -> Callable | None:
    """The kernel registered for ``name`` (a string, or a functor with a ``name``), ``backend``
    (a name or a Backend) and ``direction``; None when there is none.

    Raises
    ------
    ValueError
        An unknown ``direction``.
    """
    _check(direction, "lookup")
    return REGISTRY.get((getattr(name, "name", name), getattr(backend, "name", backend), direction))


def registered() -> list[tuple[str, str, str]]:
    """Every key with a kernel, sorted."""
    return sorted(REGISTRY)


def _check(direction: str, where: str) -> None:
    if direction not in DIRECTIONS:
        raise ValueError(f"fused.{where}(direction={direction!r}): expected one of {DIRECTIONS}")


def _where(kernel: Callable) -> str:
    """``module.qualname`` of ``kernel``: the same after a module is reloaded."""
    return f"{kernel.__module__}.{kernel.__qualname__}"
