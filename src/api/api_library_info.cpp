// Library discovery and diagnostics: which cuDNN / CUDA runtime files were
// loaded and why, search directories for them, and the log sink. The search
// itself is backend/library_search.cpp; the log is core/log.cpp.
#include <dlfcn.h>

#include <cstring>

#include "api/guard.h"
#include "backend/library_search.h"
#include "backend/loader.h"
#include "core/log.h"

using namespace cudnnfe;

namespace {

// Strings handed out by cudnnfe_library_info: loading happens once per
// process, so the reports (and these copies) never change afterwards.
struct InfoStrings {
  std::string self;
  backend::LoadReport cudnn, cudart;
};

const InfoStrings &info_strings() {
  static const InfoStrings strings = [] {
    InfoStrings s;
    Dl_info self{};
    if (dladdr(reinterpret_cast<void *>(&cudnnfe_library_info), &self) && self.dli_fname)
      s.self = self.dli_fname;
    s.cudnn = backend::cudnn_report();
    s.cudart = backend::cudart_report();
    return s;
  }();
  return strings;
}

void fill_empty(cudnnfe_library_info_t *o) {
  o->cudnnfe_path = o->cudnn_path = o->cudnn_reason = "";
  o->cudart_path = o->cudart_reason = "";
  o->cudnn_origin = o->cudart_origin = CUDNNFE_LIBRARY_ORIGIN_NOT_LOADED;
}

}  // namespace

void cudnnfe_library_info_init_sized(cudnnfe_library_info_t *info, size_t struct_size) {
  init_sized(info, struct_size, fill_empty);
}

cudnnfe_status_t cudnnfe_library_info(cudnnfe_library_info_t *info) {
  return guard([&] {
    require_out(info, "info");
    const size_t size = info->struct_size;
    if (size < sizeof(size_t) || size > sizeof(cudnnfe_library_info_t))
      fail_argument("library info: struct_size is ", size, "; this library accepts ",
                    sizeof(size_t), " to ", sizeof(cudnnfe_library_info_t),
                    " (call cudnnfe_library_info_init first)");
    const InfoStrings &s = info_strings();
    cudnnfe_library_info_t out{};
    out.struct_size = size;
    out.cudnnfe_path = s.self.c_str();
    out.cudnn_path = s.cudnn.path.c_str();
    out.cudnn_version = s.cudnn.version;
    out.cudnn_origin = s.cudnn.origin;
    out.cudnn_reason = s.cudnn.reason.c_str();
    out.cudart_path = s.cudart.path.c_str();
    out.cudart_version = s.cudart.version;
    out.cudart_origin = s.cudart.origin;
    out.cudart_reason = s.cudart.reason.c_str();
    std::memcpy(static_cast<void *>(info), &out, size);
  });
}

cudnnfe_status_t cudnnfe_library_add_search_dir(cudnnfe_library_t library, const char *directory) {
  return guard([&] { backend::add_search_dir(library, string_or_empty(directory)); });
}

cudnnfe_status_t cudnnfe_set_log_callback(cudnnfe_log_callback_t callback, void *user_data,
                                          cudnnfe_log_level_t level) {
  return guard([&] {
    if (level < CUDNNFE_LOG_LEVEL_OFF || level > CUDNNFE_LOG_LEVEL_DEBUG)
      fail_argument("log level ", level, " is not CUDNNFE_LOG_LEVEL_OFF (0), _INFO (1) or ",
                    "_DEBUG (2)");
    log_set_sink(callback, user_data, level);
  });
}
