package cli

// `--once --metrics FILE`: serve's series of one snapshot in the text
// format, for node_exporter's textfile collector (a cron job's metrics).

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/serve"
)

// writeMetricsFile writes the dispatchtop_* series of snap to path ("":
// nothing), through a file beside it renamed over it, so the collector
// never reads half a file. The Go runtime's and the process's series are
// left out: node_exporter has its own of those names.
func writeMetricsFile(path string, snap *model.Snapshot, scan time.Duration) error {
	if path == "" {
		return nil
	}
	srv := serve.New(serve.Options{Snapshot: func() *model.Snapshot { return snap }, ScanDuration: scan, Version: versionString()})
	families, err := srv.Registry().Gather()
	if err != nil {
		return fmt.Errorf("--metrics %s: gather the series: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("--metrics: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename: no such file, no harm
	enc := expfmt.NewEncoder(tmp, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range families {
		if !strings.HasPrefix(mf.GetName(), "dispatchtop_") {
			continue
		}
		if err := enc.Encode(mf); err != nil {
			tmp.Close()
			return fmt.Errorf("--metrics %s: %w", path, err)
		}
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("--metrics: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("--metrics: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("--metrics: %w", err)
	}
	return nil
}
