// The pid file's writer in a directory other users may write to: a symbolic link planted at
// its temporary name is not followed.
#include "server/pid_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

class PidFile : public ::testing::Test {
protected:
    void SetUp() override {
        char templ[] = "/tmp/rivet-pid-test-XXXXXX";
        ASSERT_NE(mkdtemp(templ), nullptr);
        dir_ = templ;
    }
    void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }
    std::string dir_;
};

TEST_F(PidFile, WritesThePidAndLeavesNoTemporaryFile) {
    std::string path = dir_ + "/rivet.pid";
    ASSERT_EQ(rivet::server::write_pid_file(path, 1234), "");
    EXPECT_EQ(slurp(path), "1234\n");
    std::string error;
    EXPECT_EQ(rivet::server::read_pid_file(path, error), 1234);
    EXPECT_NE(access((path + ".tmp." + std::to_string(getpid())).c_str(), F_OK), 0);
}

TEST_F(PidFile, ASymlinkAtTheTemporaryNameIsNotFollowed) {
    std::string path = dir_ + "/rivet.pid";
    std::string target = dir_ + "/victim";
    std::ofstream(target) << "precious\n";
    std::string temp = path + ".tmp." + std::to_string(getpid());
    ASSERT_EQ(symlink(target.c_str(), temp.c_str()), 0);
    ASSERT_EQ(rivet::server::write_pid_file(path, 1234), "");
    EXPECT_EQ(slurp(target), "precious\n");  // untouched
    struct stat st {};
    ASSERT_EQ(lstat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));  // a file of our own, not the planted link renamed
    EXPECT_EQ(slurp(path), "1234\n");
}

TEST_F(PidFile, AStaleTemporaryFileIsReplaced) {
    std::string path = dir_ + "/rivet.pid";
    std::ofstream(path + ".tmp." + std::to_string(getpid())) << "99999999999 and more\n";
    ASSERT_EQ(rivet::server::write_pid_file(path, 77), "");
    EXPECT_EQ(slurp(path), "77\n");
}

}  // namespace
