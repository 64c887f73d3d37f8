package report

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
)

// SARIF output is what GitHub code scanning accepts (its upload refuses a
// whole file when one result has no location: github/codeql-action#2459):
// every result has a location with a relative, percent-encoded URI and a
// start line, and a fingerprint of its own; every rule has help (why, how
// to fix, how to waive) and a helpUri into docs/rules.md. The vendored
// SARIF 2.1.0 schema and GitHub's documented limits check it in the tests
// (sarifcheck).

// informationURI is the project's home, which SARIF names as the tool's.
const informationURI = "https://github.com/kubectl-gate/kubectl-gate"

// RulesDocURI is where docs/rules.md is read; a rule's section is
// RulesDocURI + "#" + its id.
const RulesDocURI = informationURI + "/blob/main/docs/rules.md"

// fingerprintKey names the gate's own partial fingerprint (SARIF §3.27.17):
// it stays the same while a finding stays (rule, input, object, field),
// whatever line it moves to.
const fingerprintKey = "kubectlGate/v1"

type sarifMessage struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

type sarifRule struct {
	ID                   string            `json:"id"`
	Name                 string            `json:"name"`
	ShortDescription     sarifMessage      `json:"shortDescription"`
	FullDescription      sarifMessage      `json:"fullDescription"`
	Help                 sarifMessage      `json:"help"`
	HelpURI              string            `json:"helpUri"`
	DefaultConfiguration map[string]string `json:"defaultConfiguration"`
	Properties           map[string]any    `json:"properties,omitempty"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           *int              `json:"ruleIndex,omitempty"`
	Level               string            `json:"level"`
	Message             sarifMessage      `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          map[string]any    `json:"properties,omitempty"`
	Suppressions        []any             `json:"suppressions,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical     `json:"physicalLocation"`
	LogicalLocations []sarifLogicalLoc `json:"logicalLocations,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           sarifRegion   `json:"region"`
}

type sarifArtifact struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

type sarifLogicalLoc struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName,omitempty"`
	Kind               string `json:"kind"`
}

// writeSARIF writes SARIF 2.1.0 with one rule per rule id.
func writeSARIF(w io.Writer, doc Document, o Options) error {
	rules := make([]sarifRule, 0, len(o.Rules))
	index := map[string]int{}
	for i, r := range o.Rules {
		index[r.ID] = i
		rules = append(rules, sarifRule{
			ID: r.ID, Name: ruleName(r.ID),
			ShortDescription:     sarifMessage{Text: r.Doc},
			FullDescription:      sarifMessage{Text: fullDescription(r)},
			Help:                 sarifMessage{Text: RuleHelp(r, false), Markdown: RuleHelp(r, true)},
			HelpURI:              RulesDocURI + "#" + r.ID,
			DefaultConfiguration: map[string]string{"level": level(r.Default)},
			Properties:           map[string]any{"tags": ruleTags(r)},
		})
	}
	results := make([]sarifResult, 0, len(doc.Results))
	for _, f := range doc.Results {
		res := sarifResult{RuleID: f.Rule, Level: level(f.Severity), Message: sarifMessage{Text: Line(f)},
			Locations:           []sarifLocation{location(f, o)},
			PartialFingerprints: map[string]string{fingerprintKey: Fingerprint(f)}}
		if i, ok := index[f.Rule]; ok {
			res.RuleIndex = &i
		}
		if f.Input != "" {
			res.Properties = map[string]any{"input": f.Input}
		}
		if f.Suppressed != nil {
			res.Suppressions = sarifSuppressions(f)
		}
		results = append(results, res)
	}
	// SARIF readers judge a run by its invocation: a run without a verdict
	// did not execute successfully, and each cause is a tool notification.
	invocation := map[string]any{"executionSuccessful": doc.Summary.Verdict != finding.VerdictNoVerdict}
	if len(doc.Config) > 0 {
		// Which configuration decided (a pull request's own Gate may only
		// tighten the caller's): said in every format.
		invocation["properties"] = map[string]any{"config": doc.Config}
	}
	if doc.Summary.Verdict == finding.VerdictNoVerdict {
		var notes []any
		for _, c := range noVerdictCauses(doc) {
			notes = append(notes, map[string]any{"level": "error", "message": sarifMessage{Text: "no verdict: " + c}})
		}
		invocation["toolExecutionNotifications"] = notes
	}
	driver := map[string]any{"name": "kubectl-gate", "informationUri": informationURI, "rules": rules}
	if o.Version != "" {
		driver["version"] = o.Version
	}
	out := map[string]any{
		"$schema": "https://json.schemastore.org/sarif-2.1.0.json",
		"version": "2.1.0",
		"runs": []any{map[string]any{
			"tool":        map[string]any{"driver": driver},
			"results":     results,
			"invocations": []any{invocation},
		}},
	}
	return writeIndented(w, out)
}

