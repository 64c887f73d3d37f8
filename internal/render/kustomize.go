package render

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/gcfloor"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
)

// Options configure the in-process kustomize render, as kustomize's flags do.
type Options struct {
	EnableAlphaPlugins bool
	EnableExec         bool
	// LoadRestrictorNone is --load-restrictor LoadRestrictionsNone.
	LoadRestrictorNone bool
	// EditTop, when set, edits the top-level kustomization before the
	// build, as `kustomize edit` would (Argo CD's spec.source.kustomize).
	EditTop func(kustomization *yaml.RNode) error
	// argo: an Argo CD Application's source (RenderArgo), for the hints.
	argo bool
	// EditImages says where the images: entries EditTop writes come
	// from, by the repository each produces (ArgoKustomizeImages), for
	// findings about the images they set.
	EditImages map[string]manifest.ImageSource
	// HelmRepoCache is --helm-repo-cache: chart archives that stand in for
	// remote chart dependencies.
	HelmRepoCache string
	// EnableHelm is --enable-helm: kustomize's helmCharts: run HelmCommand
	// (kustomize's --helm-command; the gate itself when empty).
	EnableHelm  bool
	HelmCommand string
	// KubeVersion is Capabilities.KubeVersion for a Helm source that sets
	// no helm.kubeVersion (Argo CD passes the destination cluster's; the
	// gate, the version it validates for). Empty: helm's default.
	KubeVersion string
	// Root bounds what the render reads (internal/fsbound): fsbound.For
	// of the directory when empty. MaxFileBytes caps each file read
	// (--max-input-bytes; 0: fsbound.DefaultMaxFileBytes).
	Root         string
	MaxFileBytes int64
	// Confined refuses every read outside Root, LoadRestrictorNone or
	// not: an Argo CD or Flux source under --apps-root is rendered from
	// that checkout alone. Without it a read outside the root is refused
	// unless LoadRestrictorNone.
	Confined bool
	// NoRemote is --no-remote (spec.render.remote: deny): a kustomization
	// that names a remote resource is refused before anything is fetched
	// (RemoteRefs).
	NoRemote bool
	// Sort orders the render as `kustomize build` prints it: the
	// kustomization's sortOptions, else kustomize's legacy order
	// (Namespaces and CRDs first, webhooks last). Without it the render
	// keeps the kustomization's order (krusty's default).
	Sort bool
}

// Found is a Gate or Pin config listed in a kustomization.
type Found struct {
	Object        *config.Object
	Field         string // validators or transformers
	Kustomization string // path of the kustomization file
	TopLevel      bool
}

// Result is a rendered kustomization.
type Result struct {
	Dir       string
	Resources []*yaml.RNode
	// Placement holds gate-placement findings.
	Placement []finding.Finding
	// Found lists the Gate and Pin configs the kustomization tree holds.
	Found []Found
	// Injected is true when the origin annotations were switched on by the
	// gate, and must be removed from any output.
	Injected bool
	// Remote lists the remote resources the kustomizations named (fetched:
	// remote resources were allowed), for an in-tree render.remote: deny.
	Remote []RemoteRef
	// LocalConfig holds the ValidatingAdmissionPolicies and bindings
	// annotated config.kubernetes.io/local-config: "true" that kustomize
	// hands its functions and drops from its output (localconfig.go).
	LocalConfig []*yaml.RNode
}

// Config returns the Gate or Pin config of the top-level kustomization.
func (r *Result) Config() (*config.Object, bool) {
	for _, f := range r.Found {
		if f.TopLevel && f.Object.Kind == config.KindGate && f.Field == "validators" {
			return f.Object, true
		}
		if f.TopLevel && f.Object.Kind == config.KindPin && f.Field == "transformers" {
			return f.Object, true
		}
	}
	return nil, false
}

