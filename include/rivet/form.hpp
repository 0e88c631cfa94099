// rivet/form.hpp: HTML form bodies, multipart/form-data (RFC 7578) with file uploads, and
// application/x-www-form-urlencoded, read within limits:
//
//   app.post("/upload", [](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
//       rivet::FormOptions opt;
//       opt.upload_dir = "/var/lib/app/uploads";           // files go there, piece by piece
//       opt.limits.max_file_bytes = uint64_t(4) << 30;
//       rivet::Form form = co_await rivet::read_form(req, opt);
//       for (const rivet::UploadedFile& f : form.files) ...;  // f.path, f.filename, f.size
//       if (const std::string* title = form.field("title")) ...;
//   }).stream_body().max_body(uint64_t(4) << 30);
//
// On a `.stream_body()` route a file never sits in memory: each piece of the body goes to its
// file (or to the handler's FileSink) as it arrives. Elsewhere the same code reads the buffered
// body. Each limit crossed throws HttpError(413) naming it; a malformed body (a boundary that
// never ends, a part without Content-Disposition, a bad boundary parameter) HttpError(400); a
// body of another type HttpError(415). When read_form throws, or the handler is cancelled
// while it reads, the files it wrote are removed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <rivet/request.hpp>
#include <rivet/task.hpp>

namespace rivet {

struct FormLimits {
    size_t max_parts{1000};                      // multipart parts, or urlencoded name=value pairs
    size_t max_part_header_bytes{8 * 1024};      // one part's header block, CRLFs included
    size_t max_field_bytes{64 * 1024};           // one field's value (a file is not a field)
    uint64_t max_file_bytes{uint64_t(1) << 30};  // one file
    uint64_t max_body_bytes{uint64_t(1) << 30};  // a multipart body (the route's max_body too)
    size_t max_urlencoded_bytes{1024 * 1024};    // an urlencoded body: held whole to be parsed
};

struct FormField {
    std::string name;
    std::string value;
};

struct UploadedFile {
    std::string name;          // the form field's name
    std::string filename;      // as the client named it, sanitized (sanitize_filename)
    std::string content_type;  // the part's, "text/plain" when it had none (RFC 7578 §4.4)
    uint64_t size{0};          // bytes received
    std::string path{};  // where it was stored: upload_dir/<filename, made unique>; "" for a sink
};

struct Form {
    std::vector<FormField> fields;  // in the order sent; a repeated name appears each time
    std::vector<UploadedFile> files;
    const std::string* field(std::string_view name) const;  // the first with that name, or null
};

// Where a file's bytes go when the handler keeps them itself (a hash, object storage, a pipe).
class FileSink {
public:
    virtual ~FileSink() = default;
    virtual void write(std::string_view piece) = 0;  // may throw HttpError to refuse the upload
    virtual void close() {}                          // the file has ended (all of it arrived)
};
// Called at the start of each file part (size still 0); its sink receives the file's bytes.
using FileSinkFactory = std::function<std::unique_ptr<FileSink>(const UploadedFile& file)>;

struct FormOptions {
    FormLimits limits{};
    // Files are written here (an existing directory), each to a new file (mode 0600) named
    // after its sanitized filename, never over an existing one. Empty: see sink.
    std::string upload_dir{};
    // With a sink, files go to it and upload_dir is unused. With neither, a file part is
    // refused with 400.
    FileSinkFactory sink{};
};

// Reads the request's form body, multipart/form-data or application/x-www-form-urlencoded as
// its Content-Type says. The Request must outlive the awaiting.
Task<Form> read_form(Request& req, FormOptions options = {});

// An application/x-www-form-urlencoded body already held ('+' is a space, %XX decoded, as
// Request::query), within limits.max_parts, max_field_bytes and max_urlencoded_bytes (413).
Form parse_urlencoded_form(std::string_view body, const FormLimits& limits = {});

// A client's filename made safe to use as a file name: its last path segment (after '/' or
// '\\'), without NUL, control characters or leading dots, other bytes outside letters, digits,
// UTF-8 and " ._-+()[]@,=~" replaced with '_', at most 200 bytes; "upload" when nothing is left.
std::string sanitize_filename(std::string_view sent);

}  // namespace rivet
