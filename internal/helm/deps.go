package helm

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"github.com/kubectl-gate/kubectl-gate/internal/fsbound"
)

// DependencyError says a chart needs a dependency that is neither vendored
// under charts/ nor reachable on disk: rendering it would need a remote
// repository or OCI registry. The gate never fetches, so the render has no
// verdict; the error names the dependency so the user can vendor it
// (`helm dependency build`) or point --helm-repo-cache at it.
type DependencyError struct {
	// Chart is the chart that declares the dependency.
	Chart string
	// Name, Version and Repository are the Chart.yaml entry (Version is
	// the Chart.lock version when the chart has a lock file).
	Name, Version, Repository string
	// Cache is the repository cache that was searched, if any.
	Cache string
}

func (e *DependencyError) Error() string {
	where := "not in charts/"
	if e.Cache != "" {
		where += " nor in the repository cache " + e.Cache
	} else {
		where += " (no --helm-repo-cache given)"
	}
	return fmt.Sprintf("chart %s needs dependency %s %s from %s: %s; the gate does not fetch charts",
		e.Chart, e.Name, e.Version, e.Repository, where)
}

// resolveDependencies adds to ch every dependency its Chart.yaml declares
// that charts/ does not hold: file:// repositories are loaded from disk, others
// from the repository cache. What `helm dependency build` would download
// is a *DependencyError. Subcharts are resolved the same way, recursively.
//
// moved records each subchart loaded from a file:// directory: the path
// helm gives its templates under the top chart ("charts/sub",
// "charts/sub/charts/leaf", from prefix) to the directory it was loaded
// from, relative to the top chart's (top).
func resolveDependencies(ch *chart.Chart, dir, cache string, root *fsbound.Root, top, prefix string, moved map[string]string) error {
	have := map[string]bool{}
	dirs := map[*chart.Chart]string{}
	for _, d := range ch.Dependencies() {
		have[d.Name()] = true
		dirs[d] = filepath.Join(dir, "charts", d.Name())
	}
	for _, d := range ch.Metadata.Dependencies {
		if d == nil || have[d.Name] {
			continue
		}
		sub, subDir, err := loadDependency(ch, d, dir, cache, root)
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Repository, "file://") && moved != nil {
			if rel, err := filepath.Rel(top, subDir); err == nil {
				moved[path.Join(prefix, "charts", sub.Name())] = filepath.ToSlash(rel)
			}
		}
		ch.AddDependency(sub)
		have[d.Name] = true
		dirs[sub] = subDir
	}
	for _, sub := range ch.Dependencies() {
		// A subchart's file:// paths are relative to its own directory.
		if err := resolveDependencies(sub, dirs[sub], cache, root, top, path.Join(prefix, "charts", sub.Name()), moved); err != nil {
			return err
		}
	}
	return nil
}

func loadDependency(ch *chart.Chart, d *chart.Dependency, dir, cache string, root *fsbound.Root) (*chart.Chart, string, error) {
	if p, ok := strings.CutPrefix(d.Repository, "file://"); ok {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		// A file:// path is the chart author's: it may not leave the
		// repository (file:///etc, file://../../..), nor may what it holds.
		if err := checkChart(root, p); err != nil {
			return nil, "", fmt.Errorf("loading dependency %s of chart %s (%s): %w", d.Name, ch.Name(), d.Repository, err)
		}
		sub, err := loader.Load(p)
		if err != nil {
			return nil, "", fmt.Errorf("loading dependency %s of chart %s from %s: %w", d.Name, ch.Name(), p, err)
		}
		return sub, p, nil
	}
	version := lockedVersion(ch, d)
	missing := &DependencyError{Chart: ch.Name(), Name: d.Name, Version: version, Repository: d.Repository, Cache: cache}
	if cache == "" {
		return nil, "", missing
	}
	p, err := findArchive(cache, d.Name, version)
	if err != nil {
		return nil, "", err
	}
	if p == "" {
		return nil, "", missing
	}
	sub, err := loader.Load(p)
	if err != nil {
		return nil, "", fmt.Errorf("loading dependency %s of chart %s from %s: %w", d.Name, ch.Name(), p, err)
	}
	if sub.Name() != d.Name {
		return nil, "", fmt.Errorf("loading dependency %s of chart %s: %s holds chart %s", d.Name, ch.Name(), p, sub.Name())
	}
	return sub, p, nil
}

// lockedVersion is the version Chart.lock pins, else the Chart.yaml
// constraint.
func lockedVersion(ch *chart.Chart, d *chart.Dependency) string {
	if ch.Lock != nil {
		for _, l := range ch.Lock.Dependencies {
			if l != nil && l.Name == d.Name && l.Repository == d.Repository {
				return l.Version
			}
		}
	}
	return d.Version
}

// findArchive returns the newest <name>-<version>.tgz in dir whose version
// satisfies the constraint (an exact version matches only itself), or "".
func findArchive(dir, name, constraint string) (string, error) {
	exact := filepath.Join(dir, name+"-"+constraint+".tgz")
	if _, err := os.Stat(exact); err == nil {
		return exact, nil
	}
	c, err := semver.NewConstraint(orAny(constraint))
	if err != nil {
		return "", fmt.Errorf("parsing version %q of dependency %s: %w", constraint, name, err)
	}
	matches, err := filepath.Glob(filepath.Join(dir, name+"-*.tgz"))
	if err != nil {
		return "", fmt.Errorf("searching %s for %s: %w", dir, name, err)
	}
	type cand struct {
		v    *semver.Version
		path string
	}
	var cands []cand
	for _, m := range matches {
		v, err := semver.NewVersion(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), name+"-"), ".tgz"))
		if err == nil && c.Check(v) {
			cands = append(cands, cand{v, m})
		}
	}
	if len(cands) == 0 {
		return "", nil
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].v.GreaterThan(cands[j].v) })
	return cands[0].path, nil
}

func orAny(c string) string {
	if strings.TrimSpace(c) == "" {
		return "*"
	}
	return c
}
