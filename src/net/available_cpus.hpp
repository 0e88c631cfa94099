// How many CPUs this process may use, for sizing its thread pools: the CPU affinity mask
// (taskset, cpuset) and the cgroup CPU quota (docker --cpus, Kubernetes limits.cpu), as Go's
// GOMAXPROCS and the JVM's availableProcessors read them. A pool sized by the machine's core
// count under a quota of one CPU runs its threads in turn and waits out the throttled periods.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

namespace rivet::net {

// The CPUs to size pools by: the affinity mask's count, lowered to the quota (rounded up), at
// least 1. Read once; the answer stays (a quota changed later is seen at the next start).
unsigned available_cpus();

// The parts, for tests. The quota in CPUs (quota / period rounded up, at least 1) of the
// tightest cgroup on the way from this process's own to its hierarchy's root, cgroup v2
// (cpu.max) or v1 (cpu.cfs_quota_us, cpu.cfs_period_us); none when no level sets one. `root`
// prefixes every file read (proc/self/mountinfo, proc/self/cgroup, the cgroup files), so a test
// points it at a directory of fixtures; "/" reads the running system's.
std::optional<unsigned> cgroup_cpu_quota(const std::filesystem::path& root = "/");
// One cgroup v2 cpu.max ("200000 100000", "max 100000"): the quota in CPUs, none for "max".
std::optional<unsigned> cpus_of_cpu_max(std::string_view cpu_max);
// One v1 quota and period (quota -1: none).
std::optional<unsigned> cpus_of_quota(long long quota_us, long long period_us);
// The affinity count lowered to the quota, at least 1.
unsigned cpus_from(unsigned affinity, std::optional<unsigned> quota);

}  // namespace rivet::net
