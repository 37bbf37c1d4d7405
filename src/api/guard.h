// The C boundary: runs a call's body, turns any exception into a status and
// a message, and records the message on the object and the calling thread.
#pragma once

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "api/objects.h"
#include "core/error.h"

namespace cudnnfe {

// Thread-local message of the last failure on this OS thread.
std::string &thread_error();

template <class Record, class Body>
cudnnfe_status_t run_guarded(Record &&record, Body &&body) noexcept {
  cudnnfe_status_t status = CUDNNFE_STATUS_OK;
  try {
    body();
    return CUDNNFE_STATUS_OK;
  } catch (const Error &e) {
    status = e.status();
    try {
      record(e.message());
    } catch (...) {
    }
  } catch (const std::bad_alloc &) {
    status = CUDNNFE_STATUS_OUT_OF_MEMORY;
    try {
      record("out of host memory");
    } catch (...) {
    }
  } catch (const std::exception &e) {
    status = CUDNNFE_STATUS_INTERNAL;
    try {
      record(cat("internal error: ", e.what()));
    } catch (...) {
    }
  } catch (...) {
    status = CUDNNFE_STATUS_INTERNAL;
    try {
      record("internal error: unknown exception");
    } catch (...) {
    }
  }
  return status;
}

// For calls with no object: the message goes to the thread only.
template <class Body>
cudnnfe_status_t guard(Body &&body) noexcept {
  return run_guarded([](const std::string &m) { thread_error() = m; }, body);
}

// For calls on a graph: the message also goes on the graph (if it is live).
template <class Body>
cudnnfe_status_t guard_graph(const cudnnfe_graph *g, Body &&body) noexcept {
  return run_guarded(
      [g](const std::string &m) {
        thread_error() = m;
        if (const cudnnfe_graph *record = find_graph(g)) {
          std::lock_guard<std::mutex> lock(record->error_mutex);
          record->last_error = m;
        }
      },
      [&] { body(graph_of(g)); });
}

// For execute: the message goes on the handle (one thread's context).
template <class Body>
cudnnfe_status_t guard_handle(cudnnfe_handle *h, Body &&body) noexcept {
  return run_guarded(
      [h](const std::string &m) {
        thread_error() = m;
        if (cudnnfe_handle *record = find_handle(h)) record->impl->last_error = m;
      },
      [&] { body(handle_of(h)); });
}

template <class T>
void require_out(T *out, const char *what) {
  if (!out) fail_argument(what, " (output pointer) is NULL");
}

inline std::string string_or_empty(const char *s) {
  return s ? std::string(s) : std::string();
}

// The body of every *_init_sized function: writes the defaults that `fill`
// sets (over a zeroed struct) into the caller's struct, but only its first
// `size` bytes -- the struct of the header the caller was compiled with, so
// an older caller's smaller struct is never overrun. A caller's struct larger
// than this library's keeps its size in struct_size (the tail zeroed), so
// that passing it is refused with a message rather than half read.
template <class Options, class Fill>
void init_sized(Options *out, size_t size, Fill fill) {
  if (!out || size < sizeof(size_t)) return;
  Options defaults{};
  fill(&defaults);
  std::memset(static_cast<void *>(out), 0, size);
  std::memcpy(static_cast<void *>(out), &defaults, std::min(size, sizeof(Options)));
  out->struct_size = size;
}

// Copies a caller's options struct over the defaults from `init`: fields
// past the caller's struct_size (an older header) keep their defaults.
template <class Options>
Options read_options(const Options *given, void (*init)(Options *, size_t), const char *what) {
  Options options;
  init(&options, sizeof(options));
  if (!given) return options;
  if (given->struct_size < sizeof(size_t) || given->struct_size > sizeof(Options))
    fail_argument(what, ": struct_size is ", given->struct_size, "; this library accepts ",
                  sizeof(size_t), " to ", sizeof(Options),
                  " (call the options' init function before filling it)");
  std::memcpy(static_cast<void *>(&options), given, given->struct_size);
  options.struct_size = sizeof(Options);
  return options;
}

}  // namespace cudnnfe
