"""`jupcron tx inspect -` on input without end: refused once it has read more than any
transaction's text can be, without waiting for the end of the input. Before, the
command read standard input whole first: a stream without end (``tx inspect - <
/dev/zero``, a wrong pipe) grew its memory until the machine ran out."""

from __future__ import annotations

import subprocess
import sys

from tests.fixtures.wallet import new_key


def test_input_without_end_is_refused_once_past_the_limit() -> None:
    me = new_key()
    with subprocess.Popen(
        [sys.executable, "-m", "jupcron", "tx", "inspect", "--wallet", str(me), "-"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ) as proc:  # fmt: skip
        assert proc.stdin is not None
        assert proc.stderr is not None
        proc.stdin.write("A" * 16_384)  # past any transaction's text; the pipe stays open
        proc.stdin.flush()
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:  # still reading, for an end that never comes
            proc.kill()
            raise
        said = proc.stderr.read()
    assert code == 3, said
    assert "REFUSED: the transaction is more than" in said
    assert "the network takes at most 1232" in said
