package argo

import (
	"strings"
	"testing"
	"time"
)

// TestJudgeJQ: what del(EXPR) removes from the synthetic object decides,
// however the expression is written.
func TestJudgeJQ(t *testing.T) {
	web := ignoreEntry{kind: "Deployment", name: "web", group: "apps", namespace: "shop"}
	cases := []struct {
		expr  string
		entry ignoreEntry
		hides string
	}{
		// The forms a reviewer found passing (repro: a named Deployment).
		{"(.spec)", web, "spec"},
		{".status, .metadata", web, "metadata"},
		{".spec | .template", web, "spec.template"},
		{`getpath(["spec"])`, web, "spec"},
		{`.["sp" + "ec"]`, web, "spec"},
		{".spec,.metadata", web, "metadata"},
		{".spec.template | .spec", web, "spec.template.spec"},
		{`select(.metadata.name == "web") | .spec`, web, "spec"},
		{`.spec[]`, web, "spec"},
		{`.a) | del(.spec`, web, "spec"}, // del(EXPR) is written by string, as Argo CD does
		{".spec.template.spec.containers[].image", web, "the image of every container"},
		{`.spec.template.spec.containers[] | select(.name | startswith("")) | .image`, web, "the image of every container"},
		{`.spec.jobTemplate.spec.template`, ignoreEntry{kind: "CronJob", name: "backup", group: "batch"}, "spec.jobTemplate.spec.template"},
		{`select(.kind == "Pod") | .spec.containers`, ignoreEntry{kind: "Pod", name: "debug"}, "the image of every container"},
		{`select(.kind == "Pod") | .spec`, ignoreEntry{kind: "Pod", name: "debug"}, "spec"},
		// Narrow entries from Argo CD's docs and real repositories.
		{".spec.replicas", web, ""},
		{".webhooks[]?.clientConfig.caBundle", ignoreEntry{kind: "MutatingWebhookConfiguration", group: "admissionregistration.k8s.io"}, ""},
		{`.webhooks[] | select(.name == "a.example.com") | .clientConfig.caBundle`, ignoreEntry{kind: "ValidatingWebhookConfiguration", group: "admissionregistration.k8s.io"}, ""},
		{".spec.host", ignoreEntry{kind: "Route", group: "route.openshift.io", name: "web"}, ""},
		{`.spec.template.spec.initContainers[] | select(.name == "istio-init")`, web, ""},
		{`.spec.template.spec.containers[] | select(.name == "sidecar") | .image`, web, ""},
		{".spec.template.spec.containers[0].image", web, ""},
		{`.data["config.yaml"]`, ignoreEntry{kind: "ConfigMap", name: "app-config"}, ""},
		{`.metadata.annotations."autoscaling.alpha.kubernetes.io/behavior"`, ignoreEntry{kind: "HorizontalPodAutoscaler", group: "autoscaling"}, ""},
		{`.spec.template.metadata.annotations["kubectl.kubernetes.io/restartedAt"]`, web, ""},
		{`.metadata.labels | keys[] as $k | select($k | startswith("kustomize.toolkit")) | .[$k]`, web, ""},
		{".status", web, ""},
		{`.spec.template.spec.containers[] | .env[]? | select(.name == "MODE")`, web, ""},
	}
	for _, c := range cases {
		v := judgeJQ(c.expr, c.entry)
		if v.parseErr != nil || v.undecided != "" || v.hides != c.hides {
			t.Errorf("%s on %s: hides %q (parse %v, undecided %q), want %q", c.expr, c.entry.kind, v.hides, v.parseErr, v.undecided, c.hides)
		}
	}
}

// TestJudgeJQRefusesAndErrors: Argo CD refuses what does not parse; what
// errors, returns no object or more than one, or is outside what the gate
// evaluates is undecided, never narrow.
func TestJudgeJQRefusesAndErrors(t *testing.T) {
	web := ignoreEntry{kind: "Deployment", name: "web"}
	for _, expr := range []string{`.spec.template.spec.containers[] | select(.name == "missing-quote)`, "[.[]", ".spec |", ""} {
		if v := judgeJQ(expr, web); v.parseErr == nil {
			t.Errorf("%q: parsed, want Argo CD's parse error", expr)
		}
	}
	for expr, want := range map[string]string{
		`.metadata.namespace == "shop"`: "it errors",
		`.x), (.y`:                      "more than one object",
		`.x) | empty | (.y`:             "no object",
		`.nothing) | .data["config.yaml"] |= (fromjson | del(.auth) | tojson`: "assigns",
		`until(false; .)`:                         "until/2",
		`def f: f; f`:                             "defines a function",
		`reduce range(9) as $i (.; .)`:            "reduce",
		`.spec | select($ENV.X == "1")`:           "$ENV",
		`.spec | select(env.X == "1")`:            "env/0",
		`select("\(.)" | length > 0)`:             "interpolates",
		`select(.kind * 1000000000 | length > 0)`: "multiplies",
		`select([., .] | length > 0)`:             "array",
		`select({a: .} | length > 0)`:             "object",
		`select(@base64 | length > 0)`:            "format",
		strings.Repeat(" ", jqMaxLen+1) + ".spec": "bytes long",
	} {
		v := judgeJQ(expr, web)
		if v.parseErr != nil || v.hides != "" || !strings.Contains(v.undecided, want) {
			t.Errorf("%.60q: hides %q parse %v undecided %q, want undecided …%s…", expr, v.hides, v.parseErr, v.undecided, want)
		}
	}
}

// TestJudgeJQBudget: an expression that loops or allocates without bound
// stops within its budget and is undecided.
func TestJudgeJQBudget(t *testing.T) {
	web := ignoreEntry{kind: "Deployment", name: "web"}
	for expr, want := range map[string]string{
		// 2^60 outputs: the step bound (or, on a loaded machine, the time
		// bound first).
		".spec | select(false" + strings.Repeat(" | (., .)", 60) + ")": "steps|ran longer",
		// A string doubled 60 times: the allocation bound (or, on a loaded
		// machine, the time bound first).
		"select(.kind" + strings.Repeat(" | (. + .)", 60) + " | length > 0)": "allocated|ran longer",
	} {
		start := time.Now()
		v := judgeJQ(expr, web)
		if took := time.Since(start); took > 3*jqTimeout {
			t.Errorf("%.40q took %v", expr, took)
		}
		if v.hides != "" || !containsAny(v.undecided, strings.Split(want, "|")) {
			t.Errorf("%.40q: hides %q undecided %q, want …%s…", expr, v.hides, v.undecided, want)
		}
	}
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
