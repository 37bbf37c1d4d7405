package capi

// The log callback (cudnnfe_set_log_callback): C calls one exported Go
// trampoline, which calls the Go func last set. A file with //export may
// only declare C functions in its preamble, hence its own file; SWIG
// ignores the function (cudnnfe.i).

/*
#include <stdint.h>
#include "cudnnfe/cudnnfe.h"
extern void capiLogTrampoline(cudnnfe_log_level_t level, char *message, void *user_data);
*/
import "C"

import (
	"sync"
	"unsafe"
)

var (
	logMu sync.Mutex
	logFn func(level int32, message string)
)

//export capiLogTrampoline
func capiLogTrampoline(level C.cudnnfe_log_level_t, message *C.char, userData unsafe.Pointer) {
	logMu.Lock()
	fn := logFn
	logMu.Unlock()
	if fn != nil {
		fn(int32(level), C.GoString(message))
	}
}

// SetLogCallback sends the library's log lines at `level` and below to fn
// (nil: standard error), calling cudnnfe_set_log_callback. fn may be called
// from any thread; calls are serialized by the library.
func SetLogCallback(fn func(level int32, message string), level int32) int32 {
	var callback C.cudnnfe_log_callback_t
	if fn != nil {
		callback = C.cudnnfe_log_callback_t(C.capiLogTrampoline)
	}
	logMu.Lock()
	previous := logFn
	logFn = fn
	logMu.Unlock()
	status := int32(C.cudnnfe_set_log_callback(callback, nil, C.cudnnfe_log_level_t(level)))
	if status != 0 {
		logMu.Lock()
		logFn = previous
		logMu.Unlock()
	}
	return status
}
