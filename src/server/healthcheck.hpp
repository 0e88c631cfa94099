// `rivet --healthcheck URL [--timeout-ms N]`: a container's HEALTHCHECK without curl. One GET,
// exit 0 on a 2xx status, 1 on anything else (refused, timeout, other status, a malformed
// answer), 2 on a malformed command line; one line on stderr says why.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rivet::server {

struct HealthUrl {
    std::string host;  // without brackets for IPv6
    std::string port;  // "80" when the URL names none
    std::string path;  // "/" when the URL names none
};

// Parses http://HOST[:PORT][/PATH] (HOST: IPv4, [IPv6] or a name). Empty `error` when good.
HealthUrl parse_health_url(const std::string& url, std::string& error);

// `args` follow "--healthcheck". Returns the exit status.
int run_healthcheck(const std::vector<std::string>& args);

}  // namespace rivet::server
