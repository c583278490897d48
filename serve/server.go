package serve

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/report"
)

// Options configure a Server.
type Options struct {
	// Snapshot returns the newest classified snapshot (the watcher's); it is
	// called on every request and scrape.
	Snapshot func() *model.Snapshot
	// Token, when not empty, is the bearer token every request must carry.
	Token string
	// ScanDuration is how long the discovery scan behind the model took.
	ScanDuration time.Duration
	// Version is the build_info label.
	Version string
	// Now is the clock ages are measured against (time.Now when nil).
	Now func() time.Time
	// ErrorLog receives what the HTTP server and the exposition cannot
	// answer to a client (nil: discarded).
	ErrorLog io.Writer
	// Listen is the address served, as ListenAddress returns it; its host
	// is answered for besides the loopback names (see hostPolicy). Empty:
	// the loopback names only.
	Listen string
	// AllowHosts are further Host names answered for (--allow-host).
	AllowHosts []string
	// MaxConns caps the connections held at once (DefaultMaxConns when 0
	// or less).
	MaxConns int
	// PerNodeMetrics adds the series with a node label (heartbeat age,
	// recommended action, blocked time of each node) to the aggregates per
	// session and role. Off by default: a series a node grows without bound
	// as sessions come and go.
	PerNodeMetrics bool
	// MaxSessionLabels caps the sessions that get a session label of their
	// own (DefaultMaxSessionLabels when 0 or less); finished sessions and
	// those past the cap are counted under SessionFinished and
	// SessionOther, so the series stay bounded as sessions come and go.
	MaxSessionLabels int
	// TLS, when set, is the configuration Serve answers with: HTTPS only,
	// so the bearer token never crosses the network in clear text.
	TLS *tls.Config
	// Heartbeat is how often a quiet watch stream sends a heartbeat line
	// (DefaultHeartbeat when 0 or less).
	Heartbeat time.Duration
}

// httpTimeouts bound how long a client may hold a connection, and so one
// of the MaxConns slots.
type httpTimeouts struct {
	readHeader, read, write, idle time.Duration
}

// defaultTimeouts: a client sends its GET as soon as it connects, so 5 s
// for the header frees the slot of one that never does; writing allows
// 60 s for 11 MB of snapshot (10,000 nodes) to a slow client; a keep-alive
// connection idles 30 s, longer than a fleet view's 2 s poll, shorter than
// a scrape interval's worth of pinned slots.
var defaultTimeouts = httpTimeouts{readHeader: 5 * time.Second, read: 10 * time.Second, write: 60 * time.Second, idle: 30 * time.Second}

// Server answers /metrics and /api/v1/snapshot from the newest snapshot.
type Server struct {
	opts        Options
	registry    *prometheus.Registry
	transitions *prometheus.CounterVec
	blocked     *blockedTracker
	handler     http.Handler
	timeouts    httpTimeouts
	log         *log.Logger // nil when errors are discarded
	// lastSize is the size of the last snapshot rendered, plain and
	// gzipped: the next one's buffer starts that large, not grown by
	// doubling to 11 MB (10,000 nodes) at every request.
	lastSize [2]atomic.Int64
	// hub numbers the snapshots for the watch stream and the ETag.
	hub *hub
}

// New builds the registry (its own, never the global default) and the
// handler.
func New(opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Snapshot == nil {
		opts.Snapshot = func() *model.Snapshot { return nil }
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	s := &Server{opts: opts, registry: prometheus.NewRegistry(), blocked: newBlockedTracker(), timeouts: defaultTimeouts,
		hub: newHub(opts.Now)}
	s.transitions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricTransitions,
		Help: "State and flag transitions seen by the live engine, by kind (appeared, vanished, state, flags) and the state after.",
	}, []string{"kind", "to"})
	// Every series exists from the start, at zero: rate() over a quiet fleet
	// reads 0, not "no data".
	s.transitions.WithLabelValues(KindVanished, "none")
	for _, st := range model.States {
		for _, kind := range []string{KindAppeared, KindState, KindFlags} {
			s.transitions.WithLabelValues(kind, string(st))
		}
	}
	col := newSnapshotCollector(opts.Snapshot, opts.Now, s.blocked, opts.ScanDuration, opts.Version, opts.PerNodeMetrics)
	col.maxSessions = opts.MaxSessionLabels
	s.registry.MustRegister(
		s.transitions,
		col,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)

	hopts := promhttp.HandlerOpts{
		ErrorHandling:     promhttp.ContinueOnError,
		Registry:          s.registry,
		EnableOpenMetrics: true,
	}
	if opts.ErrorLog != nil {
		s.log = log.New(opts.ErrorLog, "dispatchtop serve: ", log.LstdFlags)
		hopts.ErrorLog = s.log
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+MetricsPath, promhttp.HandlerFor(s.registry, hopts))
	mux.HandleFunc("GET "+SnapshotPath, s.serveSnapshot)
	mux.HandleFunc("GET "+WatchPath, s.serveWatch)
	mux.HandleFunc("GET /{$}", s.serveIndex)
	s.handler = s.checkHost(s.authorize(mux))
	return s
}

