// Package baseline records a run's findings by fingerprint and reports the
// findings of a later run that the record holds as existing: shown and
// counted, but not failing. The record's entries no run matched any more
// are counted as fixed.
//
// A fingerprint is the rule, the object (API group, kind, namespace, name),
// the field path and the message with its volatile parts removed (digests,
// file paths and line numbers, the "(set by FILE:LINE)" blame), so it stays
// the same when objects are reordered, files move or lines shift, and a new
// violation elsewhere never matches an old entry. Entries are counted: a
// baseline that holds one occurrence absorbs one, not two.
package baseline

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/atomicfile"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
)

// Version is the file format's version.
const Version = 1

// MaxBytes bounds a baseline file: it may come from a pull request.
const MaxBytes = 32 << 20

// File is a baseline on disk (JSON).
type File struct {
	Version int     `json:"version"`
	Entries []Entry `json:"entries"`
}

// Entry is one fingerprinted finding, with the parts it was computed from
// so a reviewer can read what was accepted.
type Entry struct {
	Fingerprint string `json:"fingerprint"`
	Rule        string `json:"rule"`
	Object      Object `json:"object"`
	Field       string `json:"field,omitempty"`
	Message     string `json:"message"`
	// Count is how many findings share the fingerprint (1 when omitted).
	Count int `json:"count,omitempty"`
}

// Object names the object of a finding; empty for a finding about the
// whole render.
type Object struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
}

var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	// blame: "(set by overlays/prod/kustomization.yaml:12)"
	{regexp.MustCompile(` ?\(set by [^()]*\)`), ""},
	// digests: sha256:… (images, pinned references)
	{regexp.MustCompile(`\b(sha256|sha384|sha512):[0-9a-fA-F]{32,}`), "$1:…"},
	// file paths, with any :line[:column]
	{regexp.MustCompile(`[\w.~/-]*[\w-]\.(ya?ml|json|jsonnet|tpl)(:\d+)*`), "FILE"},
	// line numbers in words
	{regexp.MustCompile(`\b(line|lines) \d+(-\d+)?`), "$1 N"},
}

// Normalize removes a message's volatile parts.
func Normalize(msg string) string {
	for _, v := range volatile {
		msg = v.re.ReplaceAllString(msg, v.with)
	}
	return strings.TrimSpace(msg)
}

// EntryOf returns a finding's entry, fingerprint included.
func EntryOf(f finding.Finding) Entry {
	e := Entry{Rule: f.Rule, Message: Normalize(f.Message)}
	if r := f.ResourceRef; r != nil {
		group, _, ok := strings.Cut(r.APIVersion, "/")
		if !ok {
			group = "" // core: "v1"
		}
		e.Object = Object{Group: group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
	}
	if f.Field != nil {
		e.Field = f.Field.Path
	}
	e.Fingerprint = e.sum()
	return e
}

func (e Entry) sum() string {
	h := sha256.New()
	for _, s := range []string{e.Rule, e.Object.Group, e.Object.Kind, e.Object.Namespace, e.Object.Name, e.Field, e.Message} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Build returns the baseline of findings: every finding keep accepts,
// grouped by fingerprint and sorted, so the file diffs well.
func Build(fs []finding.Finding, keep func(finding.Finding) bool) *File {
	byFP := map[string]*Entry{}
	for _, f := range fs {
		if !keep(f) {
			continue
		}
		e := EntryOf(f)
		if have, ok := byFP[e.Fingerprint]; ok {
			have.Count++
			continue
		}
		e.Count = 1
		byFP[e.Fingerprint] = &e
	}
	out := &File{Version: Version, Entries: []Entry{}}
	for _, e := range byFP {
		if e.Count == 1 {
			e.Count = 0
		}
		out.Entries = append(out.Entries, *e)
	}
	sort.Slice(out.Entries, func(i, j int) bool { return out.Entries[i].Fingerprint < out.Entries[j].Fingerprint })
	return out
}

// Write writes the baseline to path atomically.
func (b *File) Write(path string) error {
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding baseline %s: %w", path, err)
	}
	return atomicfile.Write(path, append(data, '\n'), 0o644)
}

// Load reads a baseline file (Parse).
func Load(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading baseline: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading baseline %s: %w", path, err)
	}
	b, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("baseline %s: %w", path, err)
	}
	return b, nil
}

// Parse decodes a baseline strictly: unknown fields, a version other than
// Version, trailing data, or an entry whose fingerprint is not the one of
// its own fields (edited by hand) are errors.
func Parse(data []byte) (*File, error) {
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("larger than %d bytes", MaxBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var b File
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	if dec.More() {
		return nil, errors.New("decoding: data after the baseline object")
	}
	if b.Version != Version {
		return nil, fmt.Errorf("version %d is not %d", b.Version, Version)
	}
	for i, e := range b.Entries {
		if e.Rule == "" {
			return nil, fmt.Errorf("entries[%d]: rule is required", i)
		}
		if e.Count < 0 {
			return nil, fmt.Errorf("entries[%d]: count %d is negative", i, e.Count)
		}
		if want := e.sum(); e.Fingerprint != want {
			return nil, fmt.Errorf("entries[%d] (%s): fingerprint %q is not the one of its rule, object, field and message (%s): write the baseline again with --write-baseline", i, e.Rule, e.Fingerprint, want)
		}
	}
	return &b, nil
}

// Apply marks each finding keep accepts whose fingerprint the baseline
// holds (while its count lasts) as existing, and returns how many of the
// baseline's occurrences no finding matched: fixed.
func (b *File) Apply(fs []finding.Finding, source string, keep func(finding.Finding) bool) (fixed int) {
	left := map[string]int{}
	for _, e := range b.Entries {
		left[e.Fingerprint] += max(e.Count, 1)
	}
	for i := range fs {
		f := &fs[i]
		if f.Suppressed != nil || !keep(*f) {
			continue
		}
		fp := EntryOf(*f).Fingerprint
		if left[fp] > 0 {
			left[fp]--
			f.Suppressed = &finding.Suppression{Kind: finding.SuppressedByBaseline, Source: source}
		}
	}
	for _, n := range left {
		fixed += n
	}
	return fixed
}
