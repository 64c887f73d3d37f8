package config

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/schema"
)

// APIVersion is the apiVersion of Gate and Pin objects.
const APIVersion = "kubectl-gate.dev/v1alpha1"

// Kinds of configuration object.
const (
	KindGate = "Gate"
	KindPin  = "Pin"
)

// Digest modes.
const (
	DigestRequire = "require"
	DigestVerify  = "verify"
	DigestOff     = "off"
)

// Object is a Gate or Pin configuration object.
type Object struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       Spec     `json:"spec"`
}

// Metadata is the object's metadata; only the name is used.
type Metadata struct {
	Name        string            `json:"name,omitempty"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Spec is the gate's configuration.
type Spec struct {
	Images Images            `json:"images"`
	Render Render            `json:"render"`
	Rules  map[string]string `json:"rules,omitempty"`
	// Policies are ValidatingAdmissionPolicies with their bindings and
	// params, evaluated by the policy rule: files or directories relative
	// to the config file (the plugin), or objects inline (both shells;
	// README "Policies").
	Policies []Entry `json:"policies,omitempty"`
	// PoliciesFromRender also evaluates the policies and bindings the
	// render holds, local-config ones included (= --policies-from-render).
	PoliciesFromRender bool   `json:"policiesFromRender,omitempty"`
	ArgoCD             ArgoCD `json:"argocd"`
	// Schema configures schema validation (rules schema, schema-unknown,
	// api-removed, api-deprecated).
	Schema Schema `json:"schema"`
	// FailOn is the lowest severity that fails the gate: error (default)
	// or warning. The plugin's --fail-on warning sets it too; the KRM
	// function fails kustomize on warnings when it is warning.
	FailOn string `json:"failOn,omitempty"`
	// AllowInTreeLoosening, in the caller's --config, lets a Gate/Pin
	// object inside the rendered tree loosen this config (lower a
	// severity, turn a check off). Without it such an object may only
	// tighten (see Tighten). Ignored in the in-tree object itself.
	AllowInTreeLoosening bool `json:"allowInTreeLoosening,omitempty"`
	// Exceptions waive findings, accountably (see Exception). Only the
	// trusted config's count: an in-tree Gate's are ignored with a warning.
	Exceptions []Exception `json:"exceptions,omitempty"`
	// ExceptionsFromAnnotations, in the trusted config, lets objects waive
	// their own findings with a kubectl-gate.dev/waive annotation that
	// carries the same fields (rules, expires, owner, reason). Off by
	// default: whoever edits a workload could otherwise exempt it.
	ExceptionsFromAnnotations bool `json:"exceptionsFromAnnotations,omitempty"`
	// Unwaivable lists rule ids no exception may waive, from the long form
	// of spec.rules (`<id>: {severity: error, waivable: false}`).
	Unwaivable []string `json:"-"`
}

// FailOn values.
const (
	FailOnError   = "error"
	FailOnWarning = "warning"
)

// FailOnWarning reports whether warnings fail the gate.
func (s *Spec) FailOnWarning() bool { return s.FailOn == FailOnWarning }

// Images configures the image rules and registry resolution.
type Images struct {
	// Digest is require (default), verify or off.
	Digest string `json:"digest,omitempty"`
	// AllowedRegistries, when not empty, lists the registry hosts images may come from.
	AllowedRegistries []string `json:"allowedRegistries,omitempty"`
	// Mirrors maps a registry host to a mirror host used for look-ups.
	Mirrors map[string]string `json:"mirrors,omitempty"`
	// InsecureRegistries lists hosts reached over plain HTTP.
	InsecureRegistries []string `json:"insecureRegistries,omitempty"`
	// Platform pins a platform's manifest ("linux/amd64") instead of the index.
	Platform string `json:"platform,omitempty"`
	// PodSpecPaths adds pod spec locations for custom kinds.
	PodSpecPaths []PodSpecPath `json:"podSpecPaths,omitempty"`
	// Fields adds string fields that hold an image reference in custom
	// kinds, beyond every field named image, which is read by default.
	Fields []ImageField `json:"fields,omitempty"`
	// RequirePinnedBy fails workloads without the Pin transformer's
	// kubectl-gate.dev/pinned stamp (image-pinned-by): it proves the Pin
	// step ran. The plugin's --require-pinned-by sets it.
	RequirePinnedBy bool `json:"requirePinnedBy,omitempty"`
	// Lock is an ImageLock (kubectl gate pin --write-lock) every image of
	// the render is held to, with no registry call (rules image-lock,
	// image-lock-unused): a path, read by the plugin relative to the
	// config file (--lock FILE sets it), or the ImageLock inline (both
	// shells; the KRM function reads no files).
	Lock *Entry `json:"lock,omitempty"`
	// Signatures, when set, requires every image digest pin resolves or
	// digest: verify checks to be signed by an allowed signer (rule
	// image-signature): cosign public keys, or certificate identities
	// checked offline against a trusted root. Only the trusted config's
	// count: an in-tree Gate could otherwise allow its own signer.
	Signatures *Signatures `json:"signatures,omitempty"`
}

// PodSpecPath is a pod spec location in a custom kind, as a dotted path
// ("spec.runner.template.spec"); a key followed by "[]" stands for every
// item of that list ("spec.templates[].template.spec").
type PodSpecPath struct {
	Kind string `json:"kind"`
	Path string `json:"path"`
}

// ImageField is a string field holding an image reference in a custom
// kind, as a dotted path ending at the field ("spec.server.imageRef"); a
// key followed by "[]" stands for every item of that list
// ("spec.engines[].imageRef"). The plugin's --image-field KIND:PATH adds one.
type ImageField struct {
	Kind string `json:"kind"`
	Path string `json:"path"`
}

// Schema configures schema validation.
type Schema struct {
	// KubernetesVersion is the target cluster's minor ("1.36"); empty means
	// the newest embedded. The plugin's --kubernetes-version sets it.
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// CRDs are CustomResourceDefinitions: files or directories (the
	// plugin's --crd), read by the plugin, relative paths from the working
	// directory; or objects inline (both shells).
	CRDs []Entry `json:"crds,omitempty"`
	// IgnoreMissing lists "group/Kind" (core kinds as "Kind") allowed to
	// have no schema; their objects are not validated.
	IgnoreMissing []string `json:"ignoreMissing,omitempty"`
}

// Render configures the render rules.
type Render struct {
	// MinResources is the least number of objects a render must hold (default 1).
	MinResources *int `json:"minResources,omitempty"`
	// ExpectResources, when set, is the exact number of objects expected.
	ExpectResources *int `json:"expectResources,omitempty"`
	// Remote is whether a kustomization may name remote resources (URLs,
	// git repositories): RemoteAllow (the default, as kustomize) or
	// RemoteDeny (= the plugin's --no-remote), refused before any network
	// access. The KRM function does not render, so it has nothing to refuse.
	Remote string `json:"remote,omitempty"`
}

// Remote resource modes (Render.Remote).
const (
	RemoteAllow = "allow"
	RemoteDeny  = "deny"
)

// RemoteDenied reports whether remote resources are refused.
func (r Render) RemoteDenied() bool { return r.Remote == RemoteDeny }

// ArgoCD configures the Argo CD rules.
type ArgoCD struct {
	// IgnoreDifferencesAllowed lists JSON pointers an ignoreDifferences entry may
	// name without naming the object; empty means the default allow-list.
	IgnoreDifferencesAllowed []string `json:"ignoreDifferencesAllowed,omitempty"`
	// Exclude names Applications and ApplicationSets ("name" or
	// "namespace/name") whose unrendered sources the caller takes out of the
	// gate's scope: argocd-source-not-rendered reports them as excluded
	// instead of no verdict (--exclude-app).
	Exclude []string `json:"exclude,omitempty"`
	// FromFlag are the entries of Exclude that --exclude-app added: the
	// report credits the flag for them. Never decoded from a file.
	FromFlag []string `json:"-"`
	// TargetBranch is the branch the checkout merges into
	// (--target-branch): sources whose targetRevision (or ref) is it
	// render from the checkout. Read from the trusted config only.
	// Default: the remote's default branch (refs/remotes/origin/HEAD).
	TargetBranch string `json:"targetBranch,omitempty"`
}

// UsageError is a bad configuration: the plugin exits 2 for it.
type UsageError struct {
	Where string
	Err   error
}

func (e *UsageError) Error() string { return e.Where + ": " + e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Load reads and decodes a config file strictly; see Decode.
func Load(path string) (*Object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &UsageError{Where: path, Err: fmt.Errorf("reading config: %w", err)}
	}
	obj, err := Decode(data)
	if err != nil {
		return nil, &UsageError{Where: path, Err: err}
	}
	return obj, nil
}

// Decode parses a Gate or Pin object strictly, defaults and validates it
// (spec.rules must name known rule ids).
func Decode(data []byte) (*Object, error) {
	data, unwaivable, err := oneDocument(data)
	if err != nil {
		return nil, err
	}
	unknown, err := unknownFields(data)
	if err != nil {
		return nil, fmt.Errorf("decoding gate config: %w", err)
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("unknown field %q (a typo here would silently disable a check)", strings.Join(unknown, `", "`))
	}
	var obj Object
	if err := sigsyaml.UnmarshalStrict(data, &obj); err != nil {
		return nil, fmt.Errorf("decoding gate config: %s", cleanStrictError(err))
	}
	if obj.APIVersion != APIVersion {
		return nil, fmt.Errorf("apiVersion: %q is not %q", obj.APIVersion, APIVersion)
	}
	if obj.Kind != KindGate && obj.Kind != KindPin {
		return nil, fmt.Errorf("kind: %q is not %s or %s", obj.Kind, KindGate, KindPin)
	}
	obj.Spec.Unwaivable = unwaivable
	obj.Spec.Default()
	if err := obj.Spec.Validate(); err != nil {
		return nil, err
	}
	return &obj, nil
}

// cleanStrictError keeps the part of sigs.k8s.io/yaml's message that names
// the field.
func cleanStrictError(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, "json: "); i >= 0 {
		s = s[i+len("json: "):]
	}
	return s
}

// Default fills in safe defaults.
func (s *Spec) Default() {
	if s.Images.Digest == "" {
		s.Images.Digest = DigestRequire
	}
	if s.Render.MinResources == nil {
		one := 1
		s.Render.MinResources = &one
	}
	if s.Rules == nil {
		s.Rules = map[string]string{}
	}
}

// Validate checks values; an error names the field. Rule ids are checked
// against RuleIDs.
func (s *Spec) Validate() error {
	ruleIDs := RuleIDs()
	var errs []error
	if !slices.Contains([]string{DigestRequire, DigestVerify, DigestOff}, s.Images.Digest) {
		errs = append(errs, fmt.Errorf("spec.images.digest: %q is not require, verify or off", s.Images.Digest))
	}
	if s.Render.MinResources != nil && *s.Render.MinResources < 0 {
		errs = append(errs, fmt.Errorf("spec.render.minResources: %d is negative", *s.Render.MinResources))
	}
	if s.Render.ExpectResources != nil && *s.Render.ExpectResources < 0 {
		errs = append(errs, fmt.Errorf("spec.render.expectResources: %d is negative", *s.Render.ExpectResources))
	}
	if r := s.Render.Remote; r != "" && r != RemoteAllow && r != RemoteDeny {
		errs = append(errs, fmt.Errorf("spec.render.remote: %q is not allow or deny", r))
	}
	if v := s.Schema.KubernetesVersion; v != "" && !slices.ContainsFunc(schema.Versions(), func(e string) bool {
		return e == strings.TrimPrefix(v, "v") || strings.HasPrefix(strings.TrimPrefix(v, "v"), e+".")
	}) {
		errs = append(errs, fmt.Errorf("spec.schema.kubernetesVersion: %q is not a supported Kubernetes minor (supported: %s)", v, schema.SupportedRange()))
	}
	for i, gk := range s.Schema.IgnoreMissing {
		if gk == "" || strings.Count(gk, "/") > 1 {
			errs = append(errs, fmt.Errorf("spec.schema.ignoreMissing[%d]: %q is not group/Kind", i, gk))
		}
	}
	if p := s.Images.Platform; p != "" && strings.Count(p, "/") < 1 {
		errs = append(errs, fmt.Errorf("spec.images.platform: %q is not os/arch[/variant]", p))
	}
	if s.FailOn != "" && s.FailOn != FailOnError && s.FailOn != FailOnWarning {
		errs = append(errs, fmt.Errorf("spec.failOn: %q is not error or warning", s.FailOn))
	}
	for i, p := range s.Policies {
		if p.Object == nil && strings.TrimSpace(p.Path) == "" {
			errs = append(errs, fmt.Errorf("spec.policies[%d]: empty path", i))
		}
	}
	for i, p := range s.Images.PodSpecPaths {
		if p.Kind == "" || p.Path == "" {
			errs = append(errs, fmt.Errorf("spec.images.podSpecPaths[%d]: kind and path are required", i))
		} else if !validPodSpecPath(p.Path) {
			errs = append(errs, fmt.Errorf("spec.images.podSpecPaths[%d].path: %q is not dotted keys, each optionally followed by [] for every item of a list (spec.templates[].template.spec)", i, p.Path))
		}
	}
	for i, f := range s.Images.Fields {
		if f.Kind == "" || f.Path == "" {
			errs = append(errs, fmt.Errorf("spec.images.fields[%d]: kind and path are required", i))
		} else if !validPodSpecPath(f.Path) || strings.HasSuffix(f.Path, "[]") {
			errs = append(errs, fmt.Errorf("spec.images.fields[%d].path: %q is not dotted keys ending at a string field, each list written key[] (spec.engines[].imageRef)", i, f.Path))
		}
	}
	if err := s.Images.validateLock(); err != nil {
		errs = append(errs, err)
	}
	if err := s.Images.Signatures.validate(); err != nil {
		errs = append(errs, err)
	}
	for _, id := range sortedKeys(s.Rules) {
		if !slices.Contains(ruleIDs, id) {
			errs = append(errs, fmt.Errorf("spec.rules.%s: unknown rule id (known: %s)", id, strings.Join(ruleIDs, ", ")))
			continue
		}
		if v := s.Rules[id]; v != "error" && v != "warning" && v != "off" {
			errs = append(errs, fmt.Errorf("spec.rules.%s: %q is not error, warning or off", id, v))
		}
	}
	if err := s.validateExceptions(ruleIDs); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// SetRule overrides one rule's severity, validating it as Validate would.
func (s *Spec) SetRule(id, severity string) error {
	if s.Rules == nil {
		s.Rules = map[string]string{}
	}
	s.Rules[id] = severity
	return s.Validate()
}

// validPodSpecPath reports whether a pod spec path is dotted keys, each
// optionally followed by "[]".
func validPodSpecPath(path string) bool {
	for seg := range strings.SplitSeq(path, ".") {
		key, _ := strings.CutSuffix(seg, "[]")
		if key == "" || strings.ContainsAny(key, "[]") {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Default returns a defaulted, empty Gate spec: a strict gate.
func Default() *Spec {
	s := &Spec{}
	s.Default()
	return s
}
