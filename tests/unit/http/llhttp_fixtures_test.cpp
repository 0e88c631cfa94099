// Conformance against llhttp's request fixtures (tests/fixtures/llhttp, see SOURCE.md there).
//
// Each `"type": "request"` case gives raw bytes (```http) and what llhttp made of them (```log).
// A connection is simulated over the bytes with parse_request_head and ChunkedDecoder, and:
// - where llhttp rejects, rivet must reject the same message, and already when given the input
//   up to the end of the line holding llhttp's error offset (llhttp may stop mid-line on a
//   value that rivet judges once its line is complete);
// - where llhttp accepts, rivet must give every message the same method, target, version,
//   fields, framing, keep-alive and body, and stop where llhttp stopped.
// Every proper prefix of the input must give a prefix of the same conversation (or the same
// error). Cases of other types test llhttp's lenient options or its finish() API: skipped.
//
// Two rules of rivet's are applied to the fixtures rather than listed case by case:
// - HTTP/1.1 requires Host (RFC 9112 §3.2); llhttp does not check it and many fixtures have
//   none. An HTTP/1.1 message without one gets "Host: rivet.test" inserted after its request
//   line (llhttp's offsets are shifted to match), so that everything else is still compared.
//   The parser's own tests cover the 400 for a missing Host.
// - llhttp's "Pause on CONNECT/Upgrade" (code 22) is no rejection: the bytes after the message
//   belong to another protocol, so the comparison stops there. Rivet does not tunnel; it leaves
//   upgrades to the application and reads no CONNECT body.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "http/chunked_decoder.hpp"
#include "http/request_parser.hpp"

namespace fs = std::filesystem;
using namespace rivet::http;

