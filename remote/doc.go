// Package remote is the client side of `dispatchtop serve`: it fetches the
// dispatchtop/v1 snapshot of several hosts, decodes each back into a
// *model.Snapshot and merges them into one read-only fleet forest with a
// top-level row per host and each host's reachability. It only reads,
// sends its token to the origin named only, and holds each host's answer
// to caps as it is read (guard.go).
package remote
