// The demo's HTML form endpoint (rivet/form.hpp):
//   POST /upload-form   a multipart/form-data or urlencoded form: files are stored, piece by
//                       piece, in a directory made for this process under $TMPDIR (or /tmp); the
//                       answer lists the fields and the files (name, sanitized filename, size,
//                       content type, where it was stored). ?max_parts=, ?max_field_bytes=,
//                       ?max_file_bytes=, ?max_part_header_bytes= lower the limits (tests
//                       cross each one).
//   POST /upload-file   the body as it is, streamed to one new file in the same directory: the
//                       baseline bench/forms_bench.py compares multipart uploads with
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <string>

#include <rivet/async.hpp>
#include <rivet/form.hpp>

#include "server/demo_routes.hpp"
#include "server/number_input.hpp"

namespace rivet::server {

namespace {

constexpr uint64_t kMaxUploadBytes = uint64_t(16) << 30;  // 16 GiB: streamed, never held

// One directory per process, made at the first upload (a server that never takes one makes
// none). Left in place at exit: the files are the point of an upload.
const std::string& upload_dir() {
    static std::once_flag once;
    static std::string dir;
    std::call_once(once, [] {
        const char* tmp = std::getenv("TMPDIR");
        std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/rivet-uploads-XXXXXX";
        if (mkdtemp(pattern.data())) dir = pattern;
    });
    if (dir.empty()) throw HttpError(500, "no upload directory");
    return dir;
}

// A limit lowered by ?name=N (never raised past its default).
template <class T>
void lower(const Request& req, std::string_view name, T& limit) {
    auto text = req.query(name);
    if (!text) return;
    auto parsed = parse_count(*text, limit, name);
    if (!parsed.value) throw HttpError(400, parsed.error);
    limit = static_cast<T>(*parsed.value);
}

Task<> upload_form_handler(Request& req, Response& res) {
    FormOptions options;
    options.limits.max_file_bytes = kMaxUploadBytes;
    options.limits.max_body_bytes = kMaxUploadBytes;
    lower(req, "max_parts", options.limits.max_parts);
    lower(req, "max_field_bytes", options.limits.max_field_bytes);
    lower(req, "max_file_bytes", options.limits.max_file_bytes);
    lower(req, "max_part_header_bytes", options.limits.max_part_header_bytes);
    options.upload_dir = upload_dir();
    const Form form = co_await read_form(req, options);
    nlohmann::json fields = nlohmann::json::array();
    for (const FormField& f : form.fields) fields.push_back({{"name", f.name}, {"value", f.value}});
    nlohmann::json files = nlohmann::json::array();
    for (const UploadedFile& f : form.files)
        files.push_back({{"name", f.name},
                         {"filename", f.filename},
                         {"size", f.size},
                         {"content_type", f.content_type},
                         {"path", f.path}});
    res.json({{"fields", fields}, {"files", files}});  // bytes not UTF-8 are shown replaced
}

// The same bytes without a form around them: what storing a streamed body costs by itself.
Task<> upload_file_handler(Request& req, Response& res) {
    std::string path = upload_dir() + "/body-XXXXXX";
    const int fd = mkostemp(path.data(), O_CLOEXEC);
    if (fd < 0) throw HttpError(500, "the upload could not be stored");
    BodyStream body = req.body_stream();
    bool stored = true;
    while (auto piece = co_await body.next())
        for (std::string_view rest = *piece; stored && !rest.empty();) {
            const ssize_t n = ::write(fd, rest.data(), rest.size());
            stored = n > 0 || errno == EINTR;
            if (n > 0) rest.remove_prefix(size_t(n));
        }
    ::close(fd);
    if (!stored) throw HttpError(500, "the upload could not be stored");
    res.json({{"bytes", body.received()}, {"path", path}});
}

}  // namespace

void add_form_routes(App& app) {
    app.post("/upload-form", upload_form_handler).stream_body().max_body(kMaxUploadBytes);
    app.post("/upload-file", upload_file_handler).stream_body().max_body(kMaxUploadBytes);
}

}  // namespace rivet::server