namespace {

// Where rivet deliberately differs from llhttp. Each entry says what rivet does instead; the
// test checks that, and fails on entries that no longer match any case.
struct Exception {
    const char* file;
    const char* title;
    int status;  // 0: rivet accepts the first message; else the status it rejects it with
    const char* why;
};
const Exception kExceptions[] = {
    {"sample.md", "No HTTP version", 400,
     "HTTP/0.9 simple requests are not HTTP/1.x; RFC 9112 §3 requires the version"},
    {"method.md", "SOURCE request with ICE", 400, "ICE/1.0 is not HTTP; rivet speaks HTTP only"},
    {"method.md", "OPTIONS request with RTSP", 400, "RTSP/1.0 is not HTTP"},
    {"method.md", "ANNOUNCE request with RTSP", 400, "RTSP/1.0 is not HTTP"},
    {"method.md", "M-SEARCH request", 400,
     "asterisk-form is for OPTIONS only (RFC 9112 §3.2.4); M-SEARCH * is SSDP over UDP"},
    {"invalid.md", "Invalid method", 0,
     "any token is a method (RFC 9110 §9.1); unknown ones are Method::Other for the app to refuse"},
    {"invalid.md", "HTTP protocol and ANNOUNCE method", 0,
     "same: ANNOUNCE is a valid token; llhttp ties it to RTSP"},
    {"uri.md", "`host:port` and basic auth", 400,
     "userinfo in an http(s) target is treated as an error (RFC 9110 §4.2.4)"},
    // These two would get 501 (only chunked is implemented, RFC 9112 §6.1), but their targets
    // end in "#hey", and the fragment is refused first, at the request line.
    {"transfer-encoding.md", "POST with `chunked` as last transfer-encoding", 400,
     "a fragment in the target (RFC 9112 §3.2: never sent); else 501 for the deflate coding"},
    {"transfer-encoding.md", "POST with `chunked` as last transfer-encoding (multiple headers)",
     400, "same, with the codings on two lines"},
    {"uri.md", "Fragment in URI", 400,
     "a fragment is no part of any request-target form (RFC 9112 §3.2); llhttp passes it on"},
    // rivet tunnels nothing: a well-formed CONNECT is refused with 501 once its head is complete
    // (RFC 9110 §9.3.6, §15.6.2); a malformed one still gets its 400.
    {"method.md", "CONNECT request", 501, "CONNECT is not implemented"},
    {"method.md", "CONNECT request with CAPS", 501, "same"},
    {"method.md", "CONNECT with body", 501, "same"},
    {"uri.md", "Underscore in hostname", 501, "same (the case is a CONNECT)"},
};

constexpr std::string_view kHostLine = "Host: rivet.test\r\n";

struct Case {
    std::string file, title;
    int line = 0;
    nlohmann::json meta;
    std::string http, log;
};

std::string trim_heading(const std::string& line) {
    size_t i = line.find_first_not_of('#');
    i = line.find_first_not_of(' ', i);
    return i == std::string::npos ? "" : line.substr(i);
}

std::vector<Case> read_cases(const fs::path& path) {
    std::ifstream f(path, std::ios::binary);
    std::vector<Case> cases;
    Case cur;
    bool have_meta = false;
    std::string line, *block = nullptr;
    bool first_block_line = false;
    for (int n = 1; std::getline(f, line); ++n) {
        if (block) {
            if (line.rfind("```", 0) == 0) {
                if (block == &cur.log && have_meta) {
                    cases.push_back(cur);
                    have_meta = false;
                }
                block = nullptr;
            } else {
                if (!first_block_line) *block += '\n';
                *block += line;
                first_block_line = false;
            }
        } else if (line.rfind("#", 0) == 0) {
            cur.title = trim_heading(line);
        } else if (line.rfind("<!-- meta=", 0) == 0) {
            const size_t end = line.rfind("-->");
            cur.meta = nlohmann::json::parse(line.substr(10, end - 10));
            cur.line = n;
            cur.http.clear();
            cur.log.clear();
            have_meta = true;
        } else if (line.rfind("```http", 0) == 0 || line.rfind("```log", 0) == 0) {
            block = line[3] == 'h' ? &cur.http : &cur.log;
            first_block_line = true;
        }
    }
    for (Case& c : cases) c.file = path.filename().string();
    return cases;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
    std::string out;
    for (size_t i = 0;;) {
        const size_t j = s.find(from, i);
        out.append(s, i, j == std::string::npos ? std::string::npos : j - i);
        if (j == std::string::npos) break;
        out += to;
        i = j + from.size();
    }
    s = std::move(out);
}

void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xc0 | cp >> 6);
        out += char(0x80 | (cp & 0x3f));
    } else {
        out += char(0xe0 | cp >> 12);
        out += char(0x80 | (cp >> 6 & 0x3f));
        out += char(0x80 | (cp & 0x3f));
    }
}

// "\xHH..." (hex) or "\NNN" (octal) escapes, as llhttp's test harness reads them: the number is
// a character code, and the input reaches the parser UTF-8 encoded.
std::string replace_numeric(const std::string& s, bool hex) {
    std::string out;
    for (size_t i = 0; i < s.size();) {
        size_t j = i + (hex ? 2 : 1), k = j;
        if (s[i] == '\\' && (!hex || (i + 1 < s.size() && s[i + 1] == 'x'))) {
            while (k < s.size() && (hex ? std::isxdigit(static_cast<unsigned char>(s[k]))
                                        : (s[k] >= '0' && s[k] <= '7' && k - j < 3)))
                ++k;
        }
        if (k == j) {
            out += s[i++];
            continue;
        }
        append_utf8(out, std::stoul(s.substr(j, k - j), nullptr, hex ? 16 : 8));
        i = k;
    }
    return out;
}

// The ```http block to bytes, step for step as llhttp's test/md-test.ts does it: escaped line
// breaks vanish, the others become CRLF, then \r \n \t \f \xHH and octal escapes are replaced.
std::string to_bytes(std::string s) {
    replace_all(s, "\\\n", "");
    replace_all(s, "\n", "\r\n");
    replace_all(s, "\\r", "\r");
    replace_all(s, "\\n", "\n");
    replace_all(s, "\\t", "\t");
    replace_all(s, "\\f", "\f");
    return replace_numeric(replace_numeric(s, true), false);
}

