// Package finding is the gate's leaf vocabulary: what a rule found
// (Finding, Severity, the object, field and file it is about) and what a
// run decided (Report, Verdict). It imports nothing of the project, so
// every other package — renderer, rules, cluster reader, printers, KRM
// adapter — can speak it without importing the rules.
package finding

// Severity is how much a finding matters. Only SeverityError stops a deploy
// by default; `--fail-on warning` makes warnings stop it too.
type Severity string

// Severities, as they appear in output and in the KRM result shape.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Off is the configured severity that turns a rule off (spec.rules).
const Off = "off"

// Finding is one thing a rule found. It is data, never an error: an error
// means the gate could not evaluate.
type Finding struct {
	Rule        string       `json:"rule"`
	Severity    Severity     `json:"severity"`
	Message     string       `json:"message"`
	ResourceRef *ResourceRef `json:"resourceRef,omitempty"`
	Field       *Field       `json:"field,omitempty"`
	File        *File        `json:"file,omitempty"`
	// Input names the input the finding came from: the -k directory, the
	// -f file, or the Argo CD Application whose source was rendered.
	Input string `json:"input,omitempty"`
	// InputFile is the input's own file, where a finding that has no File
	// of its own is placed (SARIF needs a location for every result): the
	// kustomization file of a -k directory or an Application's source, a
	// chart's Chart.yaml, the -f file.
	InputFile string `json:"inputFile,omitempty"`
	// NoVerdict marks a finding that means the gate could not finish
	// (image-resolve): the plugin exits 3 for it, before 1.
	NoVerdict bool `json:"-"`
	// Suppressed is set on a finding an exception or the baseline waived:
	// it is still reported, with who waived it and why, but neither counts
	// at its severity nor fails the run.
	Suppressed *Suppression `json:"suppressed,omitempty"`
}

// Suppression kinds.
const (
	SuppressedByException  = "exception"
	SuppressedByAnnotation = "annotation"
	SuppressedByBaseline   = "baseline"
)

// Suppression says why a finding does not count: an exception of the
// trusted config, an object's waiver annotation, or the baseline.
type Suppression struct {
	// Kind is exception, annotation or baseline.
	Kind    string `json:"kind"`
	Reason  string `json:"reason,omitempty"`
	Owner   string `json:"owner,omitempty"`
	Expires string `json:"expires,omitempty"`
	// Source names the entry: "--config ci/gate.yaml spec.exceptions[0]",
	// "annotation kubectl-gate.dev/waive on Deployment/web (ns shop)",
	// "baseline gate-baseline.json".
	Source string `json:"source"`
}

// ResourceRef names the object a finding is about.
type ResourceRef struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	// GenerateName is metadata.generateName of an object that has no
	// name (the API server names it on create: Argo CD hook Jobs).
	GenerateName string `json:"generateName,omitempty"`
}

// String names an object for humans: "Deployment/web (ns prod)", and
// "Job generateName: migrate- (ns prod)" for one named on create.
func (r *ResourceRef) String() string {
	if r == nil {
		return ""
	}
	s := r.Kind + "/" + r.Name
	if r.Name == "" && r.GenerateName != "" {
		s = r.Kind + " generateName: " + r.GenerateName
	}
	if r.Namespace != "" {
		s += " (ns " + r.Namespace + ")"
	}
	return s
}

// Field names the field a finding is about, with its value and, where the
// gate knows one, the value it proposes.
type Field struct {
	Path          string `json:"path"`
	CurrentValue  any    `json:"currentValue,omitempty"`
	ProposedValue any    `json:"proposedValue,omitempty"`
}

// File names the source file that produced the value, where known.
type File struct {
	Path  string `json:"path"`
	Index int    `json:"index,omitempty"`
	// Line is the 1-based line in Path that holds the value, where known.
	Line int `json:"line,omitempty"`
}

// Configure applies configured severities (rule id → error, warning, info
// or off, as in a Gate's spec.rules) to findings whose Rule is set: a rule
// set to off loses its findings, any other setting replaces the rule's
// default severity. It is the one place severities are applied, for the
// static rules (gate) and the live ones (status) alike.
func Configure(fs []Finding, severities map[string]string) []Finding {
	out := fs[:0]
	for _, f := range fs {
		if f.NoVerdict {
			// Could not decide is not a severity: never lowered, never off.
			f.Severity = SeverityError
			out = append(out, f)
			continue
		}
		switch sev := severities[f.Rule]; sev {
		case Off:
			continue
		case "":
		default:
			f.Severity = Severity(sev)
		}
		out = append(out, f)
	}
	return out
}
