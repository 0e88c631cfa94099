// rivet::StaticFiles: from a request to the file that answers it (see static_files.hpp).
#include <rivet/static_files.hpp>

#include <rivet/event_loop.hpp>
#include <rivet/stream.hpp>

#include <time.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "app/compression/accept_encoding.hpp"
#include "app/static/directory_listing.hpp"
#include "app/static/file_cache.hpp"
#include "app/static/file_response.hpp"
#include "app/static/listing_page.hpp"
#include "app/static/mime_types.hpp"
#include "app/static/path_resolver.hpp"
#include "core/clock.hpp"
#include "http/request_parser.hpp"
#include "http/response_writer.hpp"

namespace rivet {

namespace {

void plain(Response& res, int status) {
    res.status(status).text(std::string(http::status_reason(status)) + "\n");
    // Out of descriptors even after the cache gave its own back: soon there may be some.
    if (status == 503) res.header("Retry-After", "1");
}

// The request fields the file handler reads, in one pass over the header list.
files::FileRequest gather(const Request& req) {
    files::FileRequest out;
    out.get_or_head = req.method() == Method::Get || req.method() == Method::Head;
    for (const auto& h : req.headers()) {
        std::string_view n = h.name;
        if (n.size() < 5) continue;
        char first = char(n[0] | 0x20);
        if (first == 'i' && (n[1] | 0x20) == 'f') {
            auto& c = out.conditions;
            if (http::iequals(n, "If-None-Match"))
                c.if_none_match = h.value;
            else if (http::iequals(n, "If-Modified-Since"))
                c.if_modified_since = h.value;
            else if (http::iequals(n, "If-Match"))
                c.if_match = h.value;
            else if (http::iequals(n, "If-Unmodified-Since"))
                c.if_unmodified_since = h.value;
            else if (http::iequals(n, "If-Range"))
                c.if_range = h.value;
        } else if (first == 'r' && http::iequals(n, "Range")) {
            out.range = h.value;
        } else if (first == 'a' && http::iequals(n, "Accept-Encoding")) {
            out.accept_encoding = h.value;
        }
    }
    return out;
}

}  // namespace

struct StaticFiles::Impl {
    std::string name;   // the mount as given: "/", "/assets"
    std::string mount;  // without a trailing '/': "" for "/", "/assets"
    std::string root;
    StaticOptions options;
    files::MimeTypes types;
    files::CacheLimits limits;
    std::string cache_control;
    std::vector<std::unique_ptr<files::FileCache>> loops;  // one per I/O loop
    std::mutex shared_mutex;                               // guards `shared`
    std::unique_ptr<files::FileCache> shared;              // for everyone else

    Impl(std::string m, std::string r, StaticOptions o)
        : name(m.empty() ? "/" : m),
          mount(std::move(m)),
          root(std::move(r)),
          options(std::move(o)),
          types(options.mime_types, options.default_type) {
        while (!mount.empty() && mount.back() == '/') mount.pop_back();
        if (root.empty()) root.push_back('.');  // the working directory
        limits.entries = options.cache_entries;
        limits.bytes = options.cache_bytes;
        limits.max_file = options.cache_max_file;
        limits.memory_below = options.sendfile_threshold;
        limits.ttl_ms = uint64_t(options.cache_ttl.count() < 0 ? 0 : options.cache_ttl.count());
        limits.follow_symlinks = options.follow_symlinks;
        cache_control = options.cache_control;
        if (cache_control.empty() && options.max_age >= 0)
            cache_control = "max-age=" + std::to_string(options.max_age);
        // Checked once here: every answer adds it as the framework's own field, and the types
        // go into the part heads of a multipart range answer as they are.
        const auto refuse_forbidden = [](std::string_view value, const std::string& what) {
            if (http::field_value_forbidden(value))
                throw std::invalid_argument("static files: " + what + " holds CR, LF or NUL");
        };
        refuse_forbidden(cache_control, "cache_control");
        refuse_forbidden(options.default_type, "default_type");
        for (const auto& [extension, type] : options.mime_types)
            refuse_forbidden(type, "the type of \"" + extension + "\"");
        shared = std::make_unique<files::FileCache>(root, limits, types);
    }

