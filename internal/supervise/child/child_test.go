package child

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/gcfloor"
	"github.com/kubectl-gate/kubectl-gate/internal/supervise"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestChildMemoryLimit: the child's Go memory limit is 80% of the cap, and
// a lower GOMEMLIMIT the user set (a container's budget) is kept, not
// raised to it.
func TestChildMemoryLimit(t *testing.T) {
	if os.Getenv("SUPERVISE_TEST_CHILD") != "" {
		Arm()
		fmt.Println(debug.SetMemoryLimit(-1))
		return
	}
	for _, tc := range []struct {
		gomemlimit string
		want       int64
	}{
		{"", 800_000_000},
		{"100MiB", 100 << 20},
		{"2GiB", 800_000_000},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildMemoryLimit$")
		cmd.Env = append(os.Environ(), "SUPERVISE_TEST_CHILD=1", supervise.EnvChild+"=1", supervise.EnvMaxMemory+"=1000000000", "GOMEMLIMIT="+tc.gomemlimit)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOMEMLIMIT=%q: child: %v", tc.gomemlimit, err)
		}
		got, err := strconv.ParseInt(strings.Fields(string(out))[0], 10, 64)
		if err != nil {
			t.Fatalf("GOMEMLIMIT=%q: child printed %q", tc.gomemlimit, out)
		}
		if got != tc.want {
			t.Errorf("GOMEMLIMIT=%q: the child's memory limit is %d, want %d", tc.gomemlimit, got, tc.want)
		}
	}
}

// TestEnds runs this test binary as a supervised command, parent and
// child, and ends the child each way it can end: its own exit code passes
// through; a fatal runtime error (a stack overflow, which exits 2 from the
// runtime, the usage-error code), a kill and the memory cap are exit 3,
// each named on stderr.
func TestEnds(t *testing.T) {
	if mode := os.Getenv("SUPERVISE_TEST_END"); mode != "" {
		supervise.Run("test", supervise.NoVerdict) // the parent exits here
		Arm()
		end(mode)
		return
	}
	for _, tc := range []struct {
		mode, env string
		code      int
		says      string
	}{
		{mode: "exit7", code: 7},
		{mode: "pass", code: 0},
		{mode: "overflow", code: 3, says: "test: NO VERDICT: the gate crashed: a fatal runtime error (stack"},
		{mode: "kill", code: 3, says: "test: NO VERDICT: the gate was killed (signal: killed)"},
		{mode: "memory", env: supervise.EnvMaxMemory + "=150000000", code: 3, says: "test: NO VERDICT: the run used more than 150000000 bytes of memory"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			code, stderr := testutil.RunSelf(t, "TestEnds", "SUPERVISE_TEST_END="+tc.mode, tc.env)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, tail(stderr))
			}
			if !strings.Contains(stderr, tc.says) {
				t.Errorf("stderr does not say %q:\n%s", tc.says, tail(stderr))
			}
		})
	}
}

