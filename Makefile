# dispatchtop — the two commands a newcomer needs are `make demo` and `make test`.
GO      ?= go
BIN     ?= bin/dispatchtop
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
# The commit's own date, not the clock's: the same commit builds the same binary.
DATE    ?= $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
LDFLAGS := -X github.com/dispatchtop/dispatchtop/cli.Version=$(VERSION) \
	-X github.com/dispatchtop/dispatchtop/cli.Commit=$(COMMIT) \
	-X github.com/dispatchtop/dispatchtop/cli.Date=$(DATE)

.PHONY: all build deps test test-any-machine vet completions release release-snapshot release-check bench bench-journal-1g bench-100k bench-stores-1m bench-sources-live bench-sources-claude bench-reliability bench-compare bench-compare-100k bench-dashboard-100k bench-remote-watch promtool run demo readme-screenshot fuzz clean man

all: build

deps:
	$(GO) mod download

build: deps
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) .

# macOS is vetted too: the README promises it, and Linux-only stat fields
# broke its build once.
vet: deps
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...

# The whole suite, race detector on; fuzz seed corpora run as plain tests.
test: vet
	$(GO) test -race -count=1 ./...

# SPEC §9: the suite as on a host booted a minute ago, in a time zone
# fourteen hours from UTC, the C locale, without HOME, on one core; a
# package at a time. Needs taskset (util-linux).
ANY_MACHINE_ENV = env -u HOME TZ=Pacific/Kiritimati LANG=C LC_ALL=C \
	GOCACHE=$$($(GO) env GOCACHE) GOMODCACHE=$$($(GO) env GOMODCACHE) GOPATH=$$($(GO) env GOPATH) taskset -c 0
test-any-machine: deps
	fail=0; for p in $$($(GO) list ./...); do \
		$(ANY_MACHINE_ENV) $(GO) test -count=1 -p 1 \
			-ldflags=-X=github.com/dispatchtop/dispatchtop/liveness.simulatedBoot=1m $$p || fail=1; \
	done; exit $$fail

# Prints the SPEC §8 figures (benchmarks, not timed tests: machines are noisy;
# run it on a quiet machine and read the cpu-ms and ratio columns too).
# WatchIdle watches for 31 s twice (with 1 and with 2,000 live pids) so that
# the periodic work is in its figure; ProgramIdle10k runs the real program,
# its renderer in, at Bubble Tea's default and at the dashboard's frame rate
# (read its wakes/s: %cpu swings with the machine); TouchToFrame10k times a
# heartbeat touch to the frame that shows it: a few minutes in all.
# AgentsOnceJSON10k's 30 ms is the difference of two runs of some 220 ms
# whose own time moves by more than that: a hundred iterations put its
# average within a few ms, where ten moved it by 10.
BENCH_FLAGS = -run '^$$' -benchmem -count 1
bench: deps
	$(GO) test $(BENCH_FLAGS) -bench 'ColdScan10k|BareWalk10k' -benchtime 10x ./scanner
	$(GO) test $(BENCH_FLAGS) -bench 'WatchHeartbeatTouch|WatchIdle|WatchReady10k|WatchPollPass10k' ./scanner
	$(GO) test $(BENCH_FLAGS) -bench 'View10k|KeyToFrame10k|Tick10k' ./ui
	$(GO) test $(BENCH_FLAGS) -bench 'TUIIdle10k|ProgramIdle10k' -benchtime 2x ./ui
	$(GO) test $(BENCH_FLAGS) -bench 'TouchToFrame10k' -benchtime 20x ./ui
	$(GO) test $(BENCH_FLAGS) -bench 'ClassifyForest$$|LiveTick|ProbeTick' ./liveness
	$(GO) test $(BENCH_FLAGS) -bench '^BenchmarkOnceJSON10k$$' -benchtime 5x .
	$(GO) test $(BENCH_FLAGS) -bench 'SourcesOnceJSON10k' -benchtime 5x .
	$(GO) test $(BENCH_FLAGS) -bench '^BenchmarkAgentsOnceJSON10k$$' -benchtime 100x .
	$(GO) test $(BENCH_FLAGS) -bench 'Scrape10k|SnapshotAPI10k' -benchtime 20x ./serve
	$(GO) test $(BENCH_FLAGS) -bench 'Decode10k' -benchtime 20x ./remote
	$(GO) test $(BENCH_FLAGS) -bench 'JournalMemory' -benchtime 1x ./cli
	$(GO) test $(BENCH_FLAGS) -bench 'FleetPollHostile' -benchtime 2x ./remote

