// Package sarifcheck checks a SARIF log the way its readers will: against
// the SARIF 2.1.0 JSON schema (vendored in testdata/, see PROVENANCE.md)
// and against the constraints GitHub code scanning documents for uploads
// ("SARIF support for code scanning"): a location with a relative URI and
// a start line on every result, fingerprints, rule help, and the size
// limits. Tests only: the gate's binaries never import it.
package sarifcheck

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed testdata/sarif-schema-2.1.0.json
var schemaJSON []byte

const schemaURL = "https://json.schemastore.org/sarif-2.1.0-rtm.5.json"

var (
	compileOnce sync.Once
	compiled    *jsonschema.Schema
	compileErr  error
)

func schema() (*jsonschema.Schema, error) {
	compileOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
		if err != nil {
			compileErr = fmt.Errorf("reading the SARIF schema: %w", err)
			return
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		if err := c.AddResource(schemaURL, doc); err != nil {
			compileErr = fmt.Errorf("adding the SARIF schema: %w", err)
			return
		}
		compiled, compileErr = c.Compile(schemaURL)
	})
	return compiled, compileErr
}

// Schema validates a SARIF log against the SARIF 2.1.0 JSON schema.
func Schema(log []byte) error {
	s, err := schema()
	if err != nil {
		return err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(log))
	if err != nil {
		return fmt.Errorf("parsing the SARIF log: %w", err)
	}
	if err := s.Validate(doc); err != nil {
		return fmt.Errorf("the SARIF log breaks the SARIF 2.1.0 schema: %w", err)
	}
	return nil
}

// GitHub's documented limits for one upload.
const (
	maxRuns              = 20
	maxResultsPerRun     = 25000
	maxRulesPerRun       = 25000
	maxLocationsPerRes   = 1000
	maxTagsPerRule       = 20
	maxDescriptionLength = 1024
)

type log struct {
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name  string `json:"name"`
				Rules []struct {
					ID               string `json:"id"`
					ShortDescription *struct {
						Text string `json:"text"`
					} `json:"shortDescription"`
					FullDescription *struct {
						Text string `json:"text"`
					} `json:"fullDescription"`
					Help *struct {
						Text     string `json:"text"`
						Markdown string `json:"markdown"`
					} `json:"help"`
					HelpURI    string `json:"helpUri"`
					Properties struct {
						Tags []string `json:"tags"`
					} `json:"properties"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID  string `json:"ruleId"`
			Message struct {
				Text string `json:"text"`
			} `json:"message"`
			Locations []struct {
				PhysicalLocation *struct {
					ArtifactLocation *struct {
						URI string `json:"uri"`
					} `json:"artifactLocation"`
					Region *struct {
						StartLine int `json:"startLine"`
					} `json:"region"`
				} `json:"physicalLocation"`
			} `json:"locations"`
			PartialFingerprints map[string]string `json:"partialFingerprints"`
		} `json:"results"`
	} `json:"runs"`
}

// GitHub checks what GitHub code scanning requires of an upload beyond the
// schema; it returns every violation, joined.
func GitHub(data []byte) error {
	var l log
	if err := json.Unmarshal(data, &l); err != nil {
		return fmt.Errorf("parsing the SARIF log: %w", err)
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if l.Version != "2.1.0" {
		bad("version %q, GitHub takes 2.1.0", l.Version)
	}
	if len(l.Runs) == 0 || len(l.Runs) > maxRuns {
		bad("%d runs: GitHub takes 1 to %d", len(l.Runs), maxRuns)
	}
	for ri, run := range l.Runs {
		d := run.Tool.Driver
		if d.Name == "" {
			bad("run %d: tool.driver.name is empty", ri)
		}
		if len(d.Rules) > maxRulesPerRun || len(run.Results) > maxResultsPerRun {
			bad("run %d: %d rules, %d results: over GitHub's limits", ri, len(d.Rules), len(run.Results))
		}
		ids := map[string]bool{}
		for _, r := range d.Rules {
			ids[r.ID] = true
			switch {
			case r.ShortDescription == nil || r.ShortDescription.Text == "":
				bad("rule %s: no shortDescription", r.ID)
			case len(r.ShortDescription.Text) > maxDescriptionLength:
				bad("rule %s: shortDescription is %d characters, over %d", r.ID, len(r.ShortDescription.Text), maxDescriptionLength)
			}
			if r.FullDescription != nil && len(r.FullDescription.Text) > maxDescriptionLength {
				bad("rule %s: fullDescription is %d characters, over %d", r.ID, len(r.FullDescription.Text), maxDescriptionLength)
			}
			if r.Help == nil || r.Help.Text == "" || r.Help.Markdown == "" {
				bad("rule %s: no help text and markdown", r.ID)
			}
			if u, err := url.Parse(r.HelpURI); err != nil || !u.IsAbs() {
				bad("rule %s: helpUri %q is not an absolute URI", r.ID, r.HelpURI)
			}
			if len(r.Properties.Tags) > maxTagsPerRule {
				bad("rule %s: %d tags, over %d", r.ID, len(r.Properties.Tags), maxTagsPerRule)
			}
		}
		for i, res := range run.Results {
			where := fmt.Sprintf("run %d result %d (%s)", ri, i, res.RuleID)
			if !ids[res.RuleID] {
				bad("%s: ruleId names no rule of the driver", where)
			}
			if res.Message.Text == "" {
				bad("%s: no message", where)
			}
			if len(res.PartialFingerprints) == 0 {
				bad("%s: no partialFingerprints", where)
			}
			if len(res.Locations) == 0 || len(res.Locations) > maxLocationsPerRes {
				bad("%s: %d locations: GitHub rejects the upload unless a result has 1 to %d", where, len(res.Locations), maxLocationsPerRes)
			}
			for _, loc := range res.Locations {
				p := loc.PhysicalLocation
				if p == nil || p.ArtifactLocation == nil || p.ArtifactLocation.URI == "" {
					bad("%s: a location without physicalLocation.artifactLocation.uri", where)
					continue
				}
				if err := relativeURI(p.ArtifactLocation.URI); err != nil {
					bad("%s: %v", where, err)
				}
				if p.Region == nil || p.Region.StartLine < 1 {
					bad("%s: a location without region.startLine", where)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// relativeURI checks a URI is one GitHub resolves against the checkout: a
// relative reference (no scheme, no leading slash) or an absolute file://
// URI, percent-encoded.
func relativeURI(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("uri %q does not parse: %v", s, err)
	case u.Scheme == "file" && u.Host == "" && strings.HasPrefix(u.Path, "/"):
	case u.Scheme != "" || u.Host != "":
		return fmt.Errorf("uri %q is neither relative to the checkout nor a file:// URI", s)
	case strings.HasPrefix(s, "/"):
		return fmt.Errorf("uri %q is an absolute path, not relative to the checkout", s)
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("uri %q holds a query or fragment: a character was not percent-encoded", s)
	}
	for _, r := range s {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune(`"<>\^`+"`{|}", r) {
			return fmt.Errorf("uri %q holds %q, not percent-encoded", s, r)
		}
	}
	return nil
}

// Check runs Schema and GitHub.
func Check(log []byte) error {
	return errors.Join(Schema(log), GitHub(log))
}