    void serve(files::FileCache& cache, const Request& req, Response& res);
    // `file` by value, moved in: each copy of a shared_ptr and its end are a locked instruction
    // each (an atomic add, an atomic subtract), and a file's answer needs only the response's.
    void serve_file(files::FileCache& cache, std::shared_ptr<const files::FileEntry> file,
                    std::string_view key, const files::FileRequest& fields, Response& res);
    void redirect_to_directory(const Request& req, std::string_view key, Response& res);
    void listing(std::string_view key, Response& res);
};

void StaticFiles::Impl::serve(files::FileCache& cache, const Request& req, Response& res) {
    if (req.method() != Method::Get && req.method() != Method::Head) {
        plain(res, 405);
        res.header("Allow", "GET, HEAD");
        return;
    }
    std::string_view path = req.path();
    if (path.substr(0, mount.size()) != mount) return plain(res, 404);
    path.remove_prefix(mount.size());
    if (path.empty()) return redirect_to_directory(req, {}, res);  // "/assets" -> "/assets/"
    if (path.front() != '/') return plain(res, 404);               // "/assetsX"
    path.remove_prefix(1);

    thread_local std::string key;  // reused: no allocation per request
    files::NormalizedPath np = files::normalize_path(path, key);
    if (np.status) return plain(res, np.status);
    // Before any system call: a denied name costs nothing and tells nothing of what exists.
    if (!options.dot_files && files::names_hidden_file(key)) return plain(res, 404);

    auto entry = cache.find(key, core::monotonic_ms());
    switch (entry->kind) {
        case files::FileEntry::Kind::Error:
            return plain(res, entry->status);
        case files::FileEntry::Kind::File:
            if (np.directory) return plain(res, 404);  // "file.txt/"
            return serve_file(cache, std::move(entry), key, gather(req), res);
        case files::FileEntry::Kind::Directory:
            break;
    }
    if (!np.directory) return redirect_to_directory(req, key, res);
    if (!options.index.empty()) {
        std::string index_key = key.empty() ? options.index : key + "/" + options.index;
        auto index = cache.find(index_key, core::monotonic_ms());
        if (index->kind == files::FileEntry::Kind::File)
            return serve_file(cache, std::move(index), index_key, gather(req), res);
        if (index->kind == files::FileEntry::Kind::Error && index->status != 404)
            return plain(res, index->status);  // there, but not to be read
    }
    if (!options.listing) return plain(res, 403);
    listing(key, res);
}

void StaticFiles::Impl::serve_file(files::FileCache& cache,
                                   std::shared_ptr<const files::FileEntry> file,
                                   std::string_view key, const files::FileRequest& fields,
                                   Response& res) {
    const files::FileEntry& entry = *file;  // held by rep.entry from here on
    files::Representation rep{.entry = std::move(file),
                              .content_type = entry.content_type,
                              .type_is_literal = entry.type_is_literal,
                              .cache_control = cache_control};
    const uint64_t now = core::monotonic_ms();
    if (options.precompressed && now >= entry.no_variants_until_ms) {
        // Every variant beside the file is looked up (and cached, found or not), whatever this
        // client accepts: when one exists, the answer depends on Accept-Encoding and says so
        // (Vary), also when it is the identity file or a 304. The coding is chosen by the same
        // negotiation as the compressor's (app/compression/accept_encoding.hpp), among the
        // variants there are, in the same order of preference (br before gzip).
        static constexpr std::pair<ContentCoding, std::string_view> kVariants[] = {
            {ContentCoding::Brotli, ".br"}, {ContentCoding::Gzip, ".gz"}};
        constexpr size_t kCount = sizeof kVariants / sizeof kVariants[0];
        ContentCoding offered[kCount];
        std::shared_ptr<const files::FileEntry> found[kCount];  // keep the variants alive
        size_t n = 0;
        thread_local std::string variant_key;
        uint64_t none_until = UINT64_MAX;  // while every missing variant's entry is trusted
        for (auto [coding, suffix] : kVariants) {
            variant_key.assign(key);
            variant_key.append(suffix);
            uint64_t trusted_until = 0;
            auto v = cache.find(variant_key, now, &trusted_until);
            none_until = std::min(none_until, trusted_until);
            if (v->kind != files::FileEntry::Kind::File) continue;
            offered[n] = coding;
            found[n++] = std::move(v);
        }
        if (n == 0) entry.no_variants_until_ms = none_until;
        if (n > 0) {
            rep.vary = true;
            app::CodingChoice choice = app::choose_coding(fields.accept_encoding, {offered, n});
            for (size_t i = 0; i < n && choice.kind == app::CodingChoice::Kind::Coded; ++i) {
                if (offered[i] != choice.coding) continue;
                rep.entry = std::move(found[i]);
                rep.encoding = content_coding_name(choice.coding);
                return files::respond_with_file(rep, fields, options.max_ranges, res);
            }
        }
    }
    files::respond_with_file(rep, fields, options.max_ranges, res);
}

void StaticFiles::Impl::redirect_to_directory(const Request& req, std::string_view key,
                                              Response& res) {
    // Built from the normalized key, not the path as sent: "//evil.example" must not become
    // a Location that leaves this site.
    std::string location = mount + "/";
    if (!key.empty()) location += files::percent_encode_path(key) + "/";
    if (!req.query_string().empty()) {
        location += '?';
        location += req.query_string();
    }
    plain(res, 301);
    res.header("Location", location);
}

void StaticFiles::Impl::listing(std::string_view key, Response& res) {
    auto directory =
        std::make_unique<files::DirectoryReader>(root, std::string(key), options.follow_symlinks);
    if (directory->status()) return plain(res, directory->status());
    std::string shown = mount + "/";
    if (!key.empty()) shown += std::string(key) + "/";
    auto page = std::make_shared<files::ListingPage>(std::move(shown), std::move(directory),
                                                     options.listing_max_entries);
    res.stream(
        [page](std::string& out, const StreamWaker& waker) {
            switch (page->next(out)) {
                case files::ListingPage::Step::More:
                    return StreamStatus::More;
                case files::ListingPage::Step::Done:
                    return StreamStatus::Done;
                case files::ListingPage::Step::Yield:
                    break;
            }
            // The next batch of the directory after what the loop has ready: a wake from a
            // posted function, since one given now would have the engine call again at once.
            EventLoop* loop = EventLoop::current();
            if (!loop) return StreamStatus::More;  // not on a loop: nobody else to serve
            loop->post([waker] { waker.wake(); });
            return StreamStatus::Waiting;
        },
        "text/html; charset=utf-8");
    res.header("Cache-Control", "no-cache");
}

StaticFiles::StaticFiles(std::string mount, std::string root, StaticOptions options)
    : impl_(std::make_unique<Impl>(std::move(mount), std::move(root), std::move(options))) {}

StaticFiles::~StaticFiles() = default;

void StaticFiles::serve(const Request& req, Response& res) {
    unsigned loop = req.loop_index();
    if (loop < impl_->loops.size()) return impl_->serve(*impl_->loops[loop], req, res);
    std::lock_guard lock(impl_->shared_mutex);
    impl_->serve(*impl_->shared, req, res);
}

void StaticFiles::set_loops(unsigned loops) {
    impl_->loops.clear();
    for (unsigned i = 0; i < loops; ++i)
        impl_->loops.push_back(
            std::make_unique<files::FileCache>(impl_->root, impl_->limits, impl_->types));
}

void StaticFiles::sweep(unsigned loop) {
    if (loop < impl_->loops.size()) impl_->loops[loop]->sweep(core::monotonic_ms());
}

StaticStats StaticFiles::stats() const {
    StaticStats s;
    for (const auto& cache : impl_->loops) s += cache->counters().read();
    s += impl_->shared->counters().read();  // atomics too: no lock needed to read them
    return s;
}

const std::string& StaticFiles::mount() const {
    return impl_->name;
}

const std::string& StaticFiles::root() const {
    return impl_->root;
}

}  // namespace rivet
