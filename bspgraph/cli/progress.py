"""The progress line of a run: superstep, frontier and time, from the enactor's records."""

from __future__ import annotations

import sys

from ..enactor import watching


class Progress:
    """A context in which every superstep (one device or several) moves a tqdm line on ``stream``: the
    superstep, its output frontier and the time so far (``bspgraph.enactor.watching`` feeds it;
    nothing polls). Shown only when ``stream`` is a terminal, tqdm is installed and not
    ``quiet``; tqdm's ``delay`` keeps a run shorter than ``delay`` seconds silent."""

    def __init__(
        self,
        what: str,
        *,
        stream=None,
        delay: float = 2.0,
        quiet: bool = False,
        mininterval: float = 0.1,
    ):
        self.what, self.stream, self.delay = what, stream or sys.stderr, delay
        self.mininterval = mininterval
        try:
            from tqdm import tqdm
        except ImportError:
            tqdm = None
        isatty = getattr(self.stream, "isatty", None)
        self.active = tqdm is not None and not quiet and bool(isatty and isatty())
        self._tqdm, self._bar, self._watch = tqdm, None, None

    def __enter__(self) -> Progress:
        if self.active:
            self._bar = self._tqdm(
                desc=self.what,
                unit=" supersteps",
                file=self.stream,
                delay=self.delay,
                leave=False,
                dynamic_ncols=True,
                mininterval=self.mininterval,
            )
            self._watch = watching(self._superstep)
            self._watch.__enter__()
        return self

    def _superstep(self, iteration: int, step) -> None:
        self._bar.set_postfix_str(
            f"superstep {iteration}, frontier {step.frontier:,}", refresh=False
        )
        self._bar.update(1)

    def __exit__(self, *exc) -> None:
        if self._watch is not None:
            self._watch.__exit__(*exc)
            self._bar.close()
