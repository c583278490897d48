package serve

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
)

// hostPolicy is the list of Host names serve answers for. It defeats DNS
// rebinding: a web page that points its own name at this machine reaches
// serve through the visitor's browser, but the browser still sends that
// name as Host. Only the name counts, not the port: the name is what such
// a page controls.
//
// Always served: localhost and every loopback address. Besides them, the
// host of the listen address; for a wildcard listen (0.0.0.0, [::]), every
// IP address (a browser sends an address as Host only for a page of that
// address's own origin, or cross-origin, where it cannot read the answer)
// and this machine's host name. Further names come from --allow-host. An
// empty Host is never served.
type hostPolicy struct {
	names map[string]bool // as hostName leaves them
	anyIP bool
}

func newHostPolicy(listen string, allow []string) hostPolicy {
	p := hostPolicy{names: map[string]bool{}}
	add := func(name string) {
		if name = hostName(name); name != "" {
			p.names[name] = true
		}
	}
	add("localhost")
	for _, name := range allow {
		add(name)
	}
	host := hostName(listen)
	if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
		add(host)
		return p
	}
	p.anyIP = true
	if name, err := os.Hostname(); err == nil {
		add(name)
		// The short name too: it resolves through the search domains this
		// machine's operator set, not through a page's DNS.
		short, _, _ := strings.Cut(name, ".")
		add(short)
	}
	return p
}

func (p hostPolicy) allows(hostport string) bool {
	host := hostName(hostport)
	if p.names[host] {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || p.anyIP)
}

// hostName is the comparable name of a Host value or an address: without
// port or brackets, in lower case, without a final dot.
func hostName(hostport string) string {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
	}
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// checkHost answers 421 Misdirected Request to a Host the policy does not
// allow, before anything else: a rebinding page does not even learn that a
// token is wanted.
func (s *Server) checkHost(next http.Handler) http.Handler {
	policy := newHostPolicy(s.opts.Listen, s.opts.AllowHosts)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !policy.allows(r.Host) {
			http.Error(w, fmt.Sprintf("dispatchtop serve does not answer for host %q (serve --allow-host NAME adds a name)", r.Host),
				http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ValidateAllowHost checks an --allow-host value: a host name or address,
// with or without a port, and nothing else.
func ValidateAllowHost(name string) error {
	bad := func(why string) error { return fmt.Errorf("--allow-host %q: %s", name, why) }
	switch {
	case strings.TrimSpace(name) == "":
		return bad("empty")
	case strings.ContainsAny(name, "/@ \t\r\n"):
		return bad("want a host name or address, without scheme, user or path")
	case hostName(name) == "":
		return bad("no host")
	}
	return nil
}
