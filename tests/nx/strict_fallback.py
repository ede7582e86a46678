"""A pytest plugin for networkx's own tests (``-p strict_fallback``, see run_networkx_tests.sh):
fallback to networkx stays on for the functions bspgraph does not serve (the helpers a test
calls to build its graphs), and is off for the ones it serves, so that each refusal of a served
function (NotImplementedError) shows as an xfail with its reason, never as a silent pass."""

from networkx.utils.backends import _dispatchable

from bspgraph.nx import ALGORITHMS

_original = _dispatchable._convert_and_call_for_tests


def _strict(self, backend_name, args, kwargs, *, fallback_to_nx=False):
    if self.name in ALGORITHMS:
        fallback_to_nx = False
    return _original(self, backend_name, args, kwargs, fallback_to_nx=fallback_to_nx)


_dispatchable._convert_and_call_for_tests = _strict
