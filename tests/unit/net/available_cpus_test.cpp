// The CPU count behind the default I/O thread and worker counts: the quota arithmetic, and the
// cgroup reader pointed at fixture trees shaped as the kernel's files are.
#include "net/available_cpus.hpp"

#include <sched.h>

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

TEST(AvailableCpus, CgroupV2ReadsTheProcessOwnCgroup) {
    TempDir root;
    root.write("proc/self/mountinfo", kMountinfoV2);
    root.write("proc/self/cgroup", "0::/kubepods/pod1/app\n");
    root.write("sys/fs/cgroup/cpu.max", "max 100000\n");
    root.write("sys/fs/cgroup/kubepods/cpu.max", "max 100000\n");
    root.write("sys/fs/cgroup/kubepods/pod1/app/cpu.max", "150000 100000\n");
    EXPECT_EQ(cgroup_cpu_quota(root.path()), 2u);
}

TEST(AvailableCpus, CgroupV2TakesTheTightestAncestor) {
    TempDir root;
    root.write("proc/self/mountinfo", kMountinfoV2);
    root.write("proc/self/cgroup", "0::/kubepods/pod1/app\n");
    root.write("sys/fs/cgroup/kubepods/pod1/cpu.max", "100000 100000\n");
    root.write("sys/fs/cgroup/kubepods/pod1/app/cpu.max", "max 100000\n");
    EXPECT_EQ(cgroup_cpu_quota(root.path()), 1u);
}

TEST(AvailableCpus, CgroupV2NamespacedContainerSeesItsRoot) {
    TempDir root;
    root.write("proc/self/mountinfo", kMountinfoV2);
    root.write("proc/self/cgroup", "0::/\n");
    root.write("sys/fs/cgroup/cpu.max", "300000 100000\n");
    EXPECT_EQ(cgroup_cpu_quota(root.path()), 3u);
}

TEST(AvailableCpus, MountRootIsStrippedFromTheCgroupPath) {
    // A container whose own cgroup is mounted as its /sys/fs/cgroup (no cgroup namespace).
    TempDir root;
    root.write("proc/self/mountinfo",
               "30 24 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
    root.write("proc/self/cgroup", "0::/docker/abc\n");
    root.write("sys/fs/cgroup/cpu.max", "200000 100000\n");
    EXPECT_EQ(cgroup_cpu_quota(root.path()), 2u);
}

TEST(AvailableCpus, CgroupV1CfsQuota) {
    TempDir root;
    root.write("proc/self/mountinfo", kMountinfoV1);
    root.write("proc/self/cgroup", "4:memory:/x\n2:cpuacct:/\n1:cpu:/docker/abc\n0::/\n");
    root.write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
    root.write("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
    root.write("sys/fs/cgroup/cpu/docker/abc/cpu.cfs_quota_us", "100000\n");
    root.write("sys/fs/cgroup/cpu/docker/abc/cpu.cfs_period_us", "100000\n");
    EXPECT_EQ(cgroup_cpu_quota(root.path()), 1u);
}

TEST(AvailableCpus, NoQuotaAnywhere) {
    TempDir root;
    root.write("proc/self/mountinfo", kMountinfoV1);
    root.write("proc/self/cgroup", "1:cpu:/\n");
    root.write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
    root.write("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
    EXPECT_EQ(cgroup_cpu_quota(root.path()), std::nullopt);

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
