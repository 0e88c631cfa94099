// tls::TicketKeys: the keys that encrypt session tickets, shared by every loop (one Context for all
// of them) and by the Contexts a reload builds, so a ticket issued before a reload still resumes.
// The first key seals new tickets; every key opens them (a ticket opened by another is renewed).
// Two rotations:
// - Timed (the default): made here, in this process only. The current key and the one before
//   it; the current one is replaced every `lifetime` seconds, checked when a key is used (no
//   timer), so a ticket stays valid for at most two lifetimes.
// - FromFile (a ticket key file, read by read_ticket_key_file): the operator's keys, the same on
//   every replica that reads the same file, so a session made on one resumes on another and
//   across an upgrade. They change only when the file does and a reload reads it again.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace rivet::tls {

// 80 bytes, in this order in a ticket key file (nginx's 80-byte ssl_session_ticket_key layout).
struct TicketKey {
    uint8_t name[16];      // sent in clear in the ticket, to find the key again
    uint8_t hmac_key[32];  // HMAC-SHA256
    uint8_t aes_key[32];   // AES-256-CBC
};
static_assert(sizeof(TicketKey) == 80);

// A file holds at most this many keys (one in use, the others still opening older tickets).
inline constexpr size_t kMaxTicketKeys = 64;

// The keys of a ticket key file: 1 to kMaxTicketKeys keys of 80 bytes each, back to back, the
// first one sealing. Throws std::runtime_error naming the file and what is wrong with it.
std::vector<TicketKey> read_ticket_key_file(const std::string& path);

class TicketKeys {
public:
    // Seconds on a monotonic clock; tests give their own to rotate without waiting.
    using Clock = std::function<uint64_t()>;
    enum class Rotation : uint8_t { Timed, FromFile };

    // Timed. lifetime_s 0 is taken as 1: a Context with tickets off never uses the keys, but
    // keeps them for a reload that turns tickets on again.
    explicit TicketKeys(uint64_t lifetime_s, Clock clock = {});
    // FromFile: these keys, never rotated here (at least one).
    explicit TicketKeys(std::vector<TicketKey> keys);
    ~TicketKeys();
    TicketKeys(const TicketKeys&) = delete;
    TicketKeys& operator=(const TicketKeys&) = delete;

    Rotation rotation() const { return rotation_; }
    // A reload may change the lifetime (Timed); the keys stay.
    void set_lifetime(uint64_t lifetime_s);

    // The key to seal a new ticket with (Timed: rotated first if its lifetime is over).
    TicketKey current();

    // Current: the sealing key opened it; Previous: another one did (the ticket is renewed).
    enum class Match : uint8_t { Current, Previous };
    struct Found {
        TicketKey key;
        Match match;
    };
    // The key a ticket names, if it is still one of ours; nullopt: the ticket is too old (or
    // not ours), and the handshake goes on as a full one.
    std::optional<Found> find(const uint8_t (&name)[16]);

private:
    void rotate_locked(uint64_t now);

    Rotation rotation_;
    Clock clock_;
    // Every handshake that issues or opens a ticket takes this lock once, for a copy of 80 bytes:
    // nothing next to the handshake's public-key work; an atomic shared_ptr would save little.
    std::mutex mutex_;
    uint64_t lifetime_s_ = 1;
    uint64_t current_since_ = 0;
    std::vector<TicketKey> keys_;  // [0] seals; Timed: it and at most the one before it
};

}  // namespace rivet::tls
