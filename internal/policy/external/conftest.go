package external

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Conftest runs `conftest test --all-namespaces --output json -p DIR… RENDER`
// and reads its JSON results. conftest exits 1 when a rule fails; any other
// non-zero exit is a crash. A Rego namespace with no result (no rule ran)
// is Unbound.
func Conftest(ctx context.Context, opts Options, regoDirs []string, render []byte) ([]Finding, error) {
	renderPath := ""
	out, _, err := run(ctx, "conftest", []string{"conftest"}, opts, render, []int{0, 1}, func(r string) []string {
		renderPath = r
		args := []string{"test", "--all-namespaces", "--no-color", "--output", "json"}
		for _, d := range regoDirs {
			args = append(args, "--policy", d)
		}
		return append(args, r)
	})
	if err != nil {
		return nil, err
	}
	findings, files, err := parseConftest(out)
	if err != nil {
		return nil, &NoVerdictError{Tool: "conftest", Reason: "unparseable output", Err: err}
	}
	if err := checkConftestCoverage(files, renderPath); err != nil {
		return nil, err
	}
	return findings, nil
}

type conftestResult struct {
	Filename   *string           `json:"filename"`
	Namespace  *string           `json:"namespace"`
	Successes  *int              `json:"successes"`
	Failures   []conftestMessage `json:"failures"`
	Warnings   []conftestMessage `json:"warnings"`
	Exceptions []conftestMessage `json:"exceptions"`
}

type conftestMessage struct {
	Msg      string         `json:"msg"`
	Metadata map[string]any `json:"metadata"`
}

// ParseConftest reads `conftest test --output json`: a list of per-file,
// per-namespace results. Failures are Fail findings, warnings Warning; a
// namespace without any success, failure, warning or exception ran no rule
// and is Unbound. Anything else than that JSON list is an error.
func ParseConftest(out []byte) ([]Finding, error) {
	findings, _, err := parseConftest(out)
	return findings, err
}

// parseConftest is ParseConftest that also returns the file name of each
// result.
func parseConftest(out []byte) ([]Finding, []string, error) {
	var results []conftestResult
	dec := json.NewDecoder(strings.NewReader(string(out)))
	if err := dec.Decode(&results); err != nil {
		return nil, nil, fmt.Errorf("read conftest JSON: %w", err)
	}
	if dec.More() {
		return nil, nil, fmt.Errorf("read conftest JSON: trailing data after the results")
	}
	if results == nil {
		return nil, nil, fmt.Errorf("read conftest JSON: no result list")
	}
	var findings []Finding
	var files []string
	ran := map[string]bool{}
	var namespaces []string
	for _, r := range results {
		if r.Namespace == nil || r.Successes == nil || r.Filename == nil {
			return nil, nil, fmt.Errorf("read conftest JSON: a result without filename, namespace or successes")
		}
		ns := *r.Namespace
		files = append(files, *r.Filename)
		if _, ok := ran[ns]; !ok {
			namespaces = append(namespaces, ns)
			ran[ns] = false
		}
		if *r.Successes > 0 || len(r.Failures) > 0 || len(r.Warnings) > 0 || len(r.Exceptions) > 0 {
			ran[ns] = true
		}
		for _, m := range r.Failures {
			findings = append(findings, Finding{Tool: "conftest", Policy: ns, Rule: rule(m, "deny"), Result: Fail, Message: m.Msg})
		}
		for _, m := range r.Warnings {
			findings = append(findings, Finding{Tool: "conftest", Policy: ns, Rule: rule(m, "warn"), Result: Warning, Message: m.Msg})
		}
	}
	sort.Strings(namespaces)
	for _, ns := range namespaces {
		if !ran[ns] {
			findings = append(findings, Finding{Tool: "conftest", Policy: ns, Result: Unbound,
				Message: fmt.Sprintf("conftest ran no rule of namespace %s on the render: it checks nothing", ns)})
		}
	}
	return findings, files, nil
}

// rule names the Rego rule from the result's metadata when conftest gives
// it (metadata.query, "data.main.deny"), else by kind.
func rule(m conftestMessage, kind string) string {
	if q, ok := m.Metadata["query"].(string); ok && q != "" {
		return q
	}
	return kind
}
