package cmp_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/cmp"
)

// FuzzParseParameters: ARGOCD_APP_PARAMETERS comes from the Application,
// which a pull request may write. Whatever it holds, parsing returns
// parameters or an error, never panics, and what it accepts reads back the
// same after Argo CD's way of writing it (name plus one value).
func FuzzParseParameters(f *testing.F) {
	for _, seed := range []string{
		`[{"name":"values-files","array":["values-prod.yaml","../../env/prod.yaml"]},{"name":"helm-parameters","map":{"image.tag":"1.4.2"}},{"name":"values","string":"replicas: 3\n"}]`,
		`[{"name":"helm-string-parameters","map":{}},{"name":"release-name","string":"web"}]`,
		`[]`, `null`, `[{"name":"values"}]`, `[{"name":"values-files","array":null}]`, `{"name":"x"}`,
		`[{"name":"values","string":"a"},{"name":"values","string":"b"}]`, `[{"name":"\u0000","map":{"\ud800":"x"}}]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, err := cmp.ParseParameters(data)
		if err != nil {
			return
		}
		again, err := json.Marshal(ps)
		if err != nil {
			t.Fatalf("marshal %+v: %v", ps, err)
		}
		ps2, err := cmp.ParseParameters(again)
		if err != nil {
			t.Fatalf("accepted %q but not its own re-encoding %s: %v", data, again, err)
		}
		if !reflect.DeepEqual(ps, ps2) {
			t.Fatalf("round trip changed %+v into %+v", ps, ps2)
		}
		e := &cmp.Env{AppName: "shop", SourcePath: "apps/shop", Params: ps}
		_, _ = e.Helm()
	})
}
