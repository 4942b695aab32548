// Package cloudsyaml reads one entry of an OpenStack clouds.yaml and
// turns it into a gophercloud service client, the same way for every
// client of this project (the Ironic driver, the Placement client, the
// reconciler's Nova client): Keystone password, token or application
// credential authentication, no authentication (auth_type none, as a
// standalone Ironic is described), HTTP basic authentication
// (auth_type http_basic), endpoint overrides, and the entry's TLS
// settings (cacert, cert, key, verify).
//
// A setting it cannot honour is a configuration error naming the file,
// the line and the key; it never panics on a missing section.
package cloudsyaml

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Source names an entry: Cloud in File, or when File is empty in the
// first of $OS_CLIENT_CONFIG_FILE, ./clouds.yaml,
// ~/.config/openstack/clouds.yaml and /etc/openstack/clouds.yaml that
// exists (the places openstacksdk and gophercloud look).
type Source struct {
	File  string
	Cloud string
}

// Auth types an entry may name. The aliases are keystoneauth's names for
// the same plugins.
const (
	AuthPassword  = "password" // v3password
	AuthToken     = "token"    // v3token
	AuthAppCred   = "v3applicationcredential"
	AuthNone      = "none"       // noauth
	AuthHTTPBasic = "http_basic" // Ironic's and Placement's basic auth
	AuthAdmin     = "admin_token"
)

// canonicalAuth maps an auth_type to its constant; false when unknown.
func canonicalAuth(t string) (string, bool) {
	switch t {
	case "", "password", "v3password":
		return AuthPassword, true
	case "token", "v3token":
		return AuthToken, true
	case "v3applicationcredential", "applicationcredential":
		return AuthAppCred, true
	case "none", "noauth":
		return AuthNone, true
	case "http_basic":
		return AuthHTTPBasic, true
	case "admin_token", "token_endpoint":
		return AuthAdmin, true
	}
	return "", false
}

// cloudDoc is the part of an entry this package reads; keys it does not
// know (identity_api_version, <service>_api_version, ...) are ignored.
type cloudDoc struct {
	AuthType         string   `yaml:"auth_type"`
	Auth             *authDoc `yaml:"auth"`
	RegionName       string   `yaml:"region_name"`
	Interface        string   `yaml:"interface"`
	EndpointType     string   `yaml:"endpoint_type"`
	Verify           *bool    `yaml:"verify"`
	CACert           string   `yaml:"cacert"`
	Cert             string   `yaml:"cert"`
	Key              string   `yaml:"key"`
	EndpointOverride string   `yaml:"endpoint_override"`
	Profile          string   `yaml:"profile"`
	Cloud            string   `yaml:"cloud"`
	// Rest holds <service>_endpoint_override among the unknown keys.
	Rest map[string]any `yaml:",inline"`
}

type authDoc struct {
	AuthURL                     string `yaml:"auth_url"`
	Endpoint                    string `yaml:"endpoint"`
	Username                    string `yaml:"username"`
	UserID                      string `yaml:"user_id"`
	Password                    string `yaml:"password"`
	Token                       string `yaml:"token"`
	ProjectName                 string `yaml:"project_name"`
	ProjectID                   string `yaml:"project_id"`
	UserDomainName              string `yaml:"user_domain_name"`
	UserDomainID                string `yaml:"user_domain_id"`
	ProjectDomainName           string `yaml:"project_domain_name"`
	ProjectDomainID             string `yaml:"project_domain_id"`
	DomainName                  string `yaml:"domain_name"`
	DomainID                    string `yaml:"domain_id"`
	SystemScope                 string `yaml:"system_scope"`
	ApplicationCredentialID     string `yaml:"application_credential_id"`
	ApplicationCredentialName   string `yaml:"application_credential_name"`
	ApplicationCredentialSecret string `yaml:"application_credential_secret"`
}

// Entry is a read clouds.yaml entry, ready to build clients.
type Entry struct {
	// File and Cloud say where the entry came from.
	File, Cloud string
	// AuthType is the canonical auth type (one of the Auth constants).
	AuthType string

	doc   cloudDoc
	lines map[string]int // key path (auth.auth_url) → line
	tls   *tls.Config    // nil: the entry sets nothing about TLS
}

