"""``auto``'s collector policy: paused while preprocessing, frozen after, restored on exit."""

from __future__ import annotations

import gc

import pytest

from symreach.solvers.heap import CheckHeap


@pytest.fixture(autouse=True)
def _thawed():
    gc.unfreeze()
    enabled = gc.isenabled()
    gc.enable()
    yield
    gc.unfreeze()
    (gc.enable if enabled else gc.disable)()


def test_paused_then_frozen_then_restored():
    with CheckHeap() as heap:
        assert not gc.isenabled() and gc.get_freeze_count() == 0
        heap.settle()
        assert gc.isenabled() and gc.get_freeze_count() > 0
        heap.settle()  # once only
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_check_decided_before_settling_only_resumes_the_collector():
    with pytest.raises(RuntimeError):
        with CheckHeap():
            raise RuntimeError("preprocessing failed")
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_disabled_collector_stays_disabled():
    gc.disable()
    with CheckHeap() as heap:
        heap.settle()
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_an_earlier_freeze_is_kept():
    """The command line freezes its start-up: undoing that would undo its freeze too."""
    gc.freeze()
    frozen = gc.get_freeze_count()
    with CheckHeap() as heap:
        heap.settle()
    assert gc.get_freeze_count() >= frozen > 0


def test_nested_checks_unfreeze_once_the_last_ends():
    """Checks in threads of one process share the heap: the first to end must not thaw
    what the other still relies on, the last one thaws everything."""
    outer, inner = CheckHeap(), CheckHeap()
    with outer:
        outer.settle()
        with inner:
            inner.settle()
        assert gc.get_freeze_count() > 0   # the outer check still runs
    assert gc.get_freeze_count() == 0


def test_collector_off_restores_what_it_found():
    from symreach.solvers.heap import collector_off

    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        with pytest.raises(RuntimeError):
            with collector_off():
                assert not gc.isenabled()
                raise RuntimeError("the search failed")
        assert gc.isenabled() is enabled
