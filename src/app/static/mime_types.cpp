#include "app/static/mime_types.hpp"

#include <cstring>

namespace rivet::files {

namespace {

struct Builtin {
    const char* extension;
    const char* type;
};

// Text types carry the charset: browsers otherwise guess (windows-1252 for text/plain).
constexpr Builtin kBuiltin[] = {
    {"html", "text/html; charset=utf-8"},
    {"htm", "text/html; charset=utf-8"},
    {"css", "text/css; charset=utf-8"},
    {"js", "text/javascript; charset=utf-8"},
    {"mjs", "text/javascript; charset=utf-8"},
    {"json", "application/json"},  // always UTF-8 (RFC 8259): no charset parameter
    {"map", "application/json"},
    {"webmanifest", "application/manifest+json"},
    {"xml", "application/xml; charset=utf-8"},
    {"txt", "text/plain; charset=utf-8"},
    {"md", "text/markdown; charset=utf-8"},
    {"csv", "text/csv; charset=utf-8"},
    {"svg", "image/svg+xml; charset=utf-8"},
    {"png", "image/png"},
    {"jpg", "image/jpeg"},
    {"jpeg", "image/jpeg"},
    {"gif", "image/gif"},
    {"webp", "image/webp"},
    {"avif", "image/avif"},
    {"ico", "image/x-icon"},
    {"bmp", "image/bmp"},
    {"woff", "font/woff"},
    {"woff2", "font/woff2"},
    {"ttf", "font/ttf"},
    {"otf", "font/otf"},
    {"wasm", "application/wasm"},
    {"pdf", "application/pdf"},
    {"zip", "application/zip"},
    {"gz", "application/gzip"},
    {"br", "application/x-brotli"},
    {"tar", "application/x-tar"},
    {"mp4", "video/mp4"},
    {"webm", "video/webm"},
    {"ogg", "audio/ogg"},
    {"mp3", "audio/mpeg"},
    {"wav", "audio/wav"},
};

// The table's types that a std::string would allocate for, each once, by length: a lookup
// compares a type with the two or three of its length only (memcmp per candidate, no scan).
class LongTypes {
public:
    LongTypes() {
        for (const auto& b : kBuiltin) add(b.type);
        add(kDefaultContentType);
    }

    std::string_view find(std::string_view type) const {
        if (type.size() <= kInlineCapacity || type.size() >= kMaxLength) return {};
        const Bucket& b = by_length_[type.size()];
        for (size_t i = 0; i < b.count; ++i)
            if (std::memcmp(b.types[i].data(), type.data(), type.size()) == 0) return b.types[i];
        return {};
    }

private:
    static constexpr size_t kInlineCapacity = 15;  // libstdc++'s std::string, without allocating
    static constexpr size_t kMaxLength = 32;       // the table's longest is 30 bytes
    static constexpr size_t kPerLength = 4;        // the table has at most 3 of one length
    struct Bucket {
        std::string_view types[kPerLength];
        size_t count = 0;
    };

    // A type the buckets cannot hold is only not interned: its responses copy it, as any.
    void add(std::string_view type) {
        if (type.size() <= kInlineCapacity || type.size() >= kMaxLength) return;
        Bucket& b = by_length_[type.size()];
        for (size_t i = 0; i < b.count; ++i)
            if (b.types[i] == type) return;
        if (b.count < kPerLength) b.types[b.count++] = type;
    }

    Bucket by_length_[kMaxLength];
};

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = char(c + ('a' - 'A'));
    return out;
}

}  // namespace

MimeTypes::MimeTypes(const std::vector<std::pair<std::string, std::string>>& overrides,
                     std::string default_type)
    : default_type_(std::move(default_type)) {
    for (const auto& b : kBuiltin) by_extension_.emplace(b.extension, b.type);
    for (const auto& [ext, type] : overrides) {
        std::string key = lower(ext);
        if (!key.empty() && key.front() == '.') key.erase(0, 1);  // ".md" means "md"
        by_extension_[key] = type;
    }
}

std::string_view MimeTypes::lookup(std::string_view name) const {
    size_t slash = name.rfind('/');
    if (slash != std::string_view::npos) name.remove_prefix(slash + 1);
    size_t dot = name.rfind('.');
    // No extension, or a dot file's name (".profile") rather than an extension.
    if (dot == std::string_view::npos || dot == 0 || dot + 1 == name.size()) return default_type_;
    auto it = by_extension_.find(lower(name.substr(dot + 1)));
    return it == by_extension_.end() ? std::string_view(default_type_)
                                     : std::string_view(it->second);
}

std::string_view interned_content_type(std::string_view type) {
    static const LongTypes kLongTypes;
    return kLongTypes.find(type);
}

}  // namespace rivet::files
