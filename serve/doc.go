// Package serve is `dispatchtop serve`: the live engine's latest snapshot
// over HTTP, read-only. It owns the Prometheus collector (every series is
// computed from the newest snapshot at scrape time, on a registry of its
// own), the dispatchtop/v1 snapshot API, the optional bearer token and the
// loopback-by-default listen rule. It runs no action.
package serve
