// The response for one file once it is chosen: validators, preconditions, ranges and the body
// (from memory, with sendfile, or as multipart/byteranges).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include <rivet/response.hpp>

#include "app/static/conditional.hpp"
#include "app/static/file_cache.hpp"

namespace rivet::files {

// What a request asks of the file, gathered in one pass over its fields.
struct FileRequest {
    Conditions conditions;
    std::string_view range;
    std::string_view accept_encoding;
    bool get_or_head = true;
};

// The representation being sent.
struct Representation {
    // The file, or its precompressed variant; shared, so that a response can send the bytes of
    // one held in memory without copying them.
    std::shared_ptr<const FileEntry> entry;
    std::string_view content_type;   // of the original file
    bool type_is_literal = false;    // content_type is interned: no check per response
    std::string_view encoding;       // "br", "gzip" or "" (identity)
    bool vary = false;               // the choice depended on Accept-Encoding
    std::string_view cache_control;  // "" for none
};

// Fills `res`: 200, 206 (one range, or multipart/byteranges), 304, 412 or 416.
void respond_with_file(const Representation& rep, const FileRequest& req, unsigned max_ranges,
                       Response& res);

}  // namespace rivet::files
