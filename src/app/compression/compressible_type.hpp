// Which Content-Types CompressionOptions::types covers.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rivet::app {

// Whether the media type of `content_type` (parameters ignored, case-insensitive) matches one
// of `patterns`: "type/subtype", "type/*" or "type/*+suffix".
bool compressible_type(std::string_view content_type, const std::vector<std::string>& patterns);

// Whether `pattern` has one of those three forms (compression() refuses the others).
bool valid_type_pattern(std::string_view pattern);

// compressible_type() over one list of patterns, remembering its verdicts on the types a
// Response holds as views of literals (a static file's, text()'s, json()'s: static storage, so
// the address names the type for the life of the process). Those are nearly every answer, and
// for them the verdict is a load instead of a parse and a walk over the patterns (a third of
// what the compressor cost a text file it leaves alone). Shared by the threads that run the
// middleware: a slot is written once, by whichever thread first needs it, and every writer
// writes the same verdict.
class CompressibleTypes {
public:
    explicit CompressibleTypes(std::vector<std::string> patterns)
        : patterns_(std::move(patterns)) {}

    // `literal`: `type` is a view of a literal that outlives the process's responses.
    bool operator()(std::string_view type, bool literal) const;

    // How many literal types have their verdict kept (for tests).
    size_t remembered() const;

private:
    static constexpr size_t kSlots = 64;  // the built-in MIME table has under 50 long types
    static constexpr int kSlotBits = 6;
    static_assert(kSlots == size_t(1) << kSlotBits);
    static constexpr size_t kProbes = 4;  // past that a type is only not remembered

    std::vector<std::string> patterns_;
    // 0: empty; else (key << 1) | verdict, where the key packs the literal's address and size.
    mutable std::array<std::atomic<uint64_t>, kSlots> verdicts_{};
};

}  // namespace rivet::app
