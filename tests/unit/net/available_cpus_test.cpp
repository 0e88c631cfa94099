// The CPU count behind the default I/O thread and worker counts: the quota arithmetic, and the
// cgroup reader pointed at fixture trees shaped as the kernel's files are.
#include "net/available_cpus.hpp"

#include <sched.h>

#include <optional>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "../app/static/temp_dir.hpp"

using rivet::files::testing::TempDir;
using rivet::net::cgroup_cpu_quota;
using rivet::net::cpus_from;
using rivet::net::cpus_of_cpu_max;
using rivet::net::cpus_of_quota;

namespace {

const char* kMountinfoV2 =
    "24 1 0:22 / / rw - overlay overlay rw\n"
    "30 24 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";

const char* kMountinfoV1 =
    "24 1 0:22 / / rw - overlay overlay rw\n"
    "31 24 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw shared:9 - cgroup cgroup rw,cpu\n";

}  // namespace

TEST(AvailableCpus, CpuMaxIsQuotaOverPeriodRoundedUp) {
    EXPECT_EQ(cpus_of_cpu_max("100000 100000"), 1u);
    EXPECT_EQ(cpus_of_cpu_max("150000 100000"), 2u);
    EXPECT_EQ(cpus_of_cpu_max("200000 100000\n"), 2u);
    EXPECT_EQ(cpus_of_cpu_max("50000 100000"), 1u);  // half a CPU: still one thread
    EXPECT_EQ(cpus_of_cpu_max("1000 100000"), 1u);
    EXPECT_EQ(cpus_of_cpu_max("max 100000"), std::nullopt);
    EXPECT_EQ(cpus_of_cpu_max(""), std::nullopt);
    EXPECT_EQ(cpus_of_cpu_max("garbage"), std::nullopt);
    EXPECT_EQ(cpus_of_cpu_max("100000 0"), std::nullopt);
    EXPECT_EQ(cpus_of_quota(-1, 100000), std::nullopt);
    EXPECT_EQ(cpus_of_quota(250000, 100000), 3u);
}

TEST(AvailableCpus, QuotaLowersTheAffinityCountNeverBelowOne) {
    EXPECT_EQ(cpus_from(8, std::nullopt), 8u);
    EXPECT_EQ(cpus_from(8, 2u), 2u);
    EXPECT_EQ(cpus_from(2, 4u), 2u);  // a quota above the mask does not add CPUs
    EXPECT_EQ(cpus_from(0, std::nullopt), 1u);
}

// One fixture tree: /proc/self/mountinfo, /proc/self/cgroup and the cgroup files, and the
// quota the reader must find in it.
struct CgroupTree {
    const char* what;
    const char* mountinfo;
    const char* cgroup;
    std::vector<std::pair<const char*, const char*>> files;
    std::optional<unsigned> quota;
};

TEST(AvailableCpus, CgroupTreesGiveTheTightestQuotaOnTheWayUp) {
    const std::vector<CgroupTree> trees = {
        {"v2: the process's own cgroup",
         kMountinfoV2,
         "0::/kubepods/pod1/app\n",
         {{"sys/fs/cgroup/cpu.max", "max 100000\n"},
          {"sys/fs/cgroup/kubepods/cpu.max", "max 100000\n"},
          {"sys/fs/cgroup/kubepods/pod1/app/cpu.max", "150000 100000\n"}},
         2},
        {"v2: an ancestor's is tighter",
         kMountinfoV2,
         "0::/kubepods/pod1/app\n",
         {{"sys/fs/cgroup/kubepods/pod1/cpu.max", "100000 100000\n"},
          {"sys/fs/cgroup/kubepods/pod1/app/cpu.max", "max 100000\n"}},
         1},
        {"v2: a namespaced container sees its cgroup as the root",
         kMountinfoV2,
         "0::/\n",
         {{"sys/fs/cgroup/cpu.max", "300000 100000\n"}},
         3},
        {"v2: the mount's root is stripped (a container's cgroup mounted, no namespace)",
         "30 24 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
         "0::/docker/abc\n",
         {{"sys/fs/cgroup/cpu.max", "200000 100000\n"}},
         2},
        {"v2: a cgroup outside the mounted one (a name that only starts alike) reads its root",
         "30 24 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
         "0::/docker/abcdef\n",
         {{"sys/fs/cgroup/cpu.max", "400000 100000\n"},
          {"sys/fs/cgroup/def/cpu.max", "100000 100000\n"}},
         4},
        {"v1: the cpu hierarchy's CFS quota",
         kMountinfoV1,
         "4:memory:/x\n2:cpuacct:/\n1:cpu:/docker/abc\n0::/\n",
         {{"sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n"},
          {"sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n"},
          {"sys/fs/cgroup/cpu/docker/abc/cpu.cfs_quota_us", "100000\n"},
          {"sys/fs/cgroup/cpu/docker/abc/cpu.cfs_period_us", "100000\n"}},
         1},
        {"v1: no quota anywhere",
         kMountinfoV1,
         "1:cpu:/\n",
         {{"sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n"},
          {"sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n"}},
         std::nullopt},
    };
    for (const CgroupTree& tree : trees) {
        TempDir root;
        root.write("proc/self/mountinfo", tree.mountinfo);
        root.write("proc/self/cgroup", tree.cgroup);
        for (const auto& [path, text] : tree.files) root.write(path, text);
        EXPECT_EQ(cgroup_cpu_quota(root.path()), tree.quota) << tree.what;
    }
}

TEST(AvailableCpus, MissingOrNonsenseFilesGiveNoQuota) {
    TempDir empty;  // no /proc at all (a chroot): no quota, no crash
    EXPECT_EQ(cgroup_cpu_quota(empty.path()), std::nullopt);

    TempDir unreadable;  // files that say nothing sensible
    unreadable.write("proc/self/mountinfo", "garbage\n - \n");
    unreadable.write("proc/self/cgroup", "::\n0::\n");
    EXPECT_EQ(cgroup_cpu_quota(unreadable.path()), std::nullopt);
}

TEST(AvailableCpus, RunningProcessIsWithinItsAffinityMask) {
    cpu_set_t set;
    ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
    unsigned cpus = rivet::net::available_cpus();
    EXPECT_GE(cpus, 1u);
    EXPECT_LE(cpus, unsigned(CPU_COUNT(&set)));
}
