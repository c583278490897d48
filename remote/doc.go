// Package remote is the client side of `dispatchtop serve`: it follows the
// watch stream of several hosts (watch.go; a host without one is polled
// for its dispatchtop/v1 snapshot, with its ETag), decodes each back into a
// *model.Snapshot and merges them into one read-only fleet forest with a
// top-level row per host and each host's reachability. It only reads,
// sends its token to the origin named only, and holds each host's answer
// to caps as it is read (guard.go).
package remote
