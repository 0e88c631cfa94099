// A temporary directory for the static file tests, removed with everything in it.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace rivet::files::testing {

class TempDir {
public:
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "rivet-static-XXXXXX");
        if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
        path_ = pattern;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const std::string& path() const { return path_; }
    std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

    void write(const std::string& rel, const std::string& bytes) const {
        std::filesystem::create_directories(std::filesystem::path(*this / rel).parent_path());
        std::ofstream out(*this / rel, std::ios::binary | std::ios::trunc);
        out << bytes;
    }
    void mkdir(const std::string& rel) const { std::filesystem::create_directories(*this / rel); }
    void symlink(const std::string& target, const std::string& rel) const {
        std::filesystem::create_symlink(target, *this / rel);
    }
    // Sets the file's mtime (seconds), as a change that keeps the size would.
    void touch(const std::string& rel, time_t mtime) const {
        timespec times[2] = {{mtime, 0}, {mtime, 0}};
        utimensat(AT_FDCWD, (*this / rel).c_str(), times, 0);
    }

private:
    std::string path_;
};

}  // namespace rivet::files::testing
