// rivet::read_form: multipart/form-data through http::MultipartParser to fields, files and
// sinks; application/x-www-form-urlencoded through the query decoder. Limits are checked as the
// bytes arrive, so a refused body is refused before the rest of it is read.
#include <rivet/form.hpp>

#include <unistd.h>

#include <optional>

#include <rivet/http_error.hpp>

#include "app/request/form_files.hpp"
#include "app/request/query.hpp"
#include "http/byte_scan.hpp"
#include "http/multipart_parser.hpp"
#include "http/request_parser.hpp"

namespace rivet {

namespace {

[[noreturn]] void over_limit(std::string_view what, std::string_view limit, uint64_t value) {
    throw HttpError(413, std::string(what) + " over " + std::string(limit) + " (" +
                             std::to_string(value) + ")");
}

// The parser's events made into the Form: fields held (bounded), files passed on to their
// destination. It owns the files it made until the form is complete: destroyed before that
// (an error, a cancelled handler) it removes them.
class MultipartReader final : public http::MultipartHandler {
public:
    MultipartReader(const FormOptions& options, std::string_view boundary)
        : options_(options),
          parser_(boundary, {.max_parts = options.limits.max_parts,
                             .max_header_bytes = options.limits.max_part_header_bytes}) {}
    ~MultipartReader() {
        if (stage_ == Stage::Complete) return;
        file_.reset();  // removes the file being written
        for (const UploadedFile& f : form_.files)
            if (!f.path.empty()) ::unlink(f.path.c_str());
    }

    void feed(std::string_view piece) {
        received_ += piece.size();
        if (received_ > options_.limits.max_body_bytes)
            over_limit("the form body is", "max_body_bytes", options_.limits.max_body_bytes);
        check(parser_.feed(piece, *this));
    }

    Form finish() {
        check(parser_.finish());
        stage_ = Stage::Complete;
        return std::move(form_);
    }

    bool on_part_begin(const http::PartHead& head) override {
        if (!head.filename) {
            stage_ = Stage::Field;
            form_.fields.push_back({head.name, {}});
            return true;
        }
        stage_ = Stage::File;
        form_.files.push_back({head.name, sanitize_filename(*head.filename), head.content_type});
        return guard([&] { file_.emplace(options_, form_.files.back()); });
    }

    bool on_part_data(std::string_view bytes) override {
        return guard([&] {
            if (stage_ == Stage::Field) {
                std::string& value = form_.fields.back().value;
                if (value.size() + bytes.size() > options_.limits.max_field_bytes)
                    over_limit("form field " + form_.fields.back().name + " is", "max_field_bytes",
                               options_.limits.max_field_bytes);
                value.append(bytes);
                return;
            }
            UploadedFile& file = form_.files.back();
            if (file.size + bytes.size() > options_.limits.max_file_bytes)
                over_limit("file " + file.filename + " is", "max_file_bytes",
                           options_.limits.max_file_bytes);
            file.size += bytes.size();
            file_->write(bytes);
        });
    }

    bool on_part_end() override {
        return guard([&] {
            if (stage_ == Stage::File) file_->close();
            file_.reset();
            stage_ = Stage::Between;
        });
    }

private:
    // Where the parts stand; Complete keeps the files when the reader is destroyed.
    enum class Stage : uint8_t { Between, Field, File, Complete };

    // Runs f; an HttpError it throws stops the parse and is thrown again from feed(), outside
    // the parser's frames.
    template <class F>
    bool guard(F&& f) {
        try {
            f();
            return true;
        } catch (HttpError& e) {
            error_.emplace(std::move(e));
            return false;
        }
    }

    void check(http::MultipartParser::Status s) {
        using Status = http::MultipartParser::Status;
        const FormLimits& lim = options_.limits;
        switch (s) {
            case Status::Ok:
                return;
            case Status::Stopped:
                throw std::move(*error_);
            case Status::TooManyParts:
                over_limit("the form's part count is", "max_parts", lim.max_parts);
            case Status::HeaderTooLarge:
                over_limit("a part's header block is", "max_part_header_bytes",
                           lim.max_part_header_bytes);
            case Status::Malformed:
                throw HttpError(400, "malformed multipart/form-data body: " + parser_.error());
        }
    }

    const FormOptions& options_;
    http::MultipartParser parser_;
    Form form_;
    Stage stage_ = Stage::Between;
    std::optional<app::FileDestination> file_;  // the file part being received
    std::optional<HttpError> error_;
    uint64_t received_ = 0;
};

// The media type of a Content-Type, without its parameters.
std::string_view media_type(std::string_view content_type) {
    return http::byte_scan::trim_ows(content_type.substr(0, content_type.find(';')));
}

}  // namespace

const std::string* Form::field(std::string_view name) const {
    for (const FormField& f : fields)
        if (f.name == name) return &f.value;
    return nullptr;
}

Form parse_urlencoded_form(std::string_view body, const FormLimits& limits) {
    if (body.size() > limits.max_urlencoded_bytes)
        over_limit("the form body is", "max_urlencoded_bytes", limits.max_urlencoded_bytes);
    Form form;
    for (auto& [name, value] : app::parse_query(body)) {
        if (form.fields.size() == limits.max_parts)
            over_limit("the form's field count is", "max_parts", limits.max_parts);
        if (value.size() > limits.max_field_bytes)
            over_limit("form field " + name + " is", "max_field_bytes", limits.max_field_bytes);
        form.fields.push_back({std::move(name), std::move(value)});
    }
    return form;
}

Task<Form> read_form(Request& req, FormOptions options) {
    const std::string_view content_type = req.header("content-type");
    const std::string_view media = media_type(content_type);
    BodyStream body = req.body_stream();
    if (http::iequals(media, "application/x-www-form-urlencoded")) {
        std::string held;
        while (auto piece = co_await body.next()) {
            if (held.size() + piece->size() > options.limits.max_urlencoded_bytes)
                over_limit("the form body is", "max_urlencoded_bytes",
                           options.limits.max_urlencoded_bytes);
            held.append(*piece);
        }
        co_return parse_urlencoded_form(held, options.limits);
    }
    if (!http::iequals(media, "multipart/form-data"))
        throw HttpError(415,
                        "a form body is multipart/form-data or "
                        "application/x-www-form-urlencoded");
    const std::optional<std::string> boundary = http::multipart_boundary(content_type);
    if (!boundary)
        throw HttpError(400,
                        "multipart/form-data without a valid boundary parameter "
                        "(1 to 70 of RFC 2046's characters)");
    MultipartReader reader(options, *boundary);
    while (auto piece = co_await body.next()) reader.feed(*piece);
    co_return reader.finish();
}

}  // namespace rivet
