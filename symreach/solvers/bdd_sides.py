"""Which side of a bidirectional BDD search takes the next image.

Deterministic: every decision reads BDD sizes and counts of images, never
time, so two runs take the same steps.

The base rule (``pick_side``) gives the next image to the side with the
least work so far (the sum of its squared reached-set sizes over its
images). On pebbling pyramids that rule lets the forward side start its
second sweep, which explodes (pyramid h = 12, k = 13: 139k -> 445k nodes in
4 images), while the backward side would have finished alone. The *brake*
(``SidePolicy``) pauses such a side: after its first sweep, a side whose
reached set more than doubled within its current sweep while being more
than four times the other side's is paused, and resumes only once the
other side's set outgrows twice the size at which it was paused (then both
sides are large and the work rule is again the better guess; a run pauses
at most once, so the sides cannot pause each other in turn). This
reproduces "forward one cheap sweep, then backward" on pyramids without a
pebbling-specific rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# a sweep "explodes" when the set grows by half within it ...
GROWTH = 1.5
# ... while being more than twice the other side's set
LEAD = 2
# the paused side resumes when the other side's set exceeds this many
# times the paused side's set at the moment of the pause
RESUME = 2


def pick_side(directions: list[str], work: dict[str, int]) -> str:
    """The side to step next: the one with the least work so far (ties: the
    first). Work is counted in BDD nodes (``_chaining_full``: |R|^2 per
    image, |R| measured after every image), never in time, so a run is
    deterministic; an even split costs at most twice the deciding side.
    Measured and rejected: letting the side with the smaller reached set do
    8 times the other's work (pyramid h = 11, k = 12: 25.6 CPU s vs 24.0 s
    even; the forward set of a pyramid is small in its cheap first sweep,
    so the preference flips to the wrong side)."""
    return min(directions, key=lambda x: (work[x], directions.index(x)))


@dataclass
class SideView:
    """What the policy reads of one side after each of its images."""

    size: int  # |R| in BDD nodes
    sweeps: int  # sweeps started (1 during the first)
    sweep_start_size: int  # |R| when the current sweep started


@dataclass
class SidePolicy:
    """``pick_side`` plus the explosion brake (module docstring)."""

    directions: list[str]
    paused: dict[str, int] = field(default_factory=dict)  # side -> |R| at the pause
    pauses: int = 0

    def observe(self, side: str, views: dict[str, SideView]) -> None:
        """Update the pauses after an image of ``side``."""
        if len(self.directions) < 2:
            return
        me = views[side]
        other = next(d for d in self.directions if d != side)
        if other in self.paused and me.size > RESUME * self.paused[other]:
            del self.paused[other]
        if (self.pauses == 0 and me.sweeps >= 2
                and me.size > GROWTH * me.sweep_start_size and me.size > LEAD * views[other].size):
            self.paused[side] = me.size
            self.pauses += 1

    def pick(self, work: dict[str, int]) -> str:
        """The least-work side among those not paused."""
        live = [d for d in self.directions if d not in self.paused] or self.directions
        return pick_side(live, work)