// Error is an error of Read: the entry, its clouds.yaml or secure.yaml
// cannot be used as written. Read touches no network, so an Error is
// always a configuration error, whoever reads the entry.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Read reads src's entry and checks what can be checked without a
// network: the auth type, the credentials it needs and the TLS files.
// Its errors are *Error.
func Read(src Source) (*Entry, error) {
	e, err := read(src)
	if err != nil {
		return nil, &Error{Err: err}
	}
	return e, nil
}

// read is Read before its errors are marked.
func read(src Source) (*Entry, error) {
	if src.Cloud == "" {
		return nil, errors.New("clouds.yaml: no cloud named")
	}
	path, err := locate(src.File)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("clouds.yaml: %w", err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, syntaxError(path, err)
	}
	node, line, err := entryNode(&root, path, src.Cloud)
	if err != nil {
		return nil, err
	}
	e := &Entry{File: path, Cloud: src.Cloud, lines: map[string]int{"": line}}
	if err := node.Decode(&e.doc); err != nil {
		return nil, fmt.Errorf("%s:%d: clouds.%s: %w", path, node.Line, src.Cloud, err)
	}
	recordLines(node, "", e.lines)
	if err := e.mergeSecure(filepath.Join(filepath.Dir(path), "secure.yaml")); err != nil {
		return nil, err
	}
	if err := e.check(); err != nil {
		return nil, err
	}
	if e.tls, err = e.tlsConfig(); err != nil {
		return nil, err
	}
	return e, nil
}

// mergeSecure lays the entry's part of secure.yaml (next to clouds.yaml,
// where operators keep passwords apart) over the entry: each setting it
// gives wins, as in openstacksdk.
func (e *Entry) mergeSecure(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("secure.yaml: %w", err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return syntaxError(path, err)
	}
	node, line, err := entryNode(&root, path, e.Cloud)
	if err != nil {
		return nil // secure.yaml says nothing of this cloud
	}
	var sec cloudDoc
	if err := node.Decode(&sec); err != nil {
		return fmt.Errorf("%s:%d: clouds.%s: %w", path, line, e.Cloud, err)
	}
	if sec.Auth != nil && e.doc.Auth == nil {
		e.doc.Auth = &authDoc{}
	}
	overlay(reflect.ValueOf(&e.doc).Elem(), reflect.ValueOf(&sec).Elem())
	return nil
}

// overlay copies every set string, *bool and *authDoc field of src over
// dst, field by field within auth.
func overlay(dst, src reflect.Value) {
	for i := range dst.NumField() {
		d, s := dst.Field(i), src.Field(i)
		switch {
		case s.Kind() == reflect.String && s.String() != "":
			d.SetString(s.String())
		case s.Kind() == reflect.Pointer && !s.IsNil() && s.Elem().Kind() == reflect.Struct:
			overlay(d.Elem(), s.Elem())
		case s.Kind() == reflect.Pointer && !s.IsNil():
			d.Set(s)
		}
	}
}

// syntaxError is a YAML syntax error as path:line: message, the way
// every other error of an entry names its place.
func syntaxError(path string, err error) error {
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("%s:%s: %s", path, m[1], m[2])
	}
	return fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
}

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// locate finds the clouds.yaml to read.
func locate(file string) (string, error) {
	if file != "" {
		return file, nil
	}
	var places []string
	if p := os.Getenv("OS_CLIENT_CONFIG_FILE"); p != "" {
		places = append(places, p)
	}
	places = append(places, "clouds.yaml")
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		places = append(places, filepath.Join(d, "openstack", "clouds.yaml"))
	} else if h, err := os.UserHomeDir(); err == nil {
		places = append(places, filepath.Join(h, ".config", "openstack", "clouds.yaml"))
	}
	places = append(places, "/etc/openstack/clouds.yaml")
	for _, p := range places {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("clouds.yaml: not found in %s", strings.Join(places, ", "))
}

// entryNode finds clouds.<cloud> in the document, and the line of its
// name.
func entryNode(root *yaml.Node, path, cloud string) (*yaml.Node, int, error) {
	doc := root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = doc.Content[0]
	}
	clouds, cloudsLine := child(doc, "clouds")
	if clouds == nil || clouds.Kind != yaml.MappingNode {
		return nil, 0, fmt.Errorf("%s: no clouds: section", path)
	}
	node, line := child(clouds, cloud)
	if node == nil {
		return nil, 0, fmt.Errorf("%s:%d: clouds: cloud %q not found (clouds: %s)", path, cloudsLine, cloud, strings.Join(keys(clouds), ", "))
	}
	if node.Kind != yaml.MappingNode {
		return nil, 0, fmt.Errorf("%s:%d: clouds.%s: expected a mapping", path, line, cloud)
	}
	return node, line, nil
}

