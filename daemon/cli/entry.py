"""The `jupcron` command's entry point: the command line imported under a guard.

Importing the command line takes about a second (click, pydantic, SQLAlchemy, the
commands' modules). Ctrl-C in that second raised `KeyboardInterrupt` in an import
and Python printed its traceback; an operator who changed their mind at once saw a
stack of library frames. Now it ends with the line and the status of any other
interrupted command (`jupcron.cli.interrupt`): ``interrupted``, 130. Nothing has
been read or written by then.
"""

from __future__ import annotations

from jupcron.cli.interrupt import end, interrupt_behind


def main() -> None:
    try:
        from jupcron.cli.main import main as command_line
    except BaseException as exc:  # a Ctrl-C may come out wrapped (`interrupt_behind`)
        behind = interrupt_behind(exc)
        if behind is None:
            raise
        end(behind)
    command_line()