// TestGOGC: the parent starts the child with the collector off for its
// initialization; Arm turns it back on as the user's GOGC says and gives
// what the child runs the environment the user gave (no GOGC=off, no
// supervision variables, so a gate run in turn supervises itself).
func TestGOGC(t *testing.T) {
	if os.Getenv("SUPERVISE_TEST_GOGC") != "" {
		supervise.Run("test", supervise.NoVerdict) // the parent exits here
		// The child's one collection at start-up (supervise's huge-page
		// reservation) is not the garbage's.
		start := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
		metrics.Read(start)
		initial := debug.SetGCPercent(-1) // as the child's packages were initialized
		Arm()
		p := debug.SetGCPercent(-1)
		debug.SetGCPercent(p)
		percent := strconv.Itoa(p)
		if gcfloor.Floor() != 0 && p > 100 {
			percent = "over 100" // the floor's, which the memory limits cap
		}
		// 24 MiB of garbage (at most half the floor as applied, which a
		// container's memory limit may lower): with the floor no
		// collection may run (before the first, the floor once sized
		// the percentage against nothing, and the child was collected
		// at once), as a small GOGC's must. SUPERVISE_TEST_GARBAGE_MIB
		// asks for more: past a floor the memory cap lowered, one must.
		garbage := 24
		if n, err := strconv.Atoi(os.Getenv("SUPERVISE_TEST_GARBAGE_MIB")); err == nil {
			garbage = n
		} else if a := gcfloor.Applied(); a != 0 {
			garbage = min(garbage, int(a>>20)/2)
		}
		for range garbage {
			sink = make([]byte, 1<<20)
		}
		gc := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
		metrics.Read(gc)
		gogc, set := os.LookupEnv("GOGC")
		fmt.Printf("initial=%d percent=%s GOGC=%q,%v supervised=%q user=%q floor=%d collected=%v\n", initial, percent, gogc, set,
			os.Getenv(supervise.EnvChild), os.Getenv(supervise.EnvUserGOGC), gcfloor.Floor(), gc[0].Value.Uint64() > start[0].Value.Uint64())
		os.Exit(0)
	}
	for _, tc := range []struct{ gogc, env, want string }{
		// no GOGC of the user's: the heap floor (package gcfloor), from
		// the start
		{"", "", fmt.Sprintf(`initial=-1 percent=over 100 GOGC="",false supervised="" user="" floor=%d collected=false`, gcfloor.DefaultFloor)},
		// a memory cap of 150 MB: the Go limit 120 MB caps the floor at
		// 30 MB from the start, so 64 MiB of garbage is collected
		{"", supervise.EnvMaxMemory + "=150000000 SUPERVISE_TEST_GARBAGE_MIB=64", fmt.Sprintf(`initial=-1 percent=over 100 GOGC="",false supervised="" user="" floor=%d collected=true`, gcfloor.DefaultFloor)},
		{"50", "", `initial=-1 percent=50 GOGC="50",true supervised="" user="" floor=0 collected=true`},
		{"off", "", `initial=-1 percent=-1 GOGC="off",true supervised="" user="" floor=0 collected=false`},
		{"nonsense", "", `initial=-1 percent=100 GOGC="nonsense",true supervised="" user="" floor=0 collected=true`},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestGOGC$")
		// Not the GOGC or GOMEMLIMIT this test runs under.
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "GOMEMLIMIT=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "SUPERVISE_TEST_GOGC=1")
		if tc.env != "" {
			cmd.Env = append(cmd.Env, strings.Fields(tc.env)...)
		}
		if tc.gogc != "" {
			cmd.Env = append(cmd.Env, "GOGC="+tc.gogc)
		}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOGC=%q: %v", tc.gogc, err)
		}
		if got := strings.TrimSpace(string(out)); got != tc.want {
			t.Errorf("GOGC=%q: the child says\n  %s\nwant\n  %s", tc.gogc, got, tc.want)
		}
	}
}

// end ends the supervised child the way mode names.
func end(mode string) {
	switch mode {
	case "exit7":
		os.Exit(7)
	case "overflow":
		debug.SetMaxStack(1 << 20)
		fmt.Println(recurse(1))
	case "kill":
		if self, err := os.FindProcess(os.Getpid()); err == nil {
			_ = self.Kill()
		}
		select {}
	case "memory":
		var keep [][]byte
		for { // resident memory past the cap: the parent polls every 50 ms
			b := make([]byte, 16<<20)
			for i := range b {
				b[i] = 1
			}
			keep = append(keep, b)
			if len(keep) > 64 {
				os.Exit(0) // past 1 GB and not killed: the test fails on exit 0
			}
		}
	}
}

// sink keeps the compiler from dropping TestGOGC's garbage.
var sink []byte

func recurse(n int) int {
	var pad [64]byte
	pad[n%64] = byte(n)
	return recurse(n+1) + int(pad[0])
}

func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}

// TestEveryMainArms: a command whose supervision starts from a package
// initializer (it imports a cmd/*/supervised package) starts its child
// with the collector off, which only Arm turns back on: its main must call
// Arm first, or the run keeps every allocation until the memory cap.
func TestEveryMainArms(t *testing.T) {
	mains, err := filepath.Glob(filepath.Join("..", "..", "..", "cmd", "*", "main.go"))
	if err != nil || len(mains) == 0 {
		t.Fatalf("no cmd/*/main.go found: %v", err)
	}
	supervised := 0
	for _, path := range mains {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		imports := false
		for _, imp := range f.Imports {
			imports = imports || strings.HasSuffix(imp.Path.Value, `/supervised"`)
		}
		if !imports {
			continue
		}
		supervised++
		first := ""
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "main" && len(fn.Body.List) > 0 {
				if call, ok := fn.Body.List[0].(*ast.ExprStmt); ok {
					if c, ok := call.X.(*ast.CallExpr); ok {
						if sel, ok := c.Fun.(*ast.SelectorExpr); ok {
							if x, ok := sel.X.(*ast.Ident); ok {
								first = x.Name + "." + sel.Sel.Name
							}
						}
					}
				}
			}
		}
		if first != "child.Arm" {
			t.Errorf("%s: main starts with %q, want child.Arm()", path, first)
		}
	}
	if supervised < 2 {
		t.Errorf("%d supervised commands found, want kubectl-gate and gate-fn", supervised)
	}
}
