"""Owners for the tests of who may change a file (`jupcron.config.trust`): another
user, and the running user's private group."""

from __future__ import annotations

import grp
import os
import pwd

import pytest

NOBODY = 65534  # a user (and group) other than the suite's


def own_private_group() -> int:
    """The gid of the running user's private group (its primary group, no other
    member: a umask of 0002 then makes files group-writable, which is fine); the test
    is skipped where that group has other members."""
    me = pwd.getpwuid(os.geteuid())
    if [m for m in grp.getgrgid(me.pw_gid).gr_mem if m != me.pw_name]:
        pytest.skip(f"the group of {me.pw_name} has other members here")
    if [u for u in pwd.getpwall() if u.pw_gid == me.pw_gid and u.pw_uid != me.pw_uid]:
        pytest.skip(f"the group of {me.pw_name} is another user's primary group too")
    return me.pw_gid
