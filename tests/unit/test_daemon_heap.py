"""The daemon's heap after start: kept out of the cycle collector's full passes."""

from __future__ import annotations

import gc
import weakref

from jupcron.service.daemon import settle_heap


class _Node:
    def __init__(self) -> None:
        self.me = self


def test_what_start_built_is_frozen_and_what_comes_later_is_still_collected() -> None:
    built = {"runtime": [1, 2]}
    try:
        settle_heap()
        assert gc.get_freeze_count() > 0
        assert not any(o is built for o in gc.get_objects())  # out of every generation
        later = _Node()  # a cycle made after the start: garbage once dropped
        gone = weakref.ref(later)
        del later
        gc.collect()
        assert gone() is None
    finally:
        gc.unfreeze()
    assert gc.get_freeze_count() == 0
    assert any(o is built for o in gc.get_objects())


def test_settling_again_frees_cycles_that_were_frozen() -> None:
    """A reload drops objects the start built (and froze): the next settle collects them."""
    old = _Node()  # built before a settle (as the start's runtime), frozen with it
    gone = weakref.ref(old)
    try:
        settle_heap()
        del old  # dropped by a reload: a cycle among frozen objects
        gc.collect()
        assert gone() is not None  # frozen: a full pass does not see it
        settle_heap()
        assert gone() is None
    finally:
        gc.unfreeze()
