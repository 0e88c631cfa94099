// The configuration as rivet will run it (`--check-config`): every key of the file format, with
// the value that defaults, the file and the flags gave it, as the settings schema shows it.
#include "server/config.hpp"
#include "server/settings.hpp"

namespace rivet::server {

nlohmann::ordered_json effective_config(const Config& c) {
    nlohmann::ordered_json j;
    for (const auto& section : settings::schema()) {
        if (section.shown && !section.shown(c)) continue;
        auto& out = j[section.name] = nlohmann::ordered_json::object();
        for (const auto& s : section.settings) {
            if (!s.value.get) continue;
            settings::json v = s.value.get(c);
            if (!v.is_null()) out[s.name] = v;
        }
    }
    return j;
}

}  // namespace rivet::server