# SPEC §8's journal of 1 GB: the peak RSS of `journal`, `journal --json`
# and the detail pane's reader (the journal is generated in a temp dir).
bench-journal-1g: deps
	DISPATCHTOP_BENCH_JOURNAL_MB=1024 $(GO) test $(BENCH_FLAGS) -bench 'JournalMemory' -benchtime 1x -timeout 60m ./cli

# SPEC §9's interruption series: 200 compactions, each hit by SIGTERM or
# SIGKILL 0-3 ms around its rename while a real process appends; prints
# appends, signals, orphans left and lines lost/duplicated/torn (all 0).
bench-reliability: deps
	$(GO) test $(BENCH_FLAGS) -bench 'CompactionInterruptedAroundTheRename' -benchtime 200x ./actions

# 100,000 nodes: slower to generate, so apart from `bench`.
bench-100k: deps
	$(GO) test $(BENCH_FLAGS) -bench 'ColdScan100k|Watch100k' -benchtime 1x ./scanner

# A million rows in one TeaParty bus and in middle's store: --once --json's
# wall time, CPU and peak RSS (SPEC §8: 2 KiB a node). The stores are
# written once under BENCH_STORE_DIR (some 300 MB) and kept for the next run.
BENCH_STORE_DIR ?= $(or $(TMPDIR),/tmp)/dispatchtop-bench-stores
bench-stores-1m: deps
	DISPATCHTOP_BENCH_STORE_ROWS=1000000 DISPATCHTOP_BENCH_STORE_DIR=$(BENCH_STORE_DIR) \
		$(GO) test $(BENCH_FLAGS) -bench 'StoreRowsOnceJSON' -benchtime 1x -timeout 30m -v .

# A snapshot (--once) of the demo fleet, 12 s into its scenario.
run: build
	@set -e; dir=$$(mktemp -d); \
	./$(BIN) demo --dir "$$dir" --headless 15s >/dev/null 2>&1 & pid=$$!; \
	sleep 12; \
	./$(BIN) --once --fail-on none --config "$$dir/dispatchtop.toml" "$$dir/.sessions" "$$dir/.teaparty/jobs" "claude:$$dir/.claude"; \
	wait $$pid; rm -rf "$$dir"

demo: build
	./$(BIN) demo

# The README's screenshot drawn again from the live demo (its fleet run in
# a temp dir for some 15 s, read by the watcher, drawn by the ui at 100×28,
# pids, ages and clock as placeholders): the golden and the README's block.
readme-screenshot: deps
	$(GO) test -count=1 -run '^TestReadmeScreenshotIsTheLiveDemo$$' -update-readme .

