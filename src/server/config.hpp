// The rivet executable's whole configuration, and the JSON configuration file that sets it
// (docs/CONFIG.md lists every key). The file's schema starts from seed 003's config.json
// (tests/fixtures/config/seed003_config.json), accepted as written.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <rivet/app.hpp>

#include "server/demo_routes.hpp"

namespace rivet::server {

// The static file cache (cache.* in the file): the defaults are StaticOptions' own.
struct CacheOptions {
    bool enabled = true;
    size_t max_size_mb = 32;   // file bytes held in memory, per I/O loop
    unsigned ttl_seconds = 1;  // an entry is trusted this long, then checked with one stat
};

struct Config {
    RunOptions run;
    DemoOptions demo;
    CacheOptions cache;
    // server.user / --user: the account the process becomes once its sockets are bound
    // (src/server/privileges.hpp); empty = stay who started it.
    std::string user;
    // In-place upgrades (server/upgrade.hpp): server.pid_file / --pid-file (empty: none) and
    // server.upgrade_timeout / --upgrade-timeout, how long a new process has to start serving.
    std::string pid_file;
    uint64_t upgrade_timeout_ms = 30'000;
    // rate_limiting.redis_password_file / --rate-limit-redis-password-file: read into
    // run.ops.rate_limit.redis_password whenever the configuration is (so at SIGHUP too), so
    // the password is in neither the configuration file nor the command line.
    std::string redis_password_file;
};

// The executable's lame duck (limits.drain_grace): long enough for a balancer with HAProxy's
// default check (inter 2 s, fall 3: out 6 s after its first 503) plus 1 s for the requests it
// sent just before; within Docker's default stop timeout (10 s). The library's default stays 0:
// a program embedding rivet may have no balancer in front (docs/OPERATIONS.md).
inline constexpr uint64_t kDefaultDrainGraceMs = 7'000;

// The executable's defaults: the library's, plus the admin endpoints on and the drain grace.
Config default_config();

// Gives the static file server the cache.* settings (disabled: nothing is trusted or held).
void apply_cache_options(Config& config);

// Applies the file at `path` on top of `config`. Returns one line per problem, each naming the
// file, the line and the key ("rivet.json:4: server.port: expected an integer from 0 to
// 65535, got -1"); nothing is applied unless there is none.
std::vector<std::string> apply_config_file(const std::string& path, Config& config);
// The same, from text already read (`name` stands for the file in messages).
std::vector<std::string> apply_config_text(const std::string& text, const std::string& name,
                                           Config& config);

// server.proxy_trusted / --proxy-trusted: at most this many addresses or networks.
inline constexpr size_t kMaxProxyTrusted = 1000;
// Empty when every entry is an address or CIDR network and there are not too many; else what is
// wrong, naming the entry.
std::string check_proxy_trusted(const std::vector<std::string>& entries);

// Every setting, in the file's schema: what --check-config prints.
nlohmann::ordered_json effective_config(const Config& config);

}  // namespace rivet::server
