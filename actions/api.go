package actions

// API agreed between packages while they are being built (owner: actions).
//
//   type Request struct {
//       Action  model.Action  // kill, resume, compact, merge
//       Node    string        // id, infra dir or .heartbeat path
//       All     bool          // compact --all
//       Tree    bool          // kill --tree
//       Grace   time.Duration // kill --grace
//       Force   bool          // resume --force
//       DryRun  bool
//   }
//   type Result struct {
//       Action  model.Action
//       NodeID  string
//       Root    string
//       Refused bool     // a precondition failed (exit 1)
//       Message string   // one line: what was done, or what was refused and why
//       Plan    []string // what it would do / did, one step a line (the dry-run text)
//   }
//   type Engine struct { ... }            // built with New(EngineOptions)
//   type EngineOptions struct {
//       Scan     scanner.Options  // roots, ignore, thresholds, probe
//       Config   Config
//       Readonly bool
//   }
//   func New(opts EngineOptions) *Engine
//   func (e *Engine) Run(ctx context.Context, req Request) (Result, error)
//   func (e *Engine) Plan(ctx context.Context) ([]Step, error)            // recover: the plan
//   func (e *Engine) Recover(ctx context.Context, apply, killStalled bool) ([]Result, error)
//
//   type Config struct {                 // TOML, see SPEC §5.5
//       Resume  struct{ Argv []string }  // [resume] argv = [...]
//       Merge   struct{ Argv []string }  // [merge] argv = [...]
//       Thresholds (beat, stale, kill_after, exit_grace as durations "30s")
//       Ignore  []string
//       Theme   string
//   }
//   func LoadConfig(explicitPath string, roots []string) (Config, string, error) // path used ("" if none)
