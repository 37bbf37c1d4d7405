package cudnnfe

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestEveryCFunctionIsWrapped fails when the C header declares a function
// this package does not reach, either through the SWIG layer
// (capi.Cudnnfe_<name>), through a hand-written wrapper in
// internal/capi/manual.go that this package calls, or through the options
// mirrors generated into internal/capi/options_gen.go (their init
// functions).
func TestEveryCFunctionIsWrapped(t *testing.T) {
	include := filepath.Join("..", "..", "include") // as generate.sh: CUDNNFE_INCLUDE_DIR overrides
	if dir := os.Getenv("CUDNNFE_INCLUDE_DIR"); dir != "" {
		include = dir
	}
	header, err := os.ReadFile(filepath.Join(include, "cudnnfe", "cudnnfe.h"))
	// Hand-written cgo: manual.go and log_callback.go (capi.go is SWIG's).
	manual, merr := os.ReadFile(filepath.Join("internal", "capi", "manual.go"))
	generated, gerr := os.ReadFile(filepath.Join("internal", "capi", "options_gen.go"))
	if merr == nil {
		merr = gerr
	}
	if callbacks, cerr := os.ReadFile(filepath.Join("internal", "capi", "log_callback.go")); cerr == nil {
		manual = append(manual, callbacks...)
	}
	if err != nil || merr != nil {
		t.Skipf("sources not found (%v, %v): run from bindings/go in the repository", err, merr)
	}
	// Declarations start a line with their return type.
	declared := regexp.MustCompile(`(?m)^(?:const )?[a-z_0-9]+ \*?(cudnnfe_[a-z0-9_]+)\(`).FindAllSubmatch(header, -1)
	if len(declared) < 40 {
		t.Fatalf("found only %d functions in the header; the pattern is broken", len(declared))
	}

	var idiomatic strings.Builder
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		idiomatic.Write(b)
	}
	src := idiomatic.String()

	// Hand-written wrappers: which C functions each calls, and whether this
	// package uses it.
	manualFuncs := regexp.MustCompile(`(?m)^func ([A-Z]\w*)\(`).FindAllSubmatch(manual, -1)
	for _, m := range manualFuncs {
		if !strings.Contains(src, "capi."+string(m[1])) {
			t.Errorf("internal/capi.%s is never used by package cudnnfe", m[1])
		}
	}
	cCalls := map[string]bool{}
	cFunc := regexp.MustCompile(`(cudnnfe_[a-z0-9_]+)\(`)
	for _, m := range cFunc.FindAllSubmatch(manual, -1) {
		cCalls[string(m[1])] = true
	}
	// A generated function counts only where this package calls it.
	for _, decl := range strings.Split(string(generated), "\nfunc ")[1:] {
		name := regexp.MustCompile(`^\w+`).FindString(decl)
		if name == "" || !strings.Contains(src, "capi."+name+"(") {
			continue
		}
		for _, m := range cFunc.FindAllStringSubmatch(decl, -1) {
			cCalls[m[1]] = true
		}
	}

	var missing []string
	for _, d := range declared {
		name := string(d[1])
		generated := "capi.C" + name[1:] + "(" // capi.Cudnnfe_graph_create(
		if strings.Contains(src, generated) || cCalls[name] {
			continue
		}
		missing = append(missing, name)
	}
	sort.Strings(missing)
	// Functions the generated layer wraps but the idiomatic API does not
	// offer yet: exactly those listed in bindings/PENDING_IDIOMATIC.txt.
	pendingText, perr := os.ReadFile(filepath.Join("..", "PENDING_IDIOMATIC.txt"))
	if perr != nil {
		t.Fatal(perr)
	}
	pending := map[string]bool{}
	for _, line := range strings.Split(string(pendingText), "\n") {
		line = strings.TrimSpace(line)
		if line == "[fields]" {
			break // the fields section (field_coverage_test.go)
		}
		if line != "" && !strings.HasPrefix(line, "#") {
			pending[line] = true
		}
	}
	var unexpected []string
	for _, name := range missing {
		if !pending[name] {
			unexpected = append(unexpected, name)
		}
		delete(pending, name)
	}
	if len(unexpected) > 0 {
		t.Errorf("C functions with no Go wrapper (%d of %d): %s", len(unexpected), len(declared), strings.Join(unexpected, ", "))
	}
	for name := range pending {
		t.Errorf("bindings/PENDING_IDIOMATIC.txt lists %s, which is wrapped or gone", name)
	}
	t.Logf("%d C functions, %d wrapped idiomatically", len(declared), len(declared)-len(missing))
}
