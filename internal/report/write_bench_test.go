package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
)

// manyFindings is a red check of a large render: n objects of a few
// kinds, each with the image findings of its containers, in the order a
// streamed check reports them.
func manyFindings(n int) *finding.Report {
	r := &finding.Report{Resources: n}
	kinds := []string{"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "Rollout"}
	for i := range n {
		ref := &finding.ResourceRef{APIVersion: "apps/v1", Kind: kinds[i%len(kinds)], Namespace: fmt.Sprintf("team-%d", i%40), Name: fmt.Sprintf("app-%d", i)}
		for c := range 1 + i%3 {
			image := fmt.Sprintf("ghcr.io/org/app-%d:v1.%d", i%400, c)
			r.Findings = append(r.Findings, finding.Finding{Rule: "image-digest", Severity: finding.SeverityError,
				Message:     fmt.Sprintf("image %q is not pinned by digest", image),
				ResourceRef: ref, Field: &finding.Field{Path: fmt.Sprintf("spec.template.spec.containers[%d].image", c), CurrentValue: image},
				File: &finding.File{Path: "render.yaml", Index: i, Line: 40*i + 20 + c}, Input: "render.yaml", InputFile: "render.yaml"})
		}
	}
	return r
}

func BenchmarkWriteText(b *testing.B) {
	r := manyFindings(10000)
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(io.Discard, r, Options{Format: "text"}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCompareObjectsIsTheKeyOrder: compareObjects orders findings as their
// objects' keys (kind, namespace and name joined by NUL; no object first)
// compare as strings, which text output used to sort by, wherever no field
// holds a NUL. Where one does, two objects whose joined keys were equal
// (kind "a\x00b" in namespace "c", kind "a" in namespace "b\x00c") were
// grouped under one header; they are now two.
func TestCompareObjectsIsTheKeyOrder(t *testing.T) {
	key := func(f *finding.Finding) string {
		if f.ResourceRef == nil {
			return ""
		}
		return f.ResourceRef.Kind + "\x00" + f.ResourceRef.Namespace + "\x00" + f.ResourceRef.Name
	}
	parts := []string{"", "a", "ab", "b", "a-b", "Z", "é"}
	var fs []finding.Finding
	fs = append(fs, finding.Finding{})
	for _, k := range parts {
		for _, ns := range parts {
			for _, n := range parts {
				fs = append(fs, finding.Finding{ResourceRef: &finding.ResourceRef{Kind: k, Namespace: ns, Name: n}})
			}
		}
	}
	for i := range fs {
		for j := range fs {
			want := strings.Compare(key(&fs[i]), key(&fs[j]))
			if got := compareObjects(&fs[i], &fs[j]); got != want {
				t.Fatalf("compareObjects(%q, %q) = %d, the keys compare %d", key(&fs[i]), key(&fs[j]), got, want)
			}
		}
	}
	a := finding.Finding{ResourceRef: &finding.ResourceRef{Kind: "a\x00b", Namespace: "c", Name: "d"}}
	b := finding.Finding{ResourceRef: &finding.ResourceRef{Kind: "a", Namespace: "b\x00c", Name: "d"}}
	if key(&a) != key(&b) || compareObjects(&a, &b) == 0 {
		t.Errorf("two objects whose joined keys are equal: compareObjects = %d, want them apart", compareObjects(&a, &b))
	}
	var out bytes.Buffer
	r := &finding.Report{Resources: 2, Findings: []finding.Finding{
		{Rule: "schema", Severity: finding.SeverityError, Message: "first", ResourceRef: a.ResourceRef},
		{Rule: "schema", Severity: finding.SeverityError, Message: "second", ResourceRef: b.ResourceRef},
	}}
	if err := Write(&out, r, Options{Format: "text"}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "/d (ns "); n != 2 {
		t.Errorf("%d object headers, want 2:\n%s", n, out.String())
	}
}

func BenchmarkWriteFormats(b *testing.B) {
	r := manyFindings(10000)
	for _, format := range []string{"json", "sarif", "github"} {
		b.Run(format, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := Write(io.Discard, r, Options{Format: format}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestWriteIndentedIsTheEncoder: writeIndented writes the bytes a
// json.Encoder indenting by two spaces writes (HTML characters and line
// separators escaped alike, the final newline).
func TestWriteIndentedIsTheEncoder(t *testing.T) {
	r := manyFindings(50)
	r.Findings[3].Message = "a <b> & c \u2028 d \x1b[31m e \"quoted\""
	r.Findings[5].Suppressed = &finding.Suppression{Kind: finding.SuppressedByBaseline, Source: "baseline.json"}
	r.Failures = []string{"a registry said 500 <html>"}
	doc := Document{APIVersion: APIVersion, Kind: "Report", Results: r.Findings, Summary: Summarize(r, false), Failures: r.Failures}
	values := []any{r, doc, map[string]any{"b": []any{1, "x", nil, map[string]any{}}, "a": ""}, []string{}}
	for i, v := range values {
		var want, got bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		if err := writeIndented(&got, v); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("value %d: writeIndented differs from the encoder:\n%s\nwant:\n%s", i, got.String(), want.String())
		}
	}
}
