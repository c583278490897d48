package cli

// `dispatchtop serve`: the live engine, headless, over HTTP (Prometheus
// metrics and the dispatchtop/v1 snapshot), read-only.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dispatchtop/dispatchtop/scanner"
	"github.com/dispatchtop/dispatchtop/serve"
)

// newServeCmd is `dispatchtop serve`. It also gives the root command its
// --remote view (remote.go), the client of what serve serves: both share
// the token rules, and the root's own flags are defined in root.go.
func newServeCmd(g *Globals) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve [--listen ADDR] [--token-file FILE] [--tls-cert FILE --tls-key FILE] [--allow-host NAME]... [--max-conns N] [--per-node-metrics] [ROOT...]",
		Short: "Serve Prometheus metrics and the JSON snapshot of the live engine (read-only)",
		Long: "serve runs the live engine without a terminal and answers over HTTP:\n" +
			"  /metrics          Prometheus exposition (nodes by state and flag per session,\n" +
			"                    heartbeat ages, recommended actions, transitions, watch mode)\n" +
			"  /api/v1/snapshot  the dispatchtop/v1 document, as --once --json\n" +
			"  /api/v1/watch     the same, then each change, as JSON lines (--remote follows it)\n" +
			"It runs no action. It listens on 127.0.0.1:9477 unless --listen names another\n" +
			"address; an address without a host (\":9477\") stays on loopback, so it is reachable\n" +
			"from other machines only with an explicit host such as 0.0.0.0:9477. With\n" +
			"--token-file FILE (or $DISPATCHTOP_TOKEN) every request must carry\n" +
			"\"Authorization: Bearer TOKEN\"; a blank token is an error, never \"no token\".\n" +
			"With --tls-cert FILE --tls-key FILE it answers HTTPS only, so the token never\n" +
			"crosses the network in clear text.\n" +
			"It answers only requests whose Host is localhost, a loopback address, the\n" +
			"--listen host (with a wildcard host such as 0.0.0.0: any IP address and this\n" +
			"machine's name) or an --allow-host NAME; others get 421, which stops web pages\n" +
			"that rebind their own DNS name to this machine. It holds at most --max-conns\n" +
			"connections at once; further clients wait until one closes or times out.\n" +
			"Every flag can come from the environment instead: --max-conns from\n" +
			"DISPATCHTOP_MAX_CONNS, the roots from DISPATCHTOP_ROOT (comma-separated),\n" +
			"a repeatable flag's values comma-separated; a flag given wins.\n" +
			"SIGINT or SIGTERM shut it down cleanly.",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := flagsFromEnv(cmd, serveEnv(args, os.LookupEnv)); err != nil {
				return err
			}
			g.Roots = append(g.Roots, args...)
			f.tokenFileGiven = cmd.Flags().Changed("token-file")
			return runServe(cmd.Context(), g, f)
		},
	}
	cmd.Flags().StringVar(&f.listen, "listen", serve.DefaultListen, "`ADDR` to listen on (loopback unless a host is named)")
	cmd.Flags().StringVar(&f.tokenFile, "token-file", "", "require this bearer token (first line of `FILE`; default $"+serve.TokenEnv+")")
	cmd.Flags().StringArrayVar(&f.allowHosts, "allow-host", nil,
		"also answer requests whose Host is `NAME` (a name or address; any port), e.g. the DNS name scrapers use; repeatable")
	cmd.Flags().IntVar(&f.maxConns, "max-conns", serve.DefaultMaxConns, "hold at most `N` connections at once")
	cmd.Flags().StringVar(&f.tlsCert, "tls-cert", "", "answer HTTPS only, with the certificate (chain) in PEM `FILE`; needs --tls-key")
	cmd.Flags().StringVar(&f.tlsKey, "tls-key", "", "the private key of --tls-cert, in PEM `FILE`")
	g.share(cmd, scanFlags...)
	g.share(cmd, flagPoll)
	cmd.Flags().BoolVar(&f.perNodeMetrics, "per-node-metrics", false,
		"also serve one series a node (heartbeat age, action, blocked time); their number grows with the fleet")
	installRemote(g)
	return cmd
}

