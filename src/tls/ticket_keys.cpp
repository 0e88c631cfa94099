#include "tls/ticket_keys.hpp"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "core/clock.hpp"

namespace rivet::tls {

namespace {

TicketKey fresh_key() {
    TicketKey k;
    if (RAND_bytes(reinterpret_cast<unsigned char*>(&k), sizeof k) != 1)
        throw std::runtime_error("TLS: no random bytes for the session ticket keys");
    return k;
}

void wipe(TicketKey& k) {
    OPENSSL_cleanse(&k, sizeof k);
}

}  // namespace

std::vector<TicketKey> read_ticket_key_file(const std::string& path) {
    auto fail = [&](const std::string& why) {
        return std::runtime_error("TLS ticket key file " + path + ": " + why);
    };
    std::error_code ec;
    auto size = std::filesystem::file_size(path, ec);
    if (ec) throw fail(ec.message());
    if (size == 0 || size % sizeof(TicketKey) != 0 || size > kMaxTicketKeys * sizeof(TicketKey))
        throw fail(std::to_string(size) + " bytes; expected 1 to " +
                   std::to_string(kMaxTicketKeys) + " keys of 80 random bytes each " +
                   "(openssl rand 80 > FILE)");
    std::vector<TicketKey> keys(size / sizeof(TicketKey));
    std::ifstream in(path, std::ios::binary);
    in.read(reinterpret_cast<char*>(keys.data()), std::streamsize(size));
    if (!in || in.gcount() != std::streamsize(size)) {
        for (TicketKey& k : keys) wipe(k);
        throw fail("cannot be read whole");
    }
    // Two keys of one name: a ticket would open with whichever comes first; a copy-paste slip.
    for (size_t i = 0; i < keys.size(); ++i)
        for (size_t j = i + 1; j < keys.size(); ++j)
            if (std::memcmp(keys[i].name, keys[j].name, sizeof keys[i].name) == 0) {
                for (TicketKey& k : keys) wipe(k);
                throw fail("keys " + std::to_string(i + 1) + " and " + std::to_string(j + 1) +
                           " have the same name (their first 16 bytes)");
            }
    return keys;
}

TicketKeys::TicketKeys(uint64_t lifetime_s, Clock clock)
    : rotation_(Rotation::Timed),
      clock_(clock ? std::move(clock) : Clock([] { return core::monotonic_ms() / 1000; })),
      lifetime_s_(lifetime_s ? lifetime_s : 1),
      current_since_(clock_()),
      keys_{fresh_key()} {}

TicketKeys::TicketKeys(std::vector<TicketKey> keys)
    : rotation_(Rotation::FromFile), keys_(std::move(keys)) {
    if (keys_.empty()) throw std::invalid_argument("TicketKeys: no keys");
}

TicketKeys::~TicketKeys() {
    for (TicketKey& k : keys_) wipe(k);
}

void TicketKeys::set_lifetime(uint64_t lifetime_s) {
    std::lock_guard lock(mutex_);
    lifetime_s_ = lifetime_s ? lifetime_s : 1;
}

void TicketKeys::rotate_locked(uint64_t now) {
    if (rotation_ != Rotation::Timed || now - current_since_ < lifetime_s_) return;
    if (keys_.size() > 1) {
        wipe(keys_.back());
        keys_.pop_back();
    }
    if (now - current_since_ < 2 * lifetime_s_) {
        // One lifetime over: the current key still opens the tickets it sealed, for one more.
        keys_.insert(keys_.begin(), fresh_key());
        current_since_ += lifetime_s_ * ((now - current_since_) / lifetime_s_);
    } else {
        // Idle past two lifetimes: every ticket sealed so far is too old.
        wipe(keys_.front());
        keys_.front() = fresh_key();
        current_since_ = now;
    }
}

TicketKey TicketKeys::current() {
    std::lock_guard lock(mutex_);
    rotate_locked(clock_ ? clock_() : 0);
    return keys_.front();
}

std::optional<TicketKeys::Found> TicketKeys::find(const uint8_t (&name)[16]) {
    std::lock_guard lock(mutex_);
    rotate_locked(clock_ ? clock_() : 0);
    for (size_t i = 0; i < keys_.size(); ++i)
        if (std::memcmp(name, keys_[i].name, sizeof name) == 0)
            return Found{keys_[i], i == 0 ? Match::Current : Match::Previous};
    return std::nullopt;
}

}  // namespace rivet::tls