# Short fuzzing runs of every fuzz target in the repository (found by name,
# so a new one is never left out), FUZZTIME each.
FUZZTIME ?= 20s
fuzz: deps
	@set -e; for pkg in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
		for f in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$pkg/*_test.go | cut -d' ' -f2 | sort); do \
			echo "fuzz $$pkg $$f"; \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 10x $$pkg; \
		done; \
	done

# The man pages (section 1) of every command into docs/man, dated by the
# last commit. They are committed; a test fails when they drift from the
# commands, so run this after changing a command or a flag.
man: deps
	rm -f docs/man/*.1
	SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct 2>/dev/null || date +%s) $(GO) run ./internal/manpage/mangen docs/man

clean:
	rm -rf bin dist dist-assets

# Shell completions generated from the commands, for the release archives
# and packages (the man pages are committed in docs/man).
completions:
	mkdir -p dist-assets/completions
	for sh in bash zsh fish; do $(GO) run . completion $$sh > dist-assets/completions/dispatchtop.$$sh; done

# The release, built locally and published nowhere: archives, checksums.txt,
# deb and rpm packages and the Homebrew cask, in dist/. goreleaser runs
# through `go run`, pinned, so nothing needs installing.
GORELEASER ?= $(GO) run github.com/goreleaser/goreleaser/v2@v2.15.1
release-snapshot: deps
	$(GORELEASER) release --snapshot --clean --skip=publish

# The release itself, from a tag (the release workflow runs it).
release: deps
	$(GORELEASER) release --clean

# The release configuration is valid (goreleaser's own check).
release-check: deps
	$(GORELEASER) check

# SPEC §8's floor: `--once --json` against `find ROOT -name .heartbeat` and a
# naive Python scan of the same generated tree, interleaved, ROUNDS rounds,
# medians and ratios, and dispatchtop's peak RSS. TEAPARTY_HEARTBEAT, the
# path of a TeaParty checkout's teaparty/bridge/state/heartbeat.py, adds
# TeaParty's own functions to the contenders (with psutil, as TeaParty
# runs: PYTHON names the Python that has it).
ROUNDS ?= 7
TEAPARTY_HEARTBEAT ?=
PYTHON ?= python3
bench-compare: build
	$(GO) run ./internal/benchcompare -bin $(BIN) -sessions 1000 -per-session 10 -rounds $(ROUNDS) -teaparty "$(TEAPARTY_HEARTBEAT)" -python "$(PYTHON)"

bench-compare-100k: build
	$(GO) run ./internal/benchcompare -bin $(BIN) -sessions 10000 -per-session 10 -rounds $(ROUNDS) -teaparty "$(TEAPARTY_HEARTBEAT)" -python "$(PYTHON)"

# SPEC §8's memory at 100,000 nodes as a user meets it: the dashboard in a
# real terminal (tmux, 160×50) while the whole fleet turns quiet (30 s) and
# stalled (120 s) in the same second; VmRSS every 5 s and the peak VmHWM.
# Needs tmux; about four minutes.
bench-dashboard-100k: build
	$(GO) run ./internal/benchdash -bin $(BIN) -sessions 10000 -per-session 10 -seconds 140

# SPEC §8's cost of following another system's store: the dashboard in a
# real terminal on a TeaParty home of 100 jobs × 10 workers while writers
# put messages into random job buses (0, 20, 100 a second), on middle's
# 1,000 workflows (50 row updates a second) and on opencode-teams' 1,000
# agent files (50 rewrites a second); its CPU per rate, a change's way to
# the screen. Needs tmux; about four minutes.
bench-sources-live: build
	$(GO) run ./internal/benchsources -bin $(BIN) -jobs 100 -workers 10 -rates 0,20,100 -seconds 20
	$(GO) run ./internal/benchsources -bin $(BIN) -source middle -workflows 1000 -rates 0,50 -seconds 20
	$(GO) run ./internal/benchsources -bin $(BIN) -source opencode-teams -workflows 1000 -rates 0,50 -seconds 20

# SPEC §8's cost of a Claude Code session at work: the dashboard in tmux on
# a Claude Code home whose session's transcript grows by 0 and 50 lines a
# second (its CPU per rate), and a teammate's end to the screen. Needs
# tmux; about a minute.
bench-sources-claude: build
	$(GO) run ./internal/benchsources -bin $(BIN) -source claude -rates 0,50 -seconds 20

# SPEC §8's fleet view: 20 serves on 10,000-node trees, the viewer of all
# of them in tmux, quiet then with 1 % of the nodes changing every second.
# BENCH_REMOTE_FLAGS adds flags (-hosts 10, -profile DIR: see its doc).
BENCH_REMOTE_FLAGS ?=
bench-remote-watch: build
	$(GO) run ./internal/benchremote -bin $(BIN) -hosts 20 -sessions 1000 -per-session 10 $(BENCH_REMOTE_FLAGS)

# promtool, pinned, into bin/tools, where the alert rules' tests find it
# (serve's TestAlertRulesPassPromtool skips without it). Not part of
# `make test`: Prometheus is a large module, some 8 CPU-minutes to build.
PROMTOOL_VERSION ?= v0.316.0
promtool: bin/tools/promtool
bin/tools/promtool:
	GOBIN=$(CURDIR)/bin/tools $(GO) install github.com/prometheus/prometheus/cmd/promtool@$(PROMTOOL_VERSION)
