// tls::TicketKeys: the keys that encrypt session tickets, shared by every loop (one Context for all
// of them) and by the Contexts a reload builds, so a ticket issued before a reload still resumes.
// It holds the current key and the one before it: new tickets are sealed with the current key;
// a ticket sealed with the previous one still opens (and is renewed). The current key is replaced
// every `lifetime` seconds, checked when a key is used (no timer), so a ticket stays valid for at
// most two lifetimes.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>

namespace rivet::tls {

struct TicketKey {
    uint8_t name[16];      // sent in clear in the ticket, to find the key again
    uint8_t aes_key[32];   // AES-256-CBC
    uint8_t hmac_key[32];  // HMAC-SHA256
};

class TicketKeys {
public:
    // Seconds on a monotonic clock; tests give their own to rotate without waiting.
    using Clock = std::function<uint64_t()>;

    // lifetime_s 0 is taken as 1: a Context with tickets off never uses the keys, but keeps them
    // for a reload that turns tickets on again.
    explicit TicketKeys(uint64_t lifetime_s, Clock clock = {});

    // A reload may change the lifetime; the keys stay.
    void set_lifetime(uint64_t lifetime_s);

    // The key to seal a new ticket with (rotated first if its lifetime is over).
    TicketKey current();

    enum class Match : uint8_t { Current, Previous };
    struct Found {
        TicketKey key;
        Match match;
    };
    // The key a ticket names, if it is still one of the two; nullopt: the ticket is too old (or
    // not ours), and the handshake goes on as a full one.
    std::optional<Found> find(const uint8_t (&name)[16]);

private:
    void rotate_locked(uint64_t now);

    Clock clock_;
    // Every handshake that issues or opens a ticket takes this lock once, for a copy of 80 bytes:
    // nothing next to the handshake's public-key work; an atomic shared_ptr would save little.
    std::mutex mutex_;
    uint64_t lifetime_s_;
    uint64_t current_since_;
    TicketKey current_;
    std::optional<TicketKey> previous_;
};

}  // namespace rivet::tls
