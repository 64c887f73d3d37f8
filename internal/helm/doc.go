// Package helm renders Helm charts in process, as `helm template` does, with
// the Helm v4 SDK: a chart directory, its values files and --set values, a
// release name and namespace, the Kubernetes version and API versions the
// templates see. Nothing is fetched: dependencies come from the chart's
// charts/ directory, from file:// repositories, or from a local repository
// cache (--helm-repo-cache); a dependency only a remote repository or OCI
// registry holds is a *DependencyError naming it, so the caller reports no
// verdict instead of checking part of a chart.
//
// Every rendered object carries AnnoSource, the chart template it came from
// (helm's "# Source:" line mapped to the file on disk), so findings name the
// template a user edits.
//
// The package also speaks enough of helm's command line (Command) for
// kustomize's helmCharts: `kustomize build --enable-helm --helm-command G`
// runs `G version` and `G template …`, and the gate answers them itself.
package helm