// child is key's value in mapping m and the key's line.
func child(m *yaml.Node, key string) (*yaml.Node, int) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, 0
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1], m.Content[i].Line
		}
	}
	return nil, 0
}

func keys(m *yaml.Node) []string {
	var out []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		out = append(out, m.Content[i].Value)
	}
	return out
}

// recordLines maps every key path under m to its line.
func recordLines(m *yaml.Node, prefix string, lines map[string]int) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := prefix + m.Content[i].Value
		lines[k] = m.Content[i].Line
		if m.Content[i+1].Kind == yaml.MappingNode {
			recordLines(m.Content[i+1], k+".", lines)
		}
	}
}

// errorf is a configuration error at key (a path under the entry, ""
// for the entry itself).
func (e *Entry) errorf(key, format string, args ...any) error {
	line, ok := e.lines[key]
	full := "clouds." + e.Cloud
	if key != "" {
		full += "." + key
	}
	if !ok {
		// A missing key: point at its parent (or the entry).
		parent := key[:max(strings.LastIndex(key, "."), 0)]
		if line, ok = e.lines[parent]; !ok {
			line = e.lines[""]
		}
	}
	return fmt.Errorf("%s:%d: %s: %s", e.File, line, full, fmt.Sprintf(format, args...))
}

// check validates the auth type and the settings it needs.
func (e *Entry) check() error {
	d := &e.doc
	at, ok := canonicalAuth(d.AuthType)
	if !ok {
		return e.errorf("auth_type", "%q is not supported (supported: password, token, v3applicationcredential, none, http_basic, admin_token)", d.AuthType)
	}
	e.AuthType = at
	if d.Profile != "" || d.Cloud != "" {
		return e.errorf("profile", "public cloud profiles (profile, cloud) are not supported: write the entry out")
	}
	a := d.Auth
	switch at {
	case AuthPassword, AuthToken, AuthAppCred:
		if a == nil {
			return e.errorf("auth", "required with auth_type %s (a standalone service without Keystone is auth_type: none or http_basic with an endpoint override)", at)
		}
		if a.AuthURL == "" {
			return e.errorf("auth.auth_url", "required with auth_type %s", at)
		}
	}
	switch at {
	case AuthPassword:
		if a.Username == "" && a.UserID == "" {
			return e.errorf("auth.username", "required with auth_type password (or auth.user_id)")
		}
		if a.Password == "" {
			return e.errorf("auth.password", "required with auth_type password")
		}
	case AuthToken, AuthAdmin:
		if a == nil || a.Token == "" {
			return e.errorf("auth.token", "required with auth_type %s", at)
		}
	case AuthAppCred:
		if a.ApplicationCredentialSecret == "" {
			return e.errorf("auth.application_credential_secret", "required with auth_type v3applicationcredential")
		}
	case AuthHTTPBasic:
		if a == nil || a.Username == "" || a.Password == "" {
			return e.errorf("auth", "auth.username and auth.password are required with auth_type http_basic")
		}
	}
	switch strings.TrimSuffix(coalesce(d.Interface, d.EndpointType), "URL") {
	case "", "public", "internal", "admin":
	default:
		key := "interface"
		if d.Interface == "" {
			key = "endpoint_type"
		}
		return e.errorf(key, "%q is not an interface (public, internal or admin)", coalesce(d.Interface, d.EndpointType))
	}
	if a != nil && a.SystemScope != "" && a.SystemScope != "all" {
		return e.errorf("auth.system_scope", "%q is not supported (only all)", a.SystemScope)
	}
	return nil
}

// endpointOverride is the URL that replaces the catalog's for service
// (a service type such as baremetal): <service>_endpoint_override, else
// endpoint_override, else auth.endpoint; "" when none is set.
func (e *Entry) endpointOverride(service string) (url, key string) {
	key = strings.ReplaceAll(service, "-", "_") + "_endpoint_override"
	if v, ok := e.doc.Rest[key].(string); ok && v != "" {
		return v, key
	}
	if e.doc.EndpointOverride != "" {
		return e.doc.EndpointOverride, "endpoint_override"
	}
	if e.doc.Auth != nil && e.doc.Auth.Endpoint != "" {
		return e.doc.Auth.Endpoint, "auth.endpoint"
	}
	return "", ""
}
