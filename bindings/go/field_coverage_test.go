package cudnnfe

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/cudnnfe/cudnnfe/bindings/go/internal/capi"
)

// Fields of the options structs that reach C as call arguments of a
// hand-written wrapper in internal/capi/manual.go rather than through the
// Go mirror: the wrapper this package must call, with the reason.
var fieldsAsArguments = map[string][2]string{
	"cudnnfe_layout_options_t.name":               {"capi.GraphAddReshape(", "the layout ops take only a name"},
	"cudnnfe_build_options_t.exclude_engines":     {"capi.GraphBuild(", "a Go slice passed for the call"},
	"cudnnfe_build_options_t.num_exclude_engines": {"capi.GraphBuild(", "the slice's length"},
	"cudnnfe_build_options_t.plan_cache_dir":      {"capi.GraphBuild(", "a Go string passed for the call"},
	"cudnnfe_build_options_t.kernel_cache":        {"capi.GraphBuild(", "the KernelCache's pointer passed for the call"},
	"cudnnfe_build_options_t.device_properties":   {"capi.GraphBuild(", "the DeviceProperties' pointer passed for the call"},
	"cudnnfe_bind_options_t.cuda_graph":           {"capi.GraphBind(", "the mode passed for the call; manual.go fills the struct"},
}

type abiManifest struct {
	Structs []struct {
		Typedef string
		Init    *string
		Options bool
		Fields  []struct{ Name string }
	}
}

// pendingLists reads bindings/PENDING_IDIOMATIC.txt: the functions (before
// the [fields] line) and this binding's pending fields ("go S.f: reason").
func pendingLists(t *testing.T) (funcs, fields map[string]bool) {
	text, err := os.ReadFile(filepath.Join("..", "PENDING_IDIOMATIC.txt"))
	if err != nil {
		t.Fatal(err)
	}
	funcs, fields = map[string]bool{}, map[string]bool{}
	inFields := false
	for _, line := range strings.Split(string(text), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case line == "[fields]":
			inFields = true
		case !inFields:
			funcs[line] = true
		default:
			words := strings.Fields(line)
			if len(words) < 3 || !strings.HasSuffix(words[1], ":") {
				t.Fatalf("PENDING_IDIOMATIC.txt: %q is not \"<binding> <struct>.<field>: <reason>\"", line)
			}
			if words[0] == "go" {
				fields[strings.TrimSuffix(words[1], ":")] = true
			}
		}
	}
	return funcs, fields
}

// idiomaticFuncs returns the top-level declarations of the package's
// non-test sources, one string each.
func idiomaticFuncs(t *testing.T) []string {
	files, _ := filepath.Glob("*.go")
	var decls []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		decls = append(decls, strings.Split(string(b), "\nfunc ")...)
	}
	return decls
}

// TestEveryOptionFieldIsSettable: every field of every cudnnfe_*_options_t
// (abi/manifest.json) is written by a function of this package that fills
// the struct's Go mirror (capi.<Mirror> or an embedded shared struct), or
// is passed as a call argument (fieldsAsArguments), or is listed as
// pending for "go" in bindings/PENDING_IDIOMATIC.txt.
func TestEveryOptionFieldIsSettable(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "abi", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m abiManifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	pendingFuncs, pendingFields := pendingLists(t)
	decls := idiomaticFuncs(t)
	all := strings.Join(decls, "\n")
	var missing, stale []string
	checked := 0
	for _, s := range m.Structs {
		if !s.Options || (s.Init != nil && pendingFuncs[*s.Init]) {
			continue
		}
		mirror := capi.OptionStructs[s.Typedef]
		if mirror == "" {
			t.Fatalf("%s has no Go mirror in internal/capi/options_gen.go", s.Typedef)
		}
		scope := scopeOf(decls, append([]string{mirror}, capi.OptionEmbeds[mirror]...))
		for _, f := range s.Fields {
			if f.Name == "struct_size" {
				continue
			}
			key := s.Typedef + "." + f.Name
			set := false
			if arg, ok := fieldsAsArguments[key]; ok {
				set = strings.Contains(all, arg[0])
			} else {
				set = assigns(scope, capi.OptionFields[s.Typedef][f.Name])
			}
			checked++
			switch {
			case set && pendingFields[key]:
				stale = append(stale, key)
			case !set && !pendingFields[key]:
				missing = append(missing, key)
			}
			delete(pendingFields, key)
		}
	}
	for key := range pendingFields {
		stale = append(stale, key)
	}
	sort.Strings(missing)
	sort.Strings(stale)
	if len(missing) > 0 {
		t.Errorf("option fields the Go API cannot set (wrap them, or list them as \"go S.f: reason\" "+
			"under [fields] in bindings/PENDING_IDIOMATIC.txt): %s", strings.Join(missing, ", "))
	}
	if len(stale) > 0 {
		t.Errorf("bindings/PENDING_IDIOMATIC.txt lists Go fields that are settable or gone: %s",
			strings.Join(stale, ", "))
	}
	if checked < 100 {
		t.Fatalf("checked only %d fields; the manifest reading is broken", checked)
	}
}

// scopeOf joins the declarations that mention capi.<name> for any name.
func scopeOf(decls []string, names []string) string {
	var b strings.Builder
	for _, d := range decls {
		for _, n := range names {
			if regexp.MustCompile(`capi\.` + n + `\b`).MatchString(d) {
				b.WriteString(d)
				b.WriteByte('\n')
				break
			}
		}
	}
	return b.String()
}

// assigns reports whether src writes field goField of some value: x.F = ,
// x.F |= , or &x.F (handed to a setter).
func assigns(src, goField string) bool {
	if goField == "" {
		return false
	}
	re := regexp.MustCompile(`\.` + goField + `\s*\|?=[^=]|&\w+\.` + goField + `\b`)
	return re.MatchString(src)
}
