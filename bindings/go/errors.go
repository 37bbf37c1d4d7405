package cudnnfe

import (
	"runtime"

	"github.com/cudnnfe/cudnnfe/bindings/go/internal/capi"
)

// Status is a cudnnfe_status_t: the kind of a failure. A Status is itself an
// error so that the Err* sentinels below can be Status values; use them with
// errors.Is:
//
//	if errors.Is(err, cudnnfe.ErrInvalidGraph) { ... }
type Status int32

// The statuses of the C ABI (CUDNNFE_STATUS_*).
const (
	StatusOK                Status = Status(capi.CUDNNFE_STATUS_OK)
	StatusInvalidArgument   Status = Status(capi.CUDNNFE_STATUS_INVALID_ARGUMENT)
	StatusInvalidGraph      Status = Status(capi.CUDNNFE_STATUS_INVALID_GRAPH)
	StatusNotSupported      Status = Status(capi.CUDNNFE_STATUS_NOT_SUPPORTED)
	StatusCUDNNUnavailable  Status = Status(capi.CUDNNFE_STATUS_CUDNN_UNAVAILABLE)
	StatusCUDAError         Status = Status(capi.CUDNNFE_STATUS_CUDA_ERROR)
	StatusCUDNNError        Status = Status(capi.CUDNNFE_STATUS_CUDNN_ERROR)
	StatusOutOfMemory       Status = Status(capi.CUDNNFE_STATUS_OUT_OF_MEMORY)
	StatusBadSerializedData Status = Status(capi.CUDNNFE_STATUS_BAD_SERIALIZED_DATA)
	StatusWrongState        Status = Status(capi.CUDNNFE_STATUS_WRONG_STATE)
	StatusInternal          Status = Status(capi.CUDNNFE_STATUS_INTERNAL)
	// StatusVerifyFailed: verify mode found a result off the CPU reference
	// (BuildOptions.Verify, docs/verify.md; since 0.4).
	StatusVerifyFailed Status = Status(capi.CUDNNFE_STATUS_VERIFY_FAILED)
)

// Sentinel errors, one per failure kind. Every error this package returns is
// an *Error whose Unwrap gives one of these (by its Status), so
// errors.Is(err, ErrInvalidGraph) tests the kind and errors.As(err, &e)
// (e *Error) gives the message.
var (
	ErrInvalidArgument   error = StatusInvalidArgument   // NULL pointer, bad value, unknown UID, closed object
	ErrInvalidGraph      error = StatusInvalidGraph      // validation or shape inference failed
	ErrNotSupported      error = StatusNotSupported      // no engine; needs newer cuDNN or GPU
	ErrCUDNNUnavailable  error = StatusCUDNNUnavailable  // libcudnn / libcudart / GPU not found
	ErrCUDAError         error = StatusCUDAError         // a CUDA runtime call failed
	ErrCUDNNError        error = StatusCUDNNError        // a cuDNN call failed unexpectedly
	ErrOutOfMemory       error = StatusOutOfMemory       // host allocation failed
	ErrBadSerializedData error = StatusBadSerializedData // corrupt or incompatible bytes
	ErrWrongState        error = StatusWrongState        // e.g. execute before build
	ErrInternal          error = StatusInternal          // a bug in cudnnfe: please report
	ErrVerifyFailed      error = StatusVerifyFailed      // verify mode: a result differs from the CPU reference
)

// String returns the C name of the status ("CUDNNFE_STATUS_INVALID_GRAPH");
// "CUDNNFE_STATUS_UNKNOWN" for values this library does not know.
func (s Status) String() string { return capi.Cudnnfe_status_name(int32(s)) }

// Error makes a Status usable as a sentinel error; it returns String().
func (s Status) Error() string { return s.String() }

// Error is a failure reported by cudnnfe (or by this package's own argument
// checks, with the same kinds).
type Error struct {
	// Status is the kind of failure.
	Status Status
	// Op names the Go method or function that failed ("Graph.SDPA").
	Op string
	// Message is the library's full message, naming the node, the tensor and
	// the rule (`sdpa "attn": k has 3 dims [2,1024,64]; expected 4 ...`).
	Message string
}

// Error formats the error as "cudnnfe: <Op>: <Message> [<STATUS>]".
func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "(no message)"
	}
	return "cudnnfe: " + e.Op + ": " + msg + " [" + e.Status.String() + "]"
}

// Unwrap returns the sentinel of e's kind (the Status itself), for errors.Is.
func (e *Error) Unwrap() error { return e.Status }

func newError(op string, st Status, msg string) *Error {
	return &Error{Status: st, Op: op, Message: msg}
}

// argError is this package's own INVALID_ARGUMENT, raised before C is called.
func argError(op, msg string) error { return newError(op, StatusInvalidArgument, msg) }

// objectless runs a call that acts on no object (create, version queries)
// with the goroutine locked to its OS thread, so that the thread-local
// cudnnfe_last_error() read after a failure is this call's message: no other
// goroutine can run a cudnnfe call on this thread in between, and a
// goroutine is never moved while locked.
func objectless(op string, call func() int32) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	st := call()
	if st == int32(capi.CUDNNFE_STATUS_OK) {
		return nil
	}
	return newError(op, Status(st), capi.Cudnnfe_last_error())
}

func hasNUL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return true
		}
	}
	return false
}
