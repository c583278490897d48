package actions

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/sources"
)

// placeholders are the names an argv element may carry (SPEC §5.5).
var placeholderNames = []string{
	"infra_dir", "heartbeat", "worktree", "id", "role", "team", "task_id", "cfa_state", "parent_heartbeat",
	"source", "row_id", "session_name", "session_id", "cwd",
}

// rowIDField and sessionNameField name, per source, the SourceFields entry
// that holds the record's id in its store and its tmux session (SPEC §5.5,
// docs/sources.md); a source without one gives "".
var (
	rowIDField = map[sources.Kind]string{
		sources.Middle: "workflow", sources.TeaParty: "conversation", sources.OpencodeTeams: "agent id",
		sources.ClaudeCode: "session id",
	}
	sessionNameField = map[sources.Kind]string{sources.Middle: "tmux_session"}
)

// sourceName is the source a node is read by: "native" for the file
// protocol.
func sourceName(n *model.Node) string {
	if n.Source == "" {
		return string(sources.Native)
	}
	return n.Source
}

// isNative reports whether the node comes from the file protocol.
func isNative(n *model.Node) bool { return sourceName(n) == string(sources.Native) }

// sourceField is the value of the node's source field name ("" when absent).
func sourceField(n *model.Node, names map[sources.Kind]string) string {
	name, ok := names[sources.Kind(sourceName(n))]
	if !ok {
		return ""
	}
	for _, f := range n.SourceFields() {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

// expandArgv substitutes the placeholders of argv with the node's values.
// Each element stays one argument whatever the values hold: the command runs
// without a shell. A value that would make an argument begin with "-" is
// refused unless the argument follows a literal "--" element: the watched
// tree must not pass the command options. key names the config key for
// error messages.
func expandArgv(key string, argv []string, n *model.Node) ([]string, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, fmt.Errorf("no command configured: set %s in the config file ([%s] argv = [...])", key, strings.TrimSuffix(key, ".argv"))
	}
	if err := checkCommandName(key, argv); err != nil {
		return nil, err
	}
	used := map[string]bool{}
	for _, a := range argv {
		for _, name := range placeholderNames {
			if strings.Contains(a, "{"+name+"}") {
				used[name] = true
			}
		}
	}
	values := map[string]string{}
	for name := range used {
		v, err := placeholderValue(name, n)
		if err != nil {
			return nil, err
		}
		if strings.ContainsAny(v, "\x00\n\r") {
			return nil, fmt.Errorf("{%s} of node %s holds a NUL or newline: refused", name, n.ID)
		}
		values[name] = v
	}
	pairs := make([]string, 0, 2*len(values))
	for name, v := range values {
		pairs = append(pairs, "{"+name+"}", v)
	}
	// One pass: a value that itself looks like a placeholder stays literal.
	r := strings.NewReplacer(pairs...)
	out := make([]string, len(argv))
	operands := false // after a literal "--" element every argument is an operand
	for i, a := range argv {
		out[i] = r.Replace(a)
		if i > 0 && !operands && !strings.HasPrefix(a, "-") && strings.HasPrefix(out[i], "-") {
			// The dash came from the watched tree, not from the operator.
			name := leadingPlaceholder(a, values)
			return nil, fmt.Errorf("{%s} of node %s is %q, which the command would read as an option: refused (put a \"--\" element before it in %s to pass it as an operand)", name, n.ID, values[name], key)
		}
		if i > 0 && a == "--" {
			operands = true
		}
	}
	return out, nil
}

// leadingPlaceholder names the placeholder whose value begins the expansion
// of the argv element a: the first at its start whose value is not empty.
func leadingPlaceholder(a string, values map[string]string) string {
	for strings.HasPrefix(a, "{") {
		found := ""
		for _, name := range placeholderNames {
			if strings.HasPrefix(a, "{"+name+"}") {
				found = name
				break
			}
		}
		if found == "" {
			return ""
		}
		if values[found] != "" {
			return found
		}
		a = a[len(found)+2:]
	}
	return ""
}

// checkCommandName refuses a placeholder in argv[0]: the values come from
// the watched tree, which must not choose what runs.
func checkCommandName(key string, argv []string) error {
	if len(argv) == 0 {
		return nil
	}
	for _, name := range placeholderNames {
		if strings.Contains(argv[0], "{"+name+"}") {
			return fmt.Errorf("%s[0] holds {%s}: the command must be named in the config, not chosen by a watched directory", key, name)
		}
	}
	return nil
}

// resolveCommand makes argv[0] an absolute path as dispatchtop sees it
// (PATH, else relative to its working directory). The command runs in the
// node's infra dir, where a relative name would find a file of the tree.
func resolveCommand(key, name string) (string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s: %w", key, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", key, err)
	}
	return abs, nil
}

func placeholderValue(name string, n *model.Node) (string, error) {
	hb := n.Heartbeat
	switch name {
	case "infra_dir":
		return n.InfraDir, nil
	case "heartbeat":
		if n.HeartbeatPath != "" {
			return n.HeartbeatPath, nil
		}
		return filepath.Join(n.InfraDir, protocol.HeartbeatFile), nil
	case "worktree":
		return worktreeOf(n)
	case "id":
		return n.ID, nil
	case "role":
		return n.Role(), nil
	case "team":
		return n.Team(), nil
	case "task_id":
		return n.TaskID(), nil
	case "cfa_state":
		if n.Cfa != nil {
			return n.Cfa.State, nil
		}
		return "", nil
	case "source":
		return sourceName(n), nil
	case "row_id":
		return sourceField(n, rowIDField), nil
	case "session_name":
		return sourceField(n, sessionNameField), nil
	case "session_id":
		// A resume command given no session would start a new one (or
		// ask which), never resume this: refused rather than run.
		if id := sourceField(n, sessionIDField); id != "" {
			return id, nil
		}
		return "", fmt.Errorf("node %s has no session id ({session_id}): its %s record names none: refused", n.ID, sourceName(n))
	case "cwd":
		return workDir(n)
	case "parent_heartbeat":
		if hb != nil && hb.ParentHeartbeat != "" {
			return hb.ParentHeartbeat, nil
		}
		if n.Parent != nil && n.Parent.HeartbeatPath != "" {
			return n.Parent.HeartbeatPath, nil
		}
		return "", nil
	}
	return "", fmt.Errorf("unknown placeholder {%s}", name)
}

// worktreeOf is the entry's or heartbeat's worktree field, else
// <infra>/worktree when it exists; otherwise there is none and the action
// is refused.
func worktreeOf(n *model.Node) (string, error) {
	if n.Entry != nil && n.Entry.Worktree != "" {
		return n.Entry.Worktree, nil
	}
	if n.Heartbeat != nil && n.Heartbeat.Optional().Worktree != "" {
		return n.Heartbeat.Optional().Worktree, nil
	}
	p := filepath.Join(n.InfraDir, "worktree")
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return p, nil
	}
	return "", fmt.Errorf("node %s has no worktree (no worktree field in its registry entry or heartbeat, and no %s): refused", n.ID, p)
}

// quoteArgv renders argv for plans and journals, one quoted word each.
func quoteArgv(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = fmt.Sprintf("%q", a)
	}
	return strings.Join(q, " ")
}
