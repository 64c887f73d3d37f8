package live

import (
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/images"
)

// Expected is an image the app should run.
type Expected struct {
	Ref, Digest string
	// MustRun is false for images only a Job, a CronJob or a workload
	// scaled to zero uses: no pod needs to run them right now.
	MustRun bool
	// Pods lists the pods (namespace/name) that run it.
	Pods []string
}

// Running is an image that pods of the app's workloads run.
type Running struct {
	Ref, Digest string
	// Pods lists the pods (namespace/name) that run it.
	Pods []string
	// Workload is the first managed workload whose pods run it.
	Workload ManagedRef
}

// matches reports whether a running image is an expected one. Digests are
// compared when both sides have one. An expected image without a digest
// (a tag) is satisfied by that tag at any digest; one with a digest must be
// proven: a running image without a digest does not match it. References
// are normalized ("nginx" is "index.docker.io/library/nginx:latest").
func matches(e Expected, run Running) bool {
	if e.Digest != "" && run.Digest != "" {
		return e.Digest == run.Digest
	}
	if e.Digest == "" {
		return canonical(stripDigest(e.Ref)) == canonical(stripDigest(run.Ref))
	}
	return canonical(e.Ref) == canonical(run.Ref)
}

func stripDigest(ref string) string {
	name, _, _ := strings.Cut(ref, "@")
	return name
}

// canonical normalizes an image reference: registry, repository, tag
// (latest when neither tag nor digest is written) and digest.
func canonical(ref string) string {
	r, ok := images.Parse(ref)
	if !ok {
		return ref
	}
	base := r.Name
	if r.Tag != "" || r.Digest == "" {
		if t, err := name.NewTag(r.Name); err == nil {
			base = t.Name()
		}
	} else if repo, err := name.NewRepository(r.Name); err == nil {
		base = repo.Name()
	}
	if r.Digest != "" {
		base += "@" + r.Digest
	}
	return base
}

// digestOf returns the digest written in a reference, or "".
func digestOf(ref string) string {
	if _, d, ok := strings.Cut(ref, "@"); ok {
		return d
	}
	return ""
}

// expectedFromRender lists the images of a render: every pod spec of every
// object that is applied (local config left out).
func expectedFromRender(render []*yaml.RNode, extra []images.PodSpecPath) []Expected {
	var out []Expected
	for _, obj := range render {
		if isLocal(obj) {
			continue
		}
		run := mustRun(obj.GetKind(), replicas(obj))
		for _, c := range images.Find(obj, extra) {
			if c.Field {
				continue // an operator's pods run it (Prometheus spec.image), not the Application's
			}
			out = addExpected(out, c.Image, run)
		}
	}
	return out
}

// expectedFromSummary lists status.summary.images; whether each must run
// is read from the live objects' pod templates.
func expectedFromSummary(summary []string, objects []Object) []Expected {
	runs := map[string]bool{} // canonical ref → some live template that must run uses it
	used := map[string]bool{}
	for _, o := range objects {
		node := toRNode(o.Live)
		if node == nil {
			continue
		}
		run := mustRun(o.Ref.Kind, replicas(node))
		for _, c := range images.Find(node, nil) {
			used[canonical(c.Image)] = true
			runs[canonical(c.Image)] = runs[canonical(c.Image)] || run
		}
	}
	var out []Expected
	for _, ref := range summary {
		c := canonical(ref)
		out = addExpected(out, ref, runs[c] || !used[c])
	}
	return out
}

func addExpected(list []Expected, ref string, run bool) []Expected {
	for i := range list {
		if list[i].Ref == ref {
			list[i].MustRun = list[i].MustRun || run
			return list
		}
	}
	return append(list, Expected{Ref: ref, Digest: digestOf(ref), MustRun: run})
}

// mustRun: a workload with replicas runs pods now; a Job or CronJob only
// now and then.
func mustRun(kind string, replicas int64) bool {
	switch kind {
	case "Job", "CronJob":
		return false
	}
	return replicas != 0
}

// replicas reads spec.replicas; absent means 1 (the API default).
func replicas(obj *yaml.RNode) int64 {
	n, err := obj.Pipe(yaml.Lookup("spec", "replicas"))
	if err != nil || n == nil {
		return 1
	}
	v, ok := number(yaml.GetValue(n))
	if !ok {
		return 1
	}
	return v
}

// podImages returns the images a pod runs: containers and init containers
// (ephemeral debug containers are not the workload's), each with the digest
// written in the reference or, failing that, the one the kubelet reports
// in status imageID.
func podImages(pod *unstructured.Unstructured) []Running {
	var out []Running
	for _, list := range []string{"initContainers", "containers"} {
		ctrs, _, _ := unstructured.NestedSlice(pod.Object, "spec", list)
		for _, c := range ctrs {
			m, _ := c.(map[string]any)
			ref, _ := m["image"].(string)
			cname, _ := m["name"].(string)
			if ref == "" {
				continue
			}
			d := digestOf(ref)
			if d == "" {
				d = statusDigest(pod, list, cname)
			}
			out = append(out, Running{Ref: ref, Digest: d})
		}
	}
	return out
}

// statusDigest returns the sha256 digest of a container's status imageID
// ("docker.io/library/nginx@sha256:…"; a bare "sha256:…" is the image
// config id, not a manifest digest, and is ignored).
func statusDigest(pod *unstructured.Unstructured, list, container string) string {
	field := map[string]string{"initContainers": "initContainerStatuses", "containers": "containerStatuses"}[list]
	sts, _, _ := unstructured.NestedSlice(pod.Object, "status", field)
	for _, s := range sts {
		m, _ := s.(map[string]any)
		if m["name"] != container {
			continue
		}
		id, _ := m["imageID"].(string)
		if _, d, ok := strings.Cut(id, "@"); ok && strings.HasPrefix(d, "sha256:") {
			return d
		}
	}
	return ""
}

// toRNode converts a live object for the kyaml-based image finder.
func toRNode(obj *unstructured.Unstructured) *yaml.RNode {
	if obj == nil {
		return nil
	}
	b, err := obj.MarshalJSON()
	if err != nil {
		return nil
	}
	n, err := yaml.Parse(string(b))
	if err != nil {
		return nil
	}
	return n
}
