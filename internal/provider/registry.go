package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mapfarm/mapfarm/internal/feature"
)

// Registry is the program's providers, in a fixed order. The order matters twice, and is the
// one the service-definition reference describes: a source that names several providers is
// decoded by the first of them (which reports the conflict), and a source that names none by
// the last (which reports what is missing).
type Registry struct {
	providers []Provider
}

// NewRegistry returns a registry of ps, in that order. Two providers with one name are a
// programming error: NewRegistry panics, as http.ServeMux does on a duplicate pattern.
func NewRegistry(ps ...Provider) *Registry {
	seen := map[string]bool{}
	for _, p := range ps {
		if seen[p.Name()] {
			panic(fmt.Sprintf("provider: %q registered twice", p.Name()))
		}
		seen[p.Name()] = true
	}
	return &Registry{providers: slices.Clone(ps)}
}

// For returns the provider named name.
func (r *Registry) For(name string) (Provider, bool) {
	for _, p := range r.providers {
		if p.Name() == name {
			return p, true
		}
	}
	return nil, false
}

// Keys lists every key a source mapping may hold: each provider's name and keys.
func (r *Registry) Keys() []string {
	var out []string
	for _, p := range r.providers {
		for _, k := range append([]string{p.Name()}, p.Keys()...) {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// NewSessions starts one load's or one catalog's use of the providers; each provider's Session
// starts when a source first needs it.
func (r *Registry) NewSessions(env Env) *Sessions {
	return &Sessions{r: r, env: env, open: map[string]Session{}}
}

// Sessions are the providers' sessions of one load or one catalog.
type Sessions struct {
	r     *Registry
	env   Env
	open  map[string]Session
	order []string
}

// session returns the Session of p, started once.
func (s *Sessions) session(p Provider) Session {
	ss, ok := s.open[p.Name()]
	if !ok {
		ss = p.NewSession(s.env)
		s.open[p.Name()] = ss
		s.order = append(s.order, p.Name())
	}
	return ss
}

// Decode picks the provider of the source mapping src and decodes it with that provider's
// session. The rules, in order:
//   - a key that only one provider reads (PostGIS's sql) in a source of another provider is
//     reported as belonging to that one;
//   - the first provider whose name is a key decodes the source, and reports as a conflict any
//     key it does not read;
//   - a source naming no provider is decoded by the last one.
//
// It returns the provider that decoded the source (nil when none could) with the session's
// answer.
func (s *Sessions) Decode(src Keys) (Provider, Definition, *Schema) {
	var chosen Provider
	for _, p := range s.r.providers {
		if src.Has(p.Name()) {
			chosen = p
			break
		}
	}
	for _, p := range s.r.providers {
		if p == chosen {
			continue
		}
		own := s.exclusive(p)
		for _, k := range own {
			if src.Has(k) {
				src.Errorf("", "source: %s belong to %s sources", list(own), p.Name())
				return nil, nil, nil
			}
		}
	}
	if chosen == nil {
		chosen = s.r.providers[len(s.r.providers)-1]
	}
	def, schema := s.session(chosen).Decode(src)
	return chosen, def, schema
}

// exclusive lists the keys only p reads.
func (s *Sessions) exclusive(p Provider) []string {
	var out []string
	for _, k := range p.Keys() {
		shared := false
		for _, q := range s.r.providers {
			if q != p && (q.Name() == k || slices.Contains(q.Keys(), k)) {
				shared = true
			}
		}
		if !shared {
			out = append(out, k)
		}
	}
	return out
}

// list joins keys as "a, b and c".
func list(keys []string) string {
	if len(keys) < 2 {
		return strings.Join(keys, "")
	}
	return strings.Join(keys[:len(keys)-1], ", ") + " and " + keys[len(keys)-1]
}

// Describe reads the schema of def at load, when its provider can (see Describer).
func (s *Sessions) Describe(def Definition) (*Schema, bool) {
	p, ok := s.r.For(def.Provider())
	if !ok {
		return nil, false
	}
	d, ok := s.session(p).(Describer)
	if !ok {
		return nil, false
	}
	return d.Describe(def)
}

// Open opens def with its provider's session.
func (s *Sessions) Open(ctx context.Context, def Definition) (feature.Source, error) {
	p, ok := s.r.For(def.Provider())
	if !ok {
		return nil, fmt.Errorf("no provider %q", def.Provider())
	}
	return s.session(p).Open(ctx, def)
}

// Close closes every session that started, in the order they did.
func (s *Sessions) Close() error {
	var errs []error
	for _, name := range s.order {
		errs = append(errs, s.open[name].Close())
	}
	s.open, s.order = map[string]Session{}, nil
	return errors.Join(errs...)
}
