package cli

// examples are every command's Examples block (SPEC §4), by the command's
// path under dispatchtop ("" is dispatchtop itself), in one place so that
// they read as one set.
var examples = map[string]string{
	"": `  # the live dashboard over ./.teaparty/jobs and ./.sessions (else .)
  dispatchtop
  # one snapshot for CI: exit 1 on dead nodes nobody recovers or kill candidates
  dispatchtop --once ~/work/.sessions
  # the JSON document, failing on any dead node, for a script
  dispatchtop --once --json --fail-on dead ~/work/.sessions | jq .summary
  # the fleets of two hosts that run dispatchtop serve
  dispatchtop --remote build-1=http://build-1:9477,build-2=http://build-2:9477`,
	"kill": `  # what would be signalled, changing nothing
  dispatchtop kill --dry-run 20261122-090000/testing/20261122-090110
  # end a lead and every running node below it, bottom-up
  dispatchtop kill --tree --grace 30s 20261122-090000`,
	"resume": `  # re-dispatch a dead node with the configured resume command
  dispatchtop resume 20261122-091500
  # resume past a spent retry budget (only the budget is overridden)
  dispatchtop resume --force --root ~/work/.sessions 20261122-091500`,
	"compact": `  # the lines that would go, changing nothing
  dispatchtop compact --dry-run 20261122-090000
  # every registry under the roots
  dispatchtop compact --all ~/work/.sessions`,
	"merge": `  # run merge.argv for a node whose work succeeded
  dispatchtop merge 20261122-093000
  dispatchtop merge --dry-run --config ~/dispatchtop.toml .sessions/20261122-093000`,
	"recover": `  # the recovery plan: what each node needs, changing nothing
  dispatchtop recover ~/work/.sessions
  # carry out merge, resume and compact; also kill the kill candidates
  dispatchtop recover --apply --kill-stalled ~/work/.sessions`,
	"journal": `  # what was done to a node and below it in the last day
  dispatchtop journal --node 20261122-091500 --since 24h ~/work/.sessions
  dispatchtop journal --json --since 2026-11-22T05:00:00Z | jq '.entries[] | select(.outcome == "failed")'`,
	"demo": `  dispatchtop demo
  # keep the fleet's directory to look at afterwards
  dispatchtop demo --dir /tmp/fleet --theme light`,
	"wrap": `  # a session lead
  dispatchtop wrap --infra .sessions/20261122-090000 --role lead -- ./lead.sh
  # a worker that registers in its lead's .children
  dispatchtop wrap --infra .sessions/20261122-090000/coding/20261122-090105 \
    --parent .sessions/20261122-090000/.heartbeat --team coding -- make test`,
	"serve": `  dispatchtop serve ~/work/.sessions
  # reachable from other machines, behind a token
  dispatchtop serve --listen 0.0.0.0:9477 --token-file /etc/dispatchtop.token ~/work/.sessions`,
	"version": `  dispatchtop version`,
	"completion": `  source <(dispatchtop completion bash)
  dispatchtop completion zsh > "${fpath[1]}/_dispatchtop"`,
	"completion bash":       `  source <(dispatchtop completion bash)`,
	"completion zsh":        `  dispatchtop completion zsh > "${fpath[1]}/_dispatchtop"`,
	"completion fish":       `  dispatchtop completion fish > ~/.config/fish/completions/dispatchtop.fish`,
	"completion powershell": `  dispatchtop completion powershell | Out-String | Invoke-Expression`,
}