// ---------------------------------------------------------------------------------------------
// What llhttp reported.

struct Message {
    size_t begin = 0;
    std::string method, url, protocol, version, body;
    std::vector<std::pair<std::string, std::string>> fields;
    bool headers_done = false, complete = false;
    unsigned flags = 0;
    uint64_t content_length = 0;
};

struct Expected {
    std::vector<Message> messages;
    int error_code = -1;  // -1: none
    size_t error_off = 0;
    std::string bad_spans;  // log spans that do not match the rebuilt bytes
};

Expected read_log(const std::string& log, std::string_view bytes) {
    Expected e;
    std::istringstream in(log);
    std::string line, last_span;
    while (std::getline(in, line)) {
        if (line.rfind("off=", 0) != 0) continue;
        const size_t sp = line.find(' ');
        const size_t off = std::stoul(line.substr(4, sp - 4));
        const std::string rest = line.substr(sp + 1);
        if (rest == "message begin") {
            e.messages.emplace_back().begin = off;
            last_span.clear();
            continue;
        }
        if (rest.rfind("error code=", 0) == 0) {
            e.error_code = std::stoi(rest.substr(11));
            e.error_off = off;
            break;
        }
        if (e.messages.empty()) continue;
        Message& m = e.messages.back();
        if (rest == "message complete") {
            m.complete = true;
        } else if (rest.rfind("headers complete", 0) == 0) {
            m.headers_done = true;
            m.flags = std::stoul(rest.substr(rest.find("flags=") + 6), nullptr, 16);
            m.content_length = std::stoull(rest.substr(rest.find("content_length=") + 15));
        } else if (rest.rfind("len=", 0) == 0) {
            const size_t len = std::stoul(rest.substr(4));
            const size_t b = rest.find("span[") + 5;
            const std::string kind = rest.substr(b, rest.find(']', b) - b);
            const std::string text(bytes.substr(off, len));
            // The log quotes the span too: a check that the bytes were rebuilt right.
            std::string quoted = rest.substr(rest.find("]=") + 2);
            replace_all(quoted, "\\t", "\t");
            replace_all(quoted, "\\f", "\f");
            if (quoted.size() >= 2 && quoted.front() == '"' && quoted.back() == '"' &&
                quoted.substr(1, quoted.size() - 2) != text)
                e.bad_spans +=
                    "span " + testing::PrintToString(text) + " is " + quoted + " in the log; ";
            if (kind == "method")
                m.method += text;
            else if (kind == "url")
                m.url += text;
            else if (kind == "protocol")
                m.protocol += text;
            else if (kind == "version")
                m.version += text;
            else if (kind == "body")
                m.body += text;
            else if (m.headers_done && kind.rfind("header_", 0) == 0)
                continue;  // trailers
            else if (kind == "header_field" && last_span == kind)
                m.fields.back().first += text;
            else if (kind == "header_field")
                m.fields.emplace_back(text, "");
            else if (kind == "header_value")
                m.fields.back().second += text;
            last_span = kind;
        }
    }
    return e;
}

// Where "Host: rivet.test" goes: after the request line of each HTTP/1.1 message without Host.
std::vector<size_t> host_insertions(std::string_view d, const Expected& e) {
    std::vector<size_t> at;
    for (const Message& m : e.messages) {
        const size_t eol = d.find("\r\n", m.begin);
        if (eol == std::string_view::npos ||
            !d.substr(m.begin, eol - m.begin).ends_with(" HTTP/1.1"))
            continue;
        bool has_host = false;
        for (size_t p = eol + 2; p < d.size();) {
            const size_t next = std::min(d.find("\r\n", p), d.size());
            if (next == p) break;
            has_host = has_host || iequals(d.substr(p, std::min<size_t>(5, next - p)), "host:");
            p = next + 2;
        }
        if (!has_host) at.push_back(eol + 2);
    }
    return at;
}

