package external

import (
	"fmt"
	"path/filepath"
	"strings"
)

// A tool must judge the render it was given. Its answer is no verdict
// (a *NoVerdictError, exit 3) when it covers none of the render's objects,
// names an object or file the render does not hold, or is empty while
// policies were given: a pass from a tool that looked at nothing, or at
// something else, would be green on what was never judged.

// judgedNothing is the no-verdict error for an answer that covers nothing.
func judgedNothing(tool, what string) error {
	return &NoVerdictError{Tool: tool, Reason: "judged nothing", Err: fmt.Errorf("%s returned %s", tool, what)}
}

// judgedOther is the no-verdict error for an answer about something the
// render does not hold.
func judgedOther(tool, what string) error {
	return &NoVerdictError{Tool: tool, Reason: "judged something else", Err: fmt.Errorf("%s returned %s", tool, what)}
}

// String names a resource as kubectl does, for messages.
func (r Resource) String() string {
	s := r.Kind + " " + r.Name
	if r.Namespace != "" {
		s = r.Kind + " " + r.Namespace + "/" + r.Name
	}
	return r.APIVersion + " " + s
}

// covers reports whether a result's resource is one of the render's
// objects. Kyverno names an object the render leaves without a namespace
// by the namespace it was evaluated in, "default".
func covers(objects map[Resource]bool, r Resource) bool {
	if objects[r] {
		return true
	}
	if r.Namespace == "default" {
		r.Namespace = ""
		return objects[r]
	}
	return false
}

// checkKyvernoCoverage judges kyverno's answer: at least one result on an
// object of the render when policies were given, and none on an object
// the render does not hold.
func checkKyvernoCoverage(judged []Resource, objects []Resource, policies int) error {
	set := make(map[Resource]bool, len(objects))
	for _, o := range objects {
		set[o] = true
	}
	var outside []string
	inside := 0
	for _, r := range judged {
		if covers(set, r) {
			inside++
		} else if len(outside) < 3 {
			outside = append(outside, fmt.Sprintf("%q", r.String()))
		}
	}
	switch {
	case len(outside) > 0:
		return judgedOther("kyverno", "results for "+strings.Join(outside, ", ")+", which the render does not hold")
	case inside == 0 && policies > 0:
		return judgedNothing("kyverno", fmt.Sprintf("no result on any of the render's %d objects for %d policies", len(objects), policies))
	}
	return nil
}

// checkConftestCoverage judges conftest's answer: results for the render
// file it was given, and for no other file.
func checkConftestCoverage(files []string, renderPath string) error {
	if len(files) == 0 {
		return judgedNothing("conftest", "no result ([]) for the render although Rego policies were given")
	}
	for _, f := range files {
		// conftest names a file as it was given (an absolute path here);
		// a relative name is taken from its working directory.
		if !filepath.IsAbs(f) {
			f = filepath.Join(filepath.Dir(renderPath), f)
		}
		if filepath.Clean(f) != renderPath {
			return judgedOther("conftest", fmt.Sprintf("results for %q, which is not the render it was given", excerpt(f)))
		}
	}
	return nil
}
