// Package cmp reads what Argo CD's config-management plugin server (the v2
// sidecar) hands the plugin's generate command, for `kubectl gate render`
// run as that command (README "Inside Argo CD"): the Application's name,
// destination namespace and revision, the target cluster's version, the
// plugin parameters (ARGOCD_APP_PARAMETERS, else PARAM_*) and the gate's
// settings the Application passes with spec.source.plugin.env (ARGOCD_ENV_*).
//
// Everything here comes from the Application, which a pull request may
// write (an app of apps): parameters only choose how to render, and
// settings are decoded into a config.Spec that the caller may only use to
// tighten its trusted config (config.Tighten). Unknown parameter and setting
// names are errors, so a typo never silently leaves a check out.
package cmp

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/kubectl-gate/kubectl-gate/internal/schema"
)

// Environment variables Argo CD sets for a generate command
// (reposerver/repository: newEnv, getPluginEnvs; cmpserver/plugin).
const (
	EnvAppName       = "ARGOCD_APP_NAME"
	EnvAppNamespace  = "ARGOCD_APP_NAMESPACE"
	EnvRevision      = "ARGOCD_APP_REVISION"
	EnvRevisionShort = "ARGOCD_APP_REVISION_SHORT"
	EnvSourcePath    = "ARGOCD_APP_SOURCE_PATH"
	EnvKubeVersion   = "KUBE_VERSION"
	EnvAPIVersions   = "KUBE_API_VERSIONS"
	EnvParameters    = "ARGOCD_APP_PARAMETERS"
	// settingPrefix is what Argo CD puts before each spec.source.plugin.env
	// name, and GATE_ the gate's own part of them.
	settingPrefix = "ARGOCD_ENV_GATE_"
)

// Env is the environment of one generate run.
type Env struct {
	// AppName is ARGOCD_APP_NAME: "name", or "namespace_name" for an
	// Application outside Argo CD's namespace.
	AppName string
	// AppNamespace is ARGOCD_APP_NAMESPACE: the destination namespace.
	AppNamespace string
	// Revision and RevisionShort are the commit being rendered.
	Revision, RevisionShort string
	// SourcePath is the app's path in the repository (the working
	// directory is that path in Argo CD's copy of the repository).
	SourcePath string
	// KubeVersion is the destination cluster's version, as Argo CD
	// parsed it ("1.31.4"); APIVersions the group/versions it serves.
	KubeVersion string
	APIVersions []string
	// Params are the plugin parameters.
	Params []Param
	// Settings are the ARGOCD_ENV_GATE_* values.
	Settings Settings
}

// Inside reports whether lookup shows a generate run of Argo CD.
func Inside(lookup func(string) (string, bool)) bool {
	v, ok := lookup(EnvAppName)
	return ok && v != ""
}

// Read reads the environment through lookup (os.LookupEnv) and environ
// (os.Environ, for the PARAM_* and ARGOCD_ENV_GATE_* names).
func Read(lookup func(string) (string, bool), environ []string) (*Env, error) {
	get := func(k string) string { v, _ := lookup(k); return v }
	e := &Env{
		AppName: get(EnvAppName), AppNamespace: get(EnvAppNamespace),
		Revision: get(EnvRevision), RevisionShort: get(EnvRevisionShort),
		SourcePath: get(EnvSourcePath), KubeVersion: get(EnvKubeVersion),
	}
	if e.RevisionShort == "" && len(e.Revision) > 7 {
		e.RevisionShort = e.Revision[:7]
	}
	if v := get(EnvAPIVersions); v != "" {
		e.APIVersions = strings.Split(v, ",")
	}
	var err error
	if raw, ok := lookup(EnvParameters); ok {
		if e.Params, err = ParseParameters([]byte(raw)); err != nil {
			return nil, fmt.Errorf("reading %s: %w", EnvParameters, err)
		}
	} else if e.Params, err = paramsFromEnviron(environ); err != nil {
		return nil, err
	}
	if e.Settings, err = readSettings(environ); err != nil {
		return nil, err
	}
	return e, nil
}

// ReleaseName is the Helm release Argo CD would use: the Application's
// name without the "namespace_" of an app in another namespace
// (util/argo.ParseInstanceName).
func (e *Env) ReleaseName() string {
	if _, name, ok := strings.Cut(e.AppName, "_"); ok {
		return name
	}
	return e.AppName
}

// Prefix is what every stderr line of a generate run starts with: Argo CD
// caches a failed generate until a hard refresh, so the cached message
// must say which app and which commit it is about.
func (e *Env) Prefix() string {
	rev := e.RevisionShort
	if rev == "" {
		rev = "unknown revision"
	}
	return fmt.Sprintf("%s@%s: ", e.AppName, rev)
}

// SchemaTarget is the Kubernetes minor to validate schemas for: the
// destination cluster's (KUBE_VERSION, "1.31.4" → "1.31"), or "" when Argo
// CD did not say (the newest embedded). A version outside embedded is an
// error naming it and the embedded range: validating against another
// version's schemas would judge fields that cluster does not have.
func (e *Env) SchemaTarget() (string, error) {
	return e.schemaTarget(schema.Versions())
}

func (e *Env) schemaTarget(embedded []string) (string, error) {
	if e.KubeVersion == "" {
		return "", nil
	}
	v, err := version.ParseGeneric(e.KubeVersion)
	if err != nil {
		return "", fmt.Errorf("%s=%q is not a Kubernetes version: %w", EnvKubeVersion, e.KubeVersion, err)
	}
	minor := fmt.Sprintf("%d.%d", v.Major(), v.Minor())
	if len(embedded) == 0 {
		return "", fmt.Errorf("%s=%q: the gate embeds no schemas", EnvKubeVersion, e.KubeVersion)
	}
	if !slices.Contains(embedded, minor) {
		return "", fmt.Errorf("%s=%q: the gate embeds the schemas of Kubernetes %s to %s only; upgrade the gate, or pin the target with spec.schema.kubernetesVersion in KUBECTL_GATE_CONFIG",
			EnvKubeVersion, e.KubeVersion, embedded[0], embedded[len(embedded)-1])
	}
	return minor, nil
}
