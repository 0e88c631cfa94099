#include "app/static/accept_encoding.hpp"

#include "app/compression/accept_encoding.hpp"
#include "http/request_parser.hpp"

namespace rivet::files {

bool accepts_coding(std::string_view accept_encoding, std::string_view coding) {
    int star = -1;  // -1: no "*"; otherwise its q
    app::AcceptedCoding c;
    while (app::next_accepted_coding(accept_encoding, c)) {
        if (http::iequals(c.name, coding)) return c.q > 0;
        if (c.name == "*") star = c.q;
    }
    return star > 0;
}

}  // namespace rivet::files
