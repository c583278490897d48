package cli

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
)

// SPEC §4.2, §10: serve over a store that cannot be read beside a root
// that reads serves the document with the store's problem, its file and
// cause; over that store alone it does not start, and says why in one
// line (exit 2). With the store named by KIND: or found by its layout.
func TestServeShowsAnUnreadableStoreByItsFileAndCause(t *testing.T) {
	storefixtures.EachUnreadable(t, func(t *testing.T, u storefixtures.Unreadable, as func(string) string) {
		if u.Denied && os.Geteuid() == 0 {
			t.Skip("root reads a file of mode 000; the --once end-to-end test runs the binary as nobody for this case")
		}
		dir := t.TempDir()
		root, file, err := u.Build(filepath.Join(dir, "store"))
		if err != nil {
			t.Fatal(err)
		}
		arg := as(root)

		alone := exec.Command(dispatchtopBin, "serve", "--listen", "127.0.0.1:0", arg)
		alone.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
		out, err := alone.CombinedOutput()
		msg := strings.TrimSpace(string(out))
		if alone.ProcessState.ExitCode() != 2 || strings.Contains(msg, "\n") || !strings.Contains(msg, file) || !strings.Contains(msg, u.Cause) {
			t.Errorf("serve over the store alone: %v, %q: want exit 2 and one line naming %s and %q", err, msg, file, u.Cause)
		}

		p := startServe(t, nil, arg, serveTree(t))
		code, body := get(t, p.url+"/api/v1/snapshot", "")
		if code != http.StatusOK {
			t.Fatalf("GET /api/v1/snapshot: %d %s", code, body)
		}
		var doc struct {
			Problems []struct{ Path, Error string } `json:"problems"`
		}
		if err := json.Unmarshal(body, &doc); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, pr := range doc.Problems {
			found = found || pr.Path == file && strings.Contains(pr.Error, file) && strings.Contains(pr.Error, u.Cause)
		}
		if !found {
			t.Errorf("problems %+v: none naming %s with %q", doc.Problems, file, u.Cause)
		}
		p.stop(t)
	})
}
