package fn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/policy"
	"github.com/kubectl-gate/kubectl-gate/internal/report"
	"github.com/kubectl-gate/kubectl-gate/internal/resolve"
	"github.com/kubectl-gate/kubectl-gate/internal/schema"
	"github.com/kubectl-gate/kubectl-gate/internal/stream"
	"github.com/kubectl-gate/kubectl-gate/internal/waiver"
)

// ErrFindings is returned when an error-severity result was emitted.
var ErrFindings = errors.New("the gate found violations")

// Run executes the function once: ResourceList from stdin to stdout.
// The input is read up to stream.DefaultMaxBytes and checked as kubectl
// would read it (stream.CheckResourceList) before the framework sees it.
//
// A crash is an error like any other (no verdict): the build fails.
func Run(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, version string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v", r)
			fmt.Fprintf(stderr, "ERROR [gate-fn]: no verdict: %v (a bug: please report it)\n", err)
		}
	}()
	data, err := stream.ReadAll(stdin, 0, "the ResourceList")
	if err == nil {
		err = stream.CheckResourceList(data)
	}
	if err != nil {
		fmt.Fprintf(stderr, "ERROR [gate-fn]: no verdict: %v\n", err)
		return err
	}
	p := &processor{ctx: ctx, stderr: stderr, version: version}
	err = framework.Execute(p, &kio.ByteReadWriter{Reader: bytes.NewReader(data), Writer: stdout})
	if err != nil && !errors.Is(err, ErrFindings) && !p.reported {
		fmt.Fprintf(stderr, "ERROR [gate-fn]: %v\n", err)
	}
	return err
}

type processor struct {
	ctx      context.Context
	stderr   io.Writer
	version  string
	reported bool
	// now judges exceptions' expiry; nil is the system clock.
	now waiver.Clock
}

func (p *processor) clock() waiver.Clock {
	if p.now == nil {
		return waiver.SystemClock{}
	}
	return p.now
}

// Process runs the gate on the ResourceList in place.
func (p *processor) Process(rl *framework.ResourceList) error {
	if err := stream.NormalizeAll(rl.Items); err != nil {
		return p.fail(rl, fmt.Errorf("ResourceList items: %w", err))
	}
	for _, it := range rl.Items {
		// An item's lines are the ResourceList's, not those of the file its
		// path annotation names (manifest.StreamDoc): a JSON list can put
		// an item at column 1.
		it.YNode().Line, it.YNode().Column = 0, 0
	}
	obj, err := functionConfig(rl.FunctionConfig)
	if err != nil {
		return p.fail(rl, fmt.Errorf("functionConfig: %w", err))
	}
	trusted, err := floor()
	if err != nil {
		return p.fail(rl, err)
	}
	obj = onFloor(trusted, obj)
	crds, err := inlineCRDs(&obj.Spec)
	if err != nil {
		return p.fail(rl, err)
	}
	if l := obj.Spec.Images.Lock; l != nil && l.Object == nil {
		return p.fail(rl, fmt.Errorf("functionConfig spec.images.lock: %q is a path: files are read by the kubectl plugin only; write the ImageLock inline in spec.images.lock, or keep it in the render (a local-config object)", l.Path))
	}
	checker, err := policies(&obj.Spec)
	if err != nil {
		return p.fail(rl, err)
	}
	// The function's config is the trusted config: its exceptions waive,
	// audited once as the run is this one call. With a floor, only the
	// floor's exceptions waive (config.Tighten).
	source := "functionConfig " + obj.Kind + " " + obj.Metadata.Name
	if trusted != nil {
		source = EnvTrustedConfig + " " + trusted.Kind + " " + trusted.Metadata.Name
	}
	waivers := waiver.New(&obj.Spec, source, "", p.clock())
	opts := gate.Options{Config: &obj.Spec, Pin: obj.Kind == config.KindPin, Waivers: waivers, CRDs: crds}
	deps := gate.Deps{Version: p.version}
	if checker != nil {
		deps.Policy = checker
	}
	if opts.Pin || obj.Spec.Images.Digest == config.DigestVerify {
		r, err := resolve.New(resolve.FromSpec(&obj.Spec))
		if err != nil {
			return p.fail(rl, fmt.Errorf("functionConfig spec.images: %w", err))
		}
		deps.Resolver = r
	}
	rep, err := gate.Run(p.ctx, rl.Items, opts, deps)
	if err != nil {
		return p.fail(rl, err)
	}
	rep.Findings = append(rep.Findings, waivers.Audit()...)
	if obj.Kind == config.KindGate {
		// A validator must emit no items: kustomize compares node trees and
		// rejects any output, even an unchanged echo (kustomize#5036).
		rl.Items = []*yaml.RNode{}
	}
	p.emit(rl, rep.Findings)
	// A failing verdict fails kustomize; with failOn: warning, warnings
	// fail it too (as --fail-on warning does for the plugin).
	if rep.Verdict(obj.Spec.FailOnWarning()) != finding.VerdictPass {
		return ErrFindings
	}
	return nil
}

