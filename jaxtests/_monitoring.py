"""JAX's compile events, counted: how many programs a piece of work traced, compiled or loaded."""

import typing

__all__ = ["PROGRAM_LOADED", "CompileCounter"]

PROGRAM_LOADED = "/jaxtests/programs/loaded"  # event of jaxtests._aot per stored program loaded


class CompileCounter:
    """Counts JAX's traces and backend compilations while active (``with``).

    ``traces`` counts jaxpr traces (a jit cache miss), ``compiles`` XLA
    backend compile events (JAX reports a load from its persistent cache as
    one too), ``hits`` those loads, and ``programs`` the executables
    :mod:`jaxtests._aot` loaded from its own folder (no compile event). Uses
    :mod:`jax.monitoring` events; one pair of listeners serves every counter.
    """

    _active: typing.ClassVar[list] = []
    _registered = False

    def __init__(self):
        self.traces = 0
        self.compiles = 0
        self.hits = 0
        self.programs = 0

    @classmethod
    def _listen(cls, event, duration, **kwargs):
        for counter in cls._active:
            if event == "/jax/core/compile/jaxpr_trace_duration":
                counter.traces += 1
            elif event == "/jax/core/compile/backend_compile_duration":
                counter.compiles += 1

    @classmethod
    def _listen_events(cls, event, **kwargs):
        for counter in cls._active:
            if event == "/jax/compilation_cache/cache_hits":
                counter.hits += 1
            elif event == PROGRAM_LOADED:
                counter.programs += 1

    def __enter__(self):
        import jax

        if not CompileCounter._registered:
            jax.monitoring.register_event_duration_secs_listener(CompileCounter._listen)
            jax.monitoring.register_event_listener(CompileCounter._listen_events)
            CompileCounter._registered = True
        CompileCounter._active.append(self)
        return self

    def __exit__(self, *exc):
        CompileCounter._active.remove(self)
        return False
