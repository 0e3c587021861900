#include "clients/contract/session_store.h"

namespace contract {

void SessionStore::store(std::string data) {
  if (capacity_ == 0 || data.empty()) return;
  if (pool_.size() >= capacity_) pool_.pop_front();
  pool_.push_back(std::move(data));
}

bool SessionStore::take(std::string* data) {
  if (pool_.empty()) return false;
  *data = std::move(pool_.back());  // the newest first
  pool_.pop_back();
  return true;
}

}  // namespace contract
