"""``python -m attnbook`` and the ``attnbook`` command (:func:`attnbook.book.cli.main`)."""

import os
import sys


def _interrupt_again(unraisable, default=sys.unraisablehook):
    """Ctrl-C (or SIGTERM in a run) that lands while a finalizer runs (``__del__``) is swallowed
    by Python, which prints "Exception ignored in ... Traceback" and goes on as if it had not
    come; it is delivered again, to the same handler, once this hook has returned (sent from
    the main thread, the handler would run, and be swallowed, in here)."""
    if not issubclass(unraisable.exc_type, KeyboardInterrupt):
        return default(unraisable)
    import _thread
    import signal

    terminated = unraisable.exc_type.__name__ == "Terminated"  # attnbook.book.runner's SIGTERM
    try:
        _thread.start_new_thread(_send_when_out, (_thread.get_ident(), _interrupt_again.__code__,
                                                  signal.SIGTERM if terminated else signal.SIGINT))
    except RuntimeError:  # the interpreter is shutting down: there is nothing left to stop
        pass


def _send_when_out(main, hook, signum):
    import _thread
    import time

    while (frame := sys._current_frames().get(main)) is not None and frame.f_code is hook:
        time.sleep(0.001)
    _thread.interrupt_main(signum)


INTERRUPTED = "attnbook: interrupted before anything ran"


def _end_while_loading(signum, frame):
    """Ctrl-C while the command line loads ends the process here and now, with one line:
    nothing has run or been written yet. Raised as KeyboardInterrupt, it can land inside an
    extension's own import, which swallows it (torch's C start-up importing numpy prints
    nothing and leaves numpy half-imported), and the command then fails later with a
    traceback about a missing ``numpy.matrix``."""
    os.write(2, (INTERRUPTED + "\n").encode())
    os._exit(130)


def console() -> int:
    sys.unraisablehook = _interrupt_again
    import signal

    # a SIGINT that the shell made ignored (a background job) stays ignored
    loading = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if loading:
        signal.signal(signal.SIGINT, _end_while_loading)
    try:
        from .book.cli import main
    except KeyboardInterrupt:  # a handler of the caller's own raised it: one line, as later
        print(INTERRUPTED, file=sys.stderr)
        return 130
    finally:
        if loading:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    return main()


if __name__ == "__main__":
    sys.exit(console())
