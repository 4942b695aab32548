package config

import (
	"net"
	"strings"
)

// A listener that answers the network must not be open by accident: the
// API with noauth2 (where any X-Auth-Token names its user, "admin"
// included) only with api.allow_insecure_noauth, and a token-checked
// local endpoint only with a token. Sample files carry placeholders, which
// are refused until replaced.

// IsLoopback reports whether a listen address binds loopback only. An
// empty host is every interface; a name other than localhost may resolve
// to anything, so it counts as beyond loopback.
func IsLoopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// isPlaceholder reports whether a secret is a sample's stand-in.
func isPlaceholder(secret string) bool {
	s := strings.ToLower(strings.TrimSpace(secret))
	s = strings.NewReplacer("-", "", "_", "", " ", "").Replace(s)
	return strings.HasPrefix(s, "changeme") || (strings.HasPrefix(s, "<") && strings.HasSuffix(s, ">"))
}

// checkSafety checks the rules above.
// An address that is not valid at all has its own error already.
func checkSafety(c *Config, p *problems) {
	exposed := func(listen string) bool { return listenError(listen) == nil && !IsLoopback(listen) }
	if c.API.AuthStrategy == "noauth2" && exposed(c.API.Listen) && !c.API.AllowInsecureNoauth {
		p.bad("api.listen", "%q is reachable beyond loopback with api.auth_strategy noauth2, where any client can claim to be admin: "+
			"set api.auth_strategy to keystone, listen on 127.0.0.1, or accept the risk with api.allow_insecure_noauth: true", c.API.Listen)
	}
	for _, s := range []struct{ key, value string }{
		{"reconciler.token", c.Reconciler.Token},
		{"reconciler.placement.token", c.Reconciler.Placement.Token},
		{"reconciler.nova.token", c.Reconciler.Nova.Token},
		{"agent.local.token", c.Agent.Local.Token},
		{"agent.placement.token", c.Agent.Placement.Token},
		{"agent.service_token", c.Agent.ServiceToken},
		{"agent.ironic.token", c.Agent.Ironic.Token},
		{"keystone_authtoken.password", c.KeystoneAuthToken.Password},
	} {
		if isPlaceholder(s.value) {
			p.bad(s.key, "%q is a placeholder: set a secret of your own", s.value)
		}
	}
	if c.Reconciler.Enabled && c.Reconciler.Token == "" && exposed(c.Reconciler.Listen) {
		p.bad("reconciler.listen", "%q is reachable beyond loopback but reconciler.token is empty: set a token, or listen on 127.0.0.1", c.Reconciler.Listen)
	}
	if c.Agent.Local.Listen != "" && c.Agent.Local.Token == "" && exposed(c.Agent.Local.Listen) {
		p.bad("agent.local.listen", "%q is reachable beyond loopback but agent.local.token is empty: set a token, or listen on 127.0.0.1", c.Agent.Local.Listen)
	}
}
