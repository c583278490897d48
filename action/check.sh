#!/usr/bin/env bash
# The check of the dispatchtop action (action.yml): runs `--once --json`
# on the roots, writes a table to the job summary and one error annotation
# per node that matches --fail-on, and exits with dispatchtop's code.
#
# Environment: DISPATCHTOP (the binary), ROOTS (newline- or
# space-separated), FAIL_ON (the --fail-on list; action.yml's default is
# dispatchtop's), ARGS (more
# flags, space-separated), OUTPUT (where the JSON document goes),
# GITHUB_STEP_SUMMARY (the summary file; unset: no summary).
set -uo pipefail

bin=${DISPATCHTOP:-dispatchtop}
out=${OUTPUT:-dispatchtop.json}
read -r -d '' -a roots <<<"${ROOTS:-}"
read -r -a extra <<<"${ARGS:-}"
: "${FAIL_ON:?names the --fail-on list}"
flags=(--once --json --fail-on "$FAIL_ON")

err=$(mktemp)
trap 'rm -f "$err"' EXIT
"$bin" "${flags[@]}" "${extra[@]}" "${roots[@]}" >"$out" 2>"$err"
code=$?
cat "$err" >&2

# GitHub's workflow commands end a value at a newline: escape it.
escape() { local s=${1//'%'/'%25'}; s=${s//$'\r'/'%0D'}; s=${s//$'\n'/'%0A'}; printf '%s' "$s"; }

if [ "$code" -ge 2 ]; then
  echo "::error title=dispatchtop::$(escape "$(cat "$err")")"
  exit "$code"
fi

# The nodes that match --fail-on, by the rule dispatchtop applies (SPEC §4):
# comma-separated terms, each atoms joined by "+"; an atom is a state or a
# flag, or state:NAME, flag:NAME or action:NAME. A test holds this to the
# count dispatchtop prints.
failing=$(jq -c --arg failon "$FAIL_ON" '
  def trim: sub("^\\s+"; "") | sub("\\s+$"; "");
  def holds($atom; $n): ($atom | split(":")) as $p
    | if ($p | length) == 1 then $n.state == $p[0] or ((($n.flags // []) | index($p[0])) != null)
      elif $p[0] == "state" then $n.state == $p[1]
      elif $p[0] == "flag" then ((($n.flags // []) | index($p[1])) != null)
      else $n.action == $p[1] end;
  ($failon | split(",") | map(trim) | map(select(. != "" and . != "none")) | map(split("+") | map(trim))) as $terms
  | [.sessions[] | recurse(.children[]?)]
  | map(. as $n | select(any($terms[]; all(.[]; holds(.; $n)))))
  | .[] | {id, state, flags: (.flags // []), action, reason}' "$out")

while IFS= read -r node; do
  [ -n "$node" ] || continue
  id=$(jq -r .id <<<"$node")
  what=$(jq -r '[.state] + .flags | join(" ")' <<<"$node")
  action=$(jq -r .action <<<"$node")
  reason=$(jq -r .reason <<<"$node")
  echo "::error title=dispatchtop: $(escape "$id")::$(escape "$what: $reason (recommended: $action)")"
done <<<"$failing"

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  {
    echo "### dispatchtop"
    echo
    jq -r '.summary | "| nodes | sessions | running | dead | finished | missing | stalled | kill candidates | blocked | orphaned |",
      "|---|---|---|---|---|---|---|---|---|---|",
      "| \(.nodes) | \(.sessions) | \(.running) | \(.dead) | \(.finished) | \(.missing) | \(.stalled) | \(.kill_candidate) | \(.blocked) | \(.orphaned) |"' "$out"
    echo
    if [ -z "$failing" ]; then
      echo "No node matches \`--fail-on $FAIL_ON\`."
    else
      echo "Nodes that match \`--fail-on $FAIL_ON\`:"
      echo
      echo "| node | state | action | reason |"
      echo "|---|---|---|---|"
      # A table cell holds no pipe or newline.
      jq -r '"| `\(.id)` | \(([.state] + .flags) | join(" ")) | \(.action) | \(.reason | gsub("[|\n]"; " ")) |"' <<<"$failing"
    fi
  } >>"$GITHUB_STEP_SUMMARY"
fi
exit "$code"
