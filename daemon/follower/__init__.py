"""The order follower: fills of our recurring orders, the fate of our trigger
orders, and token facts, polled in the background on spare API capacity."""

from __future__ import annotations

from jupcron.follower.loop import FollowerLoop
from jupcron.follower.orders import OrderFollower, PollResult
from jupcron.follower.tokens import refresh_tokens

__all__ = ["FollowerLoop", "OrderFollower", "PollResult", "refresh_tokens"]
