"""A Ctrl-C that Python hands on wrapped is still a Ctrl-C (`interrupt_behind`).

Seen in a clean-clone `make test`: Ctrl-C while pydantic defined its classes, in the
first second of `jupcron`, came out of the import as ``RuntimeError: Error calling
__set_name__ on 'cached_property' instance`` (Python 3.11 wraps an exception from
``__set_name__``), and the guard for a `KeyboardInterrupt` let its traceback through.
"""

from __future__ import annotations

import pytest

from jupcron.cli.interrupt import Terminated, interrupt_behind


class _Strikes:
    """A descriptor whose ``__set_name__`` is where the signal lands."""

    def __init__(self, signal: KeyboardInterrupt) -> None:
        self.signal = signal

    def __set_name__(self, owner: type, name: str) -> None:
        raise self.signal


def _while_handling(first: BaseException, then: Exception, *, chained: bool) -> None:
    """Raise `then` while `first` is handled: caused by it, or (``from None``) with it
    only as its context."""
    try:
        raise first
    except BaseException as exc:
        if chained:
            raise then from exc
        raise then from None


@pytest.mark.parametrize("signal", [KeyboardInterrupt(), Terminated()])
def test_an_interrupt_in_a_class_definition_is_found_however_python_hands_it_on(
    signal: KeyboardInterrupt,
) -> None:
    with pytest.raises((RuntimeError, KeyboardInterrupt)) as raised:  # 3.11 / 3.12 on
        type("Defined", (), {"field": _Strikes(signal)})
    assert interrupt_behind(raised.value) is signal


def test_an_error_raised_while_handling_one_counts_as_it() -> None:
    signal = KeyboardInterrupt()
    with pytest.raises(OSError, match="cleanup failed") as raised:
        _while_handling(signal, OSError("cleanup failed"), chained=False)
    assert interrupt_behind(raised.value) is signal


def test_an_error_of_its_own_is_not_an_interrupt() -> None:
    with pytest.raises(RuntimeError, match="worse") as raised:
        _while_handling(ValueError("bad"), RuntimeError("worse"), chained=True)
    assert interrupt_behind(raised.value) is None
    assert interrupt_behind(ValueError("alone")) is None
