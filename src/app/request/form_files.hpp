// Where read_form puts a file part's bytes: a new file in the upload directory, or the
// handler's FileSink. A destination left unfinished removes its file when destroyed.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <rivet/form.hpp>

namespace rivet::app {

class FileDestination {
public:
    // Opens `file`'s destination: the sink's, or a new file under `upload_dir` (sets file.path).
    // Throws HttpError (500; 507 when the disk is full).
    FileDestination(const FormOptions& options, UploadedFile& file);
    ~FileDestination();
    FileDestination(const FileDestination&) = delete;
    FileDestination& operator=(const FileDestination&) = delete;

    void write(std::string_view piece);
    void close();  // the whole file arrived: it is kept

private:
    enum class Stage : uint8_t { Writing, Kept };
    std::unique_ptr<FileSink> sink_;
    int fd_ = -1;
    std::string path_;
    Stage stage_ = Stage::Writing;
};

}  // namespace rivet::app
