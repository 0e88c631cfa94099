#include "app/static/listing_page.hpp"

#include <algorithm>

namespace rivet::files {

ListingPage::ListingPage(std::string url_path, std::unique_ptr<DirectoryReader> directory,
                         size_t max_entries)
    : url_path_(std::move(url_path)),
      directory_(std::move(directory)),
      max_entries_(std::max<size_t>(max_entries, 1)) {}

void ListingPage::stop_reading() {
    directory_.reset();  // its descriptor goes back before the rows are written
    sort_listing(entries_);
    phase_ = Phase::Rows;
}

ListingPage::Step ListingPage::next(std::string& out) {
    switch (phase_) {
        case Phase::Head:
            append_listing_head(out, url_path_);
            phase_ = Phase::Reading;
            return Step::More;
        case Phase::Reading: {
            // One entry past the bound is read to learn that there is more: it is not shown.
            const size_t room = max_entries_ + 1 - entries_.size();
            const bool more = directory_->read_batch(std::min(kNamesPerBatch, room), entries_);
            if (entries_.size() > max_entries_) {
                entries_.pop_back();
                cut_at_ = max_entries_;
                stop_reading();
                return Step::More;
            }
            if (!more) {
                stop_reading();
                return Step::More;
            }
            return Step::Yield;
        }
        case Phase::Rows:
            while (next_row_ < entries_.size() && out.size() < kSliceBytes)
                append_listing_row(out, entries_[next_row_++]);
            if (next_row_ == entries_.size()) {
                std::vector<ListedEntry>().swap(entries_);  // the memory goes back now
                phase_ = Phase::End;
            }
            return Step::More;
        case Phase::End:
            append_listing_end(out, cut_at_);
            phase_ = Phase::Ended;
            return Step::Done;
        case Phase::Ended:
            break;
    }
    return Step::Done;
}

}  // namespace rivet::files
