// Package benchgen generates large, realistic renders for benchmarks: mixed
// workloads (Deployments, StatefulSets, DaemonSets, CronJobs, Jobs, Argo
// Rollouts) with three containers each, plus Services and ConfigMaps.
//
//	go run ./internal/benchgen/cmd/benchgen -n 10000 -images 400 -registry 127.0.0.1:5000 > render.yaml
package benchgen

import (
	"crypto/sha256"
	"fmt"
	"io"
)

// Options shape a generated render.
type Options struct {
	// Objects is how many objects to write.
	Objects int
	// Images is how many distinct image repositories the workloads use.
	Images int
	// Registry is the registry host of every image ("ghcr.io").
	Registry string
	// Pinned writes repo:tag@sha256:… instead of repo:tag.
	Pinned bool
	// Prefix starts every object's name ("app" when empty: app-00000).
	Prefix string
	// Namespace, when set, is every object's namespace (else team-00 to
	// team-39).
	Namespace string
}

var kinds = []string{"Deployment", "StatefulSet", "DaemonSet", "CronJob", "Job", "Rollout", "Service", "ConfigMap"}

// Write writes the render as one YAML stream.
func Write(w io.Writer, o Options) error {
	img := 0
	for i := 0; i < o.Objects; i++ {
		kind := kinds[i%len(kinds)]
		var images [3]string
		for j := range images {
			images[j] = o.image(img % max(o.Images, 1))
			img++
		}
		if _, err := io.WriteString(w, o.object(kind, i, images)); err != nil {
			return fmt.Errorf("writing object %d: %w", i, err)
		}
	}
	return nil
}

// Image returns the reference of image i, as Write spells it.
func (o Options) image(i int) string {
	ref := fmt.Sprintf("%s/bench/app-%04d:v1", o.Registry, i)
	if o.Pinned {
		ref += fmt.Sprintf("@sha256:%x", sha256.Sum256([]byte(ref)))
	}
	return ref
}

// Repositories lists the repositories Write uses, for seeding a registry.
func (o Options) Repositories() []string {
	out := make([]string, o.Images)
	for i := range out {
		out[i] = fmt.Sprintf("bench/app-%04d", i)
	}
	return out
}

func (o Options) object(kind string, i int, img [3]string) string {
	prefix := o.Prefix
	if prefix == "" {
		prefix = "app"
	}
	name := fmt.Sprintf("%s-%05d", prefix, i)
	ns := o.Namespace
	if ns == "" {
		ns = fmt.Sprintf("team-%02d", i%40)
	}
	head := fmt.Sprintf("---\napiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n  namespace: %s\n  labels: {app: %s, tier: backend}\n", apiVersion(kind), kind, name, ns, name)
	pod := fmt.Sprintf(`initContainers:
      - name: migrate
        image: %s
        args: [migrate, --wait]
      containers:
      - name: app
        image: %s
        ports: [{containerPort: 8080}]
        resources: {requests: {cpu: 100m, memory: 128Mi}}
      - name: sidecar
        image: %s
`, img[0], img[1], img[2])
	switch kind {
	case "Service":
		return head + fmt.Sprintf("spec:\n  selector: {app: %s}\n  ports: [{port: 80, targetPort: 8080}]\n", name)
	case "ConfigMap":
		return head + "data:\n  LOG_LEVEL: info\n  FEATURE_FLAGS: a,b,c\n"
	case "CronJob":
		return head + "spec:\n  schedule: '0 * * * *'\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: OnFailure\n          " + indent(pod, "    ")
	case "Job":
		// The API server generates a Job's selector and refuses one set
		// without manualSelector, and a Job's pods cannot restart Always.
		return head + "spec:\n  template:\n    spec:\n      restartPolicy: Never\n      " + pod
	case "Rollout":
		return head + fmt.Sprintf("spec:\n  replicas: 3\n  selector: {matchLabels: {app: %s}}\n  strategy:\n    canary:\n      steps: [{setWeight: 20}, {pause: {duration: 10m}}]\n  template:\n    metadata: {labels: {app: %s}}\n    spec:\n      %s", name, name, pod)
	}
	return head + fmt.Sprintf("spec:\n  selector: {matchLabels: {app: %s}}\n  template:\n    metadata: {labels: {app: %s}}\n    spec:\n      %s", name, name, pod)
}

func apiVersion(kind string) string {
	switch kind {
	case "Service", "ConfigMap":
		return "v1"
	case "CronJob", "Job":
		return "batch/v1"
	case "Rollout":
		return "argoproj.io/v1alpha1"
	}
	return "apps/v1"
}

func indent(s, by string) string {
	out := ""
	for i, line := range splitLines(s) {
		if i > 0 && line != "" {
			line = by + line
		}
		out += line + "\n"
	}
	return out
}

func splitLines(s string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			lines = append(lines, s[start:i])
			start = i + 1
		}
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}

// WriteRefs writes every image reference of the render, one a line, in
// the order Write uses them (repeats included): the input of a sequential
// `crane digest` loop.
func WriteRefs(w io.Writer, o Options) error {
	img := 0
	for i := 0; i < o.Objects; i++ {
		if k := kinds[i%len(kinds)]; k == "Service" || k == "ConfigMap" {
			img += 3
			continue
		}
		for j := 0; j < 3; j++ {
			if _, err := fmt.Fprintln(w, o.image(img%max(o.Images, 1))); err != nil {
				return err
			}
			img++
		}
	}
	return nil
}
