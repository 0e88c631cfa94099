// File parts to disk or to a sink: see form_files.hpp.
#include "app/request/form_files.hpp"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <utility>

#include <rivet/http_error.hpp>

namespace rivet {

namespace {

constexpr size_t kMaxFilename = 200;  // bytes; leaves room for a "-NNN" suffix under NAME_MAX
constexpr int kMaxNameTries = 1000;

bool is_safe_ascii(unsigned char c) {
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
    return std::string_view(" ._-+()[]@,=~").find(char(c)) != std::string_view::npos;
}

// "report.pdf" and 2 -> "report-2.pdf": the name a second upload of the same file gets.
std::string numbered(const std::string& name, int n) {
    const size_t dot = name.rfind('.');
    const size_t stem = dot == std::string::npos || dot == 0 ? name.size() : dot;
    return name.substr(0, stem) + "-" + std::to_string(n) + name.substr(stem);
}

[[noreturn]] void storage_failed(int err) {
    // The disk's state is the server's business: the client hears only that it was full.
    if (err == ENOSPC || err == EDQUOT) throw HttpError(507, "no space left to store the upload");
    throw HttpError(500, "the upload could not be stored");
}

}  // namespace

std::string sanitize_filename(std::string_view sent) {
    const size_t slash = sent.find_last_of("/\\");
    if (slash != std::string_view::npos) sent.remove_prefix(slash + 1);
    std::string out;
    for (const char ch : sent) {
        const auto c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c == 0x7f) continue;    // NUL and control characters: dropped
        if (out.empty() && c == '.') continue;  // no ".", "..", nor hidden files
        out.push_back(c >= 0x80 || is_safe_ascii(c) ? ch : '_');
    }
    if (out.size() > kMaxFilename) {
        out.resize(kMaxFilename);
        // Never end inside a UTF-8 sequence: drop its continuation bytes and its lead byte.
        while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xc0) == 0x80)
            out.pop_back();
        if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xc0) out.pop_back();
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out.empty() ? "upload" : out;
}

namespace app {

FileDestination::FileDestination(const FormOptions& options, UploadedFile& file) {
    if (options.sink) {
        sink_ = options.sink(file);
        if (!sink_) throw HttpError(400, "this form takes no file for field " + file.name);
        return;
    }
    if (options.upload_dir.empty()) throw HttpError(400, "this form takes no files");
    const int dir = ::open(options.upload_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) storage_failed(errno);
    // The name has no '/' (sanitize_filename), and O_EXCL | O_NOFOLLOW never write through a
    // link or over a file already there: the file is a new one inside the directory.
    for (int n = 0; n < kMaxNameTries && fd_ < 0; ++n) {
        const std::string name = n == 0 ? file.filename : numbered(file.filename, n);
        fd_ =
            ::openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd_ >= 0)
            path_ = options.upload_dir + "/" + name;
        else if (errno != EEXIST) {
            const int err = errno;
            ::close(dir);
            storage_failed(err);
        }
    }
    ::close(dir);
    if (fd_ < 0) storage_failed(EEXIST);
    file.path = path_;
}

FileDestination::~FileDestination() {
    if (fd_ >= 0) ::close(fd_);
    if (stage_ != Stage::Kept && !path_.empty()) ::unlink(path_.c_str());
}

void FileDestination::write(std::string_view piece) {
    if (sink_) return sink_->write(piece);
    while (!piece.empty()) {
        const ssize_t n = ::write(fd_, piece.data(), piece.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) storage_failed(errno);
        piece.remove_prefix(size_t(n));
    }
}

void FileDestination::close() {
    if (sink_) sink_->close();
    if (fd_ >= 0 && ::close(std::exchange(fd_, -1)) != 0) storage_failed(errno);
    stage_ = Stage::Kept;
}

}  // namespace app

}  // namespace rivet
