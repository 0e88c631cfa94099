#include "tls/ticket_keys.hpp"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <cstring>
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

TicketKeys::TicketKeys(uint64_t lifetime_s, Clock clock)
    : clock_(clock ? std::move(clock) : Clock([] { return core::monotonic_ms() / 1000; })),
      lifetime_s_(lifetime_s ? lifetime_s : 1),
      current_since_(clock_()),
      current_(fresh_key()) {}

void TicketKeys::set_lifetime(uint64_t lifetime_s) {
    std::lock_guard lock(mutex_);
    lifetime_s_ = lifetime_s ? lifetime_s : 1;
}

void TicketKeys::rotate_locked(uint64_t now) {
    if (now - current_since_ < lifetime_s_) return;
    if (previous_) wipe(*previous_);
    if (now - current_since_ < 2 * lifetime_s_) {
        // One lifetime over: the current key still opens the tickets it sealed, for one more.
        previous_ = current_;
        current_since_ += lifetime_s_ * ((now - current_since_) / lifetime_s_);
    } else {
        // Idle past two lifetimes: every ticket sealed so far is too old.
        previous_.reset();
        current_since_ = now;
    }
    wipe(current_);
    current_ = fresh_key();
}

TicketKey TicketKeys::current() {
    std::lock_guard lock(mutex_);
    rotate_locked(clock_());
    return current_;
}

std::optional<TicketKeys::Found> TicketKeys::find(const uint8_t (&name)[16]) {
    std::lock_guard lock(mutex_);
    rotate_locked(clock_());
    if (std::memcmp(name, current_.name, sizeof name) == 0) return Found{current_, Match::Current};
    if (previous_ && std::memcmp(name, previous_->name, sizeof name) == 0)
        return Found{*previous_, Match::Previous};
    return std::nullopt;
}

}  // namespace rivet::tls
