// Package serve is `dispatchtop serve`: the live engine's latest snapshot
// over HTTP, read-only. It owns the Prometheus collector (every series is
// computed from the newest snapshot at scrape time, on a registry of its
// own), the dispatchtop/v1 snapshot API, the optional bearer token, the
// loopback-by-default listen rule, the Host allow-list against DNS
// rebinding and the cap on connections held at once. It runs no action.
package serve