// location places a finding: the file and line that set the value, else
// the object's source file (line 1), else the input's own file (its
// kustomization.yaml, Chart.yaml or -f file: finding.Finding.InputFile),
// else fallback. The object, where there is one, is also a logical
// location.
func location(f finding.Finding, o Options) sarifLocation {
	p, line := o.FallbackLocation, 1
	switch {
	case f.File != nil && f.File.Path != "":
		p = f.File.Path
		if f.File.Line > 0 {
			line = f.File.Line
		}
	case f.InputFile != "":
		p = f.InputFile
	}
	if p == "" {
		p = "kustomization.yaml"
	}
	if filepath.IsAbs(p) && o.BaseDir != "" {
		// GitHub resolves URIs against the checkout: an absolute path
		// under the working directory is made relative to it.
		if rel, err := filepath.Rel(o.BaseDir, p); err == nil && !strings.HasPrefix(rel, "..") {
			p = rel
		}
	}
	loc := sarifLocation{PhysicalLocation: sarifPhysical{
		ArtifactLocation: sarifArtifact{URI: ArtifactURI(p), URIBaseID: "%SRCROOT%"},
		Region:           sarifRegion{StartLine: line},
	}}
	if r := f.ResourceRef; r != nil && r.Kind != "" {
		name := r.Name
		if name == "" && r.GenerateName != "" {
			name = r.GenerateName + "*" // the API server appends the rest
		}
		fq := r.Kind + "/" + name
		if r.Namespace != "" {
			fq = r.Namespace + "/" + fq
		}
		loc.LogicalLocations = []sarifLogicalLoc{{Name: name, FullyQualifiedName: fq, Kind: "object"}}
	}
	return loc
}

// ArtifactURI turns a file path into a URI reference (RFC 3986),
// percent-encoded, with forward slashes: a relative path stays relative
// ("overlays/my app/kustomization.yaml" → "overlays/my%20app/kustomization.yaml";
// a first segment with a colon gets "./" so it cannot read as a scheme), an
// absolute one becomes a file:// URI, which GitHub makes relative to the
// checkout when it is under it.
func ArtifactURI(p string) string {
	p = path.Clean(filepath.ToSlash(p))
	u := (&url.URL{Path: p}).String()
	if strings.HasPrefix(p, "/") {
		u = (&url.URL{Scheme: "file", Path: p}).String()
	}
	// url.URL leaves a few sub-delimiters as they are; encode the ones a
	// SARIF reader could take for structure.
	return uriSubDelims.Replace(u)
}

// uriSubDelims percent-encodes the sub-delimiters ArtifactURI encodes,
// built once.
var uriSubDelims = strings.NewReplacer("+", "%2B", ",", "%2C", ";", "%3B", "=", "%3D", "&", "%26", "$", "%24", "!", "%21", "'", "%27", "(", "%28", ")", "%29", "*", "%2A")

// Fingerprint identifies a finding across runs: its rule, input, object and
// field, and its message (what it found), but not the line it is on.
func Fingerprint(f finding.Finding) string {
	h := sha256.New()
	for _, s := range []string{f.Rule, f.Input, f.ResourceRef.String(), fieldPath(f), f.Message} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

func fieldPath(f finding.Finding) string {
	if f.Field == nil {
		return ""
	}
	return f.Field.Path
}

// ruleName is a rule id in the PascalCase SARIF readers show as a name:
// image-digest → ImageDigest.
func ruleName(id string) string {
	var b strings.Builder
	for _, part := range strings.Split(id, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

func ruleTags(r Rule) []string {
	tags := []string{"kubernetes", "deploy-gate"}
	if r.Family != "" {
		tags = append(tags, r.Family)
	}
	return tags
}

func fullDescription(r Rule) string {
	if r.Outage == "" {
		return r.Doc
	}
	return "Fires when " + r.Doc + ". Prevents: " + r.Outage + "."
}
