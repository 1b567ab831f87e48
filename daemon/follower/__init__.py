"""The order follower: fills of our recurring orders, the fate of our trigger
orders, and token facts, polled in the background on spare API capacity."""

from __future__ import annotations

from daemon.follower.loop import FollowerLoop
from daemon.follower.orders import OrderFollower, PollResult
from daemon.follower.tokens import refresh_tokens

__all__ = ["FollowerLoop", "OrderFollower", "PollResult", "refresh_tokens"]