// Registry is the server's own registry (for tests and embedding).
func (s *Server) Registry() *prometheus.Registry { return s.registry }

// Handler serves every path, to allowed Host names only, behind the bearer
// token when one is set.
func (s *Server) Handler() http.Handler { return s.handler }

// Observe counts transitions and notes when nodes became blocked.
func (s *Server) Observe(trans []model.Transition) {
	for _, t := range trans {
		s.transitions.WithLabelValues(transitionKind(t), toLabel(t)).Inc()
	}
	s.blocked.observe(trans)
}

// Follow consumes the watcher's updates until they close or ctx is done,
// observing their transitions and numbering their snapshots for the watch
// stream. An update this reader has not taken yet
// keeps its transitions when the next is merged into it, up to
// model.MaxPendingTransitions (model.Update).
func (s *Server) Follow(ctx context.Context, updates <-chan model.Update) {
	for {
		select {
		case <-ctx.Done():
			return
		case u, ok := <-updates:
			if !ok {
				return
			}
			s.Observe(u.Transitions)
			s.hub.sync(u.Snapshot)
		}
	}
}

// serveSnapshot writes the dispatchtop/v1 document, the same as
// `--once --json`, with ages measured at the time of the request. The
// document is rendered whole (compressed, when the client takes gzip)
// before the status is sent: one that cannot be encoded is a 500 with one
// line, never a 200 with an empty or cut body.
func (s *Server) serveSnapshot(w http.ResponseWriter, r *http.Request) {
	snap := s.opts.Snapshot()
	if snap == nil {
		http.Error(w, "no snapshot yet", http.StatusServiceUnavailable)
		return
	}
	// The watcher republishes only when something may have changed; the
	// ages in the document, the one each reason quotes included, are as of
	// now, the classification as of the snapshot (which the watcher keeps
	// current on its tick).
	// The ETag is the classification's revision: a fleet view polling a
	// host with no watch stream re-reads it only when a node moved.
	tag := s.etag(snap)
	w.Header().Add("Vary", "Accept-Encoding")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("ETag", tag)
	if etagMatches(r.Header.Get("If-None-Match"), tag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	at := *snap
	at.GeneratedAt = s.opts.Now()
	// A fleet view polls every 2 s; 10,000 nodes are ~11 MB of indented
	// JSON and a tenth of that compressed.
	gzipped := acceptsGzip(r.Header.Get("Accept-Encoding"))
	size := &s.lastSize[0]
	if gzipped {
		size = &s.lastSize[1]
	}
	body, err := renderSnapshot(&at, gzipped, int(size.Load()))
	if err != nil {
		s.logf("GET %s: %v", SnapshotPath, err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if gzipped {
		w.Header().Set("Content-Encoding", "gzip")
	}
	size.Store(int64(body.Len()))
	w.Header().Set("Content-Length", strconv.Itoa(body.Len()))
	if _, err := w.Write(body.Bytes()); err != nil {
		s.logf("write %s: %v", SnapshotPath, err)
	}
}

// etagMatches reads If-None-Match: "*" or a list naming tag, compared
// weakly (RFC 9110 §13.1.2).
func etagMatches(header, tag string) bool {
	if header == "" {
		return false
	}
	weak := strings.TrimPrefix(tag, "W/")
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == weak {
			return true
		}
	}
	return false
}

// renderSnapshot is the document of snap, its reasons rendered at its
// GeneratedAt, as report.WriteJSON writes it for --once --json, gzipped
// when asked, into a buffer with room for sizeHint bytes and an eighth.
func renderSnapshot(snap *model.Snapshot, gzipped bool, sizeHint int) (*bytes.Buffer, error) {
	var body bytes.Buffer
	body.Grow(sizeHint + sizeHint/8)
	var out io.Writer = &body
	var gz *gzip.Writer
	if gzipped {
		gz, _ = gzip.NewWriterLevel(&body, gzip.BestSpeed) // a valid level: no error
		out = gz
	}
	if err := report.WriteJSON(out, snap); err != nil {
		return nil, fmt.Errorf("encode the snapshot: %w", err)
	}
	if gz != nil {
		if err := gz.Close(); err != nil {
			return nil, fmt.Errorf("encode the snapshot: gzip: %w", err)
		}
	}
	return &body, nil
}

// acceptsGzip reads an Accept-Encoding header: gzip listed without q=0.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q := strings.ReplaceAll(params, " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

func (s *Server) serveIndex(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "dispatchtop serve (read-only)\n\n%s  Prometheus metrics\n%s  the dispatchtop/v1 snapshot (as --once --json)\n%s  its changes as JSON lines (?since=REV resumes)\n",
		MetricsPath, SnapshotPath, WatchPath)
}

// authorize requires `Authorization: Bearer <token>` when a token is set.
// Both sides are hashed first, so the comparison takes the same time
// whatever the length or content of the guess.
func (s *Server) authorize(next http.Handler) http.Handler {
	if s.opts.Token == "" {
		return next
	}
	want := sha256.Sum256([]byte(s.opts.Token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(got))
		if subtle.ConstantTimeCompare(sum[:], want[:]) != 1 || !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="dispatchtop"`)
			http.Error(w, "a valid bearer token is required", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Serve answers on ln, holding at most MaxConns connections at once, until
// ctx is done, then shuts down: requests in flight get a few seconds to
// finish.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ln = newLimitListener(ln, s.opts.MaxConns)
	if s.opts.TLS != nil {
		// Over the limit: a connection holds its slot from its handshake,
		// and net/http sees the *tls.Conn (the handshake under its
		// timeouts, the request's TLS state).
		ln = tls.NewListener(ln, s.opts.TLS)
	}
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.timeouts.readHeader,
		ReadTimeout:       s.timeouts.read,
		WriteTimeout:      s.timeouts.write,
		IdleTimeout:       s.timeouts.idle,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	hs.ErrorLog = s.log
	if s.log == nil {
		hs.ErrorLog = log.New(io.Discard, "", 0)
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := hs.Shutdown(shutdownCtx)
	if serveErr := <-done; serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) && err == nil {
		err = serveErr
	}
	if err != nil {
		return fmt.Errorf("shut down the server on %s: %w", ln.Addr(), err)
	}
	return nil
}

func (s *Server) logf(format string, args ...any) {
	if s.log != nil {
		s.log.Printf(format, args...)
	}
}

// ListenAddress applies the loopback rule: an address without a host
// (":9477") listens on 127.0.0.1, so serve reaches beyond this machine only
// when a non-loopback host (or 0.0.0.0, [::]) is named. It reports whether
// the result is loopback.
func ListenAddress(addr string) (string, bool, error) {
	if addr == "" {
		addr = DefaultListen
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", false, fmt.Errorf("--listen %q: %w", addr, err)
	}
	if port == "" {
		return "", false, fmt.Errorf("--listen %q: no port", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	loopback := host == "localhost"
	if ip := net.ParseIP(host); ip != nil {
		loopback = ip.IsLoopback()
	}
	return net.JoinHostPort(host, port), loopback, nil
}

// ReadToken returns the bearer token: the first line of file when one is
// named, else DISPATCHTOP_TOKEN when it is set; "" means neither is given,
// no token. A source that is given but holds no token (an unreadable file,
// a blank first line, the variable set to "" or blanks) is an error naming
// it: a typo or an empty secret must not turn the protection off.
func ReadToken(file string, lookupEnv func(string) (string, bool)) (string, error) {
	if file == "" {
		v, ok := lookupEnv(TokenEnv)
		if !ok {
			return "", nil
		}
		tok := strings.TrimSpace(v)
		if tok == "" {
			return "", fmt.Errorf("$%s is set but blank: unset it for no token, or set the token", TokenEnv)
		}
		return tok, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("read the token: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	tok := strings.TrimSpace(line)
	if tok == "" {
		return "", fmt.Errorf("read the token: the first line of %s is blank", file)
	}
	return tok, nil
}

// LoadTLS reads --tls-cert and --tls-key: both or neither (nil). The
// server then speaks TLS 1.2 or later only.
func LoadTLS(certFile, keyFile string) (*tls.Config, error) {
	if certFile == "" && keyFile == "" {
		return nil, nil
	}
	if certFile == "" || keyFile == "" {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s, --tls-key %s: %w", certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}
