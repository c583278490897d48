package protocol

import (
	"bytes"
	"testing"

	"github.com/dispatchtop/dispatchtop/model"
)

// The parsers' cost on the documents a scan reads for nearly every node
// (SPEC §8's cold scan reads a heartbeat, a CfA state and the parent's
// registry lines for each). Compare runs with benchstat.

var (
	benchHeartbeat = []byte(`{"pid": 4242, "parent_heartbeat": "/r/s/.heartbeat", "role": "worker", "started": 1700000000.25, "status": "running"}`)
	benchCfa       = []byte(`{"state": "EXECUTE", "history": [{"state": "PLAN"}], "backtrack_count": 0, "task_id": ""}`)
	benchRegistry  = []byte(`{"heartbeat": "/r/s/team1/a/.heartbeat", "team": "team1", "task_id": "task-1", "status": "active"}` + "\n" +
		`{"heartbeat": "/r/s/team1/b/.heartbeat", "team": "team1", "task_id": "task-2", "status": "active"}` + "\n" +
		`{"heartbeat": "/r/s/team2/c/.heartbeat", "team": "team2", "task_id": null, "status": "active"}` + "\n")

	sinkHeartbeat model.Heartbeat
	sinkCfa       *model.CfaState
	sinkLines     []model.RegistryLine
	sinkErr       error
)

func BenchmarkParseHeartbeat(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkHeartbeat, sinkErr = ParseHeartbeat(benchHeartbeat)
	}
}

func BenchmarkParseCfaState(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkCfa, sinkErr = ParseCfaState(benchCfa, true)
	}
}

func BenchmarkParseCfaStateWithoutHistory(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkCfa, sinkErr = ParseCfaState(benchCfa, false)
	}
}

func BenchmarkParseRegistry3Lines(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkLines = ParseRegistry(benchRegistry)
	}
}

// The plain readings alone, on the same documents: what the fast ones
// save (parse_fast.go stays only while it is clearly faster).

func BenchmarkParseHeartbeatPlain(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkHeartbeat, sinkErr = parseHeartbeatPlain(benchHeartbeat)
	}
}

func BenchmarkParseCfaStatePlain(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkCfa, sinkErr = cfaPlain(benchCfa, true)
	}
}

func BenchmarkParseRegistryLinePlain(b *testing.B) {
	line := benchRegistry[:bytes.IndexByte(benchRegistry, '\n')]
	b.ReportAllocs()
	for b.Loop() {
		_, sinkErr = parseChildEntryPlain(line)
	}
}
