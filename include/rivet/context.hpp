// rivet::Context: typed values attached to one request, set by middleware and read by handlers
// (the authenticated user, a request id, a database transaction...). One value per type:
//
//   struct User { std::string name; };
//   req.context().set(User{"ada"});                         // in an auth middleware's before()
//   const User& user = req.context().get<User>();           // in the handler
//   if (const User* u = req.context().find<User>()) ...     // when it may be absent
//
// A Context belongs to its request: offloaded and waiting handlers see the same values. Values
// are shared, not copied, when the request is detached for a worker; treat them as read-only once
// the handler runs on another thread.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

namespace rivet {

class Context {
public:
    // Stores `value` as this request's T, replacing an earlier one; returns the stored value.
    template <class T>
    T& set(T value) {
        auto stored = std::make_shared<T>(std::move(value));
        T& ref = *stored;
        for (auto& e : entries_)
            if (e.key == key<T>()) {
                e.value = std::move(stored);
                return ref;
            }
        entries_.push_back({key<T>(), std::move(stored)});
        return ref;
    }

    // The request's T, or nullptr when none was set.
    template <class T>
    T* find() const {
        for (const auto& e : entries_)
            if (e.key == key<T>()) return static_cast<T*>(e.value.get());
        return nullptr;
    }

    // The request's T; throws std::logic_error when none was set (a handler that needs a value
    // its middleware did not provide is a programming error, and answers 500).
    template <class T>
    T& get() const {
        if (T* value = find<T>()) return *value;
        throw std::logic_error(std::string("no value of type ") + typeid(T).name() +
                               " in the request context");
    }

    bool empty() const { return entries_.empty(); }

private:
    // One address per type: cheaper than comparing typeid names, and unique in the process.
    template <class T>
    static const void* key() {
        static const char tag = 0;
        return &tag;
    }

    struct Entry {
        const void* key;
        std::shared_ptr<void> value;  // the deleter of T travels with it
    };
    std::vector<Entry> entries_;
};

}  // namespace rivet
