// memory_session_store(): sessions in a map, shared by the I/O loops under one mutex, bounded
// by evicting the least recently used.
#include <rivet/session.hpp>

#include <list>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

namespace rivet {

namespace {

using Steady = std::chrono::steady_clock;

class MemorySessionStore final : public SessionStore {
public:
    explicit MemorySessionStore(size_t max_sessions) : max_(max_sessions) {
        if (max_ == 0)
            throw std::invalid_argument("memory_session_store: max_sessions must be >= 1");
    }

    std::optional<SessionRecord> load(const std::string& id) override {
        std::lock_guard lock(mutex_);
        auto it = entries_.find(id);
        if (it == entries_.end()) return std::nullopt;
        if (Steady::now() >= it->second.drop_at) {
            erase(it);
            return std::nullopt;
        }
        recency_.splice(recency_.begin(), recency_, it->second.place);
        return it->second.record;
    }

    void save(const std::string& id, const SessionRecord& record,
              std::chrono::seconds ttl) override {
        std::lock_guard lock(mutex_);
        const auto drop_at = Steady::now() + ttl;
        if (auto it = entries_.find(id); it != entries_.end()) {
            it->second.record = record;
            it->second.drop_at = drop_at;
            recency_.splice(recency_.begin(), recency_, it->second.place);
            return;
        }
        if (entries_.size() >= max_) erase(entries_.find(recency_.back()));
        recency_.push_front(id);
        entries_.emplace(id, Entry{record, drop_at, recency_.begin()});
    }

    void remove(const std::string& id) override {
        std::lock_guard lock(mutex_);
        if (auto it = entries_.find(id); it != entries_.end()) erase(it);
    }

private:
    struct Entry {
        SessionRecord record;
        Steady::time_point drop_at;
        std::list<std::string>::iterator place;  // in recency_
    };

    void erase(std::unordered_map<std::string, Entry>::iterator it) {
        recency_.erase(it->second.place);
        entries_.erase(it);
    }

    const size_t max_;
    std::mutex mutex_;
    std::unordered_map<std::string, Entry> entries_;
    std::list<std::string> recency_;  // most recently used first
};

}  // namespace

std::shared_ptr<SessionStore> memory_session_store(size_t max_sessions) {
    return std::make_shared<MemorySessionStore>(max_sessions);
}

}  // namespace rivet
