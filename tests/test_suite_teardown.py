"""Issue 28.10: a green run ended with a hypothesis ``KeyboardInterrupt`` traceback.

Under pytest-xdist, execnet sends a worker SIGINT when it has not exited 5 s after the
controller's shutdown; the worker was then in pytest's final ``gc.collect()`` over every
compiled JAX object of its files, and the SIGINT landed in hypothesis' gc callback
(``PytestUnraisableExceptionWarning``). ``tests/conftest.py`` collects at the session's
finish, before the worker reports, and freezes the survivors, so that last collection is
quick.
"""

import gc


def test_session_finish_collects_and_freezes(request):
    hooks = [
        p
        for p in request.config.pluginmanager.get_plugins()
        if str(getattr(p, "__file__", "")).endswith("conftest.py")
        and hasattr(p, "pytest_sessionfinish")
    ]
    assert hooks, "tests/conftest.py has no pytest_sessionfinish"
    impl = hooks[0].pytest_sessionfinish
    # pluggy's marker: before xdist's hook wrapper sends "workerfinished"
    assert impl.pytest_impl["tryfirst"], "it must run before the worker reports 'finished'"
    try:
        impl(request.session)
        assert gc.get_freeze_count() > 0  # the survivors are out of every later collection
    finally:
        gc.unfreeze()