// ---------------------------------------------------------------------------------------------
// What rivet makes of the bytes, as a connection would read them.

struct Got {
    struct Msg {
        RequestHead head;  // views into the simulated input
        std::vector<Header> fields;
        std::string body;
        bool complete = false;
    };
    std::vector<Msg> messages;
    enum End { HeadIncomplete, BodyIncomplete, HeadError, BodyError, Closed, Stopped } end{};
    int status = 0;
    std::string reason;
};

bool rejected(const Got& g) {
    return g.end == Got::HeadError || g.end == Got::BodyError;
}

Got simulate(std::string_view d, bool skip_body, size_t stop_after) {
    Got g;
    for (size_t pos = 0;;) {
        if (g.messages.size() == stop_after) {
            g.end = Got::Stopped;
            return g;
        }
        Got::Msg m;
        m.fields.resize(128);
        const ParseResult r = parse_request_head(d.substr(pos), m.head, m.fields, ParserLimits{});
        if (r.kind != ParseResult::Complete) {
            g.end = r.kind == ParseResult::Error ? Got::HeadError : Got::HeadIncomplete;
            g.status = r.status;
            g.reason = r.reason;
            return g;
        }
        m.fields.resize(m.head.headers.size());
        m.head.headers = m.fields;
        pos += r.head_bytes;
        const RequestHead& h = m.head;
        m.complete = true;
        if (skip_body || h.method == Method::Connect) {
            // (no body to read)
        } else if (h.framing == BodyFraming::ContentLength) {
            m.body = d.substr(pos, h.content_length);
            m.complete = m.body.size() == h.content_length;
            pos += m.body.size();
        } else if (h.framing == BodyFraming::Chunked) {
            ChunkedDecoder dec;
            const auto fed = dec.feed(d.substr(pos), m.body);
            m.complete = fed.kind == ChunkedDecoder::Result::Done;
            if (fed.kind == ChunkedDecoder::Result::Error) {
                g.messages.push_back(std::move(m));
                g.end = Got::BodyError;
                g.status = fed.status;
                g.reason = fed.reason;
                return g;
            }
            pos += fed.consumed;
        }
        const bool keep_alive = h.keep_alive, connect = h.method == Method::Connect;
        g.messages.push_back(std::move(m));
        if (!g.messages.back().complete) {
            g.end = Got::BodyIncomplete;
            return g;
        }
        if (connect || !keep_alive) {
            g.end = connect ? Got::Stopped : Got::Closed;
            return g;
        }
    }
}

std::string trim_trailing_ows(std::string v) {
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.pop_back();
    return v;
}

// Differences between one of rivet's messages and llhttp's, "" if none.
std::string compare(const Got::Msg& g, const Message& e, bool body_too) {
    std::ostringstream diff;
    const RequestHead& h = g.head;
    auto check = [&](const char* what, const auto& got, const auto& want) {
        if (!(got == want))
            diff << what << ": rivet " << testing::PrintToString(got) << ", llhttp "
                 << testing::PrintToString(want) << "; ";
    };
    check("method", std::string(h.method_name), e.method);
    check("target", std::string(h.target), e.url);
    check("protocol", std::string("HTTP"), e.protocol);
    check("version", std::string(h.version_minor ? "1.1" : "1.0"),
          std::string(e.version == "1.0" ? "1.0" : "1.1"));
    check("field count", h.headers.size(), e.fields.size());
    for (size_t i = 0; i < std::min(h.headers.size(), e.fields.size()); ++i) {
        check("field name", std::string(h.headers[i].name), e.fields[i].first);
        check("field value", std::string(h.headers[i].value),
              trim_trailing_ows(e.fields[i].second));
    }
    const BodyFraming framing = e.flags & 0x08   ? BodyFraming::Chunked
                                : e.flags & 0x20 ? BodyFraming::ContentLength
                                                 : BodyFraming::None;
    check("framing", int(h.framing), int(framing));
    if (framing == BodyFraming::ContentLength) check("length", h.content_length, e.content_length);
    // llhttp_should_keep_alive: 1.1 unless "close"; 1.0 only with "keep-alive".
    const bool keep = e.version == "1.0" ? (e.flags & 0x01) != 0 : (e.flags & 0x02) == 0;
    check("keep_alive", h.keep_alive, keep);
    if (body_too) check("body", g.body, e.body);
    return diff.str();
}

