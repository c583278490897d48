package serve

// The serve package's API:
//
//	srv := New(Options{Snapshot: w.Snapshot, Token: tok, Listen: addr, ...})
//	go srv.Follow(ctx, w.Updates())    // counts transitions, tracks blocked-since
//	http.Handler: srv.Handler()        // /metrics, /api/v1/snapshot, /api/v1/watch, /
//	srv.Serve(ctx, ln)                 // MaxConns at once, until ctx is done, then a clean shutdown
//	ListenAddress(addr)                // ":9477" -> "127.0.0.1:9477"; loopback unless explicit
//	ReadToken(file, os.LookupEnv)      // --token-file, else DISPATCHTOP_TOKEN; blank is an error
//	ValidateAllowHost(name)            // an --allow-host value
//
// Paths served.
const (
	MetricsPath  = "/metrics"
	SnapshotPath = "/api/v1/snapshot"
	WatchPath    = "/api/v1/watch"
)

// DefaultListen is where serve listens unless told otherwise: loopback.
const DefaultListen = "127.0.0.1:9477"

// DefaultMaxConns caps the connections serve holds at once unless
// --max-conns says otherwise: many times what a few fleet views and
// scrapers keep open, well below the common descriptor limit of 1024.
const DefaultMaxConns = 256

// TokenEnv names the environment variable holding the bearer token.
const TokenEnv = "DISPATCHTOP_TOKEN"
