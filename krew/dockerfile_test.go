package krew

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	Cmd  string // upper case
	Args string
	Line int
}

type stage struct {
	Image, Name string
	Body        []instruction
}

// parseDockerfile splits a Dockerfile into stages. Comment lines are dropped,
// also inside continued instructions, as Docker does.
func parseDockerfile(t *testing.T, text string) []stage {
	t.Helper()
	var stages []stage
	var cur strings.Builder
	start := 0
	for i, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if strings.HasSuffix(line, `\`) {
			cur.WriteString(strings.TrimSuffix(line, `\`) + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		cur.Reset()
		in := instruction{strings.ToUpper(cmd), strings.Join(strings.Fields(args), " "), start}
		if in.Cmd == "FROM" {
			var s stage
			for _, f := range strings.Fields(in.Args) {
				switch {
				case strings.HasPrefix(f, "--"):
				case strings.EqualFold(f, "AS"):
				case s.Image == "":
					s.Image = f
				default:
					s.Name = f
				}
			}
			stages = append(stages, s)
			continue
		}
		if len(stages) == 0 {
			if in.Cmd != "ARG" {
				t.Fatalf("Dockerfile line %d: %s before the first FROM", in.Line, in.Cmd)
			}
			continue
		}
		stages[len(stages)-1].Body = append(stages[len(stages)-1].Body, in)
	}
	return stages
}

func (s stage) all(cmd string) []instruction {
	var out []instruction
	for _, in := range s.Body {
		if in.Cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

// TestDockerfileContract pins the README's install contract: a static gate-fn built from
// cmd/gate-fn, on a distroless nonroot base with CA certificates, run as a
// non-root user by ENTRYPOINT ["/gate-fn"].
func TestDockerfileContract(t *testing.T) {
	root := testutil.Root(t)
	stages := parseDockerfile(t, string(readFile(t, filepath.Join(root, "Dockerfile"))))
	if len(stages) < 2 {
		t.Fatalf("want a multi-stage build, got %d stage(s)", len(stages))
	}
	build, final := stages[0], stages[len(stages)-1]

	// Every base is pinned by digest (the tag may stay, for the reader):
	// the project that asks digests of every image pins its own.
	for _, st := range stages {
		d, err := name.NewDigest(st.Image)
		if err != nil {
			t.Errorf("FROM %s: not pinned by digest (want IMAGE:TAG@sha256:…): %v", st.Image, err)
			continue
		}
		if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(d.DigestStr()) {
			t.Errorf("FROM %s: digest %q is not sha256:<64 hex>", st.Image, d.DigestStr())
		}
	}

	// The builder's Go is the go.mod's.
	goLine := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(readFile(t, filepath.Join(root, "go.mod")))
	if goLine == nil || !strings.HasPrefix(build.Image, "golang:"+string(goLine[1])) {
		t.Errorf("builder image %q, want golang:%s (go.mod's go)", build.Image, goLine[1])
	}
	var goBuild string
	for _, in := range build.all("RUN") {
		if strings.Contains(in.Args, "go build") {
			goBuild = in.Args
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "go build", "-trimpath", "-X main.version=", "-o /gate-fn", "./cmd/gate-fn"} {
		if !strings.Contains(goBuild, want) {
			t.Errorf("the builder's go build lacks %q: %q", want, goBuild)
		}
	}

	if !strings.HasPrefix(final.Image, "gcr.io/distroless/static") || !strings.Contains(final.Image, ":nonroot") {
		t.Errorf("final base %q, want gcr.io/distroless/static…:nonroot (static, CA certificates, non-root)", final.Image)
	}
	copied := false
	for _, in := range final.all("COPY") {
		copied = copied || in.Args == "--from="+build.Name+" /gate-fn /gate-fn"
	}
	if build.Name == "" || !copied {
		t.Errorf("final stage does not COPY --from=%s /gate-fn /gate-fn: %v", build.Name, final.all("COPY"))
	}
	users := final.all("USER")
	if len(users) == 0 {
		t.Error("final stage sets no USER (the base's would do, but say it)")
	} else if u, _, _ := strings.Cut(users[len(users)-1].Args, ":"); u == "0" || u == "root" || !regexp.MustCompile(`^[1-9]\d*$`).MatchString(u) {
		t.Errorf("USER %q: want a numeric non-root uid (runAsNonRoot can only verify numbers)", users[len(users)-1].Args)
	}
	eps := final.all("ENTRYPOINT")
	var ep []string
	if len(eps) != 1 || json.Unmarshal([]byte(eps[0].Args), &ep) != nil || !slices.Equal(ep, []string{"/gate-fn"}) {
		t.Errorf(`want one ENTRYPOINT ["/gate-fn"] (exec form), got %v`, eps)
	}
	if cmds := final.all("CMD"); len(cmds) > 0 {
		t.Errorf("CMD %v would add arguments to every run of the function", cmds)
	}
	labels := ""
	for _, in := range final.all("LABEL") {
		labels += in.Args + " "
	}
	for _, want := range []string{`org.opencontainers.image.source="https://github.com/kubectl-gate/kubectl-gate"`, `org.opencontainers.image.licenses="Apache-2.0"`} {
		if !strings.Contains(labels, want) {
			t.Errorf("labels lack %s", want)
		}
	}
}

// TestDockerignoreKeepsSources: every local package gate-fn is built from
// gets past .dockerignore (a new top-level package would break the image).
func TestDockerignoreKeepsSources(t *testing.T) {
	root := testutil.Root(t)
	kept := map[string]bool{}
	for _, l := range strings.Split(string(readFile(t, filepath.Join(root, ".dockerignore"))), "\n") {
		if d, ok := strings.CutPrefix(strings.TrimSpace(l), "!"); ok {
			kept[strings.TrimSuffix(d, "/")] = true
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		if !kept[f] {
			t.Errorf(".dockerignore drops %s", f)
		}
	}
	// Each local package, and each file it embeds, must reach the build.
	cmd := exec.Command("go", "list", "-deps", "-f", `{{if not .Standard}}{{.Dir}}{{range .EmbedFiles}} {{$.Dir}}/{{.}}{{end}}{{"\n"}}{{end}}`, "./cmd/gate-fn")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dropped := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(root, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue // a module dependency
		}
		rel = filepath.ToSlash(rel)
		top := strings.Split(rel, "/")[0]
		if !kept[top] && !dropped[top] {
			dropped[top] = true
			t.Errorf(".dockerignore drops %s/, which gate-fn is built from (%s)", top, rel)
		}
		if strings.Contains("/"+rel+"/", "/testdata/") || strings.HasSuffix(rel, "_test.go") {
			t.Errorf(".dockerignore drops %s, which gate-fn embeds", rel)
		}
	}
}

// TestE2EDockerfileLint runs dockerfilelint (make lint-dockerfile installs
// it) on the Dockerfile, and on a bad one to see that it can fail.
func TestE2EDockerfileLint(t *testing.T) {
	lint := tool(t, "DOCKERFILELINT", "dockerfilelint", "dockerfilelint")
	df := string(readFile(t, filepath.Join(testutil.Root(t), "Dockerfile")))
	if r := runLint(t, lint, df); r.Code != 0 {
		t.Errorf("dockerfilelint: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := runLint(t, lint, "FROM golang\nRUN apt-get update && apt-get install curl\nentrypoint /x\n"); r.Code == 0 {
		t.Errorf("dockerfilelint passed a bad Dockerfile:\n%s", r.Stdout)
	}
}

// runLint lints from stdin as `make lint-dockerfile` does: dockerfilelint
// 1.8.0 predates FROM --platform and reads the flag as an untagged image.
func runLint(t *testing.T, lint, dockerfile string) testutil.Result {
	t.Helper()
	dockerfile = regexp.MustCompile(`(?m)^FROM --platform=\S+ `).ReplaceAllString(dockerfile, "FROM ")
	return testutil.Run(t, t.TempDir(), dockerfile, nil, lint, "-")
}
