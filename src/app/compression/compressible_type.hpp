// Which Content-Types CompressionOptions::types covers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rivet::app {

// Whether the media type of `content_type` (parameters ignored, case-insensitive) matches one
// of `patterns`: "type/subtype", "type/*" or "type/*+suffix".
bool compressible_type(std::string_view content_type, const std::vector<std::string>& patterns);

// Whether `pattern` has one of those three forms (compression() refuses the others).
bool valid_type_pattern(std::string_view pattern);

}  // namespace rivet::app