// serveEnv is the environment serve's flags are read from: roots given as
// arguments are given roots, so DISPATCHTOP_ROOT then adds none.
func serveEnv(args []string, lookup func(string) (string, bool)) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if name == envName("root") && len(args) > 0 {
			return "", false
		}
		return lookup(name)
	}
}

// serveFlags are serve's own flags.
type serveFlags struct {
	listen, tokenFile string
	tokenFileGiven    bool // --token-file "" names no file; it is not "no flag"
	allowHosts        []string
	maxConns          int
	perNodeMetrics    bool
	tlsCert, tlsKey   string
}

func runServe(ctx context.Context, g *Globals, f serveFlags) error {
	addr, loopback, err := serve.ListenAddress(f.listen)
	if err != nil {
		return usageError(err)
	}
	if f.maxConns < 1 {
		return usageError(fmt.Errorf("--max-conns %d: want at least 1", f.maxConns))
	}
	for _, name := range f.allowHosts {
		if err := serve.ValidateAllowHost(name); err != nil {
			return usageError(err)
		}
	}
	if f.tokenFileGiven && strings.TrimSpace(f.tokenFile) == "" {
		return usageError(fmt.Errorf("--token-file %q names no file", f.tokenFile))
	}
	token, err := serve.ReadToken(f.tokenFile, os.LookupEnv)
	if err != nil {
		return usageError(err)
	}
	tlsConfig, err := serve.LoadTLS(f.tlsCert, f.tlsKey)
	if err != nil {
		return usageError(err)
	}
	opts, err := g.ScanOptions()
	if err != nil {
		return err
	}
	start := time.Now()
	w, err := scanner.NewWatcher(opts, scanner.WatchOptions{Poll: g.Poll})
	if err != nil {
		return usageError(err)
	}
	// Released on every way out, a failed listen included; Close is safe
	// beside Run and after it.
	defer w.Close()
	scanTime := time.Since(start)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return failure(fmt.Errorf("serve: %w", err))
	}
	srv := serve.New(serve.Options{
		Snapshot: w.Snapshot, Token: token, ScanDuration: scanTime, Version: versionString(), ErrorLog: g.Stderr,
		Listen: addr, AllowHosts: f.allowHosts, MaxConns: f.maxConns, PerNodeMetrics: f.perNodeMetrics,
		TLS: tlsConfig,
	})

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watchErr := make(chan error, 1)
	go func() { watchErr <- w.Run(ctx) }()
	go srv.Follow(ctx, w.Updates())

	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
	}
	fmt.Fprintf(g.Stderr, "dispatchtop serve: listening on %s://%s (%s, %s, %s), %d nodes, scanned in %s\n",
		scheme, ln.Addr(), serve.MetricsPath, serve.SnapshotPath, serve.WatchPath, w.Snapshot().NodeCount(), scanTime.Round(time.Millisecond))
	switch {
	case !loopback && token == "":
		fmt.Fprintf(g.Stderr, "dispatchtop serve: warning: %s is reachable from other machines and no token is set (--token-file or $%s)\n",
			ln.Addr(), serve.TokenEnv)
	case !loopback && tlsConfig == nil:
		fmt.Fprintf(g.Stderr, "dispatchtop serve: warning: %s is reachable from other machines and its token crosses the network in clear text (--tls-cert and --tls-key)\n",
			ln.Addr())
	}
	serveErr := srv.Serve(ctx, ln)
	cancel()
	if werr := <-watchErr; werr != nil && !errors.Is(werr, context.Canceled) {
		return failure(fmt.Errorf("watch: %w", werr))
	}
	if serveErr != nil {
		return failure(serveErr)
	}
	return nil
}