struct Stats {
    int passed = 0, excepted = 0, rejections = 0, with_host = 0;
    std::map<std::string, int> skipped;
};

void run_case(const Case& c, const std::string& where, std::set<const Exception*>& used,
              Stats& stats) {
    const std::string original = to_bytes(c.http);
    const Expected e = read_log(c.log, original);
    if (!e.bad_spans.empty()) ADD_FAILURE() << where << ": input rebuilt wrong: " << e.bad_spans;
    // Insert Host where needed, and map llhttp's offsets into the new bytes.
    const std::vector<size_t> at = host_insertions(original, e);
    std::string d;
    for (size_t i = 0, prev = 0; i <= at.size(); ++i) {
        const size_t end = i < at.size() ? at[i] : original.size();
        d.append(original, prev, end - prev);
        if (i < at.size()) d += kHostLine;
        prev = end;
    }
    auto shift = [&](size_t off) {
        return off + kHostLine.size() * (std::upper_bound(at.begin(), at.end(), off) - at.begin());
    };
    std::vector<Message> want = e.messages;
    for (size_t i = 0, k = 0; i < want.size() && k < at.size(); ++i) {
        const size_t eol = original.find("\r\n", want[i].begin);
        if (eol != std::string::npos && eol + 2 == at[k]) {
            want[i].fields.insert(want[i].fields.begin(), {"Host", "rivet.test"});
            ++k;
        }
    }
    const bool skip_body = c.meta.value("skipBody", false);

    for (const Exception& x : kExceptions) {
        if (c.file != x.file || c.title != x.title) continue;
        used.insert(&x);
        const Got g = simulate(d, skip_body, SIZE_MAX);
        if (x.status == 0 && (g.messages.empty() || rejected(g)))
            ADD_FAILURE() << where << ": listed as accepted by rivet, but rivet rejects it ("
                          << g.status << " " << g.reason << ")";
        if (x.status != 0 && !(rejected(g) && g.status == x.status && g.messages.size() <= 1))
            ADD_FAILURE() << where << ": listed as rejected with " << x.status
                          << ", but rivet gives " << g.status << " " << g.reason;
        ++stats.excepted;
        return;
    }

    const int code = e.error_code;
    const bool paused = code == 22, closed = code == 5, error = code >= 0 && !paused && !closed;
    stats.rejections += error;
    stats.with_host += !at.empty();
    size_t done = 0;  // llhttp's complete messages
    while (done < want.size() && want[done].complete) ++done;
    const Got g = simulate(d, skip_body, paused ? done : SIZE_MAX);
    std::ostringstream bad;

    // The messages llhttp completed must be rivet's too.
    for (size_t i = 0; i < done; ++i) {
        if (i >= g.messages.size() || !g.messages[i].complete) {
            bad << "message " << i << " complete for llhttp, not for rivet (" << g.status << " "
                << g.reason << "); ";
            break;
        }
        if (const std::string diff = compare(g.messages[i], want[i], true); !diff.empty())
            bad << "message " << i << ": " << diff;
    }
    if (error) {
        // Rivet must refuse message `done` (its head, or its body after the same head).
        const bool same_place =
            g.end == Got::HeadError ? g.messages.size() == done : g.messages.size() == done + 1;
        if (!rejected(g) || !same_place)
            bad << "llhttp rejects message " << done << " (code " << code << "), rivet: "
                << (rejected(g)
                        ? "rejects message " +
                              std::to_string(g.messages.size() - (g.end == Got::BodyError ? 1 : 0))
                        : "accepts it")
                << "; ";
        else if (g.end == Got::BodyError && want[done].headers_done)
            if (const std::string diff = compare(g.messages[done], want[done], false);
                !diff.empty())
                bad << "message " << done << ": " << diff;
        // ...and already when the input ends with the line of llhttp's error.
        const size_t eol = d.find('\n', shift(e.error_off));
        const size_t bound = eol == std::string::npos ? d.size() : eol + 1;
        const Got early = simulate(std::string_view(d).substr(0, bound), skip_body, SIZE_MAX);
        if (!rejected(early))
            bad << "rivet does not reject within " << bound << " bytes (llhttp at "
                << shift(e.error_off) << "); ";
    } else {
        // Clean end, close, or pause: rivet stops where llhttp did.
        const size_t want_n = done + (done < want.size() && want[done].headers_done);
        if (rejected(g))
            bad << "rivet rejects message " << g.messages.size() << ": " << g.status << " "
                << g.reason << "; ";
        else if (g.messages.size() != want_n)
            bad << "rivet read " << g.messages.size() << " heads, llhttp " << want_n << "; ";
        else if (want_n > done) {  // llhttp saw the head of a message whose body did not end
            const Got::Msg& last = g.messages.back();
            if (last.complete) bad << "last body complete for rivet, not for llhttp; ";
            const bool chunked = last.head.framing == BodyFraming::Chunked;
            if (const std::string diff = compare(last, want[done], chunked); !diff.empty())
                bad << "message " << done << ": " << diff;
        }
        if (closed && g.end != Got::Closed) bad << "llhttp closes after the last message; ";
    }

    // Every prefix: a prefix of the same conversation, or the same error.
    for (size_t k = 0; k < d.size() && bad.str().empty(); ++k) {
        const Got p =
            simulate(std::string_view(d).substr(0, k), skip_body, paused ? done : SIZE_MAX);
        bool ok = p.messages.size() <= g.messages.size();
        for (size_t i = 0; ok && i < p.messages.size(); ++i)
            ok = !p.messages[i].complete ||
                 (g.messages[i].complete && p.messages[i].body == g.messages[i].body);
        if (rejected(p)) ok = ok && p.end == g.end && p.status == g.status && p.reason == g.reason;
        if (!ok) bad << "prefix of " << k << " bytes ends differently; ";
    }

    if (bad.str().empty())
        ++stats.passed;
    else
        ADD_FAILURE() << where << ": " << bad.str();
}

