// libFuzzer target: the multipart/form-data parser.
//
// The first input byte picks small limits (so the limit paths are reached) and a split point;
// the rest is the body, parsed with the boundary "b". Beyond the sanitizers' checks, it traps
// when the parser's invariants fail: the body in two pieces giving other parts or another
// outcome than in one, events out of order (data or an end outside a part), or content of a
// complete parse that holds a whole delimiter line.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "http/multipart_parser.hpp"

using namespace rivet::http;

namespace {

void check(bool ok) {
    if (!ok) __builtin_trap();
}

struct Recorder : MultipartHandler {
    std::vector<std::string> parts;  // name, filename and content of each part, joined
    bool open = false;
    bool on_part_begin(const PartHead& head) override {
        check(!open && !head.name.empty());
        open = true;
        parts.push_back(head.name + '\0' + head.filename.value_or("-") + '\0');
        return true;
    }
    bool on_part_data(std::string_view bytes) override {
        check(open && !bytes.empty());
        parts.back().append(bytes);
        return true;
    }
    bool on_part_end() override {
        check(open);
        open = false;
        return true;
    }
};

MultipartParser::Status run(std::string_view body, size_t cut, MultipartLimits lim, Recorder& rec) {
    MultipartParser p("b", lim);
    MultipartParser::Status s = p.feed(body.substr(0, cut), rec);
    if (s == MultipartParser::Status::Ok) s = p.feed(body.substr(cut), rec);
    if (s == MultipartParser::Status::Ok) s = p.finish();
    return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const uint8_t ctl = data[0];
    const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
    MultipartLimits lim;
    if (ctl & 1) lim.max_parts = 3;
    if (ctl & 2) lim.max_header_bytes = 64;
    const size_t cut = body.empty() ? 0 : (size_t(ctl) * 7) % (body.size() + 1);

    Recorder whole, split;
    const auto a = run(body, body.size(), lim, whole);
    const auto b = run(body, cut, lim, split);
    check(a == b);
    if (a == MultipartParser::Status::Ok) {
        check(whole.parts == split.parts && !whole.open);
        for (const std::string& p : whole.parts)
            check(p.find("\r\n--b\r\n") == std::string::npos &&
                  p.find("\r\n--b--") == std::string::npos);
    }
    return 0;
}
