// A directory listing as a streamed body, so that neither a large directory nor a slow reader
// costs the server more than a bounded amount: the page's head goes at once, the directory is
// read a batch of names at a time (the loop serves other connections between two batches) up
// to `max_entries`, the entries are sorted, and the rows follow a slice at a time as the client
// takes them. What one listing holds: at most `max_entries` entries and one slice of the page.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/static/directory_listing.hpp"

namespace rivet::files {

class ListingPage {
public:
    enum class Step : uint8_t {
        More,   // call again now
        Yield,  // a batch of the directory was read: call again once the loop served others
        Done,   // the page ended with what was appended
    };
    // Names the directory looks at per call, and page bytes written per call.
    static constexpr size_t kNamesPerBatch = 512;
    static constexpr size_t kSliceBytes = 32 * 1024;

    // `directory` is open (status() 0); `max_entries` is at least 1.
    ListingPage(std::string url_path, std::unique_ptr<DirectoryReader> directory,
                size_t max_entries);

    // Appends the next piece of the page to `out`.
    Step next(std::string& out);

private:
    enum class Phase : uint8_t { Head, Reading, Rows, End, Ended };

    void stop_reading();

    std::string url_path_;
    std::unique_ptr<DirectoryReader> directory_;
    size_t max_entries_;
    size_t cut_at_ = 0;  // 0: the listing is whole
    Phase phase_ = Phase::Head;
    std::vector<ListedEntry> entries_;
    size_t next_row_ = 0;
};

}  // namespace rivet::files
