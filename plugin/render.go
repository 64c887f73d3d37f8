package plugin

import (
	"bytes"
	"context"
	"errors"
	"os"

	"github.com/kubectl-gate/kubectl-gate/internal/pipeline"
	"github.com/kubectl-gate/kubectl-gate/internal/stop"
)

// EnvTrustedConfig names the trusted config of `render` (and of gate-fn)
// when --config is not given: a path the platform team mounts where the
// gate runs, e.g. into Argo CD's repo-server (README "Inside Argo CD").
const EnvTrustedConfig = "KUBECTL_GATE_CONFIG"

// runRender implements `render`: render, check, and print the render on
// stdout only when the verdict is pass (README "Use: render into kubectl
// apply"). The report goes to stderr. Exit 1 or 3 prints nothing on stdout,
// nor does a run the deadline or a signal stops, so
// `kubectl gate render -k overlays/prod | kubectl apply -f -` never applies
// a partial or unchecked stream. With no input flag and ARGOCD_APP_NAME
// set it is Argo CD's config-management plugin (render_argocd.go).
func runRender(ctx context.Context, args []string, s Streams, version string) int {
	o := &options{}
	fs := newFlagSet("render", o, false)
	if done, code := parse(fs, args, s, 0); done {
		return code
	}
	var argo *argoRun
	if !o.hasInput() && argoCDEnv() {
		var err error
		if argo, err = o.fromArgoCD(fs); err != nil {
			return fail(argo.stderr(s), err)
		}
		s = argo.streams(s)
		defer argo.cleanup()
	}
	if o.appsRoot != "" {
		return fail(s.Err, usageErr("--apps-root", "render prints the render of -k, --chart and -f; check --apps-root checks what Applications deploy"))
	}
	if o.configFile == "" {
		o.configFile = os.Getenv(EnvTrustedConfig)
	}
	if err := o.validate(false); err != nil {
		return fail(s.Err, err)
	}
	defer stop.SetDeadline(ctx, o.timeout)()
	base, err := loadConfig(o.configFile)
	if err != nil {
		return fail(s.Err, err)
	}
	o.denyRemoteFrom(base)
	printLogs := captureLogs(o.quiet)
	defer printLogs(s.Err)
	prog := progress(s, o)
	defer prog("") // every return path ends the progress line
	popts := o.pipelineOptions(base, version, prog)
	popts.Render.Sort = true // print what `kustomize build` prints, in its order
	if argo != nil {
		if popts, err = argo.options(o, popts, base); err != nil {
			return fail(s.Err, err)
		}
	}
	res, err := pipeline.Run(ctx, o.inputs(s.In), popts)
	if err != nil {
		return fail(s.Err, err)
	}
	if code := usageErrors(s.Err, res); code != ExitPass {
		return code
	}
	total := res.Report()
	o.nameFlags(total)
	var out bytes.Buffer
	code := ExitPass
	for _, u := range res.Units {
		switch {
		case u.Err != nil:
			code = max(code, exitCode(u.Err))
		case printed(u):
			if err := u.WriteYAML(&out); err != nil {
				return fail(s.Err, err)
			}
		}
	}
	if out.Len() == 0 && code == ExitPass {
		// Whatever the config says of render-empty: an empty stream handed
		// to `kubectl apply --prune` or Argo CD with prune deletes
		// everything the app ran.
		total.Failures = append(total.Failures, errEmptyRender.Error())
		code = ExitNoVerdict
	}
	// The report goes to stderr and the render, on pass only, to stdout,
	// as for pin (verdict.finish).
	v := verdict{o: o, pin: true, version: version, failOnWarning: res.FailOnWarning, printLogs: printLogs}
	return v.finish(ctx, s, total, &out, code)
}

var errEmptyRender = errors.New("the render holds no object: render prints nothing and fails rather than hand an empty stream on (applied with prune, it deletes everything)")

// printed reports whether a unit's render is part of what render prints:
// the inputs' renders, not the renders of what they deploy.
func printed(u *pipeline.Unit) bool {
	switch u.Source.(type) {
	case *pipeline.Kustomization, *pipeline.Files, *pipeline.Chart:
		return true
	}
	return false
}

// hasInput reports whether an input flag was given.
func (o *options) hasInput() bool {
	return len(o.kustomizations)+len(o.files)+len(o.charts) > 0
}