TEST(LlhttpFixtures, RequestCasesBehaveLikeLlhttp) {
    const fs::path dir = fs::path(RIVET_FIXTURES_DIR) / "llhttp";
    ASSERT_TRUE(fs::is_directory(dir)) << dir;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir))
        if (entry.path().extension() == ".md" && entry.path().filename() != "README.md" &&
            entry.path().filename() != "SOURCE.md")
            files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    ASSERT_GE(files.size(), 9u);

    Stats stats;
    std::set<const Exception*> used;
    for (const fs::path& file : files) {
        for (const Case& c : read_cases(file)) {
            const std::string type = c.meta.value("type", "");
            if (type != "request") {
                ++stats.skipped[type];
                continue;
            }
            run_case(c, c.file + ":" + std::to_string(c.line) + " \"" + c.title + "\"", used,
                     stats);
        }
    }
    for (const Exception& x : kExceptions)
        EXPECT_TRUE(used.count(&x)) << "stale exception: " << x.file << " \"" << x.title << "\"";
    std::cout << "[ llhttp  ] " << stats.passed << " request cases behave like llhttp ("
              << stats.rejections << " rejections; " << stats.with_host << " with Host added), "
              << stats.excepted << " listed exceptions;";
    for (const auto& [type, n] : stats.skipped) std::cout << " " << n << " " << type << " skipped;";
    std::cout << "\n";
    EXPECT_GT(stats.passed, 90);
}

}  // namespace
