"""Running as a service: sd_notify, watchdog, metrics, leader election, webhooks."""
