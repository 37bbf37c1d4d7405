#include "backend/compiled_plan_memo.h"

#include <deque>
#include <map>
#include <mutex>
#include <utility>

namespace cudnnfe::backend {
namespace {

// An SDPA plan's text is about 90 KB: 32 of them stay under 3 MB.
constexpr size_t kMaxPlans = 32;

struct Memo {
  std::mutex mutex;
  std::map<std::string, std::string> plans;
  std::deque<std::string> order;  // keys, oldest first
};

Memo &memo() {
  static Memo *m = new Memo;  // never destroyed: builds may run at exit
  return *m;
}

}  // namespace

std::optional<std::string> remembered_compiled_plan(const std::string &key) {
  Memo &m = memo();
  std::lock_guard<std::mutex> lock(m.mutex);
  auto it = m.plans.find(key);
  if (it == m.plans.end()) return std::nullopt;
  return it->second;
}

void remember_compiled_plan(const std::string &key, std::string plan_json) {
  if (plan_json.empty()) return;
  Memo &m = memo();
  std::lock_guard<std::mutex> lock(m.mutex);
  auto [it, inserted] = m.plans.insert_or_assign(key, std::move(plan_json));
  (void)it;
  if (!inserted) return;
  m.order.push_back(key);
  if (m.order.size() > kMaxPlans) {
    m.plans.erase(m.order.front());
    m.order.pop_front();
  }
}

void forget_compiled_plans() {
  Memo &m = memo();
  std::lock_guard<std::mutex> lock(m.mutex);
  m.plans.clear();
  m.order.clear();
}

}  // namespace cudnnfe::backend
