"""The read-only status page and its JSON twins (config ``web.listen``).

Served by the daemon on the same small threaded listener as ``/metrics`` and
``/healthz`` (daemon/listen/server.py), beside them:

    GET /                      the page (Jinja2, autoescaped; no inline script or style)
    GET /static/app.js|.css    its two assets, shipped in this package (no CDN)
    GET /api/status            `jupcron status` without the plans (every daemon by
                               its heartbeat, this one marked; dry run, pauses, kill
                               switch; runs in flight and in doubt), plus this
                               daemon's API rate use and errors in the last hour
    GET /api/plans             each enabled plan: `jupcron status`'s fields (next
                               fire, paused, last result), schedule in words, next
                               fire times, spent and received (the report's figures)
    GET /api/runs              recent runs (the audit view's rows)
    GET /api/plans/NAME/fills  the fills behind a plan's chart
    GET /charts/NAME.svg       the chart: cumulative receipts and fill price, drawn
                               on the server as SVG
    POST /login                the token as a form field -> a session cookie (wrong
                               tokens locked out per address: `guard`)
    POST /logout               the session ends on the server

The page loads once, then its script asks the ``/api`` twins every
``web.refresh`` seconds and updates the DOM with text only. Nothing here
writes to the store.

Modules: `http` (JSON and text answers), `auth` (the token),
`access` (who is let in: sign-in, sign-out, a new token), `session` (the
server's sessions), `guard` (wrong tokens per address),
`activity` (API use and errors in a window), `views` (the JSON views, from
daemon/store/status.py's reads), `chart` (the SVG), `app` (routes), `serve`
(the listener).
"""
