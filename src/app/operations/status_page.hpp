// GET /status: one self-contained HTML page (no external assets: it works offline) that polls
// /status.json every second and draws the figures on <canvas> charts.
#pragma once

#include <string_view>

namespace rivet::app {

std::string_view status_page_html();

}  // namespace rivet::app