// fail reports an evaluation failure as an error result and a stderr line.
func (p *processor) fail(rl *framework.ResourceList, err error) error {
	rl.Items = []*yaml.RNode{}
	p.emit(rl, []finding.Finding{{Rule: "gate", Severity: finding.SeverityError, Message: "no verdict: " + err.Error()}})
	return err
}

// emit writes results and one stderr line per finding.
func (p *processor) emit(rl *framework.ResourceList, findings []finding.Finding) {
	p.reported = true
	for _, f := range findings {
		fmt.Fprintln(p.stderr, report.Describe(f))
		rl.Results = append(rl.Results, result(f))
	}
}

// functionConfig decodes the Gate or Pin object; none means a default Gate.
func functionConfig(n *yaml.RNode) (*config.Object, error) {
	if n == nil || n.IsNilOrEmpty() {
		return &config.Object{APIVersion: config.APIVersion, Kind: config.KindGate, Spec: *config.Default()}, nil
	}
	s, err := n.String()
	if err != nil {
		return nil, err
	}
	return config.Decode([]byte(s))
}

// inlineCRDs returns the CRDs written inline in spec.schema.crds. The
// function sees only the ResourceList, not the user's files: a path could
// never be read, and a thinner schema set must not pass silently. CRDs in
// the render itself are used too.
func inlineCRDs(s *config.Spec) ([]*yaml.RNode, error) {
	if paths := config.Paths(s.Schema.CRDs); len(paths) > 0 {
		return nil, fmt.Errorf("functionConfig spec.schema.crds: %q is a path: files are read by the kubectl plugin only; write the CustomResourceDefinition inline in spec.schema.crds or put it in the render", paths[0])
	}
	crds, err := s.Schema.InlineCRDs()
	if err != nil {
		return nil, fmt.Errorf("functionConfig %w", err)
	}
	for _, n := range crds {
		if err := schema.CheckCRD(n); err != nil {
			return nil, fmt.Errorf("functionConfig spec.schema.crds: %w", err)
		}
	}
	return crds, nil
}

// policies builds the policy rule's checker, as check -k does: the
// ValidatingAdmissionPolicies, bindings and params written inline in
// spec.policies, and with spec.policiesFromRender those of the render,
// local-config ones included (kustomize hands them to functions and never
// emits them). A path is refused, as in spec.schema.crds; nil means no
// policy is configured.
func policies(s *config.Spec) (*policy.Checker, error) {
	if paths := config.Paths(s.Policies); len(paths) > 0 {
		return nil, fmt.Errorf("functionConfig spec.policies: %q is a path: files are read by the kubectl plugin only; write the policy inline in spec.policies, or keep it in the render (a local-config object) with spec.policiesFromRender: true", paths[0])
	}
	if len(s.Policies) == 0 && !s.PoliciesFromRender {
		return nil, nil
	}
	c := &policy.Checker{FromRender: s.PoliciesFromRender}
	if len(s.Policies) > 0 {
		inline, err := policy.InlineSources("spec.policies", s.Policies)
		if err == nil {
			c.Set, err = policy.Load(inline...)
		}
		if err != nil {
			return nil, fmt.Errorf("functionConfig %w", err)
		}
	}
	return c, nil
}
