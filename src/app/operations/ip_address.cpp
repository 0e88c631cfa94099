#include "app/operations/ip_address.hpp"

namespace rivet::app {

IpAddress forwarded_client(const IpAddress& peer, std::span<const http::Header> headers,
                           const NetworkList& trusted) {
    if (!trusted.contains(peer)) return peer;
    IpAddress client = peer;
    // Several X-Forwarded-For fields are one list in order; walk them last to first.
    for (size_t h = headers.size(); h-- > 0;) {
        if (!http::iequals(headers[h].name, "X-Forwarded-For")) continue;
        std::string_view list = headers[h].value;
        while (!list.empty()) {
            auto comma = list.rfind(',');
            std::string_view item = comma == std::string_view::npos ? list : list.substr(comma + 1);
            list = comma == std::string_view::npos ? std::string_view{} : list.substr(0, comma);
            IpAddress ip;
            if (!parse_ip(item, ip)) return client;  // garbage: trust nothing further left
            client = ip;
            if (!trusted.contains(ip)) return client;
        }
    }
    return client;
}

}  // namespace rivet::app
