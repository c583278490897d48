// Package actions is the recovery engine: kill, resume, compact, merge and
// recover, the journal they write, and the configuration that names the
// commands they run. Every action re-reads its node through the scanner and
// re-checks it through liveness at execution time, never trusting what a
// screen showed.
//
// What it writes, and only inside the roots: the node's dir, which a store
// may name anywhere, is resolved and refused outside them (confine.go):
//
//	<root>/.dispatchtop/journal.jsonl  one line per action or refusal
//	<infra>/.resume-pending            resume's O_EXCL dedup marker
//	<infra>/.retry-count               bumped by resume (atomic rename)
//	<infra>/.resume.log, .merge.log    output of the configured commands
//	<infra>/.merged                    written after a successful merge
//	<infra>/.children                  rewritten by compaction
//	<infra>/.children.compacting       the registry compaction replaced, until
//	                                   what is appended to it is carried over
//	<infra>/.children.compacting.carried  how far it was carried (protocol)
//
// Commands come from the operator's config only (never from inside a root)
// and run without a shell: each placeholder stays inside its argument.
package actions
