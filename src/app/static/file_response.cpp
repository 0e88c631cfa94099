#include "app/static/file_response.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <ctime>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/request/response_access.hpp"
#include "app/static/byte_ranges.hpp"

namespace rivet::files {

namespace {

// Multipart bodies up to this size are assembled at once (a read from the page cache); larger
// ones are streamed, a piece per writable turn, so one request cannot pin much memory.
constexpr uint64_t kAssembleLimit = 1024 * 1024;
constexpr size_t kStreamPiece = 64 * 1024;

void append_uint(std::string& out, uint64_t v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, size_t(r.ptr - buf));
}

std::string content_range(uint64_t first, uint64_t last, uint64_t size) {
    std::string out = "bytes ";
    append_uint(out, first);
    out.push_back('-');
    append_uint(out, last);
    out.push_back('/');
    append_uint(out, size);
    return out;
}

// Unpredictable enough that no file plausibly contains it, different per response.
std::string make_boundary() {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    char buf[17];
    auto r = std::to_chars(buf, buf + 16, rng() | (uint64_t(1) << 63), 16);
    return "rivet-" + std::string(buf, size_t(r.ptr - buf));
}

// The fields are the framework's own (ResponseAccess::add_field): the ETag and the date are
// built by the file cache, Cache-Control was checked when the StaticFiles was made.
void add_validators(const Representation& rep, Response& res) {
    using detail::ResponseAccess;
    ResponseAccess::add_field(res, "ETag", rep.entry->etag);
    ResponseAccess::add_field(res, "Last-Modified", rep.entry->last_modified);
    if (!rep.cache_control.empty())
        ResponseAccess::add_field(res, "Cache-Control", rep.cache_control);
    if (rep.vary) ResponseAccess::add_field(res, "Vary", "Accept-Encoding");
}

// Reads [offset, offset + length) of the file into `out`; throws when the file got shorter.
void read_range(const FileEntry& e, uint64_t offset, uint64_t length, std::string& out) {
    size_t at = out.size();
    out.resize(at + length);
    uint64_t done = 0;
    while (done < length) {
        ssize_t n =
            pread(e.file->fd(), out.data() + at + done, length - done, off_t(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw std::runtime_error("file shrank while being sent");
        done += uint64_t(n);
    }
}

void append_part(const FileEntry& e, uint64_t first, uint64_t length, std::string& out) {
    if (e.in_memory)
        out.append(e.bytes, first, length);
    else
        read_range(e, first, length, out);
}

// multipart/byteranges (RFC 9110 §14.6): each part is its own head plus the bytes.
void respond_multipart(const Representation& rep, const std::vector<ByteRange>& ranges,
                       Response& res) {
    const FileEntry& e = *rep.entry;
    std::string boundary = make_boundary();
    std::vector<std::string> heads;
    uint64_t total = 0;
    for (const auto& r : ranges) {
        std::string h = "\r\n--" + boundary + "\r\nContent-Type: ";
        h.append(rep.content_type);
        h += "\r\nContent-Range: " + content_range(r.first, r.last, e.size) + "\r\n\r\n";
        total += h.size() + r.length();
        heads.push_back(std::move(h));
    }
    std::string tail = "\r\n--" + boundary + "--\r\n";
    total += tail.size();
    std::string type = "multipart/byteranges; boundary=" + boundary;
    res.status(206);
    if (e.in_memory || total <= kAssembleLimit) {
        std::string body;
        body.reserve(total);
        for (size_t i = 0; i < ranges.size(); ++i) {
            body += heads[i];
            append_part(e, ranges[i].first, ranges[i].length(), body);
        }
        body += tail;
        res.body(std::move(body), type);
        return;
    }
    // Streamed: the producer holds the open file and walks the parts, a piece per call.
    struct State {
        std::shared_ptr<const OpenFile> file;
        std::vector<std::string> heads;
        std::vector<ByteRange> ranges;
        std::string tail;
        size_t part = 0;
        uint64_t done = 0;  // bytes of the current part already produced
        bool head_sent = false;
    };
    auto st = std::make_shared<State>(State{e.file, std::move(heads), ranges, std::move(tail)});
    res.stream(
        [st](std::string& out) {
            while (out.size() < kStreamPiece && st->part < st->ranges.size()) {
                const ByteRange& r = st->ranges[st->part];
                if (!st->head_sent) {
                    out += st->heads[st->part];
                    st->head_sent = true;
                }
                uint64_t room = kStreamPiece - std::min(out.size(), kStreamPiece);
                uint64_t want = std::min<uint64_t>(r.length() - st->done, room);
                size_t at = out.size();
                out.resize(at + want);
                for (uint64_t got = 0; got < want;) {
                    ssize_t n = pread(st->file->fd(), out.data() + at + got, want - got,
                                      off_t(r.first + st->done + got));
                    if (n < 0 && errno == EINTR) continue;
                    // The head promised these bytes: cutting the connection is all that is left.
                    if (n <= 0) throw std::runtime_error("file shrank while being sent");
                    got += uint64_t(n);
                }
                st->done += want;
                if (st->done == r.length()) {
                    ++st->part;
                    st->done = 0;
                    st->head_sent = false;
                }
            }
            if (st->part < st->ranges.size()) return true;
            out += st->tail;
            return false;
        },
        type);
}

}  // namespace

void respond_with_file(const Representation& rep, const FileRequest& req, unsigned max_ranges,
                       Response& res) {
    const FileEntry& e = *rep.entry;
    Validators v{e.etag, e.mtime_s};
    const Conditions& c = req.conditions;
    bool conditional = !c.if_match.empty() || !c.if_none_match.empty() ||
                       !c.if_modified_since.empty() || !c.if_unmodified_since.empty();
    if (conditional) {
        switch (evaluate(c, v, req.get_or_head, int64_t(time(nullptr)))) {
            case Precondition::NotModified:
                res.status(304);
                add_validators(rep, res);
                return;
            case Precondition::Failed:
                res.status(412).text("Precondition Failed\n");
                return;
            case Precondition::Proceed:
                break;
        }
    }
    RangeRequest ranges;
    if (!req.range.empty() && max_ranges > 0 && if_range_holds(c.if_range, v))
        ranges = parse_ranges(req.range, e.size, max_ranges);
    if (ranges.kind == RangeRequest::Kind::Unsatisfiable) {
        res.status(416).text("Range Not Satisfiable\n");
        res.header("Content-Range", "bytes */" + std::to_string(e.size));
        return;
    }
    if (ranges.kind == RangeRequest::Kind::Partial && ranges.ranges.size() > 1) {
        respond_multipart(rep, ranges.ranges, res);
        add_validators(rep, res);
        if (!rep.encoding.empty()) res.header("Content-Encoding", rep.encoding);
        return;
    }
    uint64_t first = 0, length = e.size;
    if (ranges.kind == RangeRequest::Kind::Partial) {
        const ByteRange& r = ranges.ranges.front();
        first = r.first;
        length = r.length();
        res.status(206);
        res.header("Content-Range", content_range(r.first, r.last, e.size));
    }
    if (e.in_memory && length == e.size && rep.type_is_literal)  // shares the cached bytes
        detail::ResponseAccess::share_body(res, {rep.entry, &e.bytes}, rep.content_type);
    else if (e.in_memory && length == e.size)
        res.body(std::shared_ptr<const std::string>(rep.entry, &e.bytes), rep.content_type);
    else if (e.in_memory)
        res.body(std::string_view(e.bytes).substr(first, length), rep.content_type);
    else
        res.file(FileRange{e.file, first, length}, rep.content_type);
    detail::ResponseAccess::add_field(res, "Accept-Ranges", "bytes");
    add_validators(rep, res);
    if (!rep.encoding.empty())
        detail::ResponseAccess::add_field(res, "Content-Encoding", rep.encoding);
}

}  // namespace rivet::files
