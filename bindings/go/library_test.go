package cudnnfe

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

// The library search order itself is tested in C (tests/discovery) with
// fake libraries; here: the Go view of the report, the refusal of a late
// search directory, and log lines reaching a Go func.
func TestLibraryInfoAndLateSearchDir(t *testing.T) {
	info, err := GetLibraryInfo()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info.CudnnfePath, "libcudnnfe.so") {
		t.Errorf("CudnnfePath = %q", info.CudnnfePath)
	}
	if info.CudnnOrigin == OriginNotLoaded && (info.CudnnPath != "" || info.CudnnReason == "") {
		t.Errorf("not loaded but path %q, reason %q", info.CudnnPath, info.CudnnReason)
	}
	if info.CudnnOrigin != OriginNotLoaded && info.CudnnVersion < 90000 {
		t.Errorf("loaded cuDNN %q reports version %d", info.CudnnPath, info.CudnnVersion)
	}
	err = AddLibrarySearchDir(LibraryCUDNN, "/late")
	if !errors.Is(err, ErrWrongState) || !strings.Contains(err.Error(), "already been looked for") {
		t.Errorf("late search dir: %v", err)
	}
	if err := AddLibrarySearchDir(Library(7), "/x"); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("unknown library: %v", err)
	}
}

func TestLogCallbackReceivesBuildLines(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	err := SetLogCallback(func(level LogLevel, message string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, message)
	}, LogDebug)
	if err != nil {
		t.Fatal(err)
	}
	defer SetLogCallback(nil, LogOff)
	g, err := NewGraph()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.SetName("logged_from_go"); err != nil {
		t.Fatal(err)
	}
	x, err := g.AddTensor("x", DTypeFloat, []int64{2, 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	y, err := g.Binary(PointwiseAdd, x, x, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.SetOutput(y, true); err != nil {
		t.Fatal(err)
	}
	if err := g.Build(nil, &BuildOptions{Target: TargetCPUReference}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	found := false
	for _, l := range lines {
		found = found || strings.Contains(l, `build "logged_from_go": CPU reference plan`)
	}
	if !found {
		t.Errorf("no build line in %q", lines)
	}
	if err := SetLogCallback(nil, LogLevel(9)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("bad level: %v", err)
	}
}
