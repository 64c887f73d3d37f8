package tmplbound

import (
	"errors"
	"strings"
	"testing"
	"text/template"

	"github.com/Masterminds/sprig/v3"
)

func TestBombsStopAtTheCaps(t *testing.T) {
	for text, want := range map[string]string{
		`{{ repeat 100000 (repeat 100000 "x") }}`:              "over the output cap of 1048576 bytes",
		`{{ range until 100000000 }}{{ end }}`:                 "elements are over the cap",
		`{{ range untilStep 0 1000000000 1 }}{{ end }}`:        "elements are over the cap",
		`{{ range until 2000 }}{{ repeat 1000 "x" }}{{ end }}`: ErrOverBudget.Error(),
	} {
		funcs := sprig.TxtFuncMap()
		for k, v := range Funcs(1 << 20) {
			funcs[k] = v
		}
		tmpl := template.Must(template.New("t").Funcs(funcs).Parse(text))
		w := &Writer{Budget: 1 << 20}
		err := tmpl.Execute(w, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", text, err, want)
		}
		if w.Len() > 1<<20 {
			t.Errorf("%s: wrote %d bytes", text, w.Len())
		}
	}
	w := &Writer{Budget: 10}
	if _, err := w.Write([]byte("0123456789x")); !errors.Is(err, ErrOverBudget) {
		t.Errorf("a write past the budget: %v", err)
	}
	if got, _ := untilStep(0, 5, 2); len(got) != 3 {
		t.Errorf("untilStep 0 5 2 = %v", got)
	}
}
