package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/capbroker/capbroker/clientconfig"
	"github.com/capbroker/capbroker/gateway"
	"github.com/capbroker/capbroker/identity"
	"github.com/capbroker/capbroker/source"
)

// gatewayProfiles reads the user's profiles and decides which the
// gateway serves: --profile's (the client's entry names it), then the
// one capbroker.yaml chooses (a project's own file may: a profile only
// narrows). An unknown name is an error saying where it was named and
// which profiles there are. It also returns the files to watch.
func (m *Main) gatewayProfiles(named string, yamlPath string) (*gateway.Profiles, []string, error) {
	ps, err := m.loadProfiles()
	if err != nil {
		return nil, nil, fmt.Errorf("gateway: %w", err)
	}
	out := &gateway.Profiles{Named: ps}
	var watch []string
	if p := m.profilesPath(); p != "" {
		watch = append(watch, p)
	}
	if named != "" {
		p, err := ps.Lookup(named, "gateway --profile")
		if err != nil {
			return nil, nil, usageError{err}
		}
		out.Serve, out.ServeNames = append(out.Serve, p), append(out.ServeNames, named)
	}
	wd, _ := os.Getwd()
	cfg, path, err := m.loadConfig(yamlPath, wd)
	if err != nil {
		return nil, nil, err
	}
	if path != "" {
		watch = append(watch, absPath(path))
	} else {
		watch = append(watch, absPath(filepath.Join(wd, source.ConfigName)))
	}
	if cfg != nil && cfg.Profile != "" {
		p, err := ps.Lookup(cfg.Profile, path+": profile")
		if err != nil {
			return nil, nil, err
		}
		out.Serve, out.ServeNames = append(out.Serve, p), append(out.ServeNames, cfg.Profile+" ("+path+")")
	}
	return out, watch, nil
}

// narrow keeps the servers the profiles allow: the others are not
// started. A server a profile names that no place defines is a note.
func (up *upstreams) narrow(ps *gateway.Profiles) {
	if ps == nil || len(ps.Serve) == 0 {
		return
	}
	kept := up.servers[:0:0]
	for _, s := range up.servers {
		ok := true
		for i := range ps.Serve {
			ok = ok && ps.Serve[i].AllowsServer(s.Name)
		}
		if ok {
			kept = append(kept, s)
		}
	}
	for i, p := range ps.Serve {
		for _, name := range p.Servers {
			if !slices.ContainsFunc(up.servers, func(s gateway.ServerConfig) bool { return s.Name == name }) {
				up.notes = append(up.notes, fmt.Sprintf("profile %s names server %s, which no place read defines", ps.ServeNames[i], name))
			}
		}
	}
	up.servers = kept
}

// checkIdentityProfiles refuses identities that name a profile not
// defined, saying which identity of which file.
func checkIdentityProfiles(set *identity.Set, file string, ps *gateway.Profiles) error {
	if set == nil {
		return nil
	}
	var errs []string
	for _, id := range set.Identities() {
		if id.Profile.Name == "" {
			continue
		}
		if _, err := ps.Named.Lookup(id.Profile.Name, fmt.Sprintf("gateway --identities %s: identity %s", file, id.Name)); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return usageError{fmt.Errorf("%s", strings.Join(errs, "\n"))}
	}
	return nil
}

// useProfile makes the client's gateway entry serve only profile name:
// "gateway --profile NAME" for a gateway of its own, "?profile=NAME" on
// the shared gateway's URL. A profile not defined is an error, and
// nothing is written.
func (m *Main) useProfile(gw *clientconfig.Gateway, name string) error {
	ps, err := m.loadProfiles()
	if err != nil {
		return err
	}
	if _, err := ps.Lookup(name, "client add --profile"); err != nil {
		return usageError{fmt.Errorf("%w; nothing written", err)}
	}
	if gw.URL != "" {
		gw.URL = withQuery(gw.URL, "profile", name)
		return nil
	}
	gw.Args = append(gw.Args, "--profile", name)
	return nil
}

// withQuery is u with the query parameter key=value added.
func withQuery(u, key, value string) string {
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + key + "=" + url.QueryEscape(value)
}
