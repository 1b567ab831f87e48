"""The daemon's HTTP side, shared by the service (daemon/service) and the page
(daemon/web), which never import each other:

`server` (the one listener: /metrics, /healthz and the page on it; `parse_listen`),
`messages` (requests, responses, the security headers, `host_is_local`),
`metrics` (the Prometheus registry) with `runway_metrics` (its runway gauges),
`page` (the page as the daemon starts it: a port the composition root fills).
"""
