//go:build !cudnnfe_link && !cudnnfe_pkgconfig

package cudnnfe

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Without a library the run-time loader (internal/capi/cudnnfe_loader.c)
// turns every call into an error naming what it tried, not a crash.
func TestMissingLibraryIsAnErrorNamingThePath(t *testing.T) {
	if os.Getenv("CUDNNFE_LOADER_CHILD") == "1" {
		g, err := NewGraph()
		if err == nil {
			g.Close()
			t.Fatal("NewGraph succeeded without a library")
		}
		os.Stdout.WriteString("error: " + err.Error() + "\n")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMissingLibraryIsAnErrorNamingThePath$")
	cmd.Env = append(os.Environ(), "CUDNNFE_LOADER_CHILD=1",
		"CUDNNFE_LIBRARY=/nonexistent/libcudnnfe.so.0")
	out, err := cmd.CombinedOutput()
	text := string(out)
	if err != nil {
		t.Fatalf("the child failed: %v\n%s", err, text)
	}
	for _, want := range []string{"could not load libcudnnfe", "/nonexistent/libcudnnfe.so.0"} {
		if !strings.Contains(text, want) {
			t.Errorf("the error does not say %q:\n%s", want, text)
		}
	}
}
