// Package actions is the recovery engine: kill, resume, compact, merge and
// recover, the journal they write, and the configuration that names the
// commands they run. Every action re-reads its node through the scanner and
// re-checks it through liveness at execution time.
package actions