// Kustomize renders dir in process, as `kustomize build dir` would.
func Kustomize(dir string, opts Options) (*Result, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("rendering %s: %w", dir, err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("rendering %s: not a directory", dir)
	}
	gcfloor.Raise(gcfloor.RenderFloor) // a render's garbage (gcfloor.RenderFloor)
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", dir, err)
	}
	bound, err := newBoundFS(abs, boundOptions{root: opts.Root, maxFileBytes: opts.MaxFileBytes,
		outside: opts.LoadRestrictorNone && !opts.Confined, confined: opts.Confined})
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", dir, err)
	}
	// The walk reads no kustomization the boundary refuses: kustomize
	// meets it and the boundary names it.
	remote, err := remoteRefs(dir, func(p string) bool { return bound.check(p) == nil })
	switch {
	case opts.NoRemote && err != nil:
		return nil, fmt.Errorf("rendering %s: looking for remote resources: %w", dir, err)
	case opts.NoRemote && len(remote) > 0:
		return nil, &RemoteError{Dir: dir, Refs: remote}
	case len(remote) > 0:
		bound.allowClones()
	}
	fs := &gateFS{FileSystem: bound, bound: bound, top: abs, display: dir, seen: map[string]bool{}, edit: opts.EditTop, editImages: opts.EditImages, restrictNone: opts.LoadRestrictorNone,
		execOff: opts.EnableAlphaPlugins && !opts.EnableExec, noRemote: opts.NoRemote}
	k := krusty.MakeKustomizer(krustyOptions(opts))
	m, err := k.Run(fs, abs)
	if err := bound.Err(); err != nil {
		return nil, fmt.Errorf("rendering %s: %w", dir, err)
	}
	if fs.err != nil {
		return nil, fs.err
	}
	if len(fs.skipped) > 0 {
		// Before kustomize's own error: a skipped exec validator makes it
		// fail with "validator shouldn't modify the resource map".
		return nil, &SkippedExecError{Dir: dir, Functions: fs.skipped}
	}
	if err != nil {
		return nil, fmt.Errorf("rendering %s: kustomize build: %w%s", dir, err, hint(err, opts))
	}
	res := &Result{Dir: dir, Found: fs.found, Injected: fs.injected, Remote: remote}
	res.Resources, res.LocalConfig = splitLocal(m.ToRNodeSlice())
	res.Placement = placement(fs.found)
	if fs.injected {
		relativize(res.Resources, abs, dir)
		relativize(res.LocalConfig, abs, dir)
	}
	annotateImageSources(res.Resources, fs.images)
	relativizeHelmSources(res.Resources)
	return res, nil
}

func krustyOptions(o Options) *krusty.Options {
	opts := krusty.MakeDefaultOptions()
	if o.Sort {
		opts.Reorder = krusty.ReorderOptionUnspecified
	}
	if o.LoadRestrictorNone {
		opts.LoadRestrictions = types.LoadRestrictionsNone
	}
	if o.EnableAlphaPlugins {
		opts.PluginConfig = types.EnabledPluginConfig(types.BploUseStaticallyLinked)
		opts.PluginConfig.FnpLoadingOptions.EnableExec = o.EnableExec
	}
	if o.EnableHelm {
		opts.PluginConfig.HelmConfig.Enabled = true
		opts.PluginConfig.HelmConfig.Command = o.HelmCommand
	}
	return opts
}

// placement turns misplaced Gate/Pin entries into gate-placement findings.
func placement(found []Found) []finding.Finding {
	var out []finding.Finding
	for _, f := range found {
		ref := &finding.ResourceRef{APIVersion: f.Object.APIVersion, Kind: f.Object.Kind, Name: f.Object.Metadata.Name}
		file := &finding.File{Path: f.Kustomization}
		switch {
		case f.Object.Kind == config.KindGate && f.Field == "transformers":
			out = append(out, finding.Finding{Rule: "gate-placement", Severity: finding.SeverityError, ResourceRef: ref, File: file,
				Field:   &finding.Field{Path: "transformers"},
				Message: "a Gate is listed under transformers: in " + f.Kustomization + "; a Gate emits no items, so as a transformer it deletes every resource (kustomize build exits 0 with empty output). List it under validators:"})
		case f.Object.Kind == config.KindPin && f.Field == "validators":
			out = append(out, finding.Finding{Rule: "gate-placement", Severity: finding.SeverityError, ResourceRef: ref, File: file,
				Field:   &finding.Field{Path: "validators"},
				Message: "a Pin is listed under validators: in " + f.Kustomization + "; kustomize rejects a validator that modifies resources. List it as the last entry under transformers:"})
		case !f.TopLevel:
			out = append(out, finding.Finding{Rule: "gate-placement", Severity: finding.SeverityWarning, ResourceRef: ref, File: file,
				Field:   &finding.Field{Path: f.Field},
				Message: "a " + f.Object.Kind + " sits in " + f.Kustomization + ", not in the top-level kustomization: it sees that kustomization's output, not the overlay's changes that are applied"})
		}
	}
	return out
}

// hint names the gate flag that lifts a kustomize refusal, for an error
// the flag would have avoided ("" when none applies).
func hint(err error, o Options) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "is not in or below") && !o.LoadRestrictorNone:
		return " (hint: --load-restrictor LoadRestrictionsNone lets kustomize read files outside the kustomization's directory)"
	case strings.Contains(msg, "external plugins disabled") && !o.EnableAlphaPlugins:
		return " (hint: --enable-alpha-plugins runs KRM functions, and --enable-exec exec ones, as kustomize does)"
	case strings.Contains(msg, "must specify --enable-helm") && !o.EnableHelm && o.argo:
		return " (hint: Argo CD renders helmCharts: only with --enable-helm in argocd-cm's kustomize.buildOptions; where yours has it, --enable-helm renders them here too)"
	case strings.Contains(msg, "must specify --enable-helm") && !o.EnableHelm:
		return " (hint: --enable-helm renders helmCharts:)"
	}
	return ""
}
