// rivet::html_escape: text made safe to put in an HTML page, as element content or as a quoted
// attribute value (a user name in a page, a CSRF token in a hidden field).
//
//   res.html("<p>Signed in as " + rivet::html_escape(user) + "</p>");
#pragma once

#include <string>
#include <string_view>

namespace rivet {

// & < > " ' become character references; every other byte is kept as it is (so UTF-8 stays
// UTF-8, and so does anything that is not).
std::string html_escape(std::string_view text);
// The same, appended to `out`.
void append_html_escaped(std::string& out, std::string_view text);

}  // namespace rivet
