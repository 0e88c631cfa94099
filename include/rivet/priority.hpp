// rivet::Priority: the order in which offloaded requests waiting for a worker start.
//
//   app.post("/render", render_pdf).offload().priority(rivet::Priority::Low);
//   app.get("/health/deep", check).offload().priority(rivet::Priority::High);
//
// A waiting High request starts before every waiting Normal or Low one, a Normal one before
// every Low one; within a level, first come first served. Nothing running is interrupted, and a
// steady stream of higher requests can keep lower ones waiting. Normal and Low requests are
// answered 503 once RunOptions::queue wait; High ones may wait past that by a quarter of it (at
// least one), so a flood of lower requests cannot refuse them.
#pragma once

#include <cstdint>

namespace rivet {

enum class Priority : uint8_t { Low, Normal, High };

}  // namespace rivet
