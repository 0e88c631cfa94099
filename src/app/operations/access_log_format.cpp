#include "app/operations/access_log_format.hpp"

#include <charconv>

namespace rivet {

const char* log_format_name(LogFormat f) {
    switch (f) {
        case LogFormat::Combined:
            return "combined";
        case LogFormat::Common:
            return "common";
        case LogFormat::Json:
            return "json";
    }
    return "?";
}

}  // namespace rivet

namespace rivet::app {

namespace {

constexpr char kHex[] = "0123456789ABCDEF";

// nginx's log escaping: '"', '\' and bytes outside printable ASCII become \xHH, so a line is
// always one line and its quoted fields always end where they seem to.
void append_escaped(std::string& out, std::string_view s) {
    for (unsigned char c : s) {
        if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
            char esc[4] = {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
            out.append(esc, 4);
        } else {
            out += char(c);
        }
    }
}

// A JSON string body. Bytes past ASCII are written as \u00XX (their Latin-1 reading): a client
// can send any bytes, and the line must stay valid JSON whatever they are.
void append_json(std::string& out, std::string_view s) {
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += char(c);
        } else if (c < 0x20 || c >= 0x7f) {
            char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
            out.append(esc, 6);
        } else {
            out += char(c);
        }
    }
}

void append_number(std::string& out, uint64_t v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
}

void append_request_line(std::string& out, const AccessRecord& r, bool json) {
    auto add = json ? append_json : append_escaped;
    add(out, r.method);
    out += ' ';
    add(out, r.target);
    out += r.version_major == 2 ? " HTTP/2.0" : r.version_minor == 0 ? " HTTP/1.0" : " HTTP/1.1";
}

}  // namespace

void LogClock::update(time_t now) {
    if (now == second_) return;
    second_ = now;
    tm t;
    gmtime_r(&now, &t);
    strftime(clf_, sizeof clf_, "%d/%b/%Y:%H:%M:%S +0000", &t);
    strftime(iso_, sizeof iso_, "%Y-%m-%dT%H:%M:%SZ", &t);
}

void format_access_line(LogFormat format, const AccessRecord& r, const LogClock& clock,
                        std::string& out) {
    if (format == LogFormat::Json) {
        out += "{\"time\":\"";
        out += clock.iso();
        out += "\",\"remote_addr\":\"";
        append_json(out, r.client);
        out += "\",\"request\":\"";
        if (!r.method.empty()) append_request_line(out, r, true);
        out += "\",\"method\":\"";
        append_json(out, r.method);
        out += "\",\"uri\":\"";
        append_json(out, r.target);
        out += "\",\"status\":";
        append_number(out, uint64_t(r.status));
        out += ",\"body_bytes_sent\":";
        append_number(out, r.body_bytes);
        out += ",\"request_time_us\":";
        append_number(out, r.micros);
        out += ",\"referer\":\"";
        append_json(out, r.referer);
        out += "\",\"user_agent\":\"";
        append_json(out, r.user_agent);
        if (r.secure) {
            out += "\",\"ssl_protocol\":\"";
            append_json(out, r.tls_version);
            out += "\",\"ssl_cipher\":\"";
            append_json(out, r.tls_cipher);
            out += "\",\"ssl_server_name\":\"";
            append_json(out, r.tls_server_name);  // the client's bytes: escaped like the others
            out += "\",\"ssl_session_reused\":\"";
            out += r.tls_resumed ? 'r' : '.';
        }
        out += '"';
        if (const WebSocketSummary* ws = r.websocket) {
            out += ",\"websocket\":{\"close_code\":";
            append_number(out, ws->close_code);
            out += ",\"messages_in\":";
            append_number(out, ws->messages_in);
            out += ",\"messages_out\":";
            append_number(out, ws->messages_out);
            out += ",\"bytes_in\":";
            append_number(out, ws->bytes_in);
            out += ",\"bytes_out\":";
            append_number(out, ws->bytes_out);
            out += '}';
        }
        out += "}\n";
        return;
    }
    append_escaped(out, r.client);
    out += " - - [";
    out += clock.clf();
    out += "] \"";
    if (r.method.empty())
        out += '-';  // as nginx logs a request whose line it could not read
    else
        append_request_line(out, r, false);
    out += "\" ";
    append_number(out, uint64_t(r.status));
    out += ' ';
    append_number(out, r.body_bytes);
    if (format == LogFormat::Combined) {
        out += " \"";
        if (r.referer.empty())
            out += '-';
        else
            append_escaped(out, r.referer);
        out += "\" \"";
        if (r.user_agent.empty())
            out += '-';
        else
            append_escaped(out, r.user_agent);
        out += '"';
    }
    if (const WebSocketSummary* ws = r.websocket) {
        out += " ws=";
        append_number(out, ws->close_code);
        out += '/';
        append_number(out, ws->messages_in);
        out += '/';
        append_number(out, ws->messages_out);
    }
    out += '\n';
}

}  // namespace rivet::app
