"""The status page's answers: JSON and plain text, and the content types it uses.
Requests, responses and their security headers are the listener's
(daemon/listen/messages.py).
"""

from __future__ import annotations

import json
from typing import Any

from jupcron.listen.messages import WebResponse

HTML = "text/html; charset=utf-8"
JSON = "application/json"
TEXT = "text/plain; charset=utf-8"
SVG = "image/svg+xml"


def json_response(data: Any, status: int = 200, **headers: str) -> WebResponse:
    """JSON with ``<``, ``>`` and ``&`` as escapes: inert even if sniffed as HTML."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return WebResponse(status, text.encode(), JSON, tuple(headers.items()))


def text_response(status: int, text: str) -> WebResponse:
    return WebResponse(status, text.encode(), TEXT)
